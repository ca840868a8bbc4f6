#include "engine/crush/mapper.h"

#include <algorithm>
#include <cstring>
#include <limits>

#include "engine/crush/hash.h"
#include "engine/crush/ln.h"

namespace granary::crush {

struct Mapper::Call {
  std::span<const uint32_t> weights;
  const ChooseArgs* choose_args;
};

Mapper::Mapper(const CrushMap& map) : map_(map), perms_(map.max_buckets()) {
  size_t largest = 0;
  for (int32_t idx = 0; idx < map.max_buckets(); ++idx) {
    if (const Bucket* b = map.bucket(-1 - idx)) {
      perms_[idx].perm.resize(b->items.size());
      largest = std::max(largest, b->items.size());
    }
  }
  draws_.resize(largest);
}

std::vector<uint32_t> default_device_weights(const CrushMap& map) {
  std::vector<uint32_t> w(map.max_devices(), 0);
  for (int32_t idx = 0; idx < map.max_buckets(); ++idx) {
    if (const Bucket* b = map.bucket(-1 - idx)) {
      for (int32_t item : b->items) {
        if (item >= 0) w[item] = kWeightOne;
      }
    }
  }
  return w;
}

namespace {

// A device is rejected for input x unless its reweight admits it: always when >= 1.0, never
// when 0, and otherwise for the fraction of inputs whose hash falls below the reweight.
bool is_out(std::span<const uint32_t> weights, int32_t item, int32_t x) {
  if (static_cast<size_t>(item) >= weights.size()) return true;
  const uint32_t w = weights[item];
  if (w >= kWeightOne) return false;
  if (w == 0) return true;
  return (crush_hash32_2(x, item) & 0xffff) >= w;
}

int32_t list_choose(const Bucket& b, int32_t x, int32_t r) {
  for (int32_t i = b.size() - 1; i >= 0; --i) {
    uint64_t w = crush_hash32_4(x, b.items[i], r, b.id) & 0xffff;
    w = (w * b.sum_weights[i]) >> 16;
    if (w < b.item_weights[i]) return b.items[i];
  }
  return b.items[0];
}

int32_t tree_choose(const Bucket& b, int32_t x, int32_t r) {
  // Descend from the root of the implicit tree, going left with probability
  // weight(left) / weight(node), until a leaf (odd node) is reached.
  int n = static_cast<int>(b.node_weights.size() >> 1);
  while ((n & 1) == 0) {
    const uint32_t w = b.node_weights[n];
    const uint64_t t = (uint64_t{crush_hash32_4(x, n, r, b.id)} * w) >> 32;
    const int half = (n & -n) >> 1;  // 1 << (height - 1)
    const int left = n - half;
    n = (t < b.node_weights[left]) ? left : n + half;
  }
  return b.items[n >> 1];
}

// Hashes of (x, ids[i], r) for every item, low 16 bits, eight at a time.
void draw_hashes(const int32_t* ids, int32_t n, int32_t x, int32_t r, uint32_t* u) {
  int32_t i = 0;
  for (; i + 8 <= n; i += 8) crush_hash32_3_x8(x, ids + i, r, u + i);
  if (n - i >= 2) {  // a partial batch still beats two or more scalar hashes
    int32_t tail_ids[8] = {};
    uint32_t tail_u[8];
    std::copy(ids + i, ids + n, tail_ids);
    crush_hash32_3_x8(x, tail_ids, r, tail_u);
    std::copy(tail_u, tail_u + (n - i), u + i);
    return;
  }
  for (; i < n; ++i) u[i] = crush_hash32_3(x, ids[i], r);
}

int32_t straw_choose(const Bucket& b, int32_t x, int32_t r, uint32_t* u) {
  draw_hashes(b.items.data(), b.size(), x, r, u);
  int high = 0;
  uint64_t high_draw = 0;
  for (int32_t i = 0; i < b.size(); ++i) {
    const uint64_t draw = uint64_t{u[i] & 0xffff} * b.straws[i];
    if (i == 0 || draw > high_draw) {
      high = i;
      high_draw = draw;
    }
  }
  return b.items[high];
}

int32_t straw2_choose(const Bucket& b, int32_t x, int32_t r, const ChooseArg* arg, int position,
                      uint32_t* u) {
  // Each item draws ln(u)/weight with u uniform in (0, 1]: an exponential race whose winner
  // is distributed in proportion to weight, and that moves data only to or from an item
  // whose weight changed.
  const uint32_t* weights = b.item_weights.data();
  const int32_t* ids = b.items.data();
  if (arg) {
    if (!arg->weight_set.empty()) {
      const size_t pos = std::min<size_t>(position, arg->weight_set.size() - 1);
      weights = arg->weight_set[pos].data();
    }
    if (!arg->ids.empty()) ids = arg->ids.data();
  }
  draw_hashes(ids, b.size(), x, r, u);
  int high = 0;
  int64_t high_draw = 0;
  for (int32_t i = 0; i < b.size(); ++i) {
    int64_t draw;
    if (weights[i]) {
      const int64_t ln = static_cast<int64_t>(crush_ln(u[i] & 0xffff)) - 0x1000000000000ll;  // <= 0
      draw = ln / static_cast<int64_t>(weights[i]);
    } else {
      draw = std::numeric_limits<int64_t>::min();
    }
    if (i == 0 || draw > high_draw) {
      high = i;
      high_draw = draw;
    }
  }
  return b.items[high];
}

}  // namespace

int32_t Mapper::perm_choose(const Call&, const Bucket& b, int32_t x, int32_t r) {
  // A pseudo-random permutation of the bucket's items for input x, extended lazily up to the
  // position r (mod size) asked for; kept across calls within one do_rule, as in Ceph.
  Perm& p = perms_[-1 - b.id];
  if (p.generation != generation_) {
    p.generation = generation_;
    p.x = 0;
    p.n = 0;
  }
  const uint32_t size = static_cast<uint32_t>(b.size());
  const uint32_t pr = static_cast<uint32_t>(r) % size;
  if (p.x != static_cast<uint32_t>(x) || p.n == 0) {
    p.x = static_cast<uint32_t>(x);
    if (pr == 0) {  // the common first draw, without building the permutation
      p.perm[0] = crush_hash32_3(x, b.id, 0) % size;
      p.n = 0xffff;
      return b.items[p.perm[0]];
    }
    for (uint32_t i = 0; i < size; ++i) p.perm[i] = i;
    p.n = 0;
  } else if (p.n == 0xffff) {
    // Expand the shortcut above into a real permutation whose first entry is that draw.
    for (uint32_t i = 1; i < size; ++i) p.perm[i] = i;
    p.perm[p.perm[0]] = 0;
    p.n = 1;
  }
  while (p.n <= pr) {
    const uint32_t k = p.n;
    if (k < size - 1) {
      const uint32_t i = crush_hash32_3(x, b.id, k) % (size - k);
      if (i) std::swap(p.perm[k], p.perm[k + i]);
    }
    ++p.n;
  }
  return b.items[p.perm[pr]];
}

int32_t Mapper::bucket_choose(const Call& c, const Bucket& b, int32_t x, int32_t r, int position) {
  switch (b.alg) {
    case BucketAlg::kUniform:
      return perm_choose(c, b, x, r);
    case BucketAlg::kList:
      return list_choose(b, x, r);
    case BucketAlg::kTree:
      return tree_choose(b, x, r);
    case BucketAlg::kStraw:
      return straw_choose(b, x, r, draws_.data());
    case BucketAlg::kStraw2: {
      const ChooseArg* arg = nullptr;
      if (c.choose_args && static_cast<size_t>(-1 - b.id) < c.choose_args->size()) {
        arg = &(*c.choose_args)[-1 - b.id];
      }
      return straw2_choose(b, x, r, arg, position, draws_.data());
    }
  }
  return b.items[0];
}

// Chooses `numrep` distinct items of type `type` below `start`, first-n style: a rejected
// position is retried with a new r, and later positions shift up (replicated pools).
int Mapper::choose_firstn(const Call& c, const Bucket& start, int32_t x, int numrep, int type,
                          int32_t* out, int outpos, int out_size, unsigned tries,
                          unsigned recurse_tries, unsigned local_retries,
                          unsigned local_fallback_retries, bool recurse_to_leaf, unsigned vary_r,
                          unsigned stable, int32_t* out2, int parent_r) {
  int count = out_size;
  for (int rep = stable ? 0 : outpos; rep < numrep && count > 0; ++rep) {
    unsigned ftotal = 0;
    bool skip_rep = false;
    int32_t item = 0;
    bool retry_descent;
    do {
      retry_descent = false;
      const Bucket* in = &start;
      unsigned flocal = 0;
      bool retry_bucket;
      do {
        bool collide = false;
        bool reject = false;
        retry_bucket = false;
        const int32_t r = rep + parent_r + static_cast<int32_t>(ftotal);
        int itemtype = 0;
        if (in->items.empty()) {
          reject = true;
        } else {
          if (local_fallback_retries > 0 && flocal >= (static_cast<unsigned>(in->size()) >> 1) &&
              flocal > local_fallback_retries) {
            item = perm_choose(c, *in, x, r);
          } else {
            item = bucket_choose(c, *in, x, r, outpos);
          }
          if (item >= map_.max_devices()) {
            skip_rep = true;
            break;
          }
          const Bucket* sub = item < 0 ? map_.bucket(item) : nullptr;
          itemtype = sub ? sub->type : 0;
          if (itemtype != type) {
            if (!sub) {  // a device, or a dangling bucket id, where a bucket was expected
              skip_rep = true;
              break;
            }
            in = sub;
            retry_bucket = true;
            continue;
          }
          for (int i = 0; i < outpos; ++i) {
            if (out[i] == item) {
              collide = true;
              break;
            }
          }
          if (!collide && recurse_to_leaf) {
            if (item < 0) {
              const int sub_r = vary_r ? (r >> (vary_r - 1)) : 0;
              if (choose_firstn(c, *sub, x, stable ? 1 : outpos + 1, 0, out2, outpos, count,
                                recurse_tries, 0, local_retries, local_fallback_retries, false,
                                vary_r, stable, nullptr, sub_r) <= outpos) {
                reject = true;  // no leaf below this item
              }
            } else {
              out2[outpos] = item;  // already a leaf
            }
          }
          if (!reject && !collide && itemtype == 0) reject = is_out(c.weights, item, x);
        }
        if (reject || collide) {
          ++ftotal;
          ++flocal;
          if (collide && flocal <= local_retries) {
            retry_bucket = true;  // retry locally a few times
          } else if (local_fallback_retries > 0 &&
                     flocal <= static_cast<unsigned>(in->size()) + local_fallback_retries) {
            retry_bucket = true;  // exhaustive bucket search
          } else if (ftotal < tries) {
            retry_descent = true;  // start over from the top
          } else {
            skip_rep = true;  // give up on this position
          }
        }
      } while (retry_bucket);
    } while (retry_descent);
    if (skip_rep) continue;
    out[outpos++] = item;
    --count;
  }
  return outpos;
}

// Chooses `left` items for positions [outpos, outpos+left) independently: a rejected
// position is retried on its own, others never shift, and a position that cannot be filled
// becomes kItemNone (erasure-coded pools).
void Mapper::choose_indep(const Call& c, const Bucket& start, int32_t x, int left, int numrep,
                          int type, int32_t* out, int outpos, unsigned tries,
                          unsigned recurse_tries, bool recurse_to_leaf, int32_t* out2,
                          int parent_r) {
  const int endpos = outpos + left;
  for (int rep = outpos; rep < endpos; ++rep) {
    out[rep] = kItemUndef;
    if (out2) out2[rep] = kItemUndef;
  }
  for (unsigned ftotal = 0; left > 0 && ftotal < tries; ++ftotal) {
    for (int rep = outpos; rep < endpos; ++rep) {
      if (out[rep] != kItemUndef) continue;
      const Bucket* in = &start;
      for (;;) {
        // The draw depends on the position, even in nested calls, so that the same bucket
        // picked for another position tends to yield another item.
        int32_t r = rep + parent_r;
        if (in->alg == BucketAlg::kUniform && in->size() % numrep == 0) {
          r += (numrep + 1) * static_cast<int32_t>(ftotal);
        } else {
          r += numrep * static_cast<int32_t>(ftotal);
        }
        if (in->items.empty()) break;
        const int32_t item = bucket_choose(c, *in, x, r, outpos);
        if (item >= map_.max_devices()) {
          out[rep] = kItemNone;
          if (out2) out2[rep] = kItemNone;
          --left;
          break;
        }
        const Bucket* sub = item < 0 ? map_.bucket(item) : nullptr;
        const int itemtype = sub ? sub->type : 0;
        if (itemtype != type) {
          if (!sub) {
            out[rep] = kItemNone;
            if (out2) out2[rep] = kItemNone;
            --left;
            break;
          }
          in = sub;
          continue;
        }
        bool collide = false;
        for (int i = outpos; i < endpos; ++i) {
          if (out[i] == item) {
            collide = true;
            break;
          }
        }
        if (collide) break;
        if (recurse_to_leaf) {
          if (item < 0) {
            choose_indep(c, *sub, x, 1, numrep, 0, out2, rep, recurse_tries, 0, false, nullptr, r);
            if (out2[rep] == kItemNone) break;  // nothing placed below: no leaf
          } else {
            out2[rep] = item;
          }
        }
        if (itemtype == 0 && is_out(c.weights, item, x)) break;
        out[rep] = item;
        --left;
        break;
      }
    }
  }
  for (int rep = outpos; rep < endpos; ++rep) {
    if (out[rep] == kItemUndef) out[rep] = kItemNone;
    if (out2 && out2[rep] == kItemUndef) out2[rep] = kItemNone;
  }
}

int Mapper::do_rule(int32_t rule_id, int32_t x, std::span<int32_t> result,
                    std::span<const uint32_t> weights, const ChooseArgs* choose_args) {
  const Rule* rule = map_.rule(rule_id);
  if (!rule) return 0;
  const int result_max = static_cast<int>(result.size());
  if (++generation_ == 0) {  // wrapped: invalidate every permutation explicitly
    for (Perm& p : perms_) p.generation = 0;
    generation_ = 1;
  }
  if (a_.size() < result.size()) {
    a_.resize(result_max);
    b_.resize(result_max);
    c_.resize(result_max);
  }
  const Call call{weights, choose_args};
  const Tunables& t = map_.tunables();
  // choose_total_tries counted retries, not tries: add one.
  unsigned choose_tries = t.choose_total_tries + 1;
  unsigned choose_leaf_tries = 0;
  unsigned local_retries = t.choose_local_tries;
  unsigned local_fallback_retries = t.choose_local_fallback_tries;
  unsigned vary_r = t.chooseleaf_vary_r;
  unsigned stable = t.chooseleaf_stable;

  int32_t* w = a_.data();
  int32_t* o = b_.data();
  int32_t* c = c_.data();
  int wsize = 0;
  int result_len = 0;
  for (const RuleStep& step : rule->steps) {
    bool firstn = false;
    switch (step.op) {
      case RuleOp::kTake:
        if ((step.arg1 >= 0 && step.arg1 < map_.max_devices()) || map_.bucket_exists(step.arg1)) {
          w[0] = step.arg1;
          wsize = 1;
        }
        break;
      case RuleOp::kSetChooseTries:
        if (step.arg1 > 0) choose_tries = step.arg1;
        break;
      case RuleOp::kSetChooseLeafTries:
        if (step.arg1 > 0) choose_leaf_tries = step.arg1;
        break;
      case RuleOp::kSetChooseLocalTries:
        if (step.arg1 >= 0) local_retries = step.arg1;
        break;
      case RuleOp::kSetChooseLocalFallbackTries:
        if (step.arg1 >= 0) local_fallback_retries = step.arg1;
        break;
      case RuleOp::kSetChooseLeafVaryR:
        if (step.arg1 >= 0) vary_r = step.arg1;
        break;
      case RuleOp::kSetChooseLeafStable:
        if (step.arg1 >= 0) stable = step.arg1;
        break;
      case RuleOp::kChooseFirstN:
      case RuleOp::kChooseLeafFirstN:
        firstn = true;
        [[fallthrough]];
      case RuleOp::kChooseIndep:
      case RuleOp::kChooseLeafIndep: {
        if (wsize == 0) break;
        const bool recurse_to_leaf =
            step.op == RuleOp::kChooseLeafFirstN || step.op == RuleOp::kChooseLeafIndep;
        int osize = 0;
        for (int i = 0; i < wsize; ++i) {
          int numrep = step.arg1;
          if (numrep <= 0) {
            numrep += result_max;
            if (numrep <= 0) continue;
          }
          const Bucket* in = w[i] < 0 ? map_.bucket(w[i]) : nullptr;
          if (!in) continue;  // a device or kItemNone: nothing to descend into
          if (firstn) {
            unsigned recurse_tries;
            if (choose_leaf_tries) {
              recurse_tries = choose_leaf_tries;
            } else if (t.chooseleaf_descend_once) {
              recurse_tries = 1;
            } else {
              recurse_tries = choose_tries;
            }
            osize +=
                choose_firstn(call, *in, x, numrep, step.arg2, o + osize, 0, result_max - osize,
                              choose_tries, recurse_tries, local_retries, local_fallback_retries,
                              recurse_to_leaf, vary_r, stable, c + osize, 0);
          } else {
            const int out_size = std::min(numrep, result_max - osize);
            choose_indep(call, *in, x, out_size, numrep, step.arg2, o + osize, 0, choose_tries,
                         choose_leaf_tries ? choose_leaf_tries : 1, recurse_to_leaf, c + osize, 0);
            osize += out_size;
          }
        }
        if (recurse_to_leaf) std::memcpy(o, c, osize * sizeof(*o));
        std::swap(o, w);
        wsize = osize;
        break;
      }
      case RuleOp::kEmit:
        for (int i = 0; i < wsize && result_len < result_max; ++i) result[result_len++] = w[i];
        wsize = 0;
        break;
      case RuleOp::kNoop:
        break;
    }
  }
  return result_len;
}

}  // namespace granary::crush
