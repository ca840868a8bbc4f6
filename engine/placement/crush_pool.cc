#include "engine/placement/crush_pool.h"

#include <algorithm>

#include "engine/crush/hash.h"

namespace granary::placement {

uint32_t pg_mask(uint32_t n) {
  if (n <= 1) return 0;
  const int bits = 32 - __builtin_clz(n - 1);
  return bits >= 32 ? 0xffffffffu : (1u << bits) - 1;
}

OsdStates OsdStates::all_up_in(int32_t max_osd) {
  OsdStates s;
  s.max_osd = max_osd;
  s.reweight.assign(max_osd, crush::kWeightOne);
  s.up.assign(max_osd, true);
  s.exists.assign(max_osd, true);
  return s;
}

namespace {

// The bucket type replicas are kept apart in: the type of the first choose/chooseleaf step
// (0 = devices themselves).
int32_t rule_failure_domain_type(const crush::Rule& rule) {
  for (const crush::RuleStep& s : rule.steps) {
    switch (s.op) {
      case crush::RuleOp::kChooseFirstN:
      case crush::RuleOp::kChooseIndep:
      case crush::RuleOp::kChooseLeafFirstN:
      case crush::RuleOp::kChooseLeafIndep:
        return s.arg2;
      default:
        break;
    }
  }
  return 0;
}

}  // namespace

CrushPool::CrushPool(const crush::CrushMap& map, const PoolSpec& spec, OsdStates osds)
    : map_(&map),
      spec_(spec),
      osds_(std::move(osds)),
      pg_num_mask_(pg_mask(spec.pg_num)),
      pgp_num_mask_(pg_mask(spec.pgp_num)),
      failure_domain_type_(rule_failure_domain_type(*map.rule(spec.crush_rule))),
      mapper_(map),
      scratch_(spec.size),
      domain_(std::max(osds_.max_osd, map.max_devices()), -1) {
  // Each device's failure domain: itself for device-level rules, else its nearest ancestor
  // of the rule's failure-domain type (first occurrence wins for devices listed twice).
  crush::for_each_rule_device(map, *map.rule(spec.crush_rule),
                              [&](int32_t osd, uint32_t, const std::vector<int32_t>& path) {
                                if (domain_[osd] != -1) return;
                                if (failure_domain_type_ == 0) {
                                  domain_[osd] = osd;
                                  return;
                                }
                                for (auto it = path.rbegin(); it != path.rend(); ++it) {
                                  if (map.bucket(*it)->type == failure_domain_type_) {
                                    domain_[osd] = *it;
                                    return;
                                  }
                                }
                              });
}

Result<CrushPool> CrushPool::create(const crush::CrushMap& map, const PoolSpec& in,
                                    OsdStates osds) {
  PoolSpec spec = in;
  if (spec.pgp_num == 0) spec.pgp_num = spec.pg_num;
  if (spec.pg_num == 0 || spec.pg_num > (1u << 30)) {
    return Status::invalid_argument("pg_num must be 1..2^30, got " + std::to_string(spec.pg_num));
  }
  if (spec.pgp_num > spec.pg_num) {
    return Status::invalid_argument("pgp_num " + std::to_string(spec.pgp_num) +
                                    " is above pg_num " + std::to_string(spec.pg_num));
  }
  if (spec.size < 1 || spec.size > 64) {
    return Status::invalid_argument("pool size must be 1..64, got " + std::to_string(spec.size));
  }
  if (spec.id < 0 || spec.id > 0xffffffffll) {
    return Status::invalid_argument("pool id must be 0..4294967295, got " +
                                    std::to_string(spec.id));
  }
  if (!map.rule(spec.crush_rule)) {
    return Status::invalid_argument("the CRUSH map has no rule " + std::to_string(spec.crush_rule));
  }
  if (osds.max_osd < 0 || osds.reweight.size() != static_cast<size_t>(osds.max_osd) ||
      osds.up.size() != osds.reweight.size() || osds.exists.size() != osds.reweight.size()) {
    return Status::invalid_argument("OSD state vectors must all have max_osd entries");
  }
  return CrushPool(map, spec, std::move(osds));
}

std::string CrushPool::describe() const {
  return "crush pool " + std::to_string(spec_.id) + " rule " + std::to_string(spec_.crush_rule) +
         " size " + std::to_string(spec_.size) + " pg_num " + std::to_string(spec_.pg_num) +
         (spec_.erasure ? " (erasure)" : " (replicated)");
}

uint32_t CrushPool::group_of(std::string_view name) const {
  return group_of(name, {});
}

uint32_t CrushPool::group_of(std::string_view name, std::string_view nspace) const {
  uint32_t hash;
  if (nspace.empty()) {
    hash = crush::str_hash_rjenkins(name);
  } else {
    std::string key;
    key.reserve(nspace.size() + 1 + name.size());
    key.append(nspace).push_back('\037');
    key.append(name);
    hash = crush::str_hash_rjenkins(key);
  }
  return stable_mod(hash, spec_.pg_num, pg_num_mask_);
}

uint32_t CrushPool::pps(uint32_t pg) const {
  const uint32_t seed = stable_mod(pg, spec_.pgp_num, pgp_num_mask_);
  const uint32_t pool = static_cast<uint32_t>(spec_.id);
  return spec_.hashpspool ? crush::crush_hash32_2(seed, pool) : seed + pool;
}

void CrushPool::raw_devices_of(uint32_t pg, std::vector<int32_t>& out) {
  const int n = mapper_.do_rule(spec_.crush_rule, static_cast<int32_t>(pps(pg)), scratch_,
                                osds_.reweight, map_->choose_args_for(spec_.id));
  out.assign(scratch_.begin(), scratch_.begin() + n);
}

void CrushPool::devices_of(uint32_t pg, std::vector<int32_t>& out) {
  raw_devices_of(pg, out);
  auto usable = [&](int32_t osd) {
    return osd >= 0 && osd < osds_.max_osd && osds_.exists[osd] && osds_.up[osd];
  };
  if (spec_.erasure) {
    for (int32_t& osd : out) {
      if (!usable(osd)) osd = kNoDevice;
    }
  } else {
    out.erase(std::remove_if(out.begin(), out.end(), [&](int32_t osd) { return !usable(osd); }),
              out.end());
  }
}

std::vector<double> CrushPool::target_shares() const {
  std::vector<double> share(device_id_bound(), 0.0);
  double total = 0;
  crush::for_each_rule_device(*map_, *map_->rule(spec_.crush_rule),
                              [&](int32_t osd, uint32_t weight, const std::vector<int32_t>&) {
                                if (osd >= osds_.max_osd || !osds_.exists[osd] || !osds_.up[osd])
                                  return;
                                const double w = static_cast<double>(weight) *
                                                 std::min(osds_.reweight[osd], crush::kWeightOne) /
                                                 crush::kWeightOne;
                                share[osd] += w;
                                total += w;
                              });
  if (total > 0) {
    for (double& s : share) s /= total;
  }
  return share;
}

int64_t CrushPool::failure_domain(int32_t device) const {
  if (device < 0 || device >= static_cast<int32_t>(domain_.size())) return -1;
  return domain_[device];
}

}  // namespace granary::placement
