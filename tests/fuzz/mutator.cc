#include "tests/fuzz/mutator.h"

#include <dirent.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <new>
#include <sstream>
#include <thread>
#include <typeinfo>

namespace granary::fuzz {

// ---------------------------------------------------------------- random draws

uint64_t Rng::next() {
  uint64_t z = (state_ += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

uint64_t Rng::below(uint64_t n) {
  if (n <= 1) return 0;
  const uint64_t limit = UINT64_MAX - UINT64_MAX % n;  // reject the incomplete last block
  uint64_t v;
  do {
    v = next();
  } while (v >= limit);
  return v % n;
}

Rng case_rng(uint64_t seed, uint64_t case_index) {
  Rng mix(seed * 0x9e3779b97f4a7c15ull + case_index);
  mix.next();
  return Rng(mix.next() ^ case_index);
}

// ---------------------------------------------------------------- documented ranges

namespace {

// "10^6" -> 1e6, "2^64-1", "2^30", "-1", "0.5", "4096". Advances `p`; false when no number.
bool parse_doc_number(std::string_view s, size_t& p, double& out) {
  while (p < s.size() && s[p] == ' ') ++p;
  size_t q = p;
  if (q < s.size() && s[q] == '-') ++q;
  const size_t digits_start = q;
  while (q < s.size() &&
         (std::isdigit(static_cast<unsigned char>(s[q])) || s[q] == '.' || s[q] == ',')) {
    ++q;
  }
  if (q == digits_start) return false;
  std::string num;
  for (size_t i = p; i < q; ++i) {
    if (s[i] != ',') num += s[i];
  }
  if (!num.empty() && num.back() == '.') num.pop_back();
  double v = std::strtod(num.c_str(), nullptr);
  if (q < s.size() && s[q] == '^') {
    size_t r = q + 1;
    size_t e0 = r;
    while (r < s.size() && std::isdigit(static_cast<unsigned char>(s[r]))) ++r;
    if (r == e0) return false;
    v = std::pow(v, std::strtod(std::string(s.substr(e0, r - e0)).c_str(), nullptr));
    q = r;
    if (q + 1 < s.size() && s[q] == '-' && s[q + 1] == '1') {
      v -= 1;
      q += 2;
    }
  }
  out = v;
  p = q;
  return true;
}

}  // namespace

RangeTable parse_documented_ranges(std::string_view markdown) {
  RangeTable table;
  size_t pos = 0;
  while (pos < markdown.size()) {
    size_t eol = markdown.find('\n', pos);
    if (eol == std::string_view::npos) eol = markdown.size();
    const std::string_view line = markdown.substr(pos, eol - pos);
    pos = eol + 1;
    if (line.rfind("| `", 0) != 0) continue;
    // columns: | key(s) | type, range | ...
    const size_t c1 = line.find('|', 1);
    if (c1 == std::string_view::npos) continue;
    const size_t c2 = line.find('|', c1 + 1);
    if (c2 == std::string_view::npos) continue;
    const std::string_view keys = line.substr(1, c1 - 1);
    const std::string_view type = line.substr(c1 + 1, c2 - c1 - 1);
    if (type.find("number") == std::string_view::npos &&
        type.find("integer") == std::string_view::npos) {
      continue;
    }
    DocumentedRange r;
    r.integer = type.find("integer") != std::string_view::npos;
    const size_t dots = type.find("..");
    if (dots != std::string_view::npos) {
      size_t b = dots;  // the number right before ".."
      while (b > 0 && type[b - 1] != ' ' && type[b - 1] != '`' && type[b - 1] != '{') --b;
      size_t p = b;
      double lo = 0;
      if (parse_doc_number(type, p, lo)) {
        r.lo = lo;
        r.has_lo = true;
      }
      p = dots + 2;
      double hi = 0;
      if (parse_doc_number(type, p, hi)) {
        r.hi = hi;
        r.has_hi = true;
      }
    } else {
      for (const char* op : {">=", ">"}) {
        const size_t at = type.find(op);
        if (at == std::string_view::npos) continue;
        size_t p = at + std::strlen(op);
        double v = 0;
        if (parse_doc_number(type, p, v)) {
          r.lo = v;
          r.has_lo = true;
          r.lo_open = std::string_view(op) == ">";
        }
        break;
      }
      for (const char* op : {"<=", "<"}) {
        const size_t at = type.find(op);
        if (at == std::string_view::npos) continue;
        size_t p = at + std::strlen(op);
        double v = 0;
        if (parse_doc_number(type, p, v)) {
          r.hi = v;
          r.has_hi = true;
          r.hi_open = std::string_view(op) == "<";
        }
        break;
      }
    }
    if (!r.has_lo && !r.has_hi) continue;
    // every `key` in the first column; "volume.size_gib" -> "size_gib"
    size_t k = 0;
    while ((k = keys.find('`', k)) != std::string_view::npos) {
      const size_t end = keys.find('`', k + 1);
      if (end == std::string_view::npos) break;
      std::string key(keys.substr(k + 1, end - k - 1));
      if (const size_t dot = key.rfind('.'); dot != std::string::npos) key = key.substr(dot + 1);
      table[key].push_back(r);
      k = end + 1;
    }
  }
  return table;
}

// ---------------------------------------------------------------- scenario mutations

namespace {

using ojson = nlohmann::ordered_json;
using Pointer = ojson::json_pointer;

const char* const kValueMarker = "@@granary-fuzz-value@@";
const char* const kKeyMarker = "@@granary-fuzz-key@@";

// Numbers at and past the edges of the integer and floating-point types, as JSON text.
const std::vector<std::string>& edge_numbers() {
  static const std::vector<std::string> v = {
      "0",
      "-1",
      "1",
      "2",
      "-0",
      "-0.0",
      "0.0",
      "0.5",
      "1.5",
      "0.001",
      "1e-9",
      "255",
      "256",
      "65535",
      "65536",
      "2147483647",
      "2147483648",
      "-2147483648",
      "-2147483649",
      "4294967295",
      "4294967296",
      "9007199254740992",
      "9007199254740993",
      "9223372036854775807",
      "9223372036854775808",
      "-9223372036854775808",
      "-9223372036854775809",
      "18446744073709551615",
      "18446744073709551616",
      "100000000000000000000000000000",
      "1e3",
      "1e6",
      "1e9",
      "1e12",
      "1e15",
      "1e18",
      "1e19",
      "1e20",
      "1e100",
      "1e308",
      "1.7976931348623157e308",
      "-1e308",
      "1e309",
      "-1e309",
      "1e-308",
      "2.2250738585072014e-308",
      "4.9e-324",
      "5e-324",
      "1e-400",
      "3.4028234663852886e38",
      "1.401298464324817e-45",
  };
  return v;
}

// Non-number replacements (type changes and NaN-like strings), as JSON text.
const std::vector<std::string>& odd_values() {
  static const std::vector<std::string> v = {
      "null",    "true",    "false",         "\"\"",      "\"1\"",       "\"NaN\"",
      "\"nan\"", "\"inf\"", "\"-Infinity\"", "\"1e999\"", "\"0x10\"",    "[]",
      "{}",      "[1]",     "[null]",        "{\"\": 1}", "\"\\u0000\"", "\" \"",
  };
  return v;
}

// Strings that are not valid UTF-8 (raw bytes inside a JSON string).
const std::vector<std::string>& invalid_utf8() {
  static const std::vector<std::string> v = {
      "\xff",
      "\xfe\xff",
      "\xc3\x28",
      "\xa0\xa1",
      "\xe2\x28\xa1",
      "\xe2\x82",
      "\xed\xa0\x80",
      "\xed\xbf\xbf",
      "\xf4\x90\x80\x80",
      "\xc0\xaf",
      "\xe0\x80\xaf",
      "\xf8\x88\x80\x80\x80",
      "\x80",
      "unet\xff"
      "3d",
      "a\xc3",
  };
  return v;
}

// JSON escapes that decode to awkward strings (NUL, lone surrogates, control characters).
const std::vector<std::string>& awkward_escapes() {
  static const std::vector<std::string> v = {
      "\\u0000",        "a\\u0000b",   "\\ud800",      "\\udc00", "\\ud800\\u0041",
      "\\udbff\\udfff", "\\u001b[31m", "line\\nbreak", "\\r\\n",  "\\t",
      "\\u2028",        "\\ufeff",     "\\uffff",      "\\\\",    "\\\"",
  };
  return v;
}

// The text of a double as the shortest round-tripping decimal.
std::string number_text(double v) {
  if (std::isnan(v)) return "\"NaN\"";
  if (std::isinf(v)) return v > 0 ? "1e999" : "-1e999";
  if (v == std::floor(v) && std::fabs(v) < 1e18) {
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.0f", v);
    return buf;
  }
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.17g", v);
  return buf;
}

std::string json_string_literal(const std::string& raw_content) {
  return "\"" + raw_content + "\"";
}

struct Walk {
  std::vector<Pointer> all;      // every node but the root
  std::vector<Pointer> numbers;  // numeric nodes
  std::vector<Pointer> strings;  // string nodes
  std::vector<Pointer> objects;  // object nodes (root included)
  std::vector<Pointer> arrays;   // array nodes
  std::vector<Pointer> members;  // nodes whose parent is an object
};

void walk(const ojson& j, const Pointer& at, Walk& w) {
  if (!at.empty()) w.all.push_back(at);
  if (j.is_number()) w.numbers.push_back(at);
  if (j.is_string()) w.strings.push_back(at);
  if (j.is_object()) {
    w.objects.push_back(at);
    for (auto it = j.begin(); it != j.end(); ++it) {
      const Pointer child = at / it.key();
      w.members.push_back(child);
      walk(it.value(), child, w);
    }
  } else if (j.is_array()) {
    w.arrays.push_back(at);
    for (size_t i = 0; i < j.size(); ++i) walk(j[i], at / i, w);
  }
}

std::string key_of(const Pointer& p) {
  return p.empty() ? std::string() : p.back();
}

std::string path_text(const Pointer& p) {
  return p.empty() ? "/" : p.to_string();
}

// A value drawn at or just past an end of a documented range, or inside it.
std::string documented_value(const DocumentedRange& r, Rng& rng) {
  std::vector<double> v;
  const double step = r.integer ? 1.0 : 0.0;
  if (r.has_lo) {
    v.push_back(r.lo);
    v.push_back(r.integer ? r.lo - 1 : std::nextafter(r.lo, -INFINITY));
    v.push_back(r.integer ? r.lo + 1 : std::nextafter(r.lo, INFINITY));
    if (!r.integer) v.push_back(r.lo - 1e-9);
  }
  if (r.has_hi) {
    v.push_back(r.hi);
    v.push_back(r.integer ? r.hi + 1 : std::nextafter(r.hi, INFINITY));
    v.push_back(r.integer ? r.hi - 1 : std::nextafter(r.hi, -INFINITY));
    v.push_back(r.hi * 2);
    v.push_back(r.hi + 0.5);
  } else {
    for (double big : {1e6, 1e7, 1e8, 1e9, 1e12, 1e15, 9007199254740992.0, 2147483648.0,
                       4294967296.0, 9.2233720368547758e18}) {
      v.push_back(big);
    }
  }
  if (r.has_lo && r.has_hi) {
    v.push_back((r.lo + r.hi) / 2);
    v.push_back(r.lo + (r.hi - r.lo) * static_cast<double>(rng.below(1000)) / 1000.0);
  }
  if (r.integer) v.push_back((r.has_lo ? r.lo : 0) + 0.5);  // a fraction where an integer goes
  (void)step;
  const double x = v[rng.below(v.size())];
  if (r.integer && x == std::floor(x) && std::fabs(x) < 9.3e18) {
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.0f", x);
    return buf;
  }
  return number_text(x);
}

// A replacement for a number node: edges, arithmetic neighbours, documented-range values.
std::string numeric_replacement(const ojson& node, const std::string& key, const RangeTable& ranges,
                                Rng& rng, std::string& why) {
  const auto it = ranges.find(key);
  if (it != ranges.end() && rng.chance(1, 2)) {
    why = "documented range of '" + key + "'";
    return documented_value(it->second[rng.below(it->second.size())], rng);
  }
  if (rng.chance(1, 3) && node.is_number()) {
    const double x = node.get<double>();
    why = "neighbour of " + number_text(x);
    switch (rng.below(9)) {
      case 0:
        return number_text(x + 1);
      case 1:
        return number_text(x - 1);
      case 2:
        return number_text(-x);
      case 3:
        return number_text(x * 2);
      case 4:
        return number_text(x * 1000);
      case 5:
        return number_text(x * 1e6);
      case 6:
        return number_text(x / 1000);
      case 7:
        return node.is_number_integer() ? number_text(x) + ".5" : number_text(std::floor(x));
      default:
        return node.is_number_integer() ? number_text(x) + ".0" : number_text(std::ceil(x));
    }
  }
  why = "edge number";
  return rng.pick(edge_numbers());
}

// Replaces the marker string at its first occurrence with `raw`.
void replace_marker(std::string& text, const char* marker, const std::string& raw) {
  const std::string quoted = std::string("\"") + marker + "\"";
  const size_t at = text.find(quoted);
  if (at != std::string::npos) text.replace(at, quoted.size(), raw);
}

std::string huge_string_content(Rng& rng) {
  static const std::vector<size_t> sizes = {300, 5000, 70000, 1u << 20};
  const size_t n = sizes[rng.below(sizes.size())];
  std::string s(n, 'a');
  if (rng.chance(1, 3)) s[n / 2] = '\xff';  // invalid UTF-8 deep inside a long string
  return s;
}

// One structural mutation of `j`. Raw-text pieces (that nlohmann cannot hold) are queued in
// `raw_values` / `raw_keys` and spliced into the text after dump via the marker strings.
// Returns a short description.
std::string mutate_once(ojson& j, const RangeTable& ranges, const ScenarioMutationOptions& opt,
                        Rng& rng, std::vector<std::string>& raw_values,
                        std::vector<std::string>& raw_keys) {
  Walk w;
  walk(j, Pointer(), w);
  if (w.all.empty()) return "empty document";
  auto set_raw = [&](const Pointer& p, std::string raw) {
    j[p] = std::string(kValueMarker);
    raw_values.push_back(std::move(raw));
  };
  // Only one marker of each kind may be live at a time (they are spliced in order).
  const bool markers_free = raw_values.empty() && raw_keys.empty();

  uint64_t op = opt.values_only ? rng.below(3) : rng.below(20);
  if (!opt.allow_huge && op >= 12 && op <= 14) op -= 12;  // huge ones are rare: numbers instead
  if (!markers_free && (op == 0 || op == 1 || (op >= 9 && op <= 13))) op = 2;
  switch (op) {
    case 0:
    case 1: {  // a number node gets an edge / neighbour / documented-range value
      if (w.numbers.empty()) return "no number to mutate";
      const Pointer p = rng.pick(w.numbers);
      std::string why;
      std::string v = numeric_replacement(j[p], key_of(p), ranges, rng, why);
      set_raw(p, v);
      return path_text(p) + " = " + v + " (" + why + ")";
    }
    case 2: {  // a documented-range value for any key that has one, whatever its type now
      std::vector<Pointer> ranged;
      for (const Pointer& p : w.members) {
        if (ranges.count(key_of(p))) ranged.push_back(p);
      }
      if (ranged.empty()) return "no ranged key";
      const Pointer p = rng.pick(ranged);
      const auto& rs = ranges.at(key_of(p));
      const std::string v = documented_value(rs[rng.below(rs.size())], rng);
      j[p] = ojson::parse(v, nullptr, false);
      if (j[p].is_discarded()) j[p] = v;
      return path_text(p) + " = " + v + " (documented range)";
    }
    case 3: {  // type change
      const Pointer p = rng.pick(w.all);
      const std::string v = rng.pick(odd_values());
      j[p] = ojson::parse(v);
      return path_text(p) + " = " + v + " (type change)";
    }
    case 4: {  // integer <-> float, number <-> string
      if (w.numbers.empty()) return "no number";
      const Pointer p = rng.pick(w.numbers);
      const ojson old = j[p];
      if (rng.chance(1, 2)) {
        j[p] = old.dump();
        return path_text(p) + " = \"" + old.dump() + "\" (number as string)";
      }
      if (old.is_number_integer() || old.is_number_unsigned()) {
        j[p] = old.get<double>() + 0.25;
      } else {
        j[p] = static_cast<int64_t>(std::llround(old.get<double>()));
      }
      return path_text(p) + " = " + j[p].dump() + " (integer <-> float)";
    }
    case 5: {  // delete a key
      if (w.members.empty()) return "no key";
      const Pointer p = rng.pick(w.members);
      j[p.parent_pointer()].erase(p.back());
      return "delete " + path_text(p);
    }
    case 6: {  // copy a key into another object (sibling or another level)
      if (w.members.empty() || w.objects.empty()) return "no key";
      const Pointer from = rng.pick(w.members);
      const Pointer to = rng.pick(w.objects);
      const ojson v = j[from];
      j[to][from.back()] = v;
      return "copy " + path_text(from) + " into " + path_text(to);
    }
    case 7: {  // unknown key
      if (w.objects.empty()) return "no object";
      const Pointer to = rng.pick(w.objects);
      static const std::vector<std::string> keys = {"extra",   "",       "__proto__",
                                                    "Count",   "count ", "fidelity",
                                                    "granary", "x.y",    "\u00e9t\u00e9"};
      std::string k = rng.pick(keys);
      if (!w.members.empty() && rng.chance(1, 2)) {  // a near miss of a real key
        k = key_of(rng.pick(w.members));
        if (!k.empty()) k[rng.below(k.size())] ^= 0x20;
      }
      j[to][k] = 1;
      return "unknown key '" + k + "' in " + path_text(to);
    }
    case 8: {  // array element duplication / removal / emptying
      if (w.arrays.empty()) return "no array";
      const Pointer p = rng.pick(w.arrays);
      ojson& a = j[p];
      const uint64_t what = rng.below(3);
      if (what == 0 && !a.empty()) {
        a.push_back(a[rng.below(a.size())]);
        return "duplicate an element of " + path_text(p);
      }
      if (what == 1 && !a.empty()) {
        a.erase(a.begin() + static_cast<std::ptrdiff_t>(rng.below(a.size())));
        return "remove an element of " + path_text(p);
      }
      a = ojson::array();
      return "empty " + path_text(p);
    }
    case 9: {  // raw duplicate key in the same object
      std::vector<Pointer> in_objects;
      for (const Pointer& p : w.members) in_objects.push_back(p);
      if (in_objects.empty()) return "no key";
      const Pointer p = rng.pick(in_objects);
      const Pointer obj = p.parent_pointer();
      j[obj][kKeyMarker] = j[p];
      raw_keys.push_back(ojson(p.back()).dump());
      return "raw duplicate key " + path_text(p);
    }
    case 10: {  // invalid UTF-8 in a string value or a key
      const std::string bad = rng.pick(invalid_utf8());
      if (!w.strings.empty() && rng.chance(2, 3)) {
        const Pointer p = rng.pick(w.strings);
        std::string s = j[p].get<std::string>();
        const size_t at = rng.below(s.size() + 1);
        // keep the rest of the string printable JSON: escape it through dump
        std::string left = ojson(s.substr(0, at)).dump();
        std::string right = ojson(s.substr(at)).dump();
        set_raw(p, left.substr(0, left.size() - 1) + bad + right.substr(1));
        return "invalid UTF-8 in the string at " + path_text(p);
      }
      if (w.objects.empty()) return "no object";
      const Pointer to = rng.pick(w.objects);
      j[to][kKeyMarker] = 1;
      raw_keys.push_back(json_string_literal(bad));
      return "invalid UTF-8 key in " + path_text(to);
    }
    case 11: {  // escapes: NUL, lone surrogates, control characters
      const std::string esc = rng.pick(awkward_escapes());
      if (!w.strings.empty() && rng.chance(3, 4)) {
        const Pointer p = rng.pick(w.strings);
        std::string lit = j[p].dump();
        const size_t at = 1 + rng.below(lit.size() - 1);
        set_raw(p, lit.substr(0, at) + esc + lit.substr(at));
        return "escape " + esc + " in the string at " + path_text(p);
      }
      if (w.objects.empty()) return "no object";
      const Pointer to = rng.pick(w.objects);
      j[to][kKeyMarker] = 1;
      raw_keys.push_back(json_string_literal(esc));
      return "escape " + esc + " as a key in " + path_text(to);
    }
    case 12: {  // huge string (value or key)
      if (!opt.allow_huge) return "no huge";
      const std::string content = huge_string_content(rng);
      if (!w.strings.empty() && rng.chance(3, 4)) {
        const Pointer p = rng.pick(w.strings);
        set_raw(p, json_string_literal(content));
        return "string of " + std::to_string(content.size()) + " bytes at " + path_text(p);
      }
      if (w.objects.empty()) return "no object";
      const Pointer to = rng.pick(w.objects);
      j[to][kKeyMarker] = 1;
      raw_keys.push_back(json_string_literal(content));
      return "key of " + std::to_string(content.size()) + " bytes in " + path_text(to);
    }
    case 13: {  // deep nesting
      if (!opt.allow_huge) return "no deep";
      static const std::vector<size_t> depths = {64, 1000, 10000, 100000};
      const size_t d = depths[rng.below(depths.size())];
      const Pointer p = rng.pick(w.all);
      const bool arrays = rng.chance(1, 2);
      std::string raw;
      for (size_t i = 0; i < d; ++i) raw += arrays ? "[" : "{\"a\":";
      raw += "1";
      for (size_t i = 0; i < d; ++i) raw += arrays ? "]" : "}";
      set_raw(p, raw);
      return "nesting " + std::to_string(d) + " deep at " + path_text(p);
    }
    case 14: {  // huge array
      if (!opt.allow_huge) return "no huge";
      const Pointer p = rng.pick(w.all);
      const ojson elem = j[p];
      const size_t n = elem.dump().size() < 64 ? 100000 : 1000;
      ojson a = ojson::array();
      for (size_t i = 0; i < n; ++i) a.push_back(elem);
      j[p] = std::move(a);
      return "array of " + std::to_string(n) + " copies at " + path_text(p);
    }
    case 15: {  // swap two string values (profile names, kinds, designs across the tree)
      if (w.strings.size() < 2) return "no strings";
      const Pointer a = rng.pick(w.strings);
      const Pointer b = rng.pick(w.strings);
      std::swap(j[a], j[b]);
      return "swap " + path_text(a) + " and " + path_text(b);
    }
    case 16: {  // move a subtree to another place
      if (w.all.size() < 2) return "no subtree";
      const Pointer a = rng.pick(w.all);
      const Pointer b = rng.pick(w.all);
      if (a == b || a.to_string().rfind(b.to_string(), 0) == 0 ||
          b.to_string().rfind(a.to_string(), 0) == 0) {
        return "no move";
      }
      j[b] = ojson(j[a]);
      return "copy " + path_text(a) + " over " + path_text(b);
    }
    default: {  // several numbers at once to edges (cost keys together)
      std::string d = "numbers:";
      for (int i = 0; i < 3 && !w.numbers.empty(); ++i) {
        const Pointer p = rng.pick(w.numbers);
        std::string why;
        const std::string v = numeric_replacement(j[p], key_of(p), ranges, rng, why);
        ojson parsed = ojson::parse(v, nullptr, false);
        if (parsed.is_discarded()) continue;
        j[p] = parsed;
        d += " " + path_text(p) + "=" + v;
      }
      return d;
    }
  }
}

// Raw mutation of serialized text: byte flips, truncation, inserted bytes.
std::string mutate_bytes(std::string& text, Rng& rng) {
  if (text.empty()) return "empty text";
  switch (rng.below(4)) {
    case 0: {
      const size_t n = 1 + rng.below(4);
      for (size_t i = 0; i < n; ++i)
        text[rng.below(text.size())] ^= static_cast<char>(1u << rng.below(8));
      return std::to_string(n) + " bit flips";
    }
    case 1: {
      const size_t at = rng.below(text.size());
      text.resize(at);
      return "truncated at byte " + std::to_string(at);
    }
    case 2: {
      const size_t at = rng.below(text.size());
      text.insert(at, 1, static_cast<char>(rng.below(256)));
      return "byte inserted at " + std::to_string(at);
    }
    default: {
      const size_t at = rng.below(text.size());
      text[at] = static_cast<char>(rng.below(256));
      return "byte replaced at " + std::to_string(at);
    }
  }
}

}  // namespace

MutatedInput mutate_scenario(const nlohmann::ordered_json& base, const RangeTable& ranges,
                             const ScenarioMutationOptions& options, Rng& rng) {
  ojson j = base;
  std::vector<std::string> raw_values, raw_keys;
  MutatedInput out;
  // Mostly one mutation (so that a share of the cases is accepted and goes deeper), sometimes
  // more; huge inputs in about one case in 16 (they dominate the time).
  const int most = std::max(1, options.max_mutations);
  const int n = rng.chance(1, 2) ? 1 : 1 + static_cast<int>(rng.below(static_cast<uint64_t>(most)));
  ScenarioMutationOptions opt = options;
  opt.allow_huge = options.allow_huge && rng.chance(1, 16);
  for (int i = 0; i < n; ++i) {
    if (i) out.description += "; ";
    out.description += mutate_once(j, ranges, opt, rng, raw_values, raw_keys);
  }
  out.text = j.dump(2);
  for (const std::string& raw : raw_values) replace_marker(out.text, kValueMarker, raw);
  for (const std::string& raw : raw_keys) replace_marker(out.text, kKeyMarker, raw);
  if (options.allow_raw_bytes && rng.chance(1, 10))
    out.description += "; " + mutate_bytes(out.text, rng);
  return out;
}

// ---------------------------------------------------------------- CRUSH map mutations

namespace {

struct Token {
  size_t begin, end;  // byte offsets in the text
};

std::vector<Token> tokens_of(std::string_view text) {
  std::vector<Token> t;
  size_t i = 0;
  while (i < text.size()) {
    while (i < text.size() && std::isspace(static_cast<unsigned char>(text[i]))) ++i;
    const size_t b = i;
    while (i < text.size() && !std::isspace(static_cast<unsigned char>(text[i]))) ++i;
    if (i > b) t.push_back({b, i});
  }
  return t;
}

bool is_number_token(std::string_view s) {
  if (s.empty()) return false;
  size_t i = s[0] == '-' ? 1 : 0;
  if (i >= s.size()) return false;
  bool digit = false;
  for (; i < s.size(); ++i) {
    if (std::isdigit(static_cast<unsigned char>(s[i]))) {
      digit = true;
    } else if (s[i] != '.') {
      return false;
    }
  }
  return digit;
}

bool is_keyword(std::string_view s) {
  static const std::vector<std::string_view> k = {"device",
                                                  "type",
                                                  "id",
                                                  "weight",
                                                  "alg",
                                                  "hash",
                                                  "item",
                                                  "rule",
                                                  "step",
                                                  "take",
                                                  "emit",
                                                  "choose",
                                                  "chooseleaf",
                                                  "firstn",
                                                  "indep",
                                                  "tunable",
                                                  "class",
                                                  "ruleset",
                                                  "min_size",
                                                  "max_size",
                                                  "{",
                                                  "}",
                                                  "choose_args",
                                                  "bucket_id",
                                                  "weight_set",
                                                  "ids",
                                                  "[",
                                                  "]",
                                                  "replicated",
                                                  "erasure",
                                                  "set_choose_tries",
                                                  "set_chooseleaf_tries",
                                                  "straw2",
                                                  "straw",
                                                  "uniform",
                                                  "list",
                                                  "tree",
                                                  "0"};
  return std::find(k.begin(), k.end(), s) != k.end();
}

std::vector<std::string> lines_of(std::string_view text) {
  std::vector<std::string> lines;
  size_t pos = 0;
  while (pos <= text.size()) {
    size_t eol = text.find('\n', pos);
    if (eol == std::string_view::npos) {
      if (pos < text.size()) lines.emplace_back(text.substr(pos));
      break;
    }
    lines.emplace_back(text.substr(pos, eol - pos));
    pos = eol + 1;
  }
  return lines;
}

std::string join_lines(const std::vector<std::string>& lines) {
  std::string s;
  for (const std::string& l : lines) s += l + "\n";
  return s;
}

// The [first, last] line range of the block whose header line is `header` ("... {").
size_t block_end(const std::vector<std::string>& lines, size_t header) {
  int depth = 0;
  for (size_t i = header; i < lines.size(); ++i) {
    for (char c : lines[i]) {
      if (c == '{') ++depth;
      if (c == '}') --depth;
    }
    if (depth <= 0 && i > header) return i;
    if (depth <= 0 && lines[i].find('{') != std::string::npos && i == header) continue;
  }
  return lines.size() - 1;
}

const std::vector<std::string>& crush_edge_numbers() {
  static const std::vector<std::string> v = {
      "0",
      "-1",
      "1",
      "-2",
      "2147483647",
      "2147483648",
      "-2147483648",
      "-2147483647",
      "-2147483649",
      "4294967295",
      "4294967296",
      "-4294967296",
      "9223372036854775807",
      "99999999999999999999",
      "65535",
      "65536",
      "255",
      "256",
      "1000000",
      "100000000",
      "-1000000",
      "1e10",
      "0.00001",
      "-0",
      "nan",
      "inf",
      "100.000",
      "100.001",
      "65535.000",
      "65536.000",
      "32768.000",
      "1e38",
      "3.5e38",
      "0x10",
      "007",
      "1.",
      ".5",
      "-0.5",
      "18446744073709551615",
  };
  return v;
}

}  // namespace

MutatedInput mutate_crush_map(std::string_view base, Rng& rng) {
  MutatedInput out;
  std::string text(base);
  const int n = 1 + static_cast<int>(rng.below(3));
  for (int m = 0; m < n; ++m) {
    if (m) out.description += "; ";
    const std::vector<Token> toks = tokens_of(text);
    std::vector<size_t> numbers, names;
    for (size_t i = 0; i < toks.size(); ++i) {
      const std::string_view s =
          std::string_view(text).substr(toks[i].begin, toks[i].end - toks[i].begin);
      if (is_number_token(s)) {
        numbers.push_back(i);
      } else if (!is_keyword(s) && s[0] != '#') {
        names.push_back(i);
      }
    }
    const uint64_t op = rng.below(12);
    if ((op <= 3) && !numbers.empty()) {  // a number at or past an edge
      const Token t = toks[rng.pick(numbers)];
      const std::string old = text.substr(t.begin, t.end - t.begin);
      std::string v;
      if (rng.chance(1, 3)) {
        const double x = std::strtod(old.c_str(), nullptr);
        switch (rng.below(5)) {
          case 0:
            v = number_text(x + 1);
            break;
          case 1:
            v = number_text(x - 1);
            break;
          case 2:
            v = number_text(-x);
            break;
          case 3:
            v = number_text(x * 1000);
            break;
          default:
            v = old.find('.') != std::string::npos ? number_text(x * 65536) + ".000"
                                                   : number_text(x * 65536);
        }
      } else {
        v = rng.pick(crush_edge_numbers());
      }
      text.replace(t.begin, t.end - t.begin, v);
      out.description += "number " + old + " -> " + v + " at byte " + std::to_string(t.begin);
      continue;
    }
    if (op == 4 || op == 5) {  // duplicate or delete a line or a block
      std::vector<std::string> lines = lines_of(text);
      if (lines.empty()) continue;
      const size_t i = rng.below(lines.size());
      const bool block = lines[i].find('{') != std::string::npos;
      const size_t last = block ? block_end(lines, i) : i;
      if (op == 4) {
        std::vector<std::string> copy(lines.begin() + static_cast<std::ptrdiff_t>(i),
                                      lines.begin() + static_cast<std::ptrdiff_t>(last) + 1);
        lines.insert(lines.begin() + static_cast<std::ptrdiff_t>(last) + 1, copy.begin(),
                     copy.end());
        out.description +=
            "duplicate lines " + std::to_string(i + 1) + ".." + std::to_string(last + 1);
      } else {
        lines.erase(lines.begin() + static_cast<std::ptrdiff_t>(i),
                    lines.begin() + static_cast<std::ptrdiff_t>(last) + 1);
        out.description +=
            "delete lines " + std::to_string(i + 1) + ".." + std::to_string(last + 1);
      }
      text = join_lines(lines);
      continue;
    }
    if (op == 6 && !names.empty()) {  // a name made huge, binary, empty-ish
      const Token t = toks[rng.pick(names)];
      std::string v;
      switch (rng.below(6)) {
        case 0:
          v = std::string(5000, 'n');
          break;
        case 1:
          v = std::string(1u << 20, 'n');
          break;
        case 2:
          v = std::string("osd\x01\xff", 5);
          break;
        case 3:
          v = std::string("na\0me", 5);
          break;
        case 4:
          v = "\xc3\x28";
          break;
        default:
          v = "#";
          break;
      }
      const std::string old = text.substr(t.begin, t.end - t.begin);
      text.replace(t.begin, t.end - t.begin, v);
      out.description +=
          "name '" + old.substr(0, 40) + "' -> " + std::to_string(v.size()) + " bytes";
      continue;
    }
    if (op == 7) {  // NUL byte, preferably in a device line
      size_t at = rng.below(text.size() + 1);
      if (rng.chance(1, 2)) {
        const size_t dev = text.find("\ndevice ");
        if (dev != std::string::npos)
          at = dev + 1 + rng.below(std::min<size_t>(20, text.size() - dev - 1));
      }
      text.insert(at, 1, '\0');
      out.description += "NUL at byte " + std::to_string(at);
      continue;
    }
    if (op == 8 && !text.empty()) {  // truncation
      const size_t at = rng.below(text.size());
      text.resize(at);
      out.description += "truncated at byte " + std::to_string(at);
      continue;
    }
    if (op == 9 && !text.empty()) {  // byte flips
      const size_t k = 1 + rng.below(4);
      for (size_t i = 0; i < k; ++i) {
        text[rng.below(text.size())] ^= static_cast<char>(1u << rng.below(8));
      }
      out.description += std::to_string(k) + " bit flips";
      continue;
    }
    if (op == 10 && !toks.empty()) {  // a keyword swapped for another
      static const std::vector<std::string> words = {
          "straw2", "straw", "uniform", "list", "tree",   "bogus", "firstn",
          "indep",  "host",  "root",    "osd",  "take",   "emit",  "{",
          "}",      "item",  "type",    "rule", "device", "0"};
      const size_t i = rng.below(toks.size());
      const Token t = toks[i];
      const std::string w = rng.pick(words);
      text.replace(t.begin, t.end - t.begin, w);
      out.description += "token " + std::to_string(i) + " -> " + w;
      continue;
    }
    // many items: one bucket line repeated (bounded)
    {
      const size_t at = text.find("\titem ");
      if (at == std::string::npos) {
        out.description += "no item line";
        continue;
      }
      const size_t eol = text.find('\n', at);
      const std::string line =
          text.substr(at, eol == std::string::npos ? std::string::npos : eol - at + 1);
      const size_t copies = rng.chance(1, 2) ? 1000 : 20000;
      std::string many;
      for (size_t i = 0; i < copies; ++i) many += line;
      text.insert(at, many);
      out.description += "item line repeated " + std::to_string(copies) + " times";
    }
  }
  out.text = std::move(text);
  return out;
}

// ---------------------------------------------------------------- small bases

void make_crush_map_path_absolute(nlohmann::ordered_json& s, const std::string& scenario_path) {
  if (!s.is_object() || !s.contains("storage") || !s["storage"].is_object()) return;
  auto& st = s["storage"];
  if (!st.contains("rados") || !st["rados"].is_object()) return;
  auto& r = st["rados"];
  if (!r.contains("crush_map") || !r["crush_map"].is_string()) return;
  const std::string p = r["crush_map"].get<std::string>();
  if (!p.empty() && p[0] == '/') return;
  const size_t slash = scenario_path.rfind('/');
  const std::string dir = slash == std::string::npos ? "." : scenario_path.substr(0, slash);
  r["crush_map"] = dir + "/" + p;
}

nlohmann::ordered_json shrink_scenario(nlohmann::ordered_json s, const std::string& scenario_path) {
  make_crush_map_path_absolute(s, scenario_path);
  auto& c = s["cluster"];
  auto& clients = c["clients"];
  clients["count"] = std::min<int64_t>(clients["count"].get<int64_t>(), 2);
  clients["accelerators_per_node"] =
      std::min<int64_t>(clients.value("accelerators_per_node", int64_t{8}), 2);
  auto& storage = s["storage"];
  const bool own_map = storage.contains("rados") && storage["rados"].contains("crush_map");
  if (!own_map) {
    int64_t need = 3;
    if (storage.contains("rados")) {
      const auto& r = storage["rados"];
      if (r.contains("erasure")) {
        need = r["erasure"]["k"].get<int64_t>() + r["erasure"]["m"].get<int64_t>();
      } else {
        need = r.value("replicas", int64_t{3});
      }
    }
    // (Design local: one drive set per client node, its count that of the clients.)
    if (storage.value("design", std::string()) == "local") {
      if (c["storage"].contains("count")) c["storage"]["count"] = clients["count"];
    } else {
      c["storage"]["count"] =
          std::min<int64_t>(c["storage"]["count"].get<int64_t>(), std::max<int64_t>(4, need));
    }
    auto& drive = c["storage"]["drive"];
    drive["count"] = std::min<int64_t>(drive.value("count", int64_t{1}), 4);
  }
  for (auto& w : s["workloads"]) {
    const std::string type = w.value("type", std::string("training_read"));
    if (type == "training_read") {
      w["files"] = 64;
      w["epochs"] = 1;
      w["batch_size"] = 1;
      w["compute_s_per_step"] = 0.01;
    } else if (type == "checkpoint") {
      w["model_gb"] = 1;
      w["optimizer_gb"] = 2;
      w["checkpoints"] = 1;
      w["tensor_parallel"] = 1;
      w["pipeline_parallel"] = 1;
      w["data_parallel"] = 2;
    } else if (type == "block") {
      w["duration_s"] = 0.2;
      w["ramp_s"] = 0.05;
      if (w.contains("queue_depth"))
        w["queue_depth"] = std::min<int64_t>(w["queue_depth"].get<int64_t>(), 8);
    } else if (type == "boot_storm") {
      w["boot_read_mib"] = 16;
    }
  }
  // Short, but past the failure timeline (events at or after the end are refused).
  double last_event_s = 0;
  if (s.contains("failures") && s["failures"].is_array()) {
    for (const auto& f : s["failures"]) {
      for (const char* k : {"at_s", "from_s", "to_s"}) {
        if (f.is_object() && f.contains(k) && f[k].is_number()) {
          last_event_s = std::max(last_event_s, f[k].get<double>());
        }
      }
    }
  }
  s["simulation"]["max_simulated_s"] = std::max(5.0, last_event_s + 10);
  s.erase("expect");
  return s;
}

// ---------------------------------------------------------------- isolation

const char* outcome_name(Outcome o) {
  switch (o) {
    case Outcome::kAccepted:
      return "accepted";
    case Outcome::kCleanError:
      return "clean error";
    case Outcome::kBadMessage:
      return "bad message";
    case Outcome::kCrash:
      return "crash";
    case Outcome::kInternalError:
      return "internal error";
    case Outcome::kHang:
      return "hang";
    case Outcome::kOverMemory:
      return "over memory";
    case Outcome::kWrongResult:
      return "wrong result";
  }
  return "?";
}

namespace {

constexpr int kOverMemoryExit = 97;

void write_all(int fd, const char* p, size_t n) {
  while (n > 0) {
    const ssize_t w = ::write(fd, p, n);
    if (w < 0) {
      if (errno == EINTR) continue;
      return;
    }
    p += w;
    n -= static_cast<size_t>(w);
  }
}

void set_address_space_limit(uint64_t bytes) {
  if (bytes == 0) return;
  rlimit rl{bytes, bytes};
  setrlimit(RLIMIT_AS, &rl);
}

// VmRSS of a process in bytes, 0 when unknown.
uint64_t rss_bytes(pid_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/status");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("VmRSS:", 0) == 0) return std::strtoull(line.c_str() + 6, nullptr, 10) * 1024;
  }
  return 0;
}

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

}  // namespace

CaseResult run_in_child(const std::function<CaseResult()>& fn, const ChildLimits& limits) {
  int fds[2];
  if (pipe(fds) != 0) return {Outcome::kCrash, "pipe failed", ""};
  std::fflush(nullptr);
  const pid_t pid = fork();
  if (pid < 0) return {Outcome::kCrash, "fork failed", ""};
  if (pid == 0) {
    close(fds[0]);
    set_address_space_limit(limits.address_space_bytes);
    std::set_new_handler([] { _exit(kOverMemoryExit); });
    alarm(static_cast<unsigned>(std::ceil(limits.wall_s)));
    std::string reply;
    try {
      const CaseResult r = fn();
      reply = std::string(1, static_cast<char>('0' + static_cast<int>(r.outcome))) + r.detail;
    } catch (const std::bad_alloc&) {
      _exit(kOverMemoryExit);
    } catch (const std::exception& e) {
      reply = std::string("X") + typeid(e).name() + ": " + e.what();
    } catch (...) {
      reply = "Xunknown exception";
    }
    write_all(fds[1], reply.data(), reply.size());
    close(fds[1]);
    _exit(0);
  }
  close(fds[1]);
  std::string reply;
  char buf[65536];
  for (;;) {
    const ssize_t n = ::read(fds[0], buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    reply.append(buf, static_cast<size_t>(n));
  }
  close(fds[0]);
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  CaseResult r;
  if (WIFSIGNALED(status)) {
    const int sig = WTERMSIG(status);
    if (sig == SIGALRM)
      return {Outcome::kHang, "no answer within " + number_text(limits.wall_s) + " s", ""};
    return {Outcome::kCrash,
            std::string("killed by signal ") + std::to_string(sig) + " (" + strsignal(sig) + ")",
            ""};
  }
  if (WIFEXITED(status) && WEXITSTATUS(status) == kOverMemoryExit) {
    return {Outcome::kOverMemory,
            "allocation failed under a " + std::to_string(limits.address_space_bytes >> 20) +
                " MiB address-space limit",
            ""};
  }
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0 || reply.empty()) {
    return {Outcome::kCrash, "child exited with status " + std::to_string(WEXITSTATUS(status)), ""};
  }
  if (reply[0] == 'X') return {Outcome::kCrash, "exception escaped: " + reply.substr(1), ""};
  const auto outcome = static_cast<Outcome>(reply[0] - '0');
  return {outcome, reply.substr(1), outcome == Outcome::kCleanError ? reply.substr(1) : ""};
}

ProgramResult run_program(const std::vector<std::string>& argv, const ChildLimits& limits) {
  ProgramResult r;
  char err_path[] = "/tmp/granary-fuzz-stderr-XXXXXX";
  const int err_fd = mkstemp(err_path);
  if (err_fd < 0) return r;
  std::fflush(nullptr);
  const auto t0 = std::chrono::steady_clock::now();
  const pid_t pid = fork();
  if (pid == 0) {
    const int null_fd = open("/dev/null", O_WRONLY);
    dup2(null_fd, 1);
    dup2(err_fd, 2);
    set_address_space_limit(limits.address_space_bytes);
    std::vector<char*> args;
    for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
    args.push_back(nullptr);
    execv(args[0], args.data());
    _exit(127);
  }
  close(err_fd);
  int status = 0;
  for (;;) {
    const pid_t w = waitpid(pid, &status, WNOHANG);
    if (w == pid) break;
    if (seconds_since(t0) > limits.wall_s) {
      r.timed_out = true;
      kill(pid, SIGKILL);
    } else if (limits.rss_bytes > 0 && rss_bytes(pid) > limits.rss_bytes) {
      r.over_memory = true;
      kill(pid, SIGKILL);
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  r.wall_s = seconds_since(t0);
  if (WIFEXITED(status)) {
    r.exited = true;
    r.exit_code = WEXITSTATUS(status);
  } else if (WIFSIGNALED(status)) {
    r.signal = WTERMSIG(status);
  }
  std::ifstream in(err_path, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  r.err = s.str();
  std::remove(err_path);
  return r;
}

// ---------------------------------------------------------------- message checks

std::string check_error_line(std::string_view message, std::string_view source, size_t max_bytes) {
  if (message.empty()) return "empty message";
  if (message.find('\n') != std::string_view::npos) return "more than one line";
  if (message.size() > max_bytes) {
    return std::to_string(message.size()) + " bytes, more than " + std::to_string(max_bytes);
  }
  if (message.find(source) == std::string_view::npos)
    return "does not name the source '" + std::string(source) + "'";
  // valid UTF-8, no control characters
  size_t i = 0;
  while (i < message.size()) {
    const unsigned char c = static_cast<unsigned char>(message[i]);
    if (c < 0x80) {
      if ((c < 0x20 && c != '\t') || c == 0x7f) {  // a tab is still one readable line
        char hex[8];
        std::snprintf(hex, sizeof hex, "0x%02x", c);
        return std::string("control character ") + hex + " at byte " + std::to_string(i);
      }
      ++i;
      continue;
    }
    size_t len = 0;
    uint32_t cp = 0;
    if ((c & 0xe0) == 0xc0) {
      len = 2;
      cp = c & 0x1f;
    } else if ((c & 0xf0) == 0xe0) {
      len = 3;
      cp = c & 0x0f;
    } else if ((c & 0xf8) == 0xf0) {
      len = 4;
      cp = c & 0x07;
    } else {
      return "invalid UTF-8 at byte " + std::to_string(i);
    }
    if (i + len > message.size()) return "invalid UTF-8 at byte " + std::to_string(i);
    for (size_t k = 1; k < len; ++k) {
      const unsigned char cc = static_cast<unsigned char>(message[i + k]);
      if ((cc & 0xc0) != 0x80) return "invalid UTF-8 at byte " + std::to_string(i);
      cp = (cp << 6) | (cc & 0x3f);
    }
    if ((len == 2 && cp < 0x80) || (len == 3 && cp < 0x800) || (len == 4 && cp < 0x10000) ||
        cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff)) {
      return "invalid UTF-8 at byte " + std::to_string(i);
    }
    i += len;
  }
  return "";
}

// ---------------------------------------------------------------- tallies and settings

void Counts::add(Outcome o) {
  ++cases;
  switch (o) {
    case Outcome::kAccepted:
      ++accepted;
      break;
    case Outcome::kCleanError:
      ++clean_errors;
      break;
    case Outcome::kBadMessage:
      ++bad_messages;
      break;
    case Outcome::kCrash:
      ++crashes;
      break;
    case Outcome::kInternalError:
      ++internal_errors;
      break;
    case Outcome::kHang:
      ++hangs;
      break;
    case Outcome::kOverMemory:
      ++over_memory;
      break;
    case Outcome::kWrongResult:
      ++wrong_results;
      break;
  }
}

std::string Counts::line(const std::string& what, uint64_t seed) const {
  std::ostringstream s;
  s << what << " (seed " << seed << "): " << cases << " cases, " << clean_errors
    << " clean errors, " << accepted << " accepted, " << bad_messages << " bad messages, "
    << crashes << " crashes, " << internal_errors << " internal errors, " << hangs << " hangs, "
    << over_memory << " over memory, " << wrong_results << " wrong results";
  return s.str();
}

uint64_t FuzzSettings::cases(uint64_t normal, uint64_t soak_count) const {
  if (cases_override >= 0) return static_cast<uint64_t>(cases_override);
  return soak ? soak_count : normal;
}

FuzzSettings settings_from_environment() {
  FuzzSettings s;
  if (const char* v = std::getenv("GRANARY_FUZZ_SEED")) s.seed = std::strtoull(v, nullptr, 10);
  if (const char* v = std::getenv("GRANARY_FUZZ_CASE")) s.only_case = std::strtoll(v, nullptr, 10);
  if (const char* v = std::getenv("GRANARY_FUZZ_SOAK")) s.soak = std::string(v) == "1";
  if (const char* v = std::getenv("GRANARY_FUZZ_CASES"))
    s.cases_override = std::strtoll(v, nullptr, 10);
  if (const char* v = std::getenv("GRANARY_FUZZ_OUT")) s.out_dir = v;
  return s;
}

std::string save_case(const FuzzSettings& settings, const std::string& name,
                      std::string_view text) {
  static std::string fresh;
  std::string dir = settings.out_dir;
  if (dir.empty()) {
    if (fresh.empty()) {
      char tmpl[] = "/tmp/granary-fuzz-XXXXXX";
      fresh = mkdtemp(tmpl) ? tmpl : "/tmp";
    }
    dir = fresh;
  }
  for (size_t slash = dir.find('/', 1);; slash = dir.find('/', slash + 1)) {  // mkdir -p
    mkdir(dir.substr(0, slash).c_str(), 0755);
    if (slash == std::string::npos) break;
  }
  const std::string path = dir + "/" + name;
  std::ofstream(path, std::ios::binary)
      .write(text.data(), static_cast<std::streamsize>(text.size()));
  return path;
}

std::string FindingLog::add(uint64_t case_index, const std::string& base, const MutatedInput& input,
                            const CaseResult& result, const std::string& extension,
                            const std::string& test_filter) {
  // the signature: outcome, the reason (a bad message's complaint), the message without its
  // source, path and quoted values, numbers blanked; for crashes, hangs and memory: the kinds of
  // mutation that led there
  std::string d = result.detail;
  std::string reason;
  if (result.outcome == Outcome::kBadMessage) {
    const size_t colon = d.find(": ");
    reason = d.substr(0, colon) + " / ";
    d = colon == std::string::npos ? "" : d.substr(colon + 2);
  }
  if (const size_t at = d.find("fuzz-"); at != std::string::npos) {
    const size_t colon = d.find(": ", at);
    if (colon != std::string::npos) d.erase(0, colon + 2);
    const size_t path_end = d.find(": ");  // "cluster.clients.nic.profile: unknown ..."
    if (path_end != std::string::npos && d.find(' ') > path_end) d.erase(0, path_end + 2);
  }
  if (result.outcome == Outcome::kCrash || result.outcome == Outcome::kHang ||
      result.outcome == Outcome::kOverMemory) {
    d = input.description;
  }
  d = reason + d;
  std::string sig = outcome_name(result.outcome);
  sig += ": ";
  bool quoted = false;
  for (char c : d) {
    if (sig.size() > 80) break;
    if (c == '\'') {
      quoted = !quoted;
      if (quoted) sig += "'...'";
      continue;
    }
    if (quoted) continue;
    if (std::isdigit(static_cast<unsigned char>(c))) {
      if (sig.back() != 'N') sig += 'N';
    } else if (static_cast<unsigned char>(c) >= 0x20 && static_cast<unsigned char>(c) < 0x7f) {
      sig += c;
    } else {
      sig += '?';
    }
  }
  Finding& f = findings_[sig];
  if (f.count++ > 0) return "";
  f.first_case = case_index;
  f.detail = result.detail.substr(0, 400);
  f.path = save_case(settings_,
                     prefix_ + "-seed" + std::to_string(settings_.seed) + "-case" +
                         std::to_string(case_index) + extension,
                     input.text);
  std::ostringstream s;
  s << prefix_ << " case " << case_index << " (seed " << settings_.seed << ", base " << base << ", "
    << input.description.substr(0, 400) << "): " << outcome_name(result.outcome) << ": " << f.detail
    << "\n  input: " << f.path << "\n  reproduce: GRANARY_FUZZ_SEED=" << settings_.seed
    << " GRANARY_FUZZ_CASE=" << case_index << " build/tests/fuzz_tests --gtest_filter='"
    << test_filter << "'";
  return s.str();
}

std::string FindingLog::summary() const {
  std::ostringstream s;
  s << findings_.size() << " distinct findings\n";
  for (const auto& [sig, f] : findings_) {
    s << "  " << f.count << " x " << sig << " (first: case " << f.first_case << ", " << f.path
      << ")\n";
  }
  return s.str();
}

std::vector<std::string> files_under(const std::string& dir, const std::string& suffix) {
  std::vector<std::string> out;
  DIR* d = opendir(dir.c_str());
  if (!d) return out;
  while (dirent* e = readdir(d)) {
    const std::string n = e->d_name;
    if (n == "." || n == "..") continue;
    const std::string p = dir + "/" + n;
    struct stat st;
    if (stat(p.c_str(), &st) != 0) continue;
    if (S_ISDIR(st.st_mode)) {
      for (std::string& f : files_under(p, suffix)) out.push_back(std::move(f));
    } else if (n.size() >= suffix.size() &&
               n.compare(n.size() - suffix.size(), suffix.size(), suffix) == 0) {
      out.push_back(p);
    }
  }
  closedir(d);
  std::sort(out.begin(), out.end());
  return out;
}

}  // namespace granary::fuzz
