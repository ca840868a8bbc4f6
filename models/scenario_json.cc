// Scenario format 1: JSON -> Scenario, with one-line errors. The validator walks the document
// once, in the order docs/scenario-format.md lists the keys, and stops at the first problem.
// Internally a problem is thrown as a ScenarioError and turned into a Status at the boundary.
#include "models/scenario_json.h"

#include <openssl/evp.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <functional>
#include <initializer_list>
#include <limits>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <sstream>
#include <type_traits>
#include <utility>
#include <vector>

#include "engine/crush/crush_map.h"
#include "engine/crush/text_format.h"
#include "models/catalog.h"
#include "models/expectations.h"
#include "models/json_diagnostics.h"
#include "models/topology.h"

namespace granary::models {

namespace {

using json = nlohmann::json;
namespace fs = std::filesystem;

constexpr int64_t kIntMax = std::numeric_limits<int64_t>::max();
constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr uint64_t kKiB = 1024;
constexpr uint64_t kMiB = 1024 * 1024;
// Files read: a scenario, and the CRUSH map it names (a text map of 65,536 OSDs and their
// buckets is a few MiB).
constexpr uint64_t kMaxScenarioBytes = 64 * kMiB;
constexpr uint64_t kMaxCrushMapBytes = 64 * kMiB;

struct ScenarioError {
  std::string message;
};

// ---- formatting

std::string num(double v) {
  char buf[40];
  std::snprintf(buf, sizeof buf, "%.15g", v);
  return buf;
}

using json_diag::describe;
using json_diag::join;
using json_diag::list;

// ---- ranges

struct IntRange {
  int64_t min = 0;
  int64_t max = kIntMax;
  std::string describe() const {
    if (max == kIntMax) return "an integer >= " + std::to_string(min);
    return "an integer in " + std::to_string(min) + ".." + std::to_string(max);
  }
  bool contains(int64_t v) const { return v >= min && v <= max; }
};

struct NumRange {
  double min = 0;
  bool min_open = false;  // true: > min, false: >= min
  double max = kInf;
  bool max_open = false;
  std::string describe() const {
    std::string s = std::string("a number ") + (min_open ? "> " : ">= ") + num(min);
    if (max != kInf) s += std::string(" and ") + (max_open ? "< " : "<= ") + num(max);
    return s;
  }
  bool contains(double v) const {
    if (!std::isfinite(v)) return false;
    if (min_open ? !(v > min) : !(v >= min)) return false;
    if (max != kInf && (max_open ? !(v < max) : !(v <= max))) return false;
    return true;
  }
};

// ---- the limits of what Granary simulates (docs/scenario-format.md, "Ranges")

// Prices: a billion dollars per part keeps every sum of them finite and exact to the cent.
const NumRange kPrice{0, false, 1e9};
// Bandwidths in GB/s or Gb/s: from 1 MB/s (slower than any link or drive Granary models) to
// 100 TB/s (far above any NIC, drive or memory bus).
const NumRange kGbytesPerS{0.001, false, 1e5};
// Host memory, GiB: up to 64 TiB per node (the largest servers hold 32 TiB).
const NumRange kMemoryGib{0, true, 65536};
// Compute time of one step: up to 10^6 s.
const NumRange kStepSeconds{0, true, 1e6};
// Client (GPU) nodes: the largest GPU clusters have ~100,000 GPUs, ~12,500 nodes of 8;
// 65,536 nodes x 64 accelerators keeps ranks within int32 and topologies within memory.
constexpr int64_t kMaxClientNodes = 65536;
// OSDs (drives) over all storage servers: the largest Ceph clusters have tens of thousands;
// 65,536 bounds the OSD arrays, CRUSH buckets and simulated drives.
constexpr int64_t kMaxDrives = 65536;
// A generated CRUSH map weighs each OSD its capacity in TiB, 16.16 fixed point: the root
// bucket's weight (every drive's) must fit Ceph's 32-bit bucket weight, 65535.
constexpr double kMaxCrushWeightTib = 65535;
// Files of a training set: 2^40 (1.1 x 10^12; LAION-5B has 5.85 x 10^9 samples) keeps file
// indexes, files x samples_per_file and byte counts exact.
constexpr int64_t kMaxFiles = int64_t{1} << 40;
// Bytes of a training set, or a checkpoint: 2^60 (1 EiB); byte counters are 64-bit.
constexpr double kMaxDatasetBytes = 1152921504606846976.0;  // 2^60
// A sample: up to 64 GiB (a drawn size is at least 1 byte).
const NumRange kSampleMib{0, true, 65536};

std::optional<int64_t> as_integer(const json& j) {
  if (j.is_number_integer() && !j.is_number_unsigned()) return j.get<int64_t>();
  if (j.is_number_unsigned()) {
    const uint64_t u = j.get<uint64_t>();
    if (u > static_cast<uint64_t>(kIntMax)) return std::nullopt;
    return static_cast<int64_t>(u);
  }
  if (j.is_number_float()) {
    const double d = j.get<double>();
    if (std::isfinite(d) && std::floor(d) == d && std::fabs(d) < 9.2e18) {
      return static_cast<int64_t>(d);
    }
  }
  return std::nullopt;
}

// ---- the document

class Context {
 public:
  Context(std::string source, fs::path base_dir, const Catalog& catalog)
      : source_(std::move(source)), base_dir_(std::move(base_dir)), catalog_(catalog) {}

  [[noreturn]] void fail(const std::string& path, const std::string& what) const {
    throw ScenarioError{source_ + ": " + (path.empty() ? "" : path + ": ") + what};
  }
  [[noreturn]] void expected(const std::string& path, const std::string& what,
                             const json* found) const {
    fail(path, "expected " + what + ", found " + (found ? describe(*found) : "nothing"));
  }
  const fs::path& base_dir() const { return base_dir_; }
  const std::string& source() const { return source_; }
  const Catalog& catalog() const { return catalog_; }

 private:
  std::string source_;
  fs::path base_dir_;
  const Catalog& catalog_;
};

// One JSON object of the document, its keys checked against the known ones on construction.
class Obj {
 public:
  Obj(const Context& ctx, const json& j, std::string path, std::vector<std::string_view> known)
      : ctx_(ctx), j_(j), path_(std::move(path)) {
    if (!j.is_object()) ctx.expected(path_, "an object", &j);
    for (const auto& [key, value] : j.items()) {
      if (std::find(known.begin(), known.end(), key) != known.end()) continue;
      ctx.fail(join(path_, key), json_diag::unknown_key(key, known));
    }
  }

  const Context& ctx() const { return ctx_; }
  std::string path_of(std::string_view key) const { return join(path_, key); }
  bool has(std::string_view key) const { return j_.contains(key); }
  const json* find(std::string_view key) const {
    auto it = j_.find(key);
    return it == j_.end() ? nullptr : &*it;
  }
  [[noreturn]] void fail(std::string_view key, const std::string& what) const {
    ctx_.fail(path_of(key), what);
  }
  [[noreturn]] void expected(std::string_view key, const std::string& what) const {
    ctx_.expected(path_of(key), what, find(key));
  }

  int64_t integer(std::string_view key, IntRange r, std::optional<int64_t> def) const {
    const json* v = find(key);
    if (!v) {
      if (def) return *def;
      expected(key, r.describe());
    }
    const auto i = as_integer(*v);
    if (!i || !r.contains(*i)) expected(key, r.describe());
    return *i;
  }
  int int32(std::string_view key, IntRange r, std::optional<int64_t> def) const {
    const int64_t v = integer(key, r, def);
    if (v > std::numeric_limits<int>::max()) {
      expected(key, IntRange{r.min, std::numeric_limits<int>::max()}.describe());
    }
    return static_cast<int>(v);
  }
  double number(std::string_view key, NumRange r, std::optional<double> def) const {
    const json* v = find(key);
    if (!v) {
      if (def) return *def;
      expected(key, r.describe());
    }
    if (!v->is_number() || !r.contains(v->get<double>())) expected(key, r.describe());
    return v->get<double>();
  }
  // A rate where 0 means "no limit": 0, or at least `min` (a tiny positive rate would make
  // one operation last forever).
  double limit_or_zero(std::string_view key, double min, double max, double def) const {
    const std::string what = "0 (no limit) or a number >= " + num(min) + " and <= " + num(max);
    const json* v = find(key);
    if (!v) return def;
    if (!v->is_number()) expected(key, what);
    const double d = v->get<double>();
    if (!std::isfinite(d) || !(d == 0 || (d >= min && d <= max))) expected(key, what);
    return d;
  }
  bool boolean(std::string_view key, bool def) const {
    const json* v = find(key);
    if (!v) return def;
    if (!v->is_boolean()) expected(key, "true or false");
    return v->get<bool>();
  }
  std::string string(std::string_view key, std::optional<std::string> def,
                     const char* what = "a non-empty string") const {
    const json* v = find(key);
    if (!v) {
      if (def) return *def;
      expected(key, what);
    }
    if (!v->is_string() || v->get_ref<const std::string&>().empty()) expected(key, what);
    return v->get<std::string>();
  }
  // A name shown in reports and one-line summaries: a non-empty string without control
  // characters (a newline would break the line, a NUL a C string).
  std::string name(std::string_view key, std::optional<std::string> def) const {
    std::string v = string(key, std::move(def));
    if (std::any_of(v.begin(), v.end(),
                    [](char c) { return static_cast<unsigned char>(c) < 0x20 || c == 0x7F; })) {
      fail(key, "expected a name without control characters (newlines, tabs, NUL), found " +
                    json_diag::quote(v));
    }
    return v;
  }
  std::string text(std::string_view key) const {  // any string, empty included
    const json* v = find(key);
    if (!v) return "";
    if (!v->is_string()) expected(key, "a string");
    return v->get<std::string>();
  }
  template <typename E>
  E choice(std::string_view key, std::initializer_list<std::pair<const char*, E>> choices,
           std::optional<E> def) const {
    std::string names;
    for (const auto& c : choices)
      names += std::string(names.empty() ? "" : " or ") + "'" + c.first + "'";
    const json* v = find(key);
    if (!v) {
      if (def) return *def;
      expected(key, names);
    }
    if (v->is_string()) {
      for (const auto& c : choices) {
        if (v->get_ref<const std::string&>() == c.first) return c.second;
      }
    }
    expected(key, names);
  }
  // A size given in a unit (KiB, MiB) converted to bytes; it must be a whole multiple of
  // `align` bytes within [min_bytes, max_bytes].
  uint64_t size_bytes(std::string_view key, uint64_t unit, const char* unit_name,
                      uint64_t min_bytes, uint64_t max_bytes, uint64_t align,
                      uint64_t def_bytes) const {
    const json* v = find(key);
    if (!v) return def_bytes;
    const double u = static_cast<double>(unit);
    std::string what = "a number of " + std::string(unit_name) + " from " +
                       num(static_cast<double>(min_bytes) / u) + " to " +
                       num(static_cast<double>(max_bytes) / u);
    if (align > 1) {
      what += " that is a whole multiple of " +
              (align % kMiB == 0 ? num(static_cast<double>(align / kMiB)) + " MiB"
                                 : num(static_cast<double>(align) / 1024.0) + " KiB");
    }
    if (!v->is_number()) expected(key, what);
    const double x = v->get<double>();
    if (!std::isfinite(x)) expected(key, what);
    const double bytes = x * u;
    if (bytes < static_cast<double>(min_bytes) || bytes > static_cast<double>(max_bytes)) {
      expected(key, what);
    }
    const uint64_t whole = static_cast<uint64_t>(std::llround(bytes));
    if (std::fabs(bytes - static_cast<double>(whole)) > 1e-6 || whole % align != 0) {
      expected(key, what);
    }
    return whole;
  }

  Obj object(std::string_view key, std::vector<std::string_view> known) const {
    const json* v = find(key);
    if (!v) expected(key, "an object");
    return Obj(ctx_, *v, path_of(key), std::move(known));
  }

 private:
  const Context& ctx_;
  const json& j_;
  std::string path_;
};

// ---- JSON text -> json, with line:column for syntax errors and duplicate keys rejected

// nlohmann reports the position after the offending token; step back to where it starts
// (a string's opening quote, a number's or literal's first character).
size_t token_start(std::string_view text, size_t last) {
  if (last >= text.size()) return last;
  auto word = [](char c) {
    return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '.' ||
           c == '+' || c == '-';
  };
  if (text[last] == '"') {
    for (size_t i = last; i-- > 0;) {
      if (text[i] == '\n') break;
      if (text[i] != '"') continue;
      size_t backslashes = 0;
      for (size_t k = i; k-- > 0 && text[k] == '\\';) ++backslashes;
      if (backslashes % 2 == 0) return i;
    }
    return last;
  }
  size_t i = last;
  while (i > 0 && word(text[last]) && word(text[i - 1])) --i;
  return i;
}

std::string one_line(std::string s) {
  std::replace(s.begin(), s.end(), '\n', ' ');
  std::replace(s.begin(), s.end(), '\r', ' ');
  return s;
}

// Follows the parser's events to know the path of each key, and records the first key that
// appears twice in one object (nlohmann would silently keep the last).
class DuplicateKeys {
 public:
  bool event(json::parse_event_t ev, const json& parsed) {
    switch (ev) {
      case json::parse_event_t::object_start:
        frames_.push_back(Frame{false, 0, {}, {}});
        break;
      case json::parse_event_t::array_start:
        frames_.push_back(Frame{true, 0, {}, {}});
        break;
      case json::parse_event_t::key:
        if (!frames_.empty() && parsed.is_string()) {
          Frame& f = frames_.back();
          f.key = parsed.get<std::string>();
          if (!f.keys.insert(f.key).second && !duplicate_) duplicate_ = path();
        }
        break;
      case json::parse_event_t::value:
        if (!frames_.empty() && frames_.back().is_array) ++frames_.back().index;
        break;
      case json::parse_event_t::object_end:
      case json::parse_event_t::array_end:
        if (!frames_.empty()) frames_.pop_back();
        if (!frames_.empty() && frames_.back().is_array) ++frames_.back().index;
        break;
    }
    return true;
  }
  const std::optional<std::string>& duplicate() const { return duplicate_; }
  // While parsing: whether the innermost open container is an object, the path of the value
  // being read (its key or index included), and the path of the innermost container.
  bool in_object() const { return !frames_.empty() && !frames_.back().is_array; }
  std::string value_path() const { return path(); }
  std::string container_path() const {
    std::string p;
    for (size_t i = 0; i + 1 < frames_.size(); ++i) {
      const Frame& f = frames_[i];
      p = f.is_array ? p + "[" + std::to_string(f.index) + "]" : join(p, f.key);
    }
    return p;
  }

 private:
  struct Frame {
    bool is_array;
    size_t index;
    std::string key;
    std::set<std::string> keys;
  };
  std::string path() const {
    std::string p;
    for (const Frame& f : frames_) {
      p = f.is_array ? p + "[" + std::to_string(f.index) + "]" : join(p, f.key);
    }
    return p;
  }
  std::vector<Frame> frames_;
  std::optional<std::string> duplicate_;
};

// nlohmann's "...; last read: '<token>'" echoes the whole token (a 1 MiB string that never
// ends, a byte that is not UTF-8): keep it short and printable.
std::string tidy_nlohmann_message(std::string what) {
  const std::string marker = "; last read: '";
  const size_t at = what.find(marker);
  if (at != std::string::npos && what.size() >= at + marker.size() + 1 && what.back() == '\'') {
    const std::string_view token =
        std::string_view(what).substr(at + marker.size(), what.size() - at - marker.size() - 1);
    // (nlohmann writes control characters as <U+000A> but leaves DEL and bytes that are not
    // UTF-8 raw.)
    if (token.size() > json_diag::kEchoChars || json_diag::invalid_utf8_offset(token) ||
        token.find('\x7f') != std::string_view::npos) {
      std::string shown = json_diag::printable(token);
      if (token.size() > json_diag::kEchoChars) {
        shown += "' (" + std::to_string(token.size()) + " bytes)";
      } else {
        shown += "'";
      }
      what = what.substr(0, at + marker.size()) + shown;
    }
  }
  // Anything else nlohmann quotes (a number that overflows, a token followed by more text) is
  // shortened and made printable the same way.
  if (what.size() > 200 || json_diag::invalid_utf8_offset(what) ||
      what.find('\x7f') != std::string::npos) {
    what = json_diag::printable(what, 200);
  }
  return one_line(what);
}

// Scenario files nest a few levels deep; nlohmann's parser and the code walking its result
// need not face 100,000 levels. A pre-scan skipping strings and comments finds the bracket
// that goes too deep.
constexpr int kMaxNestingDepth = 64;

void check_nesting(const std::string& source, std::string_view text) {
  int depth = 0;
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (c == '"') {
      for (++i; i < text.size() && text[i] != '"'; ++i) {
        if (text[i] == '\\') ++i;
      }
    } else if (c == '/' && i + 1 < text.size() && text[i + 1] == '/') {
      while (i < text.size() && text[i] != '\n') ++i;
    } else if (c == '/' && i + 1 < text.size() && text[i + 1] == '*') {
      const size_t end = text.find("*/", i + 2);
      i = end == std::string_view::npos ? text.size() : end + 1;
    } else if (c == '[' || c == '{') {
      if (++depth > kMaxNestingDepth) {
        const json_diag::TextPosition lc = json_diag::text_position(text, i);
        throw ScenarioError{
            source + ":" + std::to_string(lc.line) + ":" + std::to_string(lc.column) +
            ": invalid JSON: arrays and objects nested more than " +
            std::to_string(kMaxNestingDepth) + " deep (a scenario file needs fewer than 10)"};
      }
    } else if (c == ']' || c == '}') {
      depth = std::max(0, depth - 1);
    }
  }
}

// The string holding the byte at `last` (inside it): the offset of its opening quote.
size_t string_start(std::string_view text, size_t last) {
  for (size_t i = std::min(last, text.size()); i-- > 0;) {
    if (text[i] == '\n') break;
    if (text[i] != '"') continue;
    size_t backslashes = 0;
    for (size_t k = i; k-- > 0 && text[k] == '\\';) ++backslashes;
    if (backslashes % 2 == 0) return i;
  }
  return std::string_view::npos;
}

// Offset in a string's text (as written, escapes undecoded) of the first \\uXXXX escape of a
// surrogate without its partner.
std::optional<size_t> unpaired_surrogate(std::string_view body) {
  auto escape_at = [&](size_t i) -> std::optional<unsigned> {
    if (i + 6 > body.size() || body[i] != '\\' || body[i + 1] != 'u') return std::nullopt;
    unsigned v = 0;
    for (size_t k = i + 2; k < i + 6; ++k) {
      const char c = body[k];
      const int d = c >= '0' && c <= '9'   ? c - '0'
                    : c >= 'a' && c <= 'f' ? c - 'a' + 10
                    : c >= 'A' && c <= 'F' ? c - 'A' + 10
                                           : -1;
      if (d < 0) return std::nullopt;
      v = v * 16 + static_cast<unsigned>(d);
    }
    return v;
  };
  for (size_t i = 0; i < body.size(); ++i) {
    if (body[i] != '\\') continue;
    const auto v = escape_at(i);
    if (!v) {
      ++i;  // another escape: skip its character
      continue;
    }
    if (*v >= 0xDC00 && *v <= 0xDFFF) return i;
    if (*v >= 0xD800 && *v <= 0xDBFF) {
      const auto low = escape_at(i + 6);
      if (!low || *low < 0xDC00 || *low > 0xDFFF) return i;
      i += 11;
      continue;
    }
    i += 5;
  }
  return std::nullopt;
}

json parse_json(const Context& ctx, const std::string& source, std::string_view text) {
  check_nesting(source, text);
  DuplicateKeys dups;
  json j;
  try {
    j = json::parse(
        text.begin(), text.end(),
        [&dups](int, json::parse_event_t ev, json& parsed) { return dups.event(ev, parsed); },
        /*allow_exceptions=*/true, /*ignore_comments=*/true);
  } catch (const json::parse_error& e) {
    // e.byte counts the characters read; the offending token ends with the last of them.
    std::string what = e.what();
    size_t last = e.byte > 0 ? e.byte - 1 : 0;
    // A string with a byte that is not UTF-8, or an escape of half a surrogate pair
    // ("\\udc00"): name its JSON path, as for a bad value.
    const bool bad_bytes = what.find("ill-formed UTF-8") != std::string::npos;
    const bool bad_escape = what.find("surrogate U+") != std::string::npos;
    const size_t open = bad_bytes || bad_escape ? string_start(text, last) : std::string::npos;
    if (open != std::string_view::npos) {
      const std::string_view body = text.substr(open + 1, last + 1 - (open + 1));
      std::optional<std::string> problem;
      if (bad_bytes) {
        if (auto p = json_diag::utf8_problem(body)) problem = p->substr(p->find("invalid byte"));
      } else if (auto at = unpaired_surrogate(body)) {
        problem = "an unpaired surrogate escape " + std::string(body.substr(*at, 6)) +
                  " at offset " + std::to_string(*at);
      }
      if (problem) {
        size_t before = open;
        while (before > 0 && (text[before - 1] == ' ' || text[before - 1] == '\n' ||
                              text[before - 1] == '\t' || text[before - 1] == '\r')) {
          --before;
        }
        const bool key =
            dups.in_object() && before > 0 && (text[before - 1] == '{' || text[before - 1] == ',');
        if (key)
          ctx.fail(dups.container_path(), "expected a key of valid UTF-8 text, found " + *problem);
        ctx.fail(dups.value_path(), "expected valid UTF-8 text, found " + *problem);
      }
    }
    // An invalid literal ("tru }") is reported at the character that ended it.
    if (what.find("invalid literal") != std::string::npos && last > 0 && last < text.size() &&
        (text[last] == ' ' || text[last] == '\n' || text[last] == '\t' || text[last] == '\r' ||
         text[last] == ',' || text[last] == '}' || text[last] == ']')) {
      --last;
    }
    const json_diag::TextPosition lc = json_diag::text_position(text, token_start(text, last));
    const size_t at = what.find("parse error");
    const size_t colon = at == std::string::npos ? std::string::npos : what.find(": ", at);
    if (colon != std::string::npos) what = what.substr(colon + 2);
    throw ScenarioError{source + ":" + std::to_string(lc.line) + ":" + std::to_string(lc.column) +
                        ": invalid JSON: " + tidy_nlohmann_message(what)};
  } catch (const json::exception& e) {
    // Number overflow ("number overflow parsing '1e400'") carries no position: find the token.
    std::string what = e.what();
    const size_t bracket = what.find("] ");
    if (bracket != std::string::npos) what = what.substr(bracket + 2);
    std::string where = source;
    const size_t q1 = what.find('\'');
    const size_t q2 = q1 == std::string::npos ? q1 : what.find('\'', q1 + 1);
    if (q2 != std::string::npos) {
      const size_t pos = text.find(what.substr(q1 + 1, q2 - q1 - 1));
      if (pos != std::string_view::npos) {
        const json_diag::TextPosition lc = json_diag::text_position(text, pos);
        where += ":" + std::to_string(lc.line) + ":" + std::to_string(lc.column);
      }
      const std::string token = what.substr(q1 + 1, q2 - q1 - 1);
      if (token.size() > json_diag::kEchoChars) {
        what = what.substr(0, q1 + 1) + json_diag::printable(token) + "' (" +
               std::to_string(token.size()) + " characters)" + what.substr(q2 + 1);
      }
    }
    throw ScenarioError{where + ": invalid JSON: " + tidy_nlohmann_message(what)};
  }
  if (dups.duplicate()) ctx.fail(*dups.duplicate(), "duplicate key (the object has it earlier)");
  return j;
}

// ---- profiles with overrides

template <typename T, typename Lookup>
T resolve(const Obj& o, std::string_view key, Lookup lookup) {
  const std::string name = o.string(key, std::nullopt, "a profile name (a string)");
  Result<T> r = [&]() -> Result<T> {
    if constexpr (std::is_invocable_v<Lookup, const Catalog&, std::string_view>) {
      return std::invoke(lookup, o.ctx().catalog(), name);  // a Catalog member
    } else {
      return lookup(name);
    }
  }();
  if (!r.ok()) {
    // The catalog's message names the profile as given ('name'): shorten a long one.
    std::string message = r.status().message();
    const std::string given = "'" + name + "'";
    if (const size_t at = message.find(given); at != std::string::npos) {
      message.replace(at, given.size(), json_diag::quote(name, '\''));
    }
    o.fail(key, message);
  }
  return std::move(r).value();
}

DriveProfile parse_drive(const Obj& o) {
  DriveProfile d = resolve<DriveProfile>(o, "profile", &Catalog::drive);
  d.kind = o.choice<DriveKind>(
      "kind",
      {{"nvme", DriveKind::kNvme}, {"sata-ssd", DriveKind::kSataSsd}, {"hdd", DriveKind::kHdd}},
      d.kind);
  // 1 GB (a CRUSH weight of at least 1/65536 TiB) to 1 PB.
  d.capacity_tb = o.number("capacity_tb", {0.001, false, 1000}, d.capacity_tb);
  d.read_gbytes_per_s = o.number("read_gbytes_per_s", kGbytesPerS, d.read_gbytes_per_s);
  d.write_gbytes_per_s = o.number("write_gbytes_per_s", kGbytesPerS, d.write_gbytes_per_s);
  // One I/O per second to 10^8.
  d.read_kiops = o.number("read_kiops", {0.001, false, 1e5}, d.read_kiops);
  d.write_kiops = o.number("write_kiops", {0.001, false, 1e5}, d.write_kiops);
  const NumRange latency{0, true, 1e6};  // up to one second
  d.read_latency_us = o.number("read_latency_us", latency, d.read_latency_us);
  d.write_latency_us = o.number("write_latency_us", latency, d.write_latency_us);
  d.queue_depth = o.int32("queue_depth", {1, 65535}, d.queue_depth);
  d.price_usd = o.number("price_usd", kPrice, d.price_usd);
  if (d.kind == DriveKind::kHdd) {
    // A hard disk's head positions for t_pos(q), interpolated between its queue-depth-1
    // latency and its rated IOPS at queue_depth, less a 4 KiB transfer (sim/drive_model.h):
    // both points must exist and positioning must not grow with the queue.
    if (d.queue_depth < 2) {
      o.fail("queue_depth",
             "expected at least 2 for an hdd (its IOPS figures hold at a deeper queue than "
             "read_latency_us's queue depth 1), found " +
                 std::to_string(d.queue_depth));
    }
    auto check = [&](std::string_view latency_key, double latency_us, std::string_view iops_key,
                     double kiops, std::string_view rate_key, double gbytes_per_s) {
      const double transfer_us = 4096 / (gbytes_per_s * 1e3);
      const double rated_us = 1e3 / kiops;
      if (rated_us <= transfer_us) {
        o.fail(iops_key, "expected fewer 4 KiB operations per second than an hdd's " +
                             std::string(rate_key) + " alone allows (" +
                             num(gbytes_per_s * 1e6 / 4096) + " thousand), found " + num(kiops));
      }
      if (latency_us < rated_us) {
        o.fail(latency_key, "expected at least 1 / " + std::string(iops_key) + " = " +
                                num(rated_us) +
                                " us for an hdd (a 4 KiB operation at queue depth 1 positions at "
                                "least as long as at queue_depth " +
                                std::to_string(d.queue_depth) + "), found " + num(latency_us));
      }
    };
    check("read_latency_us", d.read_latency_us, "read_kiops", d.read_kiops, "read_gbytes_per_s",
          d.read_gbytes_per_s);
    check("write_latency_us", d.write_latency_us, "write_kiops", d.write_kiops,
          "write_gbytes_per_s", d.write_gbytes_per_s);
  }
  return d;
}

NicSpec parse_nic(const Obj& o) {
  NicSpec n;
  n.profile = resolve<NicProfile>(o, "profile", &Catalog::nic);
  n.count = o.int32("count", {1, 64}, 1);
  n.profile.gbps = o.number("gbps", kGbytesPerS, n.profile.gbps);
  n.profile.ports = o.int32("ports", {1, 16}, n.profile.ports);
  n.profile.latency_us = o.number("latency_us", {0, false, 1e6}, n.profile.latency_us);
  n.profile.price_usd = o.number("price_usd", kPrice, n.profile.price_usd);
  return n;
}

const std::vector<std::string_view> kNicKeys = {"profile", "count",      "gbps",
                                                "ports",   "latency_us", "price_usd"};

AcceleratorProfile parse_accelerator(const Obj& clients) {
  const json* v = clients.find("accelerator");
  if (!v || (!v->is_string() && !v->is_object())) {
    clients.expected("accelerator", "an accelerator name or an object with a 'profile'");
  }
  if (v->is_string())
    return resolve<AcceleratorProfile>(clients, "accelerator", &Catalog::accelerator);
  const Obj o = clients.object("accelerator",
                               {"profile", "compute_s_per_step", "host_memory_gib", "price_usd"});
  AcceleratorProfile a = resolve<AcceleratorProfile>(o, "profile", &Catalog::accelerator);
  if (const json* steps = o.find("compute_s_per_step")) {
    if (!steps->is_object()) o.expected("compute_s_per_step", "an object of seconds by workload");
    const std::string path = o.path_of("compute_s_per_step");
    for (const auto& [name, seconds] : steps->items()) {
      if (!seconds.is_number() || !kStepSeconds.contains(seconds.get<double>())) {
        o.ctx().expected(join(path, name), kStepSeconds.describe(), &seconds);
      }
      a.compute_s_per_step[name] = seconds.get<double>();
    }
  }
  if (o.has("host_memory_gib")) {
    // Refused rather than ignored: nothing in Granary models the host memory a benchmark
    // process reserves per accelerator.
    o.fail("host_memory_gib",
           "not a scenario key: Granary models no host memory per accelerator (the report "
           "compares the dataset with cluster.clients.memory_gib, the nodes' memory)");
  }
  a.price_usd = o.number("price_usd", kPrice, a.price_usd);
  return a;
}

ProtocolProfile parse_protocol(const Obj& storage, StorageDesign design) {
  const std::vector<std::string>& allowed = protocols_for_design(design);
  const json* v = storage.find("protocol");
  ProtocolProfile p;
  std::string path = storage.path_of("protocol");
  if (!v) {
    p = protocol_profile(allowed.front()).value();
  } else if (v->is_string()) {
    p = resolve<ProtocolProfile>(storage, "protocol", &protocol_profile);
  } else if (v->is_object()) {
    const Obj o = storage.object(
        "protocol", {"profile", "message_latency_us", "client_cpu_us_per_op",
                     "server_cpu_us_per_op", "cpu_us_per_mib", "efficiency", "zero_copy"});
    p = resolve<ProtocolProfile>(o, "profile", &protocol_profile);
    path = o.path_of("profile");
    p.message_latency_us = o.number("message_latency_us", {0, false, 1e6}, p.message_latency_us);
    p.client_cpu_us_per_op =
        o.number("client_cpu_us_per_op", {0, false, 1e6}, p.client_cpu_us_per_op);
    p.server_cpu_us_per_op =
        o.number("server_cpu_us_per_op", {0, false, 1e6}, p.server_cpu_us_per_op);
    p.cpu_us_per_mib = o.number("cpu_us_per_mib", {0, false, 1e6}, p.cpu_us_per_mib);
    p.efficiency = o.number("efficiency", {0.001, false, 1}, p.efficiency);
    p.zero_copy = o.boolean("zero_copy", p.zero_copy);
    if (design == StorageDesign::kLocal) {
      // No network and no server: these would have nothing to act on.
      for (const char* key : {"efficiency", "server_cpu_us_per_op"}) {
        if (o.has(key)) {
          o.fail(key,
                 "applies to a protocol over a network to a server; design 'local' reads "
                 "the node's own drives (their rated bandwidth is goodput, the node's CPU "
                 "per I/O is client_cpu_us_per_op)");
        }
      }
    }
    // A zero-copy transport spends no CPU per byte: zero_copy true drops the profile's
    // per-MiB cost, and an explicit cpu_us_per_mib > 0 beside it contradicts it.
    if (p.zero_copy && p.cpu_us_per_mib > 0) {
      if (o.has("cpu_us_per_mib")) {
        o.fail("cpu_us_per_mib",
               "expected 0 with zero_copy true (a zero-copy transport spends "
               "no CPU per byte), found " +
                   describe(*o.find("cpu_us_per_mib")));
      }
      p.cpu_us_per_mib = 0;
    }
  } else {
    storage.expected("protocol", "a protocol name or an object with a 'profile'");
  }
  if (std::find(allowed.begin(), allowed.end(), p.name) == allowed.end()) {
    storage.ctx().fail(path, "protocol '" + p.name + "' does not carry design '" +
                                 std::string(storage_design_name(design)) +
                                 "' (expected one of: " + list(allowed) + ")");
  }
  return p;
}

// ---- sections

// A named switch's per-hop latency adds its cable: 10 m of fibre at ~5 ns/m.
constexpr double kSwitchCableLatencyUs = 0.05;

FabricSpec parse_fabric(const Obj& o) {
  FabricSpec f;
  f.topology = o.choice<FabricTopology>("topology",
                                        {{"leaf-spine", FabricTopology::kLeafSpine},
                                         {"fat-tree", FabricTopology::kFatTree},
                                         {"rail-optimized", FabricTopology::kRailOptimized}},
                                        f.topology);
  if (o.has("switch")) {
    f.edge_switch = resolve<SwitchProfile>(o, "switch", &Catalog::fabric_switch);
    f.link_gbps = f.edge_switch.port_gbps;
    f.link_latency_us = f.edge_switch.latency_us + kSwitchCableLatencyUs;
  }
  f.link_gbps = o.number("link_gbps", kGbytesPerS, f.link_gbps);
  if (o.has("switch") && f.link_gbps > f.edge_switch.port_gbps) {
    o.fail("link_gbps", "expected at most " + num(f.edge_switch.port_gbps) +
                            " (the port rate of switch profile '" + f.edge_switch.name +
                            "'), found " + num(f.link_gbps));
  }
  f.link_latency_us = o.number("link_latency_us", {0, false, 1e6}, f.link_latency_us);
  f.hosts_per_leaf = o.int32("hosts_per_leaf", {1, 4096}, f.hosts_per_leaf);
  f.uplinks_per_leaf = o.int32("uplinks_per_leaf", {0, 4096}, f.uplinks_per_leaf);
  f.oversubscription = o.number("oversubscription", {0.01, false, 1000}, f.oversubscription);
  f.spines = o.int32("spines", {0, 4096}, f.spines);
  f.pods = o.int32("pods", {0, 4096}, f.pods);
  f.leaves_per_pod = o.int32("leaves_per_pod", {0, 4096}, f.leaves_per_pod);
  f.rails = o.int32("rails", {0, 64}, f.rails);
  f.storage_on_own_leaves = o.boolean("storage_on_own_leaves", f.storage_on_own_leaves);
  return f;
}

// `local`: storage.design is "local" (the drives sit inside the client nodes).
ClusterSpec parse_cluster(const Obj& o, bool local) {
  ClusterSpec c;
  {
    const Obj cl =
        o.object("clients", {"count", "accelerator", "accelerators_per_node", "nic",
                             "memory_bandwidth_gbytes_per_s", "memory_gib", "gpudirect_storage"});
    ClientNodesSpec& s = c.clients;
    s.count = cl.int32("count", {1, kMaxClientNodes}, std::nullopt);
    s.accelerator = parse_accelerator(cl);
    s.accelerators_per_node = cl.int32("accelerators_per_node", {1, 64}, s.accelerators_per_node);
    s.nic = parse_nic(cl.object("nic", kNicKeys));
    s.memory_bandwidth_gbytes_per_s =
        cl.number("memory_bandwidth_gbytes_per_s", kGbytesPerS, s.memory_bandwidth_gbytes_per_s);
    s.memory_gib = cl.number("memory_gib", kMemoryGib, s.memory_gib);
    s.gpudirect_storage = cl.boolean("gpudirect_storage", s.gpudirect_storage);
  }
  {
    const Obj st = o.object(
        "storage", {"count", "profile", "drive", "nic", "cpu_cores", "server_gbytes_per_s"});
    StorageNodesSpec& s = c.storage;
    if (local) {
      // Each client node's own drives: one drive set per client node, no NIC, no server CPU.
      s.in_client_nodes = true;
      for (const char* key : {"profile", "nic", "cpu_cores"}) {
        if (st.has(key)) {
          st.fail(key, std::string("applies to storage servers on the fabric; design 'local' has "
                                   "the drives inside the client nodes (their NICs and CPUs are "
                                   "cluster.clients')"));
        }
      }
      const int nodes = c.clients.count;
      s.count = st.int32("count", {1, kMaxDrives}, nodes);
      if (s.count != nodes) {
        st.fail("count", "expected " + std::to_string(nodes) +
                             " (design 'local': one drive set in each client node, "
                             "cluster.clients.count), found " +
                             std::to_string(s.count));
      }
    } else {
      s.count = st.int32("count", {1, kMaxDrives}, std::nullopt);
      if (st.has("profile")) {
        s.server = resolve<ServerProfile>(st, "profile", &Catalog::server);
        s.cpu_cores = s.server.cpu_cores;
        s.server_gbytes_per_s = s.server.server_gbytes_per_s;
      }
    }
    const Obj drive =
        st.object("drive", {"profile", "count", "kind", "capacity_tb", "read_gbytes_per_s",
                            "write_gbytes_per_s", "read_kiops", "write_kiops", "read_latency_us",
                            "write_latency_us", "queue_depth", "price_usd"});
    s.drive = parse_drive(drive);
    s.drives_per_node = drive.int32("count", {1, 1024}, s.drives_per_node);
    // Checked here, before anything is built from it (a topology, a CRUSH map).
    if (int64_t{s.count} * s.drives_per_node > kMaxDrives) {
      drive.fail("count", "expected storage.count x drive.count <= " + std::to_string(kMaxDrives) +
                              " drives (OSDs) in all, found " + std::to_string(s.count) + " x " +
                              std::to_string(s.drives_per_node) + " = " +
                              std::to_string(int64_t{s.count} * s.drives_per_node));
    }
    const std::string bays_of = "of server profile '" + s.server.name + "'";
    if (!s.server.name.empty() && s.drives_per_node > s.server.drive_bays) {
      drive.fail("count", "expected at most " + std::to_string(s.server.drive_bays) +
                              " (the drive bays " + bays_of + "), found " +
                              std::to_string(s.drives_per_node));
    }
    if (!local) {
      const Obj nic = st.object("nic", kNicKeys);
      s.nic = parse_nic(nic);
      if (!s.server.name.empty() && s.nic.count > s.server.nic_slots) {
        nic.fail("count", "expected at most " + std::to_string(s.server.nic_slots) +
                              " (the NIC slots " + bays_of + "), found " +
                              std::to_string(s.nic.count));
      }
      s.cpu_cores = st.int32("cpu_cores", {1, 4096}, s.cpu_cores);
    }
    s.server_gbytes_per_s =
        st.number("server_gbytes_per_s", {0, false, 100000}, s.server_gbytes_per_s);
  }
  if (o.has("fabric")) {
    c.fabric = parse_fabric(
        o.object("fabric", {"topology", "switch", "link_gbps", "link_latency_us", "hosts_per_leaf",
                            "uplinks_per_leaf", "oversubscription", "spines", "pods",
                            "leaves_per_pod", "rails", "storage_on_own_leaves"}));
  }
  return c;
}

// storage.rados.recovery: the monitor's failure detection and Ceph's recovery and op-queue
// settings.
RecoverySpec parse_recovery(const Obj& o) {
  const Obj rc =
      o.object("recovery",
               {"heartbeat_interval_s", "heartbeat_grace_s", "down_out_interval_s", "max_backfills",
                "recovery_max_active", "recovery_sleep_s", "recovery_mib_per_s_per_osd",
                "drive_afr", "op_queue", "mclock_profile", "mclock_allocations", "op_shards",
                "op_threads_per_shard", "mclock_max_capacity_iops",
                "mclock_max_sequential_bandwidth_mib_per_s", "recovery_max_single_start"});
  RecoverySpec v;
  v.heartbeat_interval_s =
      rc.number("heartbeat_interval_s", {0, true, 3600}, v.heartbeat_interval_s);
  v.heartbeat_grace_s = rc.number("heartbeat_grace_s", {0, true, 3600}, v.heartbeat_grace_s);
  v.down_out_interval_s = rc.number("down_out_interval_s", {0, false, 1e7}, v.down_out_interval_s);
  // (Above 128 a simulated OSD runs out of task stacks; recovery rates no longer change
  // there: 10, 64 and 128 in flight give 1,903, 1,902 and 1,901 MiB/s, docs/validation.md.)
  v.max_backfills = rc.int32("max_backfills", {1, 128}, v.max_backfills);
  v.recovery_max_active = rc.int32("recovery_max_active", {1, 128}, v.recovery_max_active);
  v.recovery_sleep_s = rc.number("recovery_sleep_s", {0, false, 60}, v.recovery_sleep_s);
  v.recovery_bytes_per_s_per_osd =
      rc.limit_or_zero("recovery_mib_per_s_per_osd", 0.001, 1e7, 0) * kMiB;
  v.drive_afr = rc.number("drive_afr", {0, true, 1, true}, v.drive_afr);
  using Q = RecoverySpec::OpQueue;
  v.op_queue = rc.choice<Q>(
      "op_queue", {{"none", Q::kNone}, {"wpq", Q::kWpq}, {"mclock_scheduler", Q::kMclock}},
      v.op_queue);
  const bool queued = v.op_queue != Q::kNone, mclock = v.op_queue == Q::kMclock;
  // Every key has an effect or is refused: the queue's keys need a queue, mClock's mClock.
  for (const char* k : {"op_shards", "op_threads_per_shard", "recovery_max_single_start"}) {
    if (!queued && rc.has(k)) rc.fail(k, "applies only with op_queue 'wpq' or 'mclock_scheduler'");
  }
  for (const char* k : {"mclock_profile", "mclock_allocations", "mclock_max_capacity_iops",
                        "mclock_max_sequential_bandwidth_mib_per_s"}) {
    if (!mclock && rc.has(k)) rc.fail(k, "applies only with op_queue 'mclock_scheduler'");
  }
  v.mclock_profile = rc.choice<std::string>("mclock_profile",
                                            {{"high_client_ops", "high_client_ops"},
                                             {"balanced", "balanced"},
                                             {"high_recovery_ops", "high_recovery_ops"}},
                                            v.mclock_profile);
  v.mclock_allocations = rc.choice<std::string>(
      "mclock_allocations", {{"reef", "reef"}, {"quincy-17.0.0-dev", "quincy-17.0.0-dev"}},
      v.mclock_allocations);
  v.op_shards = rc.int32("op_shards", {1, 64}, v.op_shards);
  v.op_threads_per_shard = rc.int32("op_threads_per_shard", {1, 64}, v.op_threads_per_shard);
  v.mclock_max_capacity_iops =
      rc.number("mclock_max_capacity_iops", {1, false, 1e8}, v.mclock_max_capacity_iops);
  v.mclock_max_sequential_bytes_per_s =
      rc.number("mclock_max_sequential_bandwidth_mib_per_s", {1, false, 1e7}, 0) * kMiB;
  v.recovery_max_single_start =
      rc.int32("recovery_max_single_start", {1, 128}, v.recovery_max_single_start);
  return v;
}

RadosSpec parse_rados(const Obj& o, const ClusterSpec& cluster) {
  RadosSpec r;
  // Ceph's mon_max_pool_pg_num default is 65536.
  r.pg_num = static_cast<uint32_t>(o.integer("pg_num", {1, 65536}, r.pg_num));
  if (o.has("replicas") && o.has("erasure")) {
    o.fail("erasure", "expected either 'replicas' or 'erasure', found both");
  }
  int shards = 0;
  std::string shards_key = "replicas";
  if (o.has("erasure")) {
    const Obj ec = o.object("erasure", {"k", "m"});
    r.replicas = 0;
    r.ec_k = ec.int32("k", {1, 32}, std::nullopt);
    r.ec_m = ec.int32("m", {1, 32}, std::nullopt);
    shards = r.ec_k + r.ec_m;
    shards_key = "erasure";
  } else {
    r.replicas = o.int32("replicas", {1, 10}, r.replicas);
    shards = r.replicas;
  }
  // Ceph's osd_max_object_size default is 128 MiB; objects are whole 4 KiB pages.
  r.object_size_bytes = o.size_bytes("object_size_mib", kMiB, "MiB", 4 * kKiB, 128 * kMiB, 4 * kKiB,
                                     r.object_size_bytes);
  if ((r.object_size_bytes & (r.object_size_bytes - 1)) != 0) {
    // Files are striped into objects with RBD's layout, whose object sizes are powers of two.
    o.fail("object_size_mib", "expected a power of two (4 KiB .. 128 MiB), found " +
                                  num(static_cast<double>(r.object_size_bytes) / kMiB) + " MiB");
  }
  r.inflight_objects = o.int32("inflight_objects", {1, 1024}, r.inflight_objects);
  r.stored_bytes = o.number("stored_tib", {0, false, 1e6}, 0) * 1099511627776.0;
  if (o.has("recovery")) r.recovery = parse_recovery(o);
  if (!o.has("crush_map")) {
    if (o.has("crush_rule")) {
      o.fail("crush_rule",
             "applies only together with crush_map (the generated map has its own rule)");
    }
    if (shards > cluster.storage.count) {
      o.fail(shards_key, "expected at most " + std::to_string(cluster.storage.count) +
                             " shards (the generated CRUSH map puts each on its own storage "
                             "node), found " +
                             (r.ec_k > 0 ? std::to_string(r.ec_k) + "+" + std::to_string(r.ec_m) +
                                               " = " + std::to_string(shards)
                                         : std::to_string(shards)));
    }
    // The map the run generates weighs each OSD its capacity in TiB (16.16 fixed point, as
    // sim/runner.cc builds it); its root must stay within CRUSH's 32-bit bucket weight.
    const double tib = cluster.storage.drive.capacity_tb * 1e12 / std::ldexp(1.0, 40);
    const uint64_t device_weight = static_cast<uint64_t>(tib * crush::kWeightOne);
    const int64_t drives = int64_t{cluster.storage.count} * cluster.storage.drives_per_node;
    if (device_weight * static_cast<uint64_t>(drives) > crush::kMaxBucketWeight) {
      o.fail("crush_map",
             "expected a CRUSH map for a pool of more than " + num(kMaxCrushWeightTib) +
                 " TiB (a generated map weighs each OSD its TiB, and a CRUSH bucket weighs at "
                 "most 65535), found none for " +
                 std::to_string(cluster.storage.count) + " storage nodes x " +
                 std::to_string(cluster.storage.drives_per_node) + " drives x " + num(tib) +
                 " TiB = " + num(std::round(tib * static_cast<double>(drives))) + " TiB");
    }
    return r;
  }
  const std::string rel = o.string("crush_map", std::nullopt, "a path to a CRUSH map (a string)");
  if (rel.find('\0') != std::string::npos) {
    o.fail("crush_map", "expected a file path, found " + describe(*o.find("crush_map")) +
                            ", which holds a NUL character");
  }
  const fs::path resolved = (o.ctx().base_dir() / rel).lexically_normal();
  const std::string shown = json_diag::quote(resolved.string(), '\'', 256);
  if (auto bad = json_diag::utf8_problem(resolved.string())) {
    o.fail("crush_map", "the path " + shown + " is not valid UTF-8 (" + *bad + ")");
  }
  // Only a regular file of a bounded size is read: not a directory, a FIFO or a device
  // (/dev/zero would never end), nor a file larger than any CRUSH map.
  std::error_code ec;
  const fs::file_status st = fs::status(resolved, ec);
  if (!fs::exists(st)) {
    o.fail("crush_map", "expected a CRUSH map file, found no file at " + shown);
  }
  if (!fs::is_regular_file(st)) {
    o.fail("crush_map", "expected a CRUSH map file, found " +
                            std::string(fs::is_directory(st) ? "a directory" : "a special file") +
                            " at " + shown);
  }
  const uintmax_t map_bytes = fs::file_size(resolved, ec);
  if (ec || map_bytes > kMaxCrushMapBytes) {
    o.fail("crush_map", "expected a CRUSH map file of at most " +
                            std::to_string(kMaxCrushMapBytes / kMiB) + " MiB, found " +
                            (ec ? std::string("a file whose size cannot be read")
                                : std::to_string(map_bytes) + " bytes") +
                            " at " + shown);
  }
  r.crush_map_path = resolved.string();
  Result<crush::CrushMap> map = crush::load_text_map(r.crush_map_path);
  // (One printable line, whatever the map holds.)
  if (!map.ok()) o.fail("crush_map", json_diag::printable(map.status().message(), 1000));
  int devices = 0;
  for (const auto& [id, name] : map->item_names()) devices += id >= 0 ? 1 : 0;
  const int64_t drives =
      static_cast<int64_t>(cluster.storage.count) * cluster.storage.drives_per_node;
  if (devices != drives) {
    o.fail("crush_map", "expected one device per drive (" + std::to_string(cluster.storage.count) +
                            " storage nodes x " + std::to_string(cluster.storage.drives_per_node) +
                            " drives = " + std::to_string(drives) + "), found " +
                            std::to_string(devices) + " devices in the map");
  }
  r.crush_rule = o.int32("crush_rule", {0, 255}, 0);
  const crush::Rule* rule = map->rule(r.crush_rule);
  if (!rule) {
    std::string ids;
    for (int32_t id = 0; id < map->max_rules(); ++id) {
      if (map->rule(id)) ids += (ids.empty() ? "" : ", ") + std::to_string(id);
    }
    o.fail("crush_rule",
           "expected a rule of the CRUSH map (" + ids + "), found " + std::to_string(r.crush_rule));
  }
  const bool erasure = r.ec_k > 0;
  const std::string rule_desc = "rule " + std::to_string(rule->id) + " ('" + rule->name + "')";
  if (erasure != (rule->type == crush::kRuleErasure)) {
    o.fail("crush_rule", "expected " + std::string(erasure ? "an erasure" : "a replicated") +
                             " rule for a" + (erasure ? "n erasure-coded" : " replicated") +
                             " pool, found " + rule_desc + " of the other type");
  }
  if (shards < rule->min_size || shards > rule->max_size) {
    o.fail("crush_rule", "expected a rule for pools of " + std::to_string(shards) +
                             " shards, found " + rule_desc + " for " +
                             std::to_string(rule->min_size) + ".." +
                             std::to_string(rule->max_size));
  }
  return r;
}

PfsSpec parse_pfs(const Obj& o, const ClusterSpec& cluster) {
  PfsSpec p;
  if (o.has("mds")) {
    const Obj mds = o.object("mds", {"count", "ops_per_s", "open_ops_per_s", "close_ops_per_s",
                                     "create_ops_per_s", "stat_ops_per_s", "latency_us"});
    p.mds_count = mds.int32("count", {1, 256}, p.mds_count);
    p.mds_ops_per_s = mds.number("ops_per_s", {0.001, false, 1e9}, p.mds_ops_per_s);
    p.mds_open_per_s = mds.number("open_ops_per_s", {0.001, false, 1e9}, 0);
    p.mds_close_per_s = mds.number("close_ops_per_s", {0.001, false, 1e9}, 0);
    p.mds_create_per_s = mds.number("create_ops_per_s", {0.001, false, 1e9}, 0);
    p.mds_stat_per_s = mds.number("stat_ops_per_s", {0.001, false, 1e9}, 0);
    p.mds_latency_us = mds.number("latency_us", {0, true, 1e6}, p.mds_latency_us);
  }
  // Lustre stripe sizes are multiples of 64 KiB, below 4 GiB (at most 4 GiB - 64 KiB).
  p.stripe_size_bytes = o.size_bytes("stripe_size_mib", kMiB, "MiB", 64 * kKiB,
                                     4096 * kMiB - 64 * kKiB, 64 * kKiB, p.stripe_size_bytes);
  p.osts_per_server =
      o.int32("osts_per_server", {0, cluster.storage.drives_per_node}, p.osts_per_server);
  if (p.osts_per_server != 0 && p.osts_per_server != cluster.storage.drives_per_node) {
    // An OST over several drives (a RAID set) is not simulated: refuse rather than ignore.
    o.fail("osts_per_server",
           "expected 0 or " + std::to_string(cluster.storage.drives_per_node) +
               " (one OST per drive; OSTs spanning several drives are not simulated yet), found " +
               std::to_string(p.osts_per_server));
  }
  p.inflight_rpcs = o.int32("inflight_rpcs", {1, 1024}, p.inflight_rpcs);
  const int64_t osts =
      static_cast<int64_t>(cluster.storage.count) *
      (p.osts_per_server > 0 ? p.osts_per_server : cluster.storage.drives_per_node);
  if (const json* sc = o.find("stripe_count")) {
    const auto v = as_integer(*sc);
    // (At most Lustre's LOV_MAX_STRIPE_COUNT, 2000; -1 takes that many when there are more.)
    const int64_t most = std::min<int64_t>(osts, 2000);
    const std::string what = "-1 (all OSTs) or an integer in 1.." + std::to_string(most) +
                             (most < osts ? " (Lustre's most stripes)" : " (the OSTs)");
    if (!v || !(*v == -1 || (*v >= 1 && *v <= most))) o.expected("stripe_count", what);
    p.stripe_count = static_cast<int>(*v);
  }
  return p;
}

NfsSpec parse_nfs(const Obj& o) {
  NfsSpec n;
  // The Linux NFS client's rsize: 4 KiB pages, at most 1 MiB.
  n.rsize_bytes = o.size_bytes("rsize_kib", kKiB, "KiB", 4 * kKiB, kMiB, 4 * kKiB, n.rsize_bytes);
  n.inflight_rpcs = o.int32("inflight_rpcs", {1, 1024}, n.inflight_rpcs);
  n.mount_gbytes_per_s = o.number("mount_gbytes_per_s", {0, false, 100000}, n.mount_gbytes_per_s);
  return n;
}

LocalSpec parse_local(const Obj& o) {
  LocalSpec l;
  // Block reads of 4 KiB pages up to 4 MiB (Linux's max_sectors_kb for NVMe is at most a few
  // MiB; larger reads are split).
  l.io_bytes = o.size_bytes("io_kib", kKiB, "KiB", 4 * kKiB, 4 * kMiB, 4 * kKiB, l.io_bytes);
  l.inflight_ios = o.int32("inflight_ios", {1, 1024}, l.inflight_ios);
  return l;
}

StorageSpec parse_storage(const Obj& o, const ClusterSpec& cluster) {
  StorageSpec s;
  s.design = o.choice<StorageDesign>("design",
                                     {{"rados", StorageDesign::kRados},
                                      {"pfs", StorageDesign::kPfs},
                                      {"nfs", StorageDesign::kNfs},
                                      {"local", StorageDesign::kLocal}},
                                     std::nullopt);
  const std::string design(storage_design_name(s.design));
  for (const char* section : {"rados", "pfs", "nfs", "local"}) {
    if (o.has(section) && design != section) {
      o.fail(section, "applies to design '" + std::string(section) + "', but storage.design is '" +
                          design + "'");
    }
  }
  s.protocol = parse_protocol(o, s.design);
  switch (s.design) {
    case StorageDesign::kRados: {
      const json empty = json::object();
      const std::vector<std::string_view> keys = {"pg_num",           "replicas",  "erasure",
                                                  "object_size_mib",  "crush_map", "crush_rule",
                                                  "inflight_objects", "recovery",  "stored_tib"};
      s.rados = parse_rados(
          o.has("rados") ? o.object("rados", keys) : Obj(o.ctx(), empty, o.path_of("rados"), keys),
          cluster);
      break;
    }
    case StorageDesign::kPfs:
      if (o.has("pfs")) {
        s.pfs = parse_pfs(o.object("pfs", {"mds", "stripe_size_mib", "stripe_count",
                                           "osts_per_server", "inflight_rpcs"}),
                          cluster);
      }
      break;
    case StorageDesign::kNfs:
      if (o.has("nfs")) {
        s.nfs = parse_nfs(o.object("nfs", {"rsize_kib", "inflight_rpcs", "mount_gbytes_per_s"}));
      }
      break;
    case StorageDesign::kLocal:
      if (o.has("local")) s.local = parse_local(o.object("local", {"io_kib", "inflight_ios"}));
      break;
  }
  return s;
}

WorkloadSpec parse_workload(const Obj& o, const AcceleratorProfile& accelerator) {
  WorkloadSpec w;
  TrainingWorkload t;
  std::string preset;
  if (o.has("mlperf")) {
    t = resolve<TrainingWorkload>(o, "mlperf", &mlperf_workload);
    preset = t.name;
  }
  w.name = o.name("name", preset.empty() ? std::nullopt : std::optional<std::string>(preset));
  if (preset.empty()) t.name = w.name;
  const bool have_preset = !preset.empty();
  if (o.has("sample_size_mib") || !have_preset) {
    // Given keys replace the preset's; without a preset the mean is required.
    const Obj size = o.object("sample_size_mib", {"mean", "stddev"});
    // Sizes given here are drawn as given: normal per sample.
    t.sample_sizes = services::SampleSizes::kNormal;
    if (size.has("mean") || !have_preset) {
      t.sample_bytes_mean = size.number("mean", kSampleMib, std::nullopt) * kMiB;
    }
    if (size.has("stddev") || !have_preset) {
      t.sample_bytes_stddev = size.number("stddev", {0, false, 65536}, 0.0) * kMiB;
    }
  }
  t.samples_per_file = o.int32("samples_per_file", {1, 100000}, t.samples_per_file);
  t.files = o.integer("files", {1, kMaxFiles},
                      have_preset ? std::optional<int64_t>(t.files) : std::nullopt);
  const double dataset_bytes =
      static_cast<double>(t.files) * t.samples_per_file * t.sample_bytes_mean;
  if (dataset_bytes > kMaxDatasetBytes) {
    o.fail("files",
           "expected files x samples_per_file x sample_size_mib.mean <= 2^60 bytes "
           "(1 EiB), found " +
               std::to_string(t.files) + " x " + std::to_string(t.samples_per_file) + " x " +
               num(t.sample_bytes_mean / kMiB) + " MiB = " + num(dataset_bytes) + " bytes");
  }
  t.batch_size = o.int32("batch_size", {1, 1000000}, t.batch_size);
  t.read_threads = o.int32("read_threads", {1, 256}, t.read_threads);
  // (The loader needs a slot for the batch it is filling: 0 cannot be simulated.)
  t.prefetch_batches = o.int32("prefetch_batches", {1, 1024}, t.prefetch_batches);
  t.decode_cpu_s_per_sample =
      o.number("decode_cpu_us_per_sample", {0, false, 1e9}, t.decode_cpu_s_per_sample * 1e6) * 1e-6;
  if (o.has("compute_s_per_step")) {
    t.compute_s_per_step = o.number("compute_s_per_step", kStepSeconds, std::nullopt);
  } else {
    auto it = accelerator.compute_s_per_step.find(t.name);
    if (it == accelerator.compute_s_per_step.end()) {
      o.fail("compute_s_per_step", "expected a number > 0 (accelerator '" + accelerator.name +
                                       "' has no compute time for " +
                                       json_diag::quote(t.name, '\'') + "), found nothing");
    }
    t.compute_s_per_step = it->second;
  }
  t.epochs = o.int32("epochs", {1, 1000000}, t.epochs);
  t.au_threshold = o.number("au_threshold", {0, true, 1}, t.au_threshold);
  if (o.has("file_format")) t.file_format = o.name("file_format", std::nullopt);
  w.training = t;
  return w;
}

// Keys of one workload kind that the other does not take.
const std::vector<std::string_view> kTrainingKeys = {"sample_size_mib",
                                                     "samples_per_file",
                                                     "files",
                                                     "batch_size",
                                                     "read_threads",
                                                     "prefetch_batches",
                                                     "decode_cpu_us_per_sample",
                                                     "compute_s_per_step",
                                                     "epochs",
                                                     "au_threshold",
                                                     "file_format"};
const std::vector<std::string_view> kCheckpointKeys = {
    "model_gb",          "optimizer_gb",  "tensor_parallel",
    "pipeline_parallel", "data_parallel", "checkpoints",
    "read_back",         "fsync",         "start_s"};

WorkloadSpec parse_checkpoint(const Obj& o, const ClusterSpec& cluster) {
  WorkloadSpec w;
  w.kind = WorkloadKind::kCheckpoint;
  CheckpointWorkload c;
  std::string preset;
  if (o.has("mlperf")) {
    c = resolve<CheckpointWorkload>(o, "mlperf", &mlperf_checkpoint);
    preset = c.name;
  }
  w.name = o.name("name", preset.empty() ? std::nullopt : std::optional<std::string>(preset));
  if (preset.empty()) c.name = w.name;
  const bool have_preset = !preset.empty();
  auto need = [&](double v) { return have_preset ? std::optional<double>(v) : std::nullopt; };
  // Up to 10^6 GB (1 PB) each: llama3-1t's are 2,571 and 15,426 GB.
  c.model_gb = o.number("model_gb", {0, false, 1e6}, need(c.model_gb));
  c.optimizer_gb = o.number("optimizer_gb", {0, false, 1e6}, need(c.optimizer_gb));
  if (c.total_gb() <= 0) o.fail("model_gb", "expected model_gb + optimizer_gb > 0, found 0");
  c.tensor_parallel = o.int32("tensor_parallel", {1, 1000000}, c.tensor_parallel);
  c.pipeline_parallel = o.int32("pipeline_parallel", {1, 1000000}, c.pipeline_parallel);
  c.data_parallel = o.int32("data_parallel", {1, 1000000}, c.data_parallel);
  const int64_t accelerators =
      int64_t{cluster.clients.count} * cluster.clients.accelerators_per_node;
  // (In 64 bits: 10^6 x 10^6 x 10^6 would overflow CheckpointWorkload::ranks()'s int.)
  const int64_t ranks = int64_t{c.tensor_parallel} * c.pipeline_parallel * int64_t{c.data_parallel};
  if (ranks > accelerators) {
    o.fail("data_parallel",
           "expected tensor_parallel x pipeline_parallel x data_parallel <= " +
               std::to_string(accelerators) + " accelerators (one rank each), found " +
               std::to_string(c.tensor_parallel) + " x " + std::to_string(c.pipeline_parallel) +
               " x " + std::to_string(c.data_parallel) + " = " + std::to_string(ranks));
  }
  c.checkpoints = o.int32("checkpoints", {1, 1000}, c.checkpoints);
  c.read_back = o.boolean("read_back", c.read_back);
  c.fsync = o.boolean("fsync", c.fsync);
  c.start_s = o.number("start_s", {0, false, 1e9, false}, c.start_s);
  w.checkpoint = c;
  return w;
}

const std::vector<std::string_view> kBlockKeys = {"volume",      "nodes",         "block_size_kib",
                                                  "queue_depth", "read_fraction", "rate_iops",
                                                  "duration_s",  "ramp_s"};
const std::vector<std::string_view> kBootKeys = {"volume",      "nodes",         "block_size_kib",
                                                 "queue_depth", "boot_read_mib", "boot_write_mib"};

WorkloadSpec parse_block(const Obj& o, const ClusterSpec& cluster, WorkloadKind kind) {
  WorkloadSpec w;
  w.kind = kind;
  w.name = o.name("name", std::string(kind == WorkloadKind::kBlock ? "block" : "boot-storm"));
  BlockWorkload b;
  if (o.has("volume")) {
    const Obj v = o.object(
        "volume", {"size_gib", "object_size_mib", "stripe_unit_kib", "stripe_count", "clone"});
    b.object_size_bytes = v.size_bytes("object_size_mib", kMiB, "MiB", 4 * kKiB, 2048 * kMiB,
                                       4 * kKiB, b.object_size_bytes);
    if ((b.object_size_bytes & (b.object_size_bytes - 1)) != 0) {
      v.fail("object_size_mib",
             "expected a power of two (RBD's object sizes: 4 KiB .. 2 GiB), found " +
                 num(static_cast<double>(b.object_size_bytes) / kMiB) + " MiB");
    }
    b.stripe_unit_bytes = v.size_bytes("stripe_unit_kib", kKiB, "KiB", 4 * kKiB,
                                       b.object_size_bytes, 4 * kKiB, b.object_size_bytes);
    if (b.object_size_bytes % b.stripe_unit_bytes != 0) {
      v.fail("stripe_unit_kib", "expected a divisor of the object size (" +
                                    num(static_cast<double>(b.object_size_bytes) / kKiB) +
                                    " KiB), found " +
                                    num(static_cast<double>(b.stripe_unit_bytes) / kKiB) + " KiB");
    }
    b.stripe_count = static_cast<uint64_t>(v.integer("stripe_count", {1, 4096}, 1));
    b.volume_bytes = v.size_bytes("size_gib", 1024 * kMiB, "GiB", b.object_size_bytes,
                                  1024 * 1024 * 1024 * kMiB, 4 * kKiB, b.volume_bytes);
    b.clone = v.boolean("clone", b.clone);
  }
  if (b.stripe_unit_bytes == 0) b.stripe_unit_bytes = b.object_size_bytes;
  b.nodes = o.int32("nodes", {0, cluster.clients.count}, b.nodes);
  // The images together, like a training set, stay within 2^60 bytes (64-bit byte counters).
  const int64_t volumes = b.clone ? 1 : (b.nodes > 0 ? b.nodes : cluster.clients.count);
  if (static_cast<double>(volumes) * static_cast<double>(b.volume_bytes) > kMaxDatasetBytes) {
    o.ctx().fail(o.has("volume") ? join(o.path_of("volume"), "size_gib") : o.path_of("nodes"),
                 "expected volumes x volume.size_gib <= 2^60 bytes (1 EiB) in all, found " +
                     std::to_string(volumes) + " volumes x " +
                     num(static_cast<double>(b.volume_bytes) / (1024.0 * kMiB)) + " GiB");
  }
  b.block_bytes =
      o.size_bytes("block_size_kib", kKiB, "KiB", 4 * kKiB, 64 * kMiB, 4 * kKiB, b.block_bytes);
  if (b.block_bytes > b.volume_bytes) {
    o.fail("block_size_kib", "expected at most the volume size (" +
                                 num(static_cast<double>(b.volume_bytes) / kKiB) + " KiB), found " +
                                 num(static_cast<double>(b.block_bytes) / kKiB) + " KiB");
  }
  b.queue_depth = o.int32("queue_depth", {1, 1024}, b.queue_depth);
  if (kind == WorkloadKind::kBlock) {
    b.read_fraction = o.number("read_fraction", {0, false, 1, false}, b.read_fraction);
    b.rate_iops = o.limit_or_zero("rate_iops", 0.001, 1e9, b.rate_iops);
    b.duration_s = o.number("duration_s", {0, true, 3600, false}, b.duration_s);
    b.ramp_s = o.number("ramp_s", {0, false, 3600, false}, b.ramp_s);
  } else {
    b.boot_read_bytes = o.size_bytes("boot_read_mib", kMiB, "MiB", 0, 1024 * 1024 * kMiB, 4 * kKiB,
                                     b.boot_read_bytes);
    b.boot_write_bytes = o.size_bytes("boot_write_mib", kMiB, "MiB", 0, 1024 * 1024 * kMiB,
                                      4 * kKiB, b.boot_write_bytes);
    if (b.boot_read_bytes + b.boot_write_bytes < b.block_bytes) {
      o.fail("boot_read_mib", "expected boot_read_mib + boot_write_mib of at least one block (" +
                                  num(static_cast<double>(b.block_bytes) / kKiB) + " KiB)");
    }
  }
  w.block = b;
  return w;
}

// The keys only some workload kinds take, and which.
const std::vector<std::string_view>& kind_keys(WorkloadKind k) {
  switch (k) {
    case WorkloadKind::kTrainingRead:
      return kTrainingKeys;
    case WorkloadKind::kCheckpoint:
      return kCheckpointKeys;
    case WorkloadKind::kBlock:
      return kBlockKeys;
    case WorkloadKind::kBootStorm:
      return kBootKeys;
  }
  return kTrainingKeys;
}

std::vector<WorkloadSpec> parse_workloads(const Obj& root, const ClusterSpec& cluster) {
  const AcceleratorProfile& accelerator = cluster.clients.accelerator;
  const json* arr = root.find("workloads");
  if (!arr || !arr->is_array() || arr->empty()) {
    root.expected("workloads", "an array of at least one workload");
  }
  std::vector<WorkloadSpec> out;
  std::map<std::string, size_t> seen;
  for (size_t i = 0; i < arr->size(); ++i) {
    const std::string path = root.path_of("workloads") + "[" + std::to_string(i) + "]";
    const std::vector<WorkloadKind> kinds = {WorkloadKind::kTrainingRead, WorkloadKind::kCheckpoint,
                                             WorkloadKind::kBlock, WorkloadKind::kBootStorm};
    std::vector<std::string_view> keys = {"name", "type", "mlperf"};
    for (WorkloadKind k : kinds) {
      for (std::string_view key : kind_keys(k)) {
        if (std::find(keys.begin(), keys.end(), key) == keys.end()) keys.push_back(key);
      }
    }
    const Obj o(root.ctx(), (*arr)[i], path, keys);
    const auto kind = o.choice<WorkloadKind>("type",
                                             {{"training_read", WorkloadKind::kTrainingRead},
                                              {"checkpoint", WorkloadKind::kCheckpoint},
                                              {"block", WorkloadKind::kBlock},
                                              {"boot_storm", WorkloadKind::kBootStorm}},
                                             WorkloadKind::kTrainingRead);
    // A key of another kind that this kind does not take.
    const auto& own = kind_keys(kind);
    for (WorkloadKind other : kinds) {
      for (std::string_view key : kind_keys(other)) {
        if (!o.has(key) || std::find(own.begin(), own.end(), key) != own.end()) continue;
        std::string takers;
        for (WorkloadKind t : kinds) {
          const auto& tk = kind_keys(t);
          if (std::find(tk.begin(), tk.end(), key) == tk.end()) continue;
          takers += std::string(takers.empty() ? "" : ", ") + std::string(workload_kind_name(t));
        }
        o.fail(key, "applies to " + takers + " workloads, not to a " +
                        std::string(workload_kind_name(kind)) + " workload");
      }
    }
    if (kind != WorkloadKind::kTrainingRead && kind != WorkloadKind::kCheckpoint &&
        o.has("mlperf")) {
      o.fail("mlperf", std::string("applies to training_read and checkpoint workloads, not to a ") +
                           std::string(workload_kind_name(kind)) + " workload");
    }
    WorkloadSpec w;
    if (kind == WorkloadKind::kCheckpoint) {
      w = parse_checkpoint(o, cluster);
    } else if (kind == WorkloadKind::kBlock || kind == WorkloadKind::kBootStorm) {
      w = parse_block(o, cluster, kind);
    } else {
      w = parse_workload(o, accelerator);
    }
    if (auto it = seen.find(w.name); it != seen.end()) {
      o.fail("name", "expected a name no other workload has, found " +
                         json_diag::quote(w.name, '\'') + " (also workloads[" +
                         std::to_string(it->second) + "])");
    }
    seen[w.name] = i;
    out.push_back(std::move(w));
  }
  return out;
}

// simulation.carry_data: true needs what can carry data (docs/scenario-format.md): a rados
// design, one training_read or checkpoint workload; with failures, recovery moves objects by
// peering, so the keys that act on sized chunk streams only (in-flight chunks, the op queue,
// its start batch) and data stored beyond what the run holds (stored_tib) are refused.
void refuse_carry_data(const Obj& root, const Obj& sim, const Scenario& s) {
  if (s.simulation.carry_data != true) return;
  if (s.storage.design != StorageDesign::kRados) {
    sim.fail("carry_data",
             "expected false or no carry_data with storage design '" +
                 std::string(storage_design_name(s.storage.design)) +
                 "' (only rados OSDs keep objects in an object store that carries bytes), found "
                 "true");
  }
  if (s.workloads.size() != 1 || (s.workloads[0].kind != WorkloadKind::kTrainingRead &&
                                  s.workloads[0].kind != WorkloadKind::kCheckpoint)) {
    std::string found;
    for (const auto& w : s.workloads) {
      found += (found.empty() ? "" : ", ") + std::string(workload_kind_name(w.kind));
    }
    sim.fail("carry_data",
             "expected false or no carry_data with workloads [" + found +
                 "] (data is carried for one training_read or one checkpoint workload alone), "
                 "found true");
  }
  const json* storage = root.find("storage");
  if (!has_failures(s) || !storage || !storage->is_object() || !storage->contains("rados") ||
      !(*storage)["rados"].is_object()) {
    return;
  }
  const json& rados = (*storage)["rados"];
  const std::string path = join(root.path_of("storage"), "rados");
  const std::string why =
      " with simulation.carry_data true (carried recovery moves a PG's objects by peering, ";
  if (rados.contains("stored_tib")) {
    root.ctx().fail(join(path, "stored_tib"),
                    "expected no stored_tib" + why +
                        "and only the objects the run wrote exist to be moved), found " +
                        rados["stored_tib"].dump());
  }
  if (!rados.contains("recovery") || !rados["recovery"].is_object()) return;
  const json& recovery = rados["recovery"];
  for (const char* key :
       {"recovery_max_active", "recovery_max_single_start", "op_queue", "mclock_profile",
        "mclock_allocations", "op_shards", "op_threads_per_shard", "mclock_max_capacity_iops",
        "mclock_max_sequential_bandwidth_mib_per_s"}) {
    if (!recovery.contains(key)) continue;
    if (std::string_view(key) == "op_queue" && recovery[key] == "none") continue;
    root.ctx().fail(join(join(path, "recovery"), key),
                    std::string("expected no ") + key + why +
                        "not sized chunks through the OSD op queue: this key acts on those "
                        "only), found " +
                        recovery[key].dump());
  }
}

SimulationSpec parse_simulation(const Obj& o) {
  SimulationSpec s;
  s.fidelity = o.choice<Fidelity>(
      "fidelity",
      {{"auto", Fidelity::kAuto}, {"request", Fidelity::kRequest}, {"slice", Fidelity::kSlice}},
      s.fidelity);
  s.representative_nodes = o.int32("representative_nodes", {1, 1000000}, s.representative_nodes);
  s.transfer_unit_bytes = o.size_bytes("transfer_unit_mib", kMiB, "MiB", 4 * kKiB, 1024ull * kMiB,
                                       4 * kKiB, s.transfer_unit_bytes);
  s.stop_at_steady_state = o.boolean("stop_at_steady_state", s.stop_at_steady_state);
  s.max_simulated_s = o.number("max_simulated_s", {0, true, 1e9}, s.max_simulated_s);
  s.steady_state_tolerance =
      o.number("steady_state_tolerance", {0, true, 1, true}, s.steady_state_tolerance);
  if (o.has("carry_data")) s.carry_data = o.boolean("carry_data", false);
  return s;
}

// "[\"leaf0\", \"spine\"]" for a fabric link.
std::string link_text(const Topology& t, const TopologyLink& l) {
  // The lower switch first (switches are numbered from the leaves up).
  const int lo = std::min(l.a, l.b), hi = std::max(l.a, l.b);
  return "[\"" + t.nodes[lo].name + "\", \"" + t.nodes[hi].name + "\"]";
}

// A random_drive_failures entry of failures[] (models/random_failures.h draws it at run time).
RandomDriveFailures parse_random_drive_failures(const Obj& o, size_t index) {
  RandomDriveFailures r;
  r.entry = static_cast<int32_t>(index);
  // afr 1 would be a certain failure within the year: an infinite rate.
  r.afr = o.number("afr", {0, true, 1, true}, std::nullopt);
  r.from_s = o.number("from_s", {0, false, 1e9}, 0.0);
  r.to_s = o.number("to_s", {0, true, 1e9}, std::nullopt);
  if (!(r.to_s > r.from_s)) {
    o.fail("to_s", "expected a time after from_s (" + num(r.from_s) + "), found " + num(r.to_s));
  }
  r.time_scale = o.number("time_scale", {1, false, 1e12}, 1.0);
  if (o.has("replace_after_s")) {
    r.replace_after_s = o.number("replace_after_s", {0, true, 1e9}, std::nullopt);
  }
  return r;
}

// real.lab_hosts (hosts "ssh"): one per machine of the real cluster, in order: the storage
// servers, the monitor (or MDS), the client nodes.
void parse_lab_hosts(const Obj& real, Scenario& s) {
  s.real.ssh_identity = real.text("ssh_identity");
  s.real.bin_dir = real.text("bin_dir");
  const json* arr = real.find("lab_hosts");
  const size_t machines = static_cast<size_t>(s.cluster.storage.count) + 1 +
                          static_cast<size_t>(s.cluster.clients.count);
  if (!s.real.ssh) {
    if (arr) real.fail("lab_hosts", "only with hosts \"ssh\"");
    if (!s.real.ssh_identity.empty()) real.fail("ssh_identity", "only with hosts \"ssh\"");
    if (!s.real.bin_dir.empty()) real.fail("bin_dir", "only with hosts \"ssh\"");
    return;
  }
  if (!arr || !arr->is_array() || arr->size() != machines) {
    real.expected("lab_hosts", "an array of " + std::to_string(machines) +
                                   " lab hosts (the storage servers, the monitor or MDS, the "
                                   "client nodes, in that order)");
  }
  for (size_t i = 0; i < arr->size(); ++i) {
    const Obj o(real.ctx(), (*arr)[i], real.path_of("lab_hosts") + "[" + std::to_string(i) + "]",
                {"address", "ssh", "ssh_port"});
    LabHost h;
    h.address = o.name("address", std::nullopt);
    h.ssh = o.text("ssh");
    h.ssh_port = o.int32("ssh_port", {1, 65535}, 22);
    s.real.lab_hosts.push_back(std::move(h));
  }
}

// A link event's fabric link (link_down, link_degraded, link_up): its two ends in `t`, the
// cables a link_down takes, and `cables_down` (fabric link -> its cables down now) kept; a
// link_down may not cut client nodes or metadata servers off from storage.
void parse_failure_link(const Obj& o, const Topology& t, FailureEvent& e,
                        std::map<int, int>& cables_down) {
  const json* names = o.find("link");
  const char* shape =
      "an array of the two node names a fabric link joins, e.g. [\"leaf0\", \"spine\"]";
  if (!names || !names->is_array() || names->size() != 2 || !(*names)[0].is_string() ||
      !(*names)[1].is_string()) {
    o.expected("link", shape);
  }
  e.link = {(*names)[0].get<std::string>(), (*names)[1].get<std::string>()};
  const int l = find_fabric_link(t, e.link[0], e.link[1]);
  if (l < 0) {
    std::string valid;
    int listed = 0, fabric = 0;
    for (const auto& tl : t.links) {
      if (tl.role != LinkRole::kFabric) continue;
      if (++fabric <= 12) valid += std::string(listed++ ? ", " : "") + link_text(t, tl);
    }
    if (fabric > listed) valid += ", ... (" + std::to_string(fabric) + " in all)";
    o.fail("link", "expected the two ends of a fabric (switch-to-switch) link, one of " + valid +
                       "; found [" + describe((*names)[0]) + ", " + describe((*names)[1]) + "]" +
                       " (a storage host's own NICs fail with nic_down or nic_degraded)");
  }
  const TopologyLink& tl = t.links[l];
  if (e.kind == FailureKind::kLinkDown) {
    const json* c = o.find("cables");
    const auto v = c ? as_integer(*c) : std::optional<int64_t>(1);
    if (!v || *v < 1 || *v > tl.aggregated) {
      o.fail("cables", "expected an integer in 1.." + std::to_string(tl.aggregated) +
                           " (the parallel cables " + link_text(t, tl) + " aggregates), found " +
                           (c ? describe(*c) : "nothing"));
    }
    e.cables = static_cast<int>(*v);
    int& down = cables_down[l];
    down = std::min(tl.aggregated, down + e.cables);
    if (down == tl.aggregated) {
      // The last cable: what is beyond the link is cut off. Only storage hosts can be
      // (their OSDs become unreachable, as in a partition).
      std::vector<std::string> cut;
      for (int n : nodes_beyond(t, static_cast<size_t>(l))) {
        const NodeKind nk = t.nodes[n].kind;
        if (nk == NodeKind::kClient || nk == NodeKind::kMds) cut.push_back(t.nodes[n].name);
      }
      if (!cut.empty()) {
        std::string names_cut;
        for (size_t c2 = 0; c2 < cut.size() && c2 < 4; ++c2) {
          names_cut += (c2 ? ", " : "") + cut[c2];
        }
        if (cut.size() > 4) names_cut += ", ... (" + std::to_string(cut.size()) + ")";
        o.fail("link", "taking down the last of the " + std::to_string(tl.aggregated) +
                           " cables of " + link_text(t, tl) + " would cut off " + names_cut +
                           " from storage; only storage hosts can be cut off (their OSDs "
                           "become unreachable, like a partition)");
      }
    }
  } else if (e.kind == FailureKind::kLinkUp) {
    cables_down[l] = 0;
  }
}

std::vector<FailureEvent> parse_failures(const Obj& root, Scenario& s) {
  std::vector<FailureEvent> out;
  const json* arr = root.find("failures");
  if (!arr) return out;
  if (!arr->is_array()) root.expected("failures", "an array of failure events");
  if (!arr->empty() && s.storage.design != StorageDesign::kRados) {
    root.fail("failures",
              "failure injection is simulated for design 'rados' (Ceph's monitor "
              "and recovery), found design '" +
                  std::string(storage_design_name(s.storage.design)) + "'");
  }
  const int osds = s.cluster.storage.count * s.cluster.storage.drives_per_node;
  using K = FailureKind;
  std::optional<Topology> topology;         // built for the first link event
  std::map<int, int> cables_down;           // fabric link -> its cables down now
  std::map<int32_t, size_t> failed_drives;  // OSD -> the drive_failure event
  for (size_t i = 0; i < arr->size(); ++i) {
    const std::string path = root.path_of("failures") + "[" + std::to_string(i) + "]";
    const json& entry = (*arr)[i];
    if (entry.is_object() && entry.contains("kind") && entry["kind"] == "random_drive_failures") {
      const Obj o(root.ctx(), entry, path,
                  {"kind", "afr", "from_s", "to_s", "time_scale", "replace_after_s"});
      s.random_drive_failures.push_back(parse_random_drive_failures(o, i));
      continue;
    }
    const Obj o(root.ctx(), entry, path,
                {"at_s", "kind", "osd", "host", "hosts", "factor", "link", "cables"});
    FailureEvent e;
    e.entry = static_cast<int32_t>(i);
    e.at_s = o.number("at_s", {0, false, 1e9}, std::nullopt);
    e.kind = o.choice<FailureKind>("kind",
                                   {{"osd_crash", K::kOsdCrash},
                                    {"drive_failure", K::kDriveFailure},
                                    {"drive_replace", K::kDriveReplace},
                                    {"host_down", K::kHostDown},
                                    {"osd_restart", K::kOsdRestart},
                                    {"host_restart", K::kHostRestart},
                                    {"partition", K::kPartition},
                                    {"heal", K::kHeal},
                                    {"slow_drive", K::kSlowDrive},
                                    {"nic_degraded", K::kNicDegraded},
                                    {"nic_down", K::kNicDown},
                                    {"nic_up", K::kNicUp},
                                    {"link_down", K::kLinkDown},
                                    {"link_degraded", K::kLinkDegraded},
                                    {"link_up", K::kLinkUp},
                                    // (Handled above; listed for the error message.)
                                    {"random_drive_failures", K::kDriveFailure}},
                                   std::nullopt);
    const std::string kind(failure_kind_name(e.kind));
    const bool group = e.kind == K::kPartition || e.kind == K::kHeal;
    const bool host = e.kind == K::kHostDown || e.kind == K::kHostRestart ||
                      e.kind == K::kNicDegraded || e.kind == K::kNicDown || e.kind == K::kNicUp;
    const bool link = e.kind == K::kLinkDown || e.kind == K::kLinkDegraded || e.kind == K::kLinkUp;
    const bool slow =
        e.kind == K::kSlowDrive || e.kind == K::kNicDegraded || e.kind == K::kLinkDegraded;
    const char* key = group ? "hosts" : host ? "host" : link ? "link" : "osd";
    for (const char* k : {"osd", "host", "hosts", "link"}) {
      if (std::string_view(k) != key && o.has(k)) {
        o.fail(k, "does not apply to kind '" + kind + "', which takes '" + key + "'");
      }
    }
    if (!slow && o.has("factor")) {
      o.fail("factor", "applies to kinds 'slow_drive', 'nic_degraded' and 'link_degraded' only");
    }
    if (e.kind != K::kLinkDown && o.has("cables")) {
      o.fail("cables", "applies to kind 'link_down' only");
    }
    if (group) {
      const json* hs = o.find("hosts");
      if (!hs || !hs->is_array() || hs->empty()) {
        o.expected("hosts", "a non-empty array of storage host indexes");
      }
      for (size_t h = 0; h < hs->size(); ++h) {
        const auto v = as_integer((*hs)[h]);
        if (!v || *v < 0 || *v >= s.cluster.storage.count) {
          o.fail("hosts", "expected storage host indexes in 0.." +
                              std::to_string(s.cluster.storage.count - 1) + ", found " +
                              describe((*hs)[h]) + " at position " + std::to_string(h));
        }
        e.hosts.push_back(static_cast<int32_t>(*v));
      }
    } else if (link) {
      if (!topology) {
        auto t = build_topology(s.cluster, 0);
        if (!t.ok()) root.fail("cluster", t.status().message());
        topology = std::move(*t);
      }
      parse_failure_link(o, *topology, e, cables_down);
    } else {
      e.target = o.int32(key, {0, (host ? s.cluster.storage.count : osds) - 1}, std::nullopt);
    }
    if (slow) e.factor = o.number("factor", {1, false, 1e6}, std::nullopt);
    if (e.kind == K::kDriveFailure) failed_drives[e.target] = i;
    if (e.kind == K::kDriveReplace) {
      if (failed_drives.erase(e.target) == 0) {
        o.fail("osd",
               "expected an OSD whose drive failed earlier (a drive_failure before it, "
               "not yet replaced), found osd " +
                   std::to_string(e.target) + ", whose drive has not failed");
      }
    }
    if (!out.empty() && e.at_s < out.back().at_s) {
      o.fail("at_s", "expected events in time order (>= " + std::to_string(out.back().at_s) +
                         "), found " + std::to_string(e.at_s));
    }
    out.push_back(e);
  }
  return out;
}

// Times the run would never reach: a training or checkpoint run stops at
// simulation.max_simulated_s, so an event after it would be silently left out, and a block
// workload longer than it can only fail.
void check_simulated_time(const Obj& root, const Scenario& s) {
  const double max_s = s.simulation.max_simulated_s;
  const std::string limit = " (simulation.max_simulated_s, " + num(max_s) + ")";
  for (const FailureEvent& e : s.failures) {
    if (e.at_s >= max_s) {
      root.ctx().fail(root.path_of("failures") + "[" + std::to_string(e.entry) + "].at_s",
                      "expected a time before the run stops" + limit + ", found " + num(e.at_s));
    }
  }
  for (const RandomDriveFailures& r : s.random_drive_failures) {
    if (r.from_s >= max_s) {
      root.ctx().fail(root.path_of("failures") + "[" + std::to_string(r.entry) + "].from_s",
                      "expected a time before the run stops" + limit + ", found " + num(r.from_s));
    }
  }
  for (size_t i = 0; i < s.workloads.size(); ++i) {
    const WorkloadSpec& w = s.workloads[i];
    const std::string path = root.path_of("workloads") + "[" + std::to_string(i) + "]";
    if (w.kind == WorkloadKind::kCheckpoint && w.checkpoint.start_s >= max_s &&
        w.checkpoint.start_s > 0) {
      root.ctx().fail(path + ".start_s", "expected a time before the run stops" + limit +
                                             ", found " + num(w.checkpoint.start_s));
    }
    // (Beside another workload a block window ends with it.)
    if (i == 0 && w.kind == WorkloadKind::kBlock && w.block.ramp_s + w.block.duration_s > max_s) {
      root.ctx().fail(path + ".duration_s", "expected ramp_s + duration_s within the run" + limit +
                                                ", found " + num(w.block.ramp_s) + " + " +
                                                num(w.block.duration_s) + " s");
    }
  }
}

// What format 1 runs (sim/runner.cc, run_scenario): one workload, or a training_read or
// checkpoint workload followed by at most one block or boot_storm workload beside it and, after
// a training_read, at most one checkpoint.
void check_workload_mix(const Context& ctx, const std::vector<WorkloadSpec>& workloads) {
  const auto block_kind = [](WorkloadKind k) {
    return k == WorkloadKind::kBlock || k == WorkloadKind::kBootStorm;
  };
  const WorkloadKind first = workloads.front().kind;
  bool block_beside = false, checkpoint_beside = false;
  for (size_t i = 1; i < workloads.size(); ++i) {
    const WorkloadKind k = workloads[i].kind;
    if (block_kind(k) && !block_beside && !block_kind(first)) {
      block_beside = true;
    } else if (k == WorkloadKind::kCheckpoint && !checkpoint_beside &&
               first == WorkloadKind::kTrainingRead) {
      checkpoint_beside = true;
    } else {
      ctx.fail("workloads[" + std::to_string(i) + "].type",
               "format 1 runs one workload, or a training_read or checkpoint workload followed "
               "by at most one block or boot_storm workload beside it and, after a "
               "training_read, at most one checkpoint; found a " +
                   std::string(workload_kind_name(k)) + " workload here, after a " +
                   std::string(workload_kind_name(first)) + " workload");
    }
  }
}

// A training read's epoch gives each accelerator its share of the files (files / accelerators,
// rounded down, as DLIO shards them) and runs whole batches of their samples: at least one
// (engine/services/gpu_consumer.h, steps_per_epoch).
void check_one_batch_per_accelerator(const Context& ctx, const Scenario& s, size_t i) {
  const TrainingWorkload& t = s.workloads[i].training;
  const int64_t accelerators =
      int64_t{s.cluster.clients.count} * s.cluster.clients.accelerators_per_node;
  const int64_t files_per_batch = (t.batch_size + t.samples_per_file - 1) / t.samples_per_file;
  const int64_t least = accelerators * files_per_batch;
  if (t.files >= least) return;
  ctx.fail("workloads[" + std::to_string(i) + "].files",
           "expected at least " + std::to_string(least) + " (one batch of " +
               std::to_string(t.batch_size) + " samples, " + std::to_string(files_per_batch) +
               " file(s) of " + std::to_string(t.samples_per_file) + ", for each of the " +
               std::to_string(accelerators) + " accelerators), found " + std::to_string(t.files));
}

// Every key has an effect or is refused: the keys that act only on a failure (what recovery
// moves, how failures are detected and recovered, the durability estimate from a measured
// recovery) are refused in a scenario without one, where they would be ignored. The OSD op
// queue's keys stay: the queue serves client operations too.
void refuse_failure_only_keys(const Obj& root, const Scenario& s) {
  if (has_failures(s) || s.storage.design != StorageDesign::kRados) return;
  const json* storage = root.find("storage");
  if (!storage || !storage->is_object() || !storage->contains("rados")) return;
  const json& rados = (*storage)["rados"];
  const std::string path = join(root.path_of("storage"), "rados");
  const std::string none = ", and the scenario has no failures";
  if (rados.contains("stored_tib")) {
    root.ctx().fail(join(path, "stored_tib"),
                    "applies only to a run with failures (it sizes what recovery moves after "
                    "one)" +
                        none);
  }
  if (!rados.contains("recovery") || !rados["recovery"].is_object()) return;
  const json& recovery = rados["recovery"];
  for (const char* key : {"heartbeat_interval_s", "heartbeat_grace_s", "down_out_interval_s",
                          "max_backfills", "recovery_max_active", "recovery_sleep_s",
                          "recovery_mib_per_s_per_osd", "recovery_max_single_start"}) {
    if (recovery.contains(key)) {
      root.ctx().fail(
          join(join(path, "recovery"), key),
          "applies only to a run with failures (failure detection and recovery)" + none);
    }
  }
  if (recovery.contains("drive_afr")) {
    root.ctx().fail(join(join(path, "recovery"), "drive_afr"),
                    "applies only to a run with failures (the durability estimate from the "
                    "measured recovery, report recovery.durability)" +
                        none);
  }
}

Scenario parse_document(const Context& ctx, const json& j, std::string default_name) {
  if (!j.is_object()) ctx.expected("", "a JSON object at the top level", &j);
  const json* version = j.contains("granary") ? &j.at("granary") : nullptr;
  const std::string supported = std::to_string(kScenarioFormatVersion);
  if (!version) ctx.expected("granary", "the format version " + supported, nullptr);
  const auto v = as_integer(*version);
  if (!v) ctx.expected("granary", "the format version " + supported, version);
  if (*v != kScenarioFormatVersion) {
    ctx.fail("granary", "unsupported format version " + std::to_string(*v) +
                            " (this granary reads version " + supported + ")");
  }
  const Obj root(ctx, j, "",
                 {"granary", "name", "description", "seed", "cluster", "storage", "workloads",
                  "failures", "simulation", "real", "expect"});
  Scenario s;
  s.version = kScenarioFormatVersion;
  s.name = root.name("name", default_name);
  s.description = root.text("description");
  if (const json* seed = root.find("seed")) {
    if (!seed->is_number_unsigned() && !(as_integer(*seed) && *as_integer(*seed) >= 0)) {
      root.expected("seed", "an integer in 0..18446744073709551615");
    }
    s.seed = seed->is_number_unsigned() ? seed->get<uint64_t>()
                                        : static_cast<uint64_t>(*as_integer(*seed));
  }
  // The design decides what cluster.storage describes (servers, or the clients' own drives).
  const json* storage = root.find("storage");
  const bool local = storage != nullptr && storage->is_object() && storage->contains("design") &&
                     (*storage)["design"] == "local";
  s.cluster = parse_cluster(root.object("cluster", {"clients", "storage", "fabric"}), local);
  s.storage = parse_storage(
      root.object("storage", {"design", "protocol", "rados", "pfs", "nfs", "local"}), s.cluster);
  if (!s.cluster.fabric.edge_switch.name.empty()) {
    // A named switch: whether every leaf has the ports its hosts and uplinks need is known
    // once the fabric is laid out (models/topology.h); its message starts with the key.
    const int mds = s.storage.design == StorageDesign::kPfs ? s.storage.pfs.mds_count : 0;
    if (auto t = build_topology(s.cluster, mds); !t.ok()) {
      const std::string m = t.status().message();
      const size_t at = m.find(": ");
      ctx.fail(m.substr(0, at), at == std::string::npos ? m : m.substr(at + 2));
    }
  }
  s.workloads = parse_workloads(root, s.cluster);
  check_workload_mix(ctx, s.workloads);
  for (size_t i = 0; i < s.workloads.size(); ++i) {
    const WorkloadKind k = s.workloads[i].kind;
    const bool beside_training = i >= 1 && s.workloads[0].kind == WorkloadKind::kTrainingRead;
    if (k == WorkloadKind::kTrainingRead) check_one_batch_per_accelerator(ctx, s, i);
    if (k == WorkloadKind::kCheckpoint && s.workloads[i].checkpoint.start_s > 0 &&
        !beside_training) {
      ctx.fail("workloads[" + std::to_string(i) + "].start_s",
               "applies to a checkpoint beside a training_read workload, not to "
               "a checkpoint run of its own");
    }
    if (k == WorkloadKind::kCheckpoint && beside_training &&
        s.storage.design != StorageDesign::kRados) {
      ctx.fail("workloads[" + std::to_string(i) + "].type",
               "a checkpoint beside a training_read workload is simulated for design 'rados', "
               "found '" +
                   std::string(storage_design_name(s.storage.design)) + "'");
    }
    if (k == WorkloadKind::kTrainingRead && s.storage.design == StorageDesign::kLocal) {
      // Every node holds the whole dataset.
      const TrainingWorkload& t = s.workloads[i].training;
      const double dataset =
          static_cast<double>(t.files) * t.samples_per_file * t.sample_bytes_mean;
      const double node =
          s.cluster.storage.drives_per_node * s.cluster.storage.drive.capacity_tb * 1e12;
      if (dataset > node) {
        ctx.fail("workloads[" + std::to_string(i) + "].files",
                 "expected a dataset that fits on one node's drives (design 'local' keeps a copy "
                 "on every node): " +
                     num(node / 1e12) + " TB, found " + num(dataset / 1e12) + " TB");
      }
    }
    if (k == WorkloadKind::kCheckpoint && s.storage.design == StorageDesign::kLocal) {
      ctx.fail("workloads[" + std::to_string(i) + "].type",
               "checkpoints are simulated to shared storage (designs 'rados', 'pfs', 'nfs'), "
               "found design 'local'");
    }
    if ((k == WorkloadKind::kBlock || k == WorkloadKind::kBootStorm) &&
        s.storage.design != StorageDesign::kRados) {
      ctx.fail("workloads[" + std::to_string(i) + "].type",
               std::string("block volumes are RBD images: a ") +
                   std::string(workload_kind_name(k)) +
                   " workload needs storage design 'rados', found '" +
                   std::string(storage_design_name(s.storage.design)) + "'");
    }
  }
  s.failures = parse_failures(root, s);  // and s.random_drive_failures
  refuse_failure_only_keys(root, s);
  if (root.has("simulation")) {
    const Obj sim =
        root.object("simulation", {"fidelity", "representative_nodes", "transfer_unit_mib",
                                   "stop_at_steady_state", "max_simulated_s",
                                   "steady_state_tolerance", "carry_data"});
    s.simulation = parse_simulation(sim);
    refuse_carry_data(root, sim, s);
    // A slice's reads from hard disks keep their RPC size (a disk positions once per request,
    // so coarser requests would change its answer: sim/runner.cc), which leaves the transfer
    // unit of a pfs or nfs design only checkpoints to act on.
    const bool checkpoints = std::any_of(s.workloads.begin(), s.workloads.end(), [](const auto& w) {
      return w.kind == WorkloadKind::kCheckpoint;
    });
    if (sim.has("transfer_unit_mib") && s.cluster.storage.drive.kind == DriveKind::kHdd &&
        s.storage.design != StorageDesign::kRados && !checkpoints) {
      sim.fail("transfer_unit_mib",
               "expected no transfer unit for reads from hdd drives (a slice reads them in the "
               "design's own RPCs, since a disk positions once per request; the unit applies "
               "to checkpoints), found " +
                   num(static_cast<double>(s.simulation.transfer_unit_bytes) / kMiB) + " MiB");
    }
  }
  check_simulated_time(root, s);
  if (root.has("real")) {
    const Obj real = root.object("real", {"hosts", "drive_mib", "link_gbps", "added_latency_us",
                                          "dir", "lab_hosts", "ssh_identity", "bin_dir"});
    const int where =
        real.choice<int>("hosts", {{"loopback", 0}, {"namespaces", 1}, {"ssh", 2}}, 0);
    s.real.namespaces = where == 1;
    s.real.ssh = where == 2;
    parse_lab_hosts(real, s);
    s.real.drive_bytes = real.size_bytes("drive_mib", kMiB, "MiB", 64 * kMiB, 1024ull * 1024 * kMiB,
                                         kMiB, s.real.drive_bytes);
    s.real.link_gbps = real.number("link_gbps", {0, false, 10000}, 0);
    s.real.added_latency_s = real.number("added_latency_us", {0, false, 1e6}, 0) * 1e-6;
    s.real.dir = real.text("dir");
  }
  if (const json* expect = root.find("expect")) {  // expectations.h validates its own keys
    auto e = parse_expectations(*expect, ctx.source(), root.path_of("expect"));
    if (!e.ok()) throw ScenarioError{e.status().message()};
    s.expectations = std::move(e).value();
  }
  return s;
}

std::string plural(int64_t n, const char* one, const char* many) {
  return std::to_string(n) + " " + (n == 1 ? one : many);
}

}  // namespace

std::string sha256_hex(std::string_view text) {
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int length = 0;
  GRANARY_CHECK(EVP_Digest(text.data(), text.size(), digest, &length, EVP_sha256(), nullptr) == 1);
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out;
  for (unsigned int i = 0; i < length; ++i) {
    out += kHex[digest[i] >> 4];
    out += kHex[digest[i] & 15];
  }
  return out;
}

Result<Scenario> parse_scenario(std::string_view json_text, std::string_view source_path) {
  return parse_scenario(json_text, source_path, Catalog::built_in());
}

Result<Scenario> parse_scenario(std::string_view json_text, std::string_view source_path,
                                const Catalog& catalog) {
  // The path names the scenario in every message and report, and gives its default name: it
  // must be text (the report writer cannot write other bytes).
  if (auto bad = json_diag::utf8_problem(source_path)) {
    return Status::invalid_argument(json_diag::printable(source_path, 200) +
                                    ": expected a file path of valid UTF-8 text, found " +
                                    bad->substr(bad->find("invalid byte")));
  }
  const std::string source = source_path.empty() ? "<scenario>" : std::string(source_path);
  const fs::path path(source_path);
  fs::path base = path.has_parent_path() ? path.parent_path() : fs::path(".");
  std::error_code ec;
  const fs::path absolute = fs::absolute(base, ec);
  if (!ec) base = absolute;
  const Context ctx(source, base, catalog);
  std::string default_name = path.stem().string();
  if (default_name.empty()) default_name = "scenario";
  try {
    const json j = parse_json(ctx, source, json_text);
    Scenario s = parse_document(ctx, j, default_name);
    s.source_path = std::string(source_path);
    s.source_sha256 = sha256_hex(json_text);
    return s;
  } catch (const ScenarioError& e) {
    return Status::invalid_argument(e.message);
  }
}

Result<Scenario> load_scenario(const std::string& path) {
  return load_scenario(path, Catalog::built_in());
}

Result<Scenario> load_scenario(const std::string& path, const Catalog& catalog) {
  if (json_diag::invalid_utf8_offset(path)) return parse_scenario("", path);  // its message
  std::error_code ec;
  if (!fs::exists(path, ec)) return Status::not_found(path + ": no such file");
  if (!fs::is_regular_file(path, ec))
    return Status::invalid_argument(path + ": not a regular file");
  const std::string too_big = path + ": expected a scenario file of at most " +
                              std::to_string(kMaxScenarioBytes / kMiB) + " MiB, found ";
  const uintmax_t bytes = fs::file_size(path, ec);
  if (!ec && bytes > kMaxScenarioBytes) {
    return Status::invalid_argument(too_big + std::to_string(bytes) + " bytes");
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) return Status::io_error(path + ": cannot open the file for reading");
  // Read to the end but never past the limit, whatever the size said (a file still growing).
  std::string text;
  text.reserve(static_cast<size_t>(ec ? 0 : bytes));
  std::vector<char> chunk(1 << 16);
  while (in) {
    in.read(chunk.data(), static_cast<std::streamsize>(chunk.size()));
    text.append(chunk.data(), static_cast<size_t>(in.gcount()));
    if (text.size() > kMaxScenarioBytes) {
      return Status::invalid_argument(too_big + "more than that");
    }
  }
  if (in.bad()) return Status::io_error(path + ": read error");
  return parse_scenario(text, path, catalog);
}

std::string scenario_summary(const Scenario& s) {
  const ClientNodesSpec& c = s.cluster.clients;
  const StorageNodesSpec& st = s.cluster.storage;
  std::string out =
      plural(c.count, "client", "clients") + " x " + std::to_string(c.accelerators_per_node) + " " +
      c.accelerator.name + ", " +
      (st.in_client_nodes ? std::to_string(st.drives_per_node) + " " + st.drive.name + " in each"
                          : plural(st.count, "storage node", "storage nodes") +
                                (st.server.name.empty() ? "" : " (" + st.server.name + ")") +
                                " x " + std::to_string(st.drives_per_node) + " " + st.drive.name) +
      ", ";
  out += std::string(storage_design_name(s.storage.design));
  switch (s.storage.design) {
    case StorageDesign::kRados:
      out += s.storage.rados.ec_k > 0
                 ? " EC " + std::to_string(s.storage.rados.ec_k) + "+" +
                       std::to_string(s.storage.rados.ec_m)
                 : " " + std::to_string(s.storage.rados.replicas) + "x replicated";
      break;
    case StorageDesign::kPfs:
      out += " (" + plural(s.storage.pfs.mds_count, "MDS", "MDSs") + ", stripe count " +
             (s.storage.pfs.stripe_count < 0 ? std::string("all")
                                             : std::to_string(s.storage.pfs.stripe_count)) +
             ")";
      break;
    case StorageDesign::kNfs:
      break;
    case StorageDesign::kLocal:
      out += " (each node reads its own copy)";
      break;
  }
  out += " over " + s.storage.protocol.name;
  if (!s.cluster.fabric.edge_switch.name.empty()) {
    out += ", leaf switch " + s.cluster.fabric.edge_switch.name;
  }
  out += ", workloads: ";
  for (size_t i = 0; i < s.workloads.size(); ++i) out += (i ? ", " : "") + s.workloads[i].name;
  return out;
}

}  // namespace granary::models
