// Shared pieces of the JSON readers' error messages (json_diagnostics.h).
#include "models/json_diagnostics.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <nlohmann/json.hpp>

namespace granary::models::json_diag {

using json = nlohmann::json;

std::string describe(const json& j) {
  switch (j.type()) {
    case json::value_t::object:
      return j.empty() ? "an empty object" : "an object";
    case json::value_t::array:
      return j.empty() ? "an empty array" : "an array";
    case json::value_t::number_float:
      if (!std::isfinite(j.get<double>())) return "a non-finite number";
      return j.dump();
    case json::value_t::string: {
      std::string s = j.dump(-1, ' ', false, json::error_handler_t::replace);
      if (s.size() > 60) s = s.substr(0, 56) + "...\"";
      return s;
    }
    default:
      return j.dump(-1, ' ', false, json::error_handler_t::replace);
  }
}

std::string join(const std::string& path, std::string_view key) {
  const bool plain = !key.empty() && std::all_of(key.begin(), key.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
           c == '-' || c == '.';
  });
  if (!plain) {
    return path + "[" +
           json(std::string(key)).dump(-1, ' ', false, json::error_handler_t::replace) + "]";
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
  return "unknown key (expected one of: " +
         list(std::vector<std::string>(known.begin(), known.end())) + ")";
}

}  // namespace granary::models::json_diag
