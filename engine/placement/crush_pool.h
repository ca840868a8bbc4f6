// Ceph pools on CRUSH: object name -> placement group -> OSDs, as Ceph's OSDMap computes it.
//
//   hash  = ceph_str_hash_rjenkins(name)            (or "namespace\037name")
//   ps    = stable_mod(hash, pg_num, pg_num_mask)
//   pps   = crush_hash32_2(stable_mod(ps, pgp_num, pgp_num_mask), pool)   (hashpspool)
//         = stable_mod(ps, pgp_num, pgp_num_mask) + pool                     (legacy)
//   raw   = crush_do_rule(pool rule, pps, size, OSD reweights, choose_args[pool] or [-1])
//   up    = raw without OSDs that do not exist or are down (erasure pools keep positions
//           and put kNoDevice there instead)
//
// Thread-safety: as Placement (one object per thread). The CrushMap must outlive the pool.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "engine/crush/crush_map.h"
#include "engine/crush/mapper.h"
#include "engine/placement/placement.h"
#include "engine/status.h"

namespace granary::placement {

// Ceph's ceph_stable_mod: x mod b, stable as b grows towards the next power of two.
inline uint32_t stable_mod(uint32_t x, uint32_t b, uint32_t bmask) {
  return (x & bmask) < b ? (x & bmask) : (x & (bmask >> 1));
}
// 2^ceil(log2(n)) - 1: the mask stable_mod uses for n groups.
uint32_t pg_mask(uint32_t n);

struct PoolSpec {
  int64_t id = 1;
  uint32_t pg_num = 128;
  uint32_t pgp_num = 0;  // 0 means pg_num
  int size = 3;
  int32_t crush_rule = 0;
  bool hashpspool = true;
  bool erasure = false;  // positional results: holes stay in place
};

// The state of each OSD as the OSDMap sees it. Ids >= max_osd do not exist.
struct OsdStates {
  int32_t max_osd = 0;
  std::vector<uint32_t> reweight;  // 16.16; 0 = out. Size max_osd.
  std::vector<bool> up;            // size max_osd
  std::vector<bool> exists;        // size max_osd

  // Every OSD 0..max_osd-1 exists, is up and in (osdmaptool --mark-up-in).
  static OsdStates all_up_in(int32_t max_osd);
  void mark_out(int32_t osd) { reweight.at(osd) = 0; }
  void mark_down(int32_t osd) { up.at(osd) = false; }
};

class CrushPool final : public Placement {
 public:
  // Checks the spec against the map (rule exists, sizes sane). The map must outlive the pool.
  static Result<CrushPool> create(const crush::CrushMap& map, const PoolSpec& spec, OsdStates osds);

  std::string describe() const override;
  uint32_t num_groups() const override { return spec_.pg_num; }
  uint32_t group_of(std::string_view object_name) const override;
  void devices_of(uint32_t pg, std::vector<int32_t>& out) override;
  int replicas() const override { return spec_.size; }
  int32_t device_id_bound() const override { return std::max(osds_.max_osd, map_->max_devices()); }
  std::vector<double> target_shares() const override;
  int64_t failure_domain(int32_t device) const override;

  // The group of `name` in namespace `nspace` (empty: the default namespace).
  uint32_t group_of(std::string_view object_name, std::string_view nspace) const;
  // The placement seed CRUSH gets for a placement group.
  uint32_t pps(uint32_t pg) const;
  // CRUSH's raw result for a placement group (before dropping down/absent OSDs).
  void raw_devices_of(uint32_t pg, std::vector<int32_t>& out);
  const PoolSpec& spec() const { return spec_; }
  const OsdStates& osds() const { return osds_; }
  const crush::CrushMap& map() const { return *map_; }

 private:
  CrushPool(const crush::CrushMap& map, const PoolSpec& spec, OsdStates osds);

  const crush::CrushMap* map_;
  PoolSpec spec_;
  OsdStates osds_;
  uint32_t pg_num_mask_;
  uint32_t pgp_num_mask_;
  int32_t failure_domain_type_;
  crush::Mapper mapper_;
  std::vector<int32_t> scratch_;
  std::vector<int64_t> domain_;  // failure domain per device, -1 outside the rule's tree
};

}  // namespace granary::placement
