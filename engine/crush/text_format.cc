#include "engine/crush/text_format.h"

#include <sys/stat.h>

#include <cerrno>
#include <charconv>
#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <fstream>
#include <functional>
#include <set>
#include <sstream>

namespace granary::crush {

std::optional<uint32_t> parse_fixed_16_16(std::string_view s) {
  if (s.empty() || s.front() == '-' || s.front() == '+') return std::nullopt;
  std::string buf(s);
  char* end = nullptr;
  const float f = std::strtof(buf.c_str(), &end);
  if (end != buf.c_str() + buf.size() || !(f >= 0.0f) || f > 65536.0f) return std::nullopt;
  const float scaled = f * static_cast<float>(kWeightOne);  // single precision, as crushtool
  if (scaled >= 4294967296.0f) return std::nullopt;
  return static_cast<uint32_t>(scaled);
}

std::string format_fixed_16_16(uint32_t w) {
  char buf[32];
  // crushtool passes weights through an int: above 32767.99998 they print negative.
  std::snprintf(buf, sizeof buf, "%.3f",
                static_cast<double>(static_cast<float>(static_cast<int32_t>(w)) /
                                    static_cast<float>(kWeightOne)));
  return buf;
}

namespace {

// The heaviest weight that crushtool's "%.3f" of a signed 16.16 value prints as itself.
constexpr uint32_t kMaxPrintableWeight = 0x7fffffffu;

std::string format_fixed_16_16_unsigned(uint32_t w) {
  char b[32];
  std::snprintf(b, sizeof b, "%.3f", static_cast<double>(w) / 65536.0);
  return b;
}

// ---------------------------------------------------------------- lexer

struct Token {
  std::string_view text;  // empty at end of input (or at a byte the format does not allow)
  int line = 0;
  int col = 0;
};

bool is_space(char ch) {
  return ch == ' ' || ch == '\t' || ch == '\n' || ch == '\r' || ch == '\f' || ch == '\v';
}
// Bytes a text map may not hold anywhere (comments included): control characters other than
// white space, and DEL.
bool is_forbidden(char ch) {
  const auto c = static_cast<unsigned char>(ch);
  return (c < 0x20 && !is_space(ch)) || c == 0x7f;
}

// Splits the text into words and the punctuation { } [ ], one token at a time (no copy of the
// text, no token list: memory does not grow with the input). A forbidden byte ends the input
// and is reported through bad_byte().
class Lexer {
 public:
  explicit Lexer(std::string_view text) : text_(text) {}

  Token next() {
    while (i_ < text_.size()) {
      const char ch = text_[i_];
      if (is_forbidden(ch)) return stop_at_bad_byte();
      if (ch == '#') {
        while (i_ < text_.size() && text_[i_] != '\n') {
          if (is_forbidden(text_[i_])) return stop_at_bad_byte();
          advance(1);
        }
      } else if (is_space(ch)) {
        advance(1);
      } else if (ch == '{' || ch == '}' || ch == '[' || ch == ']') {
        Token t{text_.substr(i_, 1), line_, col_};
        advance(1);
        return t;
      } else {
        size_t j = i_;
        while (j < text_.size() && !is_space(text_[j]) && !is_forbidden(text_[j]) &&
               !std::strchr("#{}[]", text_[j])) {
          ++j;
        }
        Token t{text_.substr(i_, j - i_), line_, col_};
        advance(j - i_);
        return t;
      }
    }
    return {{}, line_, col_};
  }

  // Where a forbidden byte stopped the input, and which byte.
  std::optional<std::pair<Token, unsigned char>> bad_byte() const { return bad_; }

 private:
  Token stop_at_bad_byte() {
    if (!bad_) bad_ = {{{}, line_, col_}, static_cast<unsigned char>(text_[i_])};
    i_ = text_.size();
    return {{}, bad_->first.line, bad_->first.col};
  }
  void advance(size_t n) {
    for (size_t k = 0; k < n; ++k, ++i_) {
      if (text_[i_] == '\n') {
        ++line_;
        col_ = 1;
      } else {
        ++col_;
      }
    }
  }

  std::string_view text_;
  size_t i_ = 0;
  int line_ = 1, col_ = 1;
  std::optional<std::pair<Token, unsigned char>> bad_;
};

bool is_valid_name(std::string_view s) {
  if (s.empty() || s.size() > kMaxNameBytes) return false;
  for (char c : s) {
    if (!(c == '-' || c == '_' || c == '.' || (c >= '0' && c <= '9') || (c >= 'A' && c <= 'Z') ||
          (c >= 'a' && c <= 'z'))) {
      return false;
    }
  }
  return true;
}

template <typename Int>
std::optional<Int> parse_int(std::string_view s) {
  Int v{};
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || p != s.data() + s.size()) return std::nullopt;
  return v;
}

// ---------------------------------------------------------------- syntax tree

struct Loc {
  int line = 0, col = 0;
};
struct ItemDecl {
  Loc loc;
  std::string name;
  std::optional<std::string> weight;
  Loc weight_loc;
  std::optional<int32_t> pos;
  Loc pos_loc;
};
struct BucketDecl {
  Loc loc;
  std::string type_name, name;
  Loc type_loc;
  std::optional<int32_t> id;
  Loc id_loc;
  std::vector<std::tuple<int32_t, std::string, Loc>> class_ids;
  std::optional<BucketAlg> alg;
  uint8_t hash = 0;
  std::vector<ItemDecl> items;
};
struct StepDecl {
  Loc loc;
  RuleStep step;
  std::string take_item, take_class, type_name;
  Loc item_loc, class_loc, type_loc;
};
struct RuleDecl {
  Loc loc;
  Rule rule;
  std::vector<StepDecl> steps;
};

// ---------------------------------------------------------------- parser

class Parser {
 public:
  Parser(std::string_view text, std::string_view source) : lexer_(text), source_(source) {}

  Result<CrushMap> parse();

 private:
  // Tokens are read lazily with a lookahead of at most three; a Token is a view of the text,
  // so copies are cheap and stay valid after next().
  const Token& peek(size_t ahead = 0) {
    while (lookahead_.size() <= ahead) lookahead_.push_back(lexer_.next());
    return lookahead_[ahead];
  }
  Token next() {
    const Token t = peek();
    if (!t.text.empty()) lookahead_.pop_front();
    return t;
  }
  static Loc loc_of(const Token& t) { return {t.line, t.col}; }
  static std::string found(const Token& t) {
    return t.text.empty() ? "end of input" : quote_for_message(t.text);
  }
  Result<CrushMap> parse_statements();
  Status error_at(Loc loc, const std::string& msg) const {
    return Status::invalid_argument(std::string(source_) + ":" + std::to_string(loc.line) + ":" +
                                    std::to_string(loc.col) + ": " + msg);
  }
  Status expected(const std::string& what) {
    return error_at(loc_of(peek()), "expected " + what + ", found " + found(peek()));
  }
  Status expect(std::string_view word) {
    if (peek().text != word) {
      // (Built up with append: GCC 12 at -O3 warns -Wrestrict on "'" + std::string + "'".)
      std::string quoted = "'";
      quoted.append(word).append("'");
      return expected(quoted);
    }
    next();
    return Status();
  }
  template <typename Int>
  Result<Int> expect_int(const std::string& what) {
    auto v = parse_int<Int>(peek().text);
    if (!v) return expected(what);
    next();
    return *v;
  }
  // An integer in lo..hi; the message names the range ("expected a device id 0..1048575").
  Result<int64_t> expect_int_in(const std::string& what, int64_t lo, int64_t hi) {
    auto v = parse_int<int64_t>(peek().text);
    if (!v || *v < lo || *v > hi) {
      return expected(what + " " + std::to_string(lo) + ".." + std::to_string(hi));
    }
    next();
    return *v;
  }
  Result<std::string> expect_name(const std::string& what) {
    if (!is_valid_name(peek().text)) {
      return expected(what + " (letters, digits, '-', '_', '.'; at most " +
                      std::to_string(kMaxNameBytes) + " bytes)");
    }
    return std::string(next().text);
  }

  Status parse_tunable();
  Status parse_device();
  Status parse_type();
  Result<BucketDecl> parse_bucket_decl();
  Status build_bucket(const BucketDecl& d, int depth);
  Status check_expanded_size() const;
  Status parse_rule();
  Status parse_choose_args();

  Lexer lexer_;
  std::deque<Token> lookahead_;
  std::string_view source_;
  CrushMap map_;
  std::map<std::string, size_t> bucket_index_;  // name -> index in buckets_
  std::vector<BucketDecl> buckets_;
  std::vector<int> bucket_state_;            // 0 not built, 1 building, 2 built
  std::set<int32_t> used_ids_;               // explicit bucket ids, and ids assigned so far
  std::map<int32_t, uint32_t> item_weight_;  // bucket id -> weight as parsed (parent default)
  bool classes_populated_ = false;
  Status populate_status_;
};

Status Parser::parse_tunable() {
  next();
  const Token name_tok = peek();
  auto name = expect_name("a tunable name");
  if (!name.ok()) return name.status();
  // Ranges: Ceph stores the flags and straw_calc_version in a u8 and allowed_bucket_algs in a
  // u32; the tries are bounded so that a mapping cannot spin for hours.
  static const std::map<std::string, int64_t, std::less<>> kMax = {
      {"choose_local_tries", kMaxLocalTries},
      {"choose_local_fallback_tries", kMaxLocalTries},
      {"choose_total_tries", kMaxTries},
      {"chooseleaf_descend_once", 1},
      {"chooseleaf_vary_r", kMaxVaryR},
      {"chooseleaf_stable", 1},
      {"straw_calc_version", 255},
      {"allowed_bucket_algs", 0xffffffffll},
  };
  const auto limit = kMax.find(*name);
  if (limit == kMax.end()) {
    return error_at(loc_of(name_tok),
                    "unknown tunable " + quote_for_message(*name) +
                        " (expected choose_local_tries, choose_local_fallback_tries, "
                        "choose_total_tries, chooseleaf_descend_once, chooseleaf_vary_r, "
                        "chooseleaf_stable, straw_calc_version or allowed_bucket_algs)");
  }
  auto value = expect_int_in("a value for tunable " + *name, 0, limit->second);
  if (!value.ok()) return value.status();
  Tunables t = map_.tunables();
  const uint32_t v = static_cast<uint32_t>(*value);
  if (*name == "choose_local_tries")
    t.choose_local_tries = v;
  else if (*name == "choose_local_fallback_tries")
    t.choose_local_fallback_tries = v;
  else if (*name == "choose_total_tries")
    t.choose_total_tries = v;
  else if (*name == "chooseleaf_descend_once")
    t.chooseleaf_descend_once = v;
  else if (*name == "chooseleaf_vary_r")
    t.chooseleaf_vary_r = v;
  else if (*name == "chooseleaf_stable")
    t.chooseleaf_stable = v;
  else if (*name == "straw_calc_version")
    t.straw_calc_version = v;
  else
    t.allowed_bucket_algs = v;
  map_.set_tunables(t);
  return Status();
}

Status Parser::parse_device() {
  const Loc loc = loc_of(next());
  auto id = expect_int_in("a device id", 0, kMaxDeviceId);
  if (!id.ok()) return id.status();
  auto name = expect_name("a device name");
  if (!name.ok()) return name.status();
  std::string cls;
  if (peek().text == "class") {
    next();
    auto c = expect_name("a device class name");
    if (!c.ok()) return c.status();
    cls = *c;
  }
  if (Status s = map_.add_device(static_cast<int32_t>(*id), *name, cls); !s.ok())
    return error_at(loc, s.message());
  return Status();
}

Status Parser::parse_type() {
  const Loc loc = loc_of(next());
  auto id = expect_int_in("a type id", 0, INT32_MAX);
  if (!id.ok()) return id.status();
  auto name = expect_name("a type name");
  if (!name.ok()) return name.status();
  if (Status s = map_.add_type(static_cast<int32_t>(*id), *name); !s.ok())
    return error_at(loc, s.message());
  return Status();
}

Result<BucketDecl> Parser::parse_bucket_decl() {
  BucketDecl d;
  d.loc = d.type_loc = loc_of(peek());
  d.type_name = std::string(next().text);
  auto name = expect_name("a bucket name");
  if (!name.ok()) return name.status();
  d.name = *name;
  if (Status s = expect("{"); !s.ok()) return s;
  while (peek().text != "}") {
    const Token tag = peek();
    const Loc loc = loc_of(tag);
    if (tag.text == "id") {
      next();
      auto id = expect_int_in("a bucket id", kMinBucketId, -1);
      if (!id.ok()) return id.status();
      if (peek().text == "class") {
        next();
        auto c = expect_name("a device class name");
        if (!c.ok()) return c.status();
        d.class_ids.emplace_back(static_cast<int32_t>(*id), *c, loc);
      } else {
        if (d.id) return error_at(loc, "bucket " + quote_for_message(d.name) + " has two ids");
        d.id = static_cast<int32_t>(*id);
        d.id_loc = loc;
      }
    } else if (tag.text == "alg") {
      next();
      auto alg = bucket_alg_from_name(peek().text);
      if (!alg) return expected("a bucket alg (uniform, list, tree, straw or straw2)");
      next();
      d.alg = *alg;
    } else if (tag.text == "hash") {
      next();
      if (peek().text == "rjenkins1" || peek().text == "0") {
        next();
        d.hash = 0;
      } else {
        return expected("a hash (0 or rjenkins1, the only hash CRUSH defines)");
      }
    } else if (tag.text == "item") {
      next();
      ItemDecl item;
      item.loc = loc;
      auto iname = expect_name("an item name");
      if (!iname.ok()) return iname.status();
      item.name = *iname;
      while (peek().text == "weight" || peek().text == "pos") {
        if (next().text == "weight") {
          item.weight_loc = loc_of(peek());
          if (peek().text.empty()) return expected("a weight");
          item.weight = std::string(next().text);
        } else {
          item.pos_loc = loc_of(peek());
          auto p = expect_int<int32_t>("an item position (integer >= 0)");
          if (!p.ok()) return p.status();
          item.pos = *p;
        }
      }
      if (d.items.size() >= static_cast<size_t>(kMaxDeviceId) + 1 - kMinBucketId) {
        return error_at(loc, "expected at most " +
                                 std::to_string(int64_t{kMaxDeviceId} + 1 - kMinBucketId) +
                                 " items in bucket " + quote_for_message(d.name) +
                                 " (the devices and buckets a map may hold), found more");
      }
      d.items.push_back(std::move(item));
    } else {
      return expected("'id', 'alg', 'hash', 'item' or '}' in bucket " + quote_for_message(d.name));
    }
  }
  next();  // '}'
  return d;
}

Status Parser::build_bucket(const BucketDecl& d, int depth) {
  const size_t self = bucket_index_.at(d.name);
  const std::string qname = quote_for_message(d.name);
  if (bucket_state_[self] == 2) return Status();
  if (bucket_state_[self] == 1) {
    return error_at(d.loc, "bucket " + qname + " contains itself (through its items)");
  }
  if (depth > kMaxHierarchyDepth) {
    return error_at(d.loc, "expected a hierarchy at most " + std::to_string(kMaxHierarchyDepth) +
                               " levels deep, found bucket " + qname + " deeper");
  }
  bucket_state_[self] = 1;
  auto type = map_.type_id(d.type_name);
  if (!type) {
    return error_at(d.type_loc,
                    "bucket type " + quote_for_message(d.type_name) + " is not defined");
  }
  if (!d.alg) return error_at(d.loc, "bucket " + qname + " has no 'alg' line");

  // Items: referenced buckets are built first (so a bucket may be listed before its children).
  const int32_t n = static_cast<int32_t>(d.items.size());
  std::vector<int32_t> items(n, 0);
  std::vector<uint32_t> weights(n, 0);
  std::vector<bool> filled(n, false);
  int32_t next_pos = 0;
  std::set<int32_t> seen;
  for (const ItemDecl& it : d.items) {
    if (auto bi = bucket_index_.find(it.name);
        bi != bucket_index_.end() && !map_.item_id(it.name)) {
      if (Status s = build_bucket(buckets_[bi->second], depth + 1); !s.ok()) return s;
    }
    const std::string qitem = quote_for_message(it.name);
    auto item_id = map_.item_id(it.name);
    if (!item_id) {
      return error_at(it.loc, "item " + qitem + " in bucket " + qname + " is not defined");
    }
    if (!seen.insert(*item_id).second) {
      return error_at(it.loc, "item " + qitem + " is listed twice in bucket " + qname);
    }
    uint32_t weight = kWeightOne;
    if (auto w = item_weight_.find(*item_id); w != item_weight_.end()) weight = w->second;
    if (it.weight) {
      auto w = parse_fixed_16_16(*it.weight);
      if (!w) {
        return error_at(it.weight_loc, "expected a weight 0..65535 for item " + qitem + ", found " +
                                           quote_for_message(*it.weight));
      }
      if (*item_id >= 0 && *w > kMaxDeviceWeight) {
        return error_at(it.weight_loc, "expected a device weight 0..100 for item " + qitem +
                                           ", found " + quote_for_message(*it.weight));
      }
      weight = *w;
    }
    // crushtool prints a 16.16 weight as a signed number: 32768 and above would be written back
    // negative and not parse again.
    if (weight > kMaxPrintableWeight) {
      return error_at(it.weight ? it.weight_loc : it.loc,
                      "expected a weight below 32768 for item " + qitem +
                          " (crushtool prints heavier weights as negative numbers), found " +
                          format_fixed_16_16_unsigned(weight));
    }
    int32_t pos = 0;
    if (it.pos) {
      pos = *it.pos;
      if (pos < 0 || pos >= n) {
        return error_at(it.pos_loc, "item " + qitem + " has pos " + std::to_string(pos) +
                                        ", expected 0.." + std::to_string(n - 1));
      }
      if (filled[pos]) {
        return error_at(it.pos_loc, "item " + qitem + " has pos " + std::to_string(pos) +
                                        ", which is occupied");
      }
    } else {
      while (next_pos < n && filled[next_pos]) ++next_pos;
      pos = next_pos++;
      // An explicit pos later in the list may claim a slot we skipped into: check then.
      if (pos >= n || filled[pos])
        return error_at(it.loc, "item positions of bucket " + qname + " overlap");
    }
    filled[pos] = true;
    items[pos] = *item_id;
    weights[pos] = weight;
  }
  if (*d.alg == BucketAlg::kUniform) {
    for (int32_t i = 1; i < n; ++i) {
      if (weights[i] != weights[0]) {
        return error_at(d.loc, "uniform bucket " + qname +
                                   " items must all have identical weights (found " +
                                   format_fixed_16_16(weights[0]) + " and " +
                                   format_fixed_16_16(weights[i]) + ")");
      }
    }
  }
  uint64_t total = 0;
  for (uint32_t w : weights) total += w;
  if (total > kMaxBucketWeight) {
    return error_at(d.loc, "bucket " + qname + " weighs more than 65535 (sum of item weights)");
  }

  int32_t id = 0;
  if (d.id) {
    id = *d.id;
  } else {
    for (id = -1; id >= kMinBucketId && (used_ids_.count(id) || map_.bucket_exists(id)); --id) {
    }
    if (id < kMinBucketId) {
      return error_at(d.loc, "no bucket id left in " + std::to_string(kMinBucketId) +
                                 "..-1 for bucket " + qname);
    }
  }
  used_ids_.insert(id);
  Bucket b;
  b.id = id;
  b.type = *type;
  b.alg = *d.alg;
  b.hash = d.hash;
  b.items = std::move(items);
  b.item_weights = std::move(weights);
  if (Status s = map_.add_bucket(std::move(b), d.name); !s.ok()) {
    return error_at(d.id ? d.id_loc : d.loc, s.message());
  }
  item_weight_[id] = static_cast<uint32_t>(total);
  for (const auto& [shadow_id, cls, loc] : d.class_ids) {
    auto c = map_.get_or_create_class(cls);
    if (!c.ok()) return error_at(loc, c.status().message());
    if (Status s = map_.reserve_class_bucket_id(id, *c, shadow_id); !s.ok()) {
      return error_at(loc, "bucket " + qname + ": " + s.message());
    }
  }
  bucket_state_[self] = 2;
  return Status();
}

Status Parser::parse_rule() {
  RuleDecl r;
  r.loc = loc_of(next());
  if (peek().text != "{") {
    auto name = expect_name("a rule name or '{'");
    if (!name.ok()) return name.status();
    r.rule.name = *name;
  }
  if (Status s = expect("{"); !s.ok()) return s;
  bool have_id = false;
  std::vector<StepDecl> steps;
  while (peek().text != "}") {
    const Token tag = peek();
    const Loc loc = loc_of(tag);
    if (tag.text == "id" || tag.text == "ruleset") {
      next();
      auto id = expect_int_in("a rule id", 0, kMaxRuleId);
      if (!id.ok()) return id.status();
      r.rule.id = static_cast<int32_t>(*id);
      have_id = true;
    } else if (tag.text == "type") {
      next();
      if (peek().text == "replicated") {
        r.rule.type = kRuleReplicated;
        next();
      } else if (peek().text == "erasure") {
        r.rule.type = kRuleErasure;
        next();
      } else {
        auto t = expect_int_in("a rule type (replicated, erasure or a number)", 0, kMaxRuleSize);
        if (!t.ok()) return t.status();
        r.rule.type = static_cast<int32_t>(*t);
      }
    } else if (tag.text == "min_size" || tag.text == "max_size") {
      next();
      auto v = expect_int_in("a " + std::string(tag.text), 0, kMaxRuleSize);
      if (!v.ok()) return v.status();
      (tag.text == "min_size" ? r.rule.min_size : r.rule.max_size) = static_cast<int32_t>(*v);
    } else if (tag.text == "step") {
      next();
      StepDecl st;
      st.loc = loc;
      const Token op = next();
      const std::string opname(op.text);
      static const std::map<std::string, RuleOp, std::less<>> kSetOps = {
          {"set_choose_tries", RuleOp::kSetChooseTries},
          {"set_chooseleaf_tries", RuleOp::kSetChooseLeafTries},
          {"set_choose_local_tries", RuleOp::kSetChooseLocalTries},
          {"set_choose_local_fallback_tries", RuleOp::kSetChooseLocalFallbackTries},
          {"set_chooseleaf_vary_r", RuleOp::kSetChooseLeafVaryR},
          {"set_chooseleaf_stable", RuleOp::kSetChooseLeafStable},
      };
      if (opname == "take") {
        st.step.op = RuleOp::kTake;
        st.item_loc = loc_of(peek());
        auto item = expect_name("the item to take");
        if (!item.ok()) return item.status();
        st.take_item = *item;
        if (peek().text == "class") {
          next();
          st.class_loc = loc_of(peek());
          auto c = expect_name("a device class name");
          if (!c.ok()) return c.status();
          st.take_class = *c;
        }
      } else if (opname == "choose" || opname == "chooseleaf") {
        const bool leaf = opname == "chooseleaf";
        if (peek().text == "firstn") {
          st.step.op = leaf ? RuleOp::kChooseLeafFirstN : RuleOp::kChooseFirstN;
        } else if (peek().text == "indep") {
          st.step.op = leaf ? RuleOp::kChooseLeafIndep : RuleOp::kChooseIndep;
        } else {
          return expected("'firstn' or 'indep'");
        }
        next();
        auto count = expect_int_in("a count (0 = as many as replicas, -N = replicas - N)",
                                   -kMaxChooseCount, kMaxChooseCount);
        if (!count.ok()) return count.status();
        st.step.arg1 = static_cast<int32_t>(*count);
        if (Status s = expect("type"); !s.ok()) return s;
        st.type_loc = loc_of(peek());
        auto t = expect_name("a bucket type name");
        if (!t.ok()) return t.status();
        st.type_name = *t;
      } else if (opname == "emit") {
        st.step.op = RuleOp::kEmit;
      } else if (opname == "noop") {
        st.step.op = RuleOp::kNoop;
      } else if (auto it = kSetOps.find(opname); it != kSetOps.end()) {
        st.step.op = it->second;
        int64_t max = 1;
        if (it->second == RuleOp::kSetChooseTries || it->second == RuleOp::kSetChooseLeafTries) {
          max = kMaxTries;
        } else if (it->second == RuleOp::kSetChooseLocalTries ||
                   it->second == RuleOp::kSetChooseLocalFallbackTries) {
          max = kMaxLocalTries;
        } else if (it->second == RuleOp::kSetChooseLeafVaryR) {
          max = kMaxVaryR;
        }
        auto v = expect_int_in("a value for " + opname, 0, max);
        if (!v.ok()) return v.status();
        st.step.arg1 = static_cast<int32_t>(*v);
      } else {
        return error_at(loc_of(op),
                        "expected a rule step (take, choose, chooseleaf, emit, "
                        "set_choose_tries, set_chooseleaf_tries, ...), found " +
                            found(op));
      }
      steps.push_back(std::move(st));
    } else {
      return expected("'id', 'type', 'min_size', 'max_size', 'step' or '}' in rule");
    }
  }
  next();  // '}'
  const std::string qrule = quote_for_message(r.rule.name);
  if (!have_id) return error_at(r.loc, "rule " + qrule + " has no 'id' line");

  // Ceph builds the device-class shadow trees when it reaches the first rule.
  if (!classes_populated_) {
    classes_populated_ = true;
    populate_status_ = map_.populate_classes();
  }
  for (StepDecl& st : steps) {
    if (st.step.op == RuleOp::kTake) {
      auto id = map_.item_id(st.take_item);
      if (!id || map_.is_shadow(*id)) {
        return error_at(st.item_loc, "in rule " + qrule + " item " +
                                         quote_for_message(st.take_item) + " is not defined");
      }
      if (!st.take_class.empty()) {
        auto c = map_.class_id(st.take_class);
        if (!c) {
          return error_at(st.class_loc, "in rule " + qrule + " device class " +
                                            quote_for_message(st.take_class) + " is not defined");
        }
        if (!populate_status_.ok()) {
          return error_at(st.class_loc, "in rule " + qrule + " step take " +
                                            quote_for_message(st.take_item) + " class " +
                                            quote_for_message(st.take_class) + ": " +
                                            populate_status_.message());
        }
        auto shadow = map_.class_bucket(*id, *c);
        if (!shadow) {
          return error_at(st.class_loc,
                          "in rule " + qrule + " step take " + quote_for_message(st.take_item) +
                              ": no matching bucket for class " + quote_for_message(st.take_class));
        }
        id = shadow;
      }
      st.step.arg1 = *id;
    } else if (!st.type_name.empty()) {
      auto t = map_.type_id(st.type_name);
      if (!t) {
        return error_at(st.type_loc, "in rule " + qrule + " type " +
                                         quote_for_message(st.type_name) + " is not defined");
      }
      st.step.arg2 = *t;
    }
    r.rule.steps.push_back(st.step);
  }
  if (Status s = map_.add_rule(r.rule); !s.ok()) return error_at(r.loc, s.message());
  return Status();
}

Status Parser::parse_choose_args() {
  const Loc loc = loc_of(next());
  const Token index_tok = peek();
  const std::string index_text = quote_for_message(index_tok.text);
  int64_t index = 0;
  if (auto u = parse_int<uint64_t>(index_tok.text)) {
    index = static_cast<int64_t>(*u);  // crushtool prints -1 as 18446744073709551615
  } else if (auto s = parse_int<int64_t>(index_tok.text)) {
    index = *s;
  } else {
    return expected("a choose_args index (a pool id, or -1)");
  }
  next();
  if (map_.choose_args().count(index)) {
    return error_at(loc, "choose_args " + index_text + " is defined twice");
  }
  if (const uint64_t sets = map_.choose_args().size() + 1;
      sets > static_cast<uint64_t>(kMaxChooseArgsSets) ||
      sets * static_cast<uint64_t>(map_.max_buckets()) > kMaxChooseArgsSlots) {
    return error_at(loc, "expected at most " + std::to_string(kMaxChooseArgsSets) +
                             " choose_args sets and " + std::to_string(kMaxChooseArgsSlots) +
                             " set x bucket slots, found " + std::to_string(sets) + " sets x " +
                             std::to_string(map_.max_buckets()) + " buckets");
  }
  if (Status s = expect("{"); !s.ok()) return s;
  ChooseArgs args(map_.max_buckets());
  while (peek().text == "{") {
    next();
    if (Status s = expect("bucket_id"); !s.ok()) return s;
    const Loc bloc = loc_of(peek());
    auto bid = expect_int<int32_t>("a bucket id");
    if (!bid.ok()) return bid.status();
    const Bucket* b = map_.bucket(*bid);
    if (!b)
      return error_at(bloc, "choose_args " + index_text + ": bucket " + std::to_string(*bid) +
                                " does not exist");
    ChooseArg& arg = args[-1 - *bid];
    while (peek().text == "weight_set" || peek().text == "ids") {
      const std::string what(next().text);
      if (Status s = expect("["); !s.ok()) return s;
      if (what == "weight_set") {
        while (peek().text == "[") {
          const Loc wloc = loc_of(next());
          if (arg.weight_set.size() >= static_cast<size_t>(kMaxWeightSetPositions)) {
            return error_at(wloc, "expected at most " + std::to_string(kMaxWeightSetPositions) +
                                      " weight_set positions for bucket " + std::to_string(*bid) +
                                      ", found more");
          }
          std::vector<uint32_t> ws;
          while (peek().text != "]") {
            auto w = parse_fixed_16_16(peek().text);
            // (Below 32768: crushtool prints heavier weights as negative numbers.)
            if (!w || *w > kMaxPrintableWeight) return expected("a weight 0..32767 or ']'");
            if (static_cast<int32_t>(ws.size()) >= b->size()) {
              return expected(std::to_string(b->size()) + " weights for bucket " +
                              std::to_string(*bid) + " then ']'");
            }
            ws.push_back(*w);
            next();
          }
          next();
          if (static_cast<int32_t>(ws.size()) != b->size()) {
            return error_at(wloc, "bucket " + std::to_string(*bid) + " needs exactly " +
                                      std::to_string(b->size()) + " weights but got " +
                                      std::to_string(ws.size()));
          }
          arg.weight_set.push_back(std::move(ws));
        }
      } else {
        const Loc iloc = loc_of(peek());
        while (peek().text != "]") {
          if (static_cast<int32_t>(arg.ids.size()) >= b->size()) {
            return expected(std::to_string(b->size()) + " ids for bucket " + std::to_string(*bid) +
                            " then ']'");
          }
          auto v = expect_int<int32_t>("an id or ']'");
          if (!v.ok()) return v.status();
          arg.ids.push_back(*v);
        }
        if (static_cast<int32_t>(arg.ids.size()) != b->size()) {
          return error_at(iloc, "bucket " + std::to_string(*bid) + " needs exactly " +
                                    std::to_string(b->size()) + " ids but got " +
                                    std::to_string(arg.ids.size()));
        }
      }
      if (Status s = expect("]"); !s.ok()) return s;
    }
    if (Status s = expect("}"); !s.ok()) return s;
  }
  if (Status s = expect("}"); !s.ok()) return s;
  if (Status s = map_.set_choose_args(index, std::move(args)); !s.ok())
    return error_at(loc, s.message());
  return Status();
}

Status Parser::check_expanded_size() const {
  // A bucket may be listed under several parents; walks over every path (devices_under, the
  // analysis) then see its items once per path. Count them, saturating, before anyone walks.
  std::map<int32_t, uint64_t> memo;
  std::function<uint64_t(int32_t)> count = [&](int32_t id) -> uint64_t {
    if (id >= 0) return 1;
    if (auto it = memo.find(id); it != memo.end()) return it->second;
    uint64_t n = 1;
    if (const Bucket* b = map_.bucket(id)) {
      for (int32_t item : b->items) n = std::min(n + count(item), kMaxExpandedItems + 1);
    }
    memo[id] = n;
    return n;
  };
  for (int32_t root : map_.roots()) {
    if (const uint64_t n = count(root); n > kMaxExpandedItems) {
      return Status::invalid_argument(
          std::string(source_) + ": expected at most " + std::to_string(kMaxExpandedItems) +
          " items along all paths below a root (buckets listed under several parents repeat "
          "their subtrees), found more below " +
          quote_for_message(map_.item_name(root) ? *map_.item_name(root) : std::string()));
    }
  }
  return Status();
}

Result<CrushMap> Parser::parse() {
  Result<CrushMap> r = parse_statements();
  // A byte the format does not allow ends the input early: report it rather than whatever
  // the parser made of the truncated text.
  if (auto bad = lexer_.bad_byte()) {
    char byte[8];
    std::snprintf(byte, sizeof byte, "\\x%02x", bad->second);
    return error_at(loc_of(bad->first),
                    std::string("expected printable text, found the byte ") + byte);
  }
  return r;
}

Result<CrushMap> Parser::parse_statements() {
  bool saw_rule = false;
  // Statements are parsed in order; buckets are only declared here and built when the first
  // rule, choose_args or the end of input needs them.
  auto build_all = [&]() -> Status {
    bucket_state_.resize(buckets_.size(), 0);
    for (size_t i = 0; i < buckets_.size(); ++i) {
      if (Status s = build_bucket(buckets_[i], 1); !s.ok()) return s;
    }
    return check_expanded_size();
  };
  bool built = false;
  while (!peek().text.empty()) {
    const Token t = peek();
    if (t.text == "tunable") {
      if (Status s = parse_tunable(); !s.ok()) return s;
    } else if (t.text == "device") {
      if (Status s = parse_device(); !s.ok()) return s;
    } else if (t.text == "type") {
      if (Status s = parse_type(); !s.ok()) return s;
    } else if (t.text == "rule") {
      if (!built) {
        if (Status s = build_all(); !s.ok()) return s;
        built = true;
      }
      saw_rule = true;
      if (Status s = parse_rule(); !s.ok()) return s;
    } else if (t.text == "choose_args") {
      if (!built) {
        if (Status s = build_all(); !s.ok()) return s;
        built = true;
      }
      if (Status s = parse_choose_args(); !s.ok()) return s;
    } else if (is_valid_name(t.text) && peek(2).text == "{") {
      if (saw_rule) return error_at(loc_of(t), "buckets must be defined before rules");
      auto d = parse_bucket_decl();
      if (!d.ok()) return d.status();
      if (bucket_index_.count(d->name) || map_.item_id(d->name)) {
        return error_at(d->loc,
                        "bucket or device " + quote_for_message(d->name) + " is already defined");
      }
      if (d->id) used_ids_.insert(*d->id);
      bucket_index_[d->name] = buckets_.size();
      buckets_.push_back(std::move(*d));
    } else {
      return expected("'tunable', 'device', 'type', a bucket, 'rule' or 'choose_args'");
    }
  }
  if (!built) {
    if (Status s = build_all(); !s.ok()) return s;
  }
  map_.finalize();
  return std::move(map_);
}

// ---------------------------------------------------------------- writer

std::string type_label(const CrushMap& m, int32_t t) {
  auto it = m.type_names().find(t);
  if (it != m.type_names().end()) return it->second;
  return t == 0 ? "device" : "type" + std::to_string(t);
}

std::string item_label(const CrushMap& m, int32_t id) {
  if (const std::string* n = m.item_name(id)) return *n;
  return id >= 0 ? "device" + std::to_string(id) : "bucket" + std::to_string(-1 - id);
}

void write_bucket(const CrushMap& m, const Bucket& b, std::ostringstream& out) {
  out << type_label(m, b.type) << " " << item_label(m, b.id) << " {\n";
  out << "\tid " << b.id << "\t\t# do not change unnecessarily\n";
  if (auto it = m.class_bucket_ids().find(b.id); it != m.class_bucket_ids().end()) {
    for (const auto& [cls, shadow] : it->second) {
      if (!m.bucket_exists(shadow)) continue;
      out << "\tid " << shadow << " class " << m.class_names().at(cls)
          << "\t\t# do not change unnecessarily\n";
    }
  }
  out << "\t# weight " << format_fixed_16_16(b.weight) << "\n";
  out << "\talg " << bucket_alg_name(b.alg);
  bool with_pos = false;
  switch (b.alg) {
    case BucketAlg::kUniform:
      out << "\t# do not change bucket size (" << b.size() << ") unnecessarily";
      with_pos = true;
      break;
    case BucketAlg::kList:
      out << "\t# add new items at the end; do not change order unnecessarily";
      break;
    case BucketAlg::kTree:
      out << "\t# do not change pos for existing items unnecessarily";
      with_pos = true;
      break;
    default:
      break;
  }
  out << "\n\thash " << int{b.hash} << "\t# " << (b.hash == 0 ? "rjenkins1" : "unknown") << "\n";
  for (int32_t j = 0; j < b.size(); ++j) {
    out << "\titem " << item_label(m, b.items[j]) << " weight "
        << format_fixed_16_16(b.item_weights[j]);
    if (with_pos) out << " pos " << j;
    out << "\n";
  }
  out << "}\n";
}

}  // namespace

Result<CrushMap> parse_text_map(std::string_view text, std::string_view source) {
  if (text.size() > kMaxTextMapBytes) {
    return Status::invalid_argument(std::string(source) + ": expected a text map of at most " +
                                    std::to_string(kMaxTextMapBytes) + " bytes, found " +
                                    std::to_string(text.size()) + " bytes");
  }
  Parser p(text, source);
  return p.parse();
}

Result<std::string> read_text_map_file(const std::string& path) {
  const std::string where = "CRUSH map " + quote_for_message(path);
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) {
    return Status::io_error("cannot open " + where + ": " + std::strerror(errno));
  }
  if (S_ISDIR(st.st_mode)) {
    return Status::invalid_argument(where + ": expected a text map file, found a directory");
  }
  if (S_ISREG(st.st_mode) && static_cast<uint64_t>(st.st_size) > kMaxTextMapBytes) {
    return Status::invalid_argument(where + ": expected a text map of at most " +
                                    std::to_string(kMaxTextMapBytes) + " bytes, found " +
                                    std::to_string(st.st_size) + " bytes");
  }
  // Pipes and devices (`--map <(...)`, /dev/stdin) are read up to the limit and no further.
  std::FILE* f = std::fopen(path.c_str(), "rb");
  if (!f) return Status::io_error("cannot open " + where + ": " + std::strerror(errno));
  std::string text;
  char buf[1 << 16];
  bool too_big = false, failed = false;
  for (;;) {
    const size_t n = std::fread(buf, 1, sizeof buf, f);
    if (text.size() + n > kMaxTextMapBytes) {
      too_big = true;
      break;
    }
    text.append(buf, n);
    if (n < sizeof buf) {
      failed = std::ferror(f) != 0;
      break;
    }
  }
  const int read_errno = errno;
  std::fclose(f);
  if (too_big) {
    return Status::invalid_argument(where + ": expected a text map of at most " +
                                    std::to_string(kMaxTextMapBytes) + " bytes, found more");
  }
  if (failed) return Status::io_error("cannot read " + where + ": " + std::strerror(read_errno));
  return text;
}

Result<CrushMap> load_text_map(const std::string& path) {
  auto text = read_text_map_file(path);
  if (!text.ok()) return text.status();
  // crushtool's compiled maps start with CRUSH_MAGIC, 0x00010000 little endian.
  if (text->size() >= 4 && text->compare(0, 4, std::string_view("\0\0\1\0", 4)) == 0) {
    return Status::invalid_argument("CRUSH map " + quote_for_message(path) +
                                    ": expected a text map, found a compiled (binary) one; "
                                    "decompile it with `crushtool -d " +
                                    path + " -o map.txt` and pass map.txt");
  }
  return parse_text_map(*text, path);
}

std::string write_text_map(const CrushMap& m) {
  std::ostringstream out;
  out << "# begin crush map\n";
  const Tunables& t = m.tunables();
  const Tunables legacy;
  if (t.choose_local_tries != legacy.choose_local_tries)
    out << "tunable choose_local_tries " << t.choose_local_tries << "\n";
  if (t.choose_local_fallback_tries != legacy.choose_local_fallback_tries)
    out << "tunable choose_local_fallback_tries " << t.choose_local_fallback_tries << "\n";
  if (t.choose_total_tries != legacy.choose_total_tries)
    out << "tunable choose_total_tries " << t.choose_total_tries << "\n";
  if (t.chooseleaf_descend_once != legacy.chooseleaf_descend_once)
    out << "tunable chooseleaf_descend_once " << t.chooseleaf_descend_once << "\n";
  if (t.chooseleaf_vary_r != legacy.chooseleaf_vary_r)
    out << "tunable chooseleaf_vary_r " << t.chooseleaf_vary_r << "\n";
  if (t.chooseleaf_stable != legacy.chooseleaf_stable)
    out << "tunable chooseleaf_stable " << t.chooseleaf_stable << "\n";
  if (t.straw_calc_version != legacy.straw_calc_version)
    out << "tunable straw_calc_version " << t.straw_calc_version << "\n";
  if (t.allowed_bucket_algs != legacy.allowed_bucket_algs)
    out << "tunable allowed_bucket_algs " << t.allowed_bucket_algs << "\n";

  out << "\n# devices\n";
  for (const auto& [id, name] : m.item_names()) {
    if (id < 0) continue;
    out << "device " << id << " " << name;
    if (auto c = m.device_class(id)) out << " class " << m.class_names().at(*c);
    out << "\n";
  }

  out << "\n# types\n";
  if (!m.type_names().count(0) && !m.type_names().empty()) out << "type 0 osd\n";
  for (const auto& [id, name] : m.type_names()) out << "type " << id << " " << name << "\n";

  out << "\n# buckets\n";
  // Depth first from bucket -1 downwards, children before parents, each bucket once; shadow
  // (device class) buckets are implied by the "id N class C" lines and not printed.
  std::vector<char> done(m.max_buckets(), 0);
  std::function<void(int32_t)> visit = [&](int32_t id) {
    const Bucket* b = m.bucket(id);
    if (!b || done[-1 - id]) return;
    done[-1 - id] = 1;
    for (int32_t item : b->items) {
      if (item < 0) visit(item);
    }
    if (!m.is_shadow(id)) write_bucket(m, *b, out);
  };
  for (int32_t id = -1; id >= -m.max_buckets(); --id) visit(id);

  out << "\n# rules\n";
  for (int32_t i = 0; i < m.max_rules(); ++i) {
    const Rule* r = m.rule(i);
    if (!r) continue;
    out << "rule " << r->name << " {\n\tid " << i << "\n";
    if (r->type == kRuleReplicated) {
      out << "\ttype replicated\n";
    } else if (r->type == kRuleErasure) {
      out << "\ttype erasure\n";
    } else {
      out << "\ttype " << r->type << "\n";
    }
    out << "\tmin_size " << r->min_size << "\n\tmax_size " << r->max_size << "\n";
    for (const RuleStep& s : r->steps) {
      switch (s.op) {
        case RuleOp::kNoop:
          out << "\tstep noop\n";
          break;
        case RuleOp::kTake:
          if (auto origin = m.shadow_origin(s.arg1)) {
            out << "\tstep take " << item_label(m, origin->first) << " class "
                << m.class_names().at(origin->second) << "\n";
          } else {
            out << "\tstep take " << item_label(m, s.arg1) << "\n";
          }
          break;
        case RuleOp::kEmit:
          out << "\tstep emit\n";
          break;
        case RuleOp::kSetChooseTries:
          out << "\tstep set_choose_tries " << s.arg1 << "\n";
          break;
        case RuleOp::kSetChooseLocalTries:
          out << "\tstep set_choose_local_tries " << s.arg1 << "\n";
          break;
        case RuleOp::kSetChooseLocalFallbackTries:
          out << "\tstep set_choose_local_fallback_tries " << s.arg1 << "\n";
          break;
        case RuleOp::kSetChooseLeafTries:
          out << "\tstep set_chooseleaf_tries " << s.arg1 << "\n";
          break;
        case RuleOp::kSetChooseLeafVaryR:
          out << "\tstep set_chooseleaf_vary_r " << s.arg1 << "\n";
          break;
        case RuleOp::kSetChooseLeafStable:
          out << "\tstep set_chooseleaf_stable " << s.arg1 << "\n";
          break;
        case RuleOp::kChooseFirstN:
          out << "\tstep choose firstn " << s.arg1 << " type " << type_label(m, s.arg2) << "\n";
          break;
        case RuleOp::kChooseIndep:
          out << "\tstep choose indep " << s.arg1 << " type " << type_label(m, s.arg2) << "\n";
          break;
        case RuleOp::kChooseLeafFirstN:
          out << "\tstep chooseleaf firstn " << s.arg1 << " type " << type_label(m, s.arg2) << "\n";
          break;
        case RuleOp::kChooseLeafIndep:
          out << "\tstep chooseleaf indep " << s.arg1 << " type " << type_label(m, s.arg2) << "\n";
          break;
      }
    }
    out << "}\n";
  }

  if (!m.choose_args().empty()) {
    out << "\n# choose_args\n";
    // Ordered as signed indexes; printed as unsigned (-1 prints as 18446744073709551615).
    for (const auto& [index, args] : m.choose_args()) {
      out << "choose_args " << static_cast<uint64_t>(index) << " {\n";
      for (size_t idx = 0; idx < args.size(); ++idx) {
        const ChooseArg& a = args[idx];
        if (a.weight_set.empty() && a.ids.empty()) continue;
        out << "  {\n    bucket_id " << -1 - static_cast<int32_t>(idx) << "\n";
        if (!a.weight_set.empty()) {
          out << "    weight_set [\n";
          for (const auto& ws : a.weight_set) {
            out << "      [ ";
            for (uint32_t w : ws) out << format_fixed_16_16(w) << " ";
            out << "]\n";
          }
          out << "    ]\n";
        }
        if (!a.ids.empty()) {
          out << "    ids [ ";
          for (int32_t v : a.ids) out << v << " ";
          out << "]\n";
        }
        out << "  }\n";
      }
      out << "}\n";
    }
  }
  out << "\n# end crush map\n";
  return out.str();
}

}  // namespace granary::crush
