// CRUSH placement: runs a rule of a CrushMap for an input x and returns the chosen items,
// bit-identical to Ceph's crush_do_rule for the same map, weights and choose_args.
//
// A Mapper holds scratch state (uniform-bucket permutations, working vectors) and so is not
// thread-safe; it is cheap to make one per thread. The CrushMap it reads must outlive it and
// must not change while it is used. No allocation happens per call once the Mapper exists.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "engine/crush/crush_map.h"

namespace granary::crush {

class Mapper {
 public:
  explicit Mapper(const CrushMap& map);

  // Maps input `x` with rule `rule_id`, writing at most `out.size()` items (the "result_max"
  // or number of replicas) to `out` and returning how many were written. `weights` holds the
  // per-device reweight in 16.16 (0 = out, 0x10000 = in, in between = in for that fraction
  // of inputs); devices at or beyond weights.size() count as out. `choose_args` (weight sets)
  // may be null. Indep (erasure) rules always fill every position, using kItemNone for holes.
  // An unknown rule id yields 0 results.
  int do_rule(int32_t rule_id, int32_t x, std::span<int32_t> out, std::span<const uint32_t> weights,
              const ChooseArgs* choose_args = nullptr);

 private:
  struct Perm {  // per-bucket permutation state of uniform buckets
    uint32_t generation = 0;
    uint32_t x = 0;
    uint32_t n = 0;
    std::vector<uint32_t> perm;
  };
  struct Call;  // the arguments that stay fixed during one do_rule

  int32_t bucket_choose(const Call& c, const Bucket& b, int32_t x, int32_t r, int position);
  int32_t perm_choose(const Call& c, const Bucket& b, int32_t x, int32_t r);
  int choose_firstn(const Call& c, const Bucket& start, int32_t x, int numrep, int type,
                    int32_t* out, int outpos, int out_size, unsigned tries, unsigned recurse_tries,
                    unsigned local_retries, unsigned local_fallback_retries, bool recurse_to_leaf,
                    unsigned vary_r, unsigned stable, int32_t* out2, int parent_r);
  void choose_indep(const Call& c, const Bucket& start, int32_t x, int left, int numrep, int type,
                    int32_t* out, int outpos, unsigned tries, unsigned recurse_tries,
                    bool recurse_to_leaf, int32_t* out2, int parent_r);

  const CrushMap& map_;
  std::vector<Perm> perms_;  // by -1-bucket id
  uint32_t generation_ = 0;
  std::vector<int32_t> a_, b_, c_;
  std::vector<uint32_t> draws_;  // per-item hashes of the bucket being drawn from
};

// The device reweight vector Ceph's crushtool uses for a map: 0x10000 for every device that
// sits in some bucket, 0 for devices that are only declared. Size max_devices().
std::vector<uint32_t> default_device_weights(const CrushMap& map);

}  // namespace granary::crush
