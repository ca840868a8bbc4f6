// Shared pieces of the JSON readers' error messages (json_diagnostics.h).
#include "models/json_diagnostics.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <nlohmann/json.hpp>

namespace granary::models::json_diag {

TextPosition text_position(std::string_view text, size_t offset) {
  TextPosition p;
  offset = std::min(offset, text.size());
  for (size_t i = 0; i < offset; ++i) {
    if (text[i] == '\n') {
      ++p.line;
      p.column = 1;
    } else {
      ++p.column;
    }
  }
  return p;
}

using json = nlohmann::json;

namespace {

// Length of the well-formed UTF-8 sequence at the start of `s` (1..4), or 0 when it is not one
// (RFC 3629, table 3-7 of the Unicode standard).
size_t utf8_sequence(std::string_view s) {
  const auto b = [&](size_t i) { return static_cast<unsigned char>(s[i]); };
  const unsigned char c = b(0);
  if (c < 0x80) return 1;
  size_t n = 0;
  unsigned char lo = 0x80, hi = 0xBF;  // bounds of the second byte
  if (c >= 0xC2 && c <= 0xDF) {
    n = 2;
  } else if (c >= 0xE0 && c <= 0xEF) {
    n = 3;
    if (c == 0xE0) lo = 0xA0;  // no overlong forms
    if (c == 0xED) hi = 0x9F;  // no surrogates
  } else if (c >= 0xF0 && c <= 0xF4) {
    n = 4;
    if (c == 0xF0) lo = 0x90;  // no overlong forms
    if (c == 0xF4) hi = 0x8F;  // nothing above U+10FFFF
  } else {
    return 0;
  }
  if (s.size() < n || b(1) < lo || b(1) > hi) return 0;
  for (size_t i = 2; i < n; ++i) {
    if (b(i) < 0x80 || b(i) > 0xBF) return 0;
  }
  return n;
}

}  // namespace

std::optional<size_t> invalid_utf8_offset(std::string_view text) {
  for (size_t i = 0; i < text.size();) {
    const size_t n = utf8_sequence(text.substr(i));
    if (n == 0) return i;
    i += n;
  }
  return std::nullopt;
}

namespace {

// `mark`: the quote character around the text, escaped with backslashes like a backslash
// itself; 0 for none (nothing but control characters and bytes that are not text escaped).
std::string printable_text(std::string_view text, size_t max_chars, char mark, bool* shortened) {
  static const char* hex = "0123456789abcdef";
  std::string out;
  size_t chars = 0;
  *shortened = false;
  for (size_t i = 0; i < text.size();) {
    if (chars == max_chars) {
      *shortened = true;
      return out + "\u2026";
    }
    const unsigned char c = static_cast<unsigned char>(text[i]);
    const size_t n = utf8_sequence(text.substr(i));
    ++chars;
    if (n == 0) {
      out += "\\x";
      out += hex[c >> 4];
      out += hex[c & 15];
      ++i;
      continue;
    }
    if (c < 0x20 || c == 0x7F) {
      switch (c) {
        case '\n':
          out += "\\n";
          break;
        case '\r':
          out += "\\r";
          break;
        case '\t':
          out += "\\t";
          break;
        default:
          out += "\\u00";
          out += hex[c >> 4];
          out += hex[c & 15];
      }
    } else if (mark != 0 && (c == static_cast<unsigned char>(mark) || c == '\\')) {
      out += '\\';
      out += static_cast<char>(c);
    } else {
      out.append(text.substr(i, n));
    }
    i += n;
  }
  return out;
}

}  // namespace

std::string printable(std::string_view text, size_t max_chars) {
  bool shortened = false;
  return printable_text(text, max_chars, 0, &shortened);
}

std::string quote(std::string_view text, char mark, size_t max_chars) {
  bool shortened = false;
  std::string out = mark + printable_text(text, max_chars, mark, &shortened) + mark;
  if (shortened) out += " (a string of " + std::to_string(text.size()) + " bytes)";
  return out;
}

std::optional<std::string> utf8_problem(std::string_view text) {
  const auto at = invalid_utf8_offset(text);
  if (!at) return std::nullopt;
  static const char* hex = "0123456789abcdef";
  const unsigned char c = static_cast<unsigned char>(text[*at]);
  return std::string("expected valid UTF-8 text, found invalid byte 0x") + hex[c >> 4] +
         hex[c & 15] + " at offset " + std::to_string(*at);
}

std::string describe(const json& j) {
  switch (j.type()) {
    case json::value_t::object:
      return j.empty() ? "an empty object" : "an object";
    case json::value_t::array:
      return j.empty() ? "an empty array" : "an array";
    case json::value_t::number_float:
      if (!std::isfinite(j.get<double>())) return "a non-finite number";
      return j.dump();
    case json::value_t::string:
      return quote(j.get_ref<const std::string&>());
    default:
      return j.dump(-1, ' ', false, json::error_handler_t::replace);
  }
}

std::string join(const std::string& path, std::string_view key) {
  const bool plain =
      !key.empty() && key.size() <= kEchoChars && std::all_of(key.begin(), key.end(), [](char c) {
        return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
               c == '_' || c == '-' || c == '.';
      });
  if (!plain) {
    return path + "[" + quote(key) + "]";
  }
  return path.empty() ? std::string(key) : path + "." + std::string(key);
}

std::string list(const std::vector<std::string>& names) {
  std::string out;
  for (const std::string& n : names) out += (out.empty() ? "" : ", ") + n;
  return out;
}

size_t edit_distance(std::string_view a, std::string_view b) {
  auto lower = [](char c) { return (c >= 'A' && c <= 'Z') ? static_cast<char>(c - 'A' + 'a') : c; };
  std::vector<std::vector<size_t>> d(a.size() + 1, std::vector<size_t>(b.size() + 1));
  for (size_t i = 0; i <= a.size(); ++i) d[i][0] = i;
  for (size_t j = 0; j <= b.size(); ++j) d[0][j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    for (size_t j = 1; j <= b.size(); ++j) {
      const size_t cost = lower(a[i - 1]) == lower(b[j - 1]) ? 0 : 1;
      d[i][j] = std::min({d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + cost});
      if (i > 1 && j > 1 && lower(a[i - 1]) == lower(b[j - 2]) &&
          lower(a[i - 2]) == lower(b[j - 1])) {
        d[i][j] = std::min(d[i][j], d[i - 2][j - 2] + 1);
      }
    }
  }
  return d[a.size()][b.size()];
}

std::optional<std::string> closest(std::string_view name,
                                   const std::vector<std::string_view>& known) {
  std::string_view best;
  size_t best_d = std::numeric_limits<size_t>::max();
  for (std::string_view k : known) {
    // The distance is at least the difference in length: skip (without the quadratic table)
    // names that cannot be close, a 1 MiB key among them.
    const size_t gap = name.size() > k.size() ? name.size() - k.size() : k.size() - name.size();
    if (gap > std::max<size_t>(2, name.size() / 3)) continue;
    const size_t d = edit_distance(name, k);
    if (d < best_d) best_d = d, best = k;
  }
  if (best_d <= std::max<size_t>(2, name.size() / 3) && best_d < name.size()) {
    return std::string(best);
  }
  return std::nullopt;
}

std::string unknown_key(std::string_view key, const std::vector<std::string_view>& known) {
  if (auto best = closest(key, known)) return "unknown key (did you mean '" + *best + "'?)";
  // A long list of keys is cut so that the message stays a readable line.
  constexpr size_t kMaxListChars = 160;
  std::string names;
  size_t shown = 0;
  for (std::string_view k : known) {
    if (!names.empty() && names.size() + k.size() + 2 > kMaxListChars) break;
    names += (names.empty() ? "" : ", ") + std::string(k);
    ++shown;
  }
  if (shown < known.size()) {
    names += ", ... (" + std::to_string(known.size()) + " keys, docs/scenario-format.md)";
  }
  return "unknown key (expected one of: " + names + ")";
}

}  // namespace granary::models::json_diag
