// JUnit XML writer (junit.h).
#include "cli/junit.h"

#include <cstdint>
#include <cstdio>

namespace granary::cli {

namespace {

// Length of the valid UTF-8 sequence at s[i], or 0 when it is not one.
size_t utf8_length(std::string_view s, size_t i) {
  const auto b = [&](size_t k) { return static_cast<unsigned char>(s[k]); };
  const unsigned char c = b(i);
  size_t n = 0;
  uint32_t cp = 0;
  if (c < 0x80) return 1;
  if (c >= 0xC2 && c <= 0xDF) {
    n = 2, cp = c & 0x1F;
  } else if (c >= 0xE0 && c <= 0xEF) {
    n = 3, cp = c & 0x0F;
  } else if (c >= 0xF0 && c <= 0xF4) {
    n = 4, cp = c & 0x07;
  } else {
    return 0;
  }
  if (i + n > s.size()) return 0;
  for (size_t k = 1; k < n; ++k) {
    if ((b(i + k) & 0xC0) != 0x80) return 0;
    cp = (cp << 6) | (b(i + k) & 0x3F);
  }
  // Overlong forms, UTF-16 surrogates, beyond U+10FFFF, and U+FFFE/U+FFFF (not XML characters).
  if ((n == 3 && cp < 0x800) || (n == 4 && cp < 0x10000) || (cp >= 0xD800 && cp <= 0xDFFF) ||
      cp > 0x10FFFF || cp == 0xFFFE || cp == 0xFFFF) {
    return 0;
  }
  return n;
}

std::string fmt_seconds(double s) {
  char b[32];
  std::snprintf(b, sizeof b, "%.3f", s);
  return b;
}

}  // namespace

std::string xml_escape(std::string_view text, bool attribute) {
  std::string out;
  out.reserve(text.size());
  for (size_t i = 0; i < text.size();) {
    const char c = text[i];
    const size_t n = utf8_length(text, i);
    if (n == 0) {
      out += "\xEF\xBF\xBD";  // U+FFFD REPLACEMENT CHARACTER
      ++i;
      continue;
    }
    if (n > 1) {
      out.append(text.substr(i, n));
      i += n;
      continue;
    }
    ++i;
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += attribute ? "&quot;" : "\"";
        break;
      case '\'':
        out += attribute ? "&apos;" : "'";
        break;
      case '\n':
        out += attribute ? "&#10;" : "\n";
        break;
      case '\r':
        out += "&#13;";  // a literal CR would be normalised away by parsers
        break;
      case '\t':
        out += attribute ? "&#9;" : "\t";
        break;
      default:
        if (static_cast<unsigned char>(c) >= 0x20 && c != 0x7F) out += c;  // else not allowed
        break;
    }
  }
  return out;
}

std::string junit_xml(const JunitSuite& suite) {
  size_t failures = 0, errors = 0;
  for (const JunitCase& c : suite.cases) {
    failures += c.result == JunitCase::Result::kFailed ? 1 : 0;
    errors += c.result == JunitCase::Result::kError ? 1 : 0;
  }
  auto attr = [](std::string_view s) { return xml_escape(s, true); };
  const std::string counts = "tests=\"" + std::to_string(suite.cases.size()) + "\" failures=\"" +
                             std::to_string(failures) + "\" errors=\"" + std::to_string(errors) +
                             "\"";
  std::string x = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n";
  x += "<testsuites name=\"" + attr(suite.name) + "\" " + counts + " time=\"" +
       fmt_seconds(suite.seconds) + "\">\n";
  x += "  <testsuite name=\"" + attr(suite.name) + "\" " + counts + " skipped=\"0\" time=\"" +
       fmt_seconds(suite.seconds) + "\">\n";
  for (const JunitCase& c : suite.cases) {
    x += "    <testcase classname=\"" + attr(c.classname) + "\" name=\"" + attr(c.name) +
         "\" file=\"" + attr(c.file) + "\" time=\"" + fmt_seconds(c.seconds) + "\">\n";
    if (c.result != JunitCase::Result::kPassed) {
      const bool failed = c.result == JunitCase::Result::kFailed;
      const char* tag = failed ? "failure" : "error";
      x += std::string("      <") + tag + " message=\"" + attr(c.message) + "\" type=\"" +
           (failed ? "expectation" : "error") + "\">" + xml_escape(c.details, false) + "</" + tag +
           ">\n";
    }
    if (!c.system_out.empty()) {
      x += "      <system-out>" + xml_escape(c.system_out, false) + "</system-out>\n";
    }
    if (!c.system_err.empty()) {
      x += "      <system-err>" + xml_escape(c.system_err, false) + "</system-err>\n";
    }
    x += "    </testcase>\n";
  }
  x += "  </testsuite>\n</testsuites>\n";
  return x;
}

}  // namespace granary::cli
