#include "engine/cluster/osd_map.h"

#include <algorithm>
#include <set>

namespace granary::cluster {

namespace {

void describe_list(std::string& out, const char* what, const std::vector<int32_t>& osds) {
  if (osds.empty()) return;
  if (!out.empty()) out += "; ";
  out += what;
  for (size_t i = 0; i < osds.size(); ++i) {
    out += (i == 0 ? " osd." : ", osd.") + std::to_string(osds[i]);
  }
}

}  // namespace

std::string Incremental::describe() const {
  std::string out;
  if (new_crush) out = "new crush map";
  if (new_max_osd >= 0) {
    out += (out.empty() ? "" : "; ") + std::string("max_osd ") + std::to_string(new_max_osd);
  }
  describe_list(out, "remove", remove);
  describe_list(out, "down", mark_down);
  describe_list(out, "up", mark_up);
  describe_list(out, "out", mark_out);
  describe_list(out, "in", mark_in);
  for (const auto& [osd, w] : reweight) {
    out += (out.empty() ? "" : "; ") + std::string("reweight osd.") + std::to_string(osd) + " " +
           std::to_string(static_cast<double>(w) / crush::kWeightOne);
  }
  return out.empty() ? "no change" : out;
}

Status OsdMap::check_pools(const crush::CrushMap& crush, std::vector<Pool>& pools) {
  std::set<int64_t> ids;
  for (Pool& p : pools) {
    const std::string name = "pool " + std::to_string(p.spec.id);
    if (!ids.insert(p.spec.id).second) return Status::invalid_argument(name + " is defined twice");
    if (Status s = p.redundancy.validate(); !s.ok()) {
      return Status::invalid_argument(name + ": " + s.message());
    }
    if (p.spec.size != p.redundancy.size || p.spec.erasure != p.redundancy.erasure) {
      return Status::invalid_argument(
          name + ": the pool spec (size " + std::to_string(p.spec.size) +
          (p.spec.erasure ? ", erasure" : ", replicated") +
          ") does not match its redundancy (size " + std::to_string(p.redundancy.size) +
          (p.redundancy.erasure ? ", erasure)" : ", replicated)"));
    }
    if (!crush.rule(p.spec.crush_rule)) {
      return Status::invalid_argument(name + ": the CRUSH map has no rule " +
                                      std::to_string(p.spec.crush_rule));
    }
    if (p.min_size == 0) p.min_size = p.redundancy.default_min_size();
    const int lowest = p.redundancy.needed_to_read();
    if (p.min_size < lowest || p.min_size > p.redundancy.size) {
      return Status::invalid_argument(name + ": min_size must be " + std::to_string(lowest) + ".." +
                                      std::to_string(p.redundancy.size) + ", got " +
                                      std::to_string(p.min_size));
    }
  }
  return Status::ok_status();
}

Result<OsdMap> OsdMap::create(std::shared_ptr<const crush::CrushMap> crush, int32_t max_osd,
                              std::vector<Pool> pools) {
  if (!crush) return Status::invalid_argument("an OsdMap needs a CRUSH map");
  if (max_osd < 0) {
    return Status::invalid_argument("max_osd must be >= 0, got " + std::to_string(max_osd));
  }
  if (Status s = check_pools(*crush, pools); !s.ok()) return s;
  OsdMap map;
  map.crush_ = std::move(crush);
  map.states_ = placement::OsdStates::all_up_in(max_osd);
  map.pools_ = std::move(pools);
  for (const Pool& p : map.pools_) {
    // CrushPool's own checks (pg_num, pool id range).
    if (Result<placement::CrushPool> cp = map.pool_placement(p.spec.id); !cp.ok()) {
      return cp.status();
    }
  }
  return map;
}

int32_t OsdMap::num_up() const {
  int32_t n = 0;
  for (int32_t osd = 0; osd < max_osd(); ++osd) n += is_up(osd) ? 1 : 0;
  return n;
}

int32_t OsdMap::num_in() const {
  int32_t n = 0;
  for (int32_t osd = 0; osd < max_osd(); ++osd) n += is_in(osd) ? 1 : 0;
  return n;
}

const Pool* OsdMap::pool(int64_t pool_id) const {
  for (const Pool& p : pools_) {
    if (p.spec.id == pool_id) return &p;
  }
  return nullptr;
}

Status OsdMap::apply(const Incremental& inc) {
  OsdMap next = *this;
  if (inc.new_crush) {
    std::vector<Pool> pools = next.pools_;
    if (Status s = check_pools(*inc.new_crush, pools); !s.ok()) return s;
    next.crush_ = inc.new_crush;
  }
  placement::OsdStates& st = next.states_;
  if (inc.new_max_osd >= 0) {
    if (inc.new_max_osd < st.max_osd) {
      return Status::invalid_argument("max_osd cannot shrink from " + std::to_string(st.max_osd) +
                                      " to " + std::to_string(inc.new_max_osd));
    }
    st.max_osd = inc.new_max_osd;
    st.exists.resize(st.max_osd, true);
    st.up.resize(st.max_osd, false);
    st.reweight.resize(st.max_osd, 0);
  }
  auto check = [&](int32_t osd, const char* what) {
    if (osd < 0 || osd >= st.max_osd || !st.exists[osd]) {
      return Status::invalid_argument(std::string(what) + " osd." + std::to_string(osd) +
                                      ": no such OSD in epoch " + std::to_string(epoch_) +
                                      " (max_osd " + std::to_string(st.max_osd) + ")");
    }
    return Status::ok_status();
  };
  for (int32_t osd : inc.remove) {
    if (Status s = check(osd, "remove"); !s.ok()) return s;
    if (st.up[osd]) {
      return Status::invalid_argument("remove osd." + std::to_string(osd) +
                                      ": it is still up; mark it down first");
    }
    st.exists[osd] = false;
    st.reweight[osd] = 0;
  }
  for (int32_t osd : inc.mark_down) {
    if (Status s = check(osd, "mark down"); !s.ok()) return s;
    st.up[osd] = false;
  }
  for (int32_t osd : inc.mark_up) {
    if (Status s = check(osd, "mark up"); !s.ok()) return s;
    st.up[osd] = true;
  }
  for (int32_t osd : inc.mark_out) {
    if (Status s = check(osd, "mark out"); !s.ok()) return s;
    st.reweight[osd] = 0;
  }
  for (int32_t osd : inc.mark_in) {
    if (Status s = check(osd, "mark in"); !s.ok()) return s;
    st.reweight[osd] = crush::kWeightOne;
  }
  for (const auto& [osd, w] : inc.reweight) {
    if (Status s = check(osd, "reweight"); !s.ok()) return s;
    if (w > crush::kWeightOne) {
      return Status::invalid_argument("reweight osd." + std::to_string(osd) +
                                      ": must be 0..1.0 (0x10000), got " + std::to_string(w));
    }
    st.reweight[osd] = w;
  }
  next.epoch_ = epoch_ + 1;
  *this = std::move(next);
  return Status::ok_status();
}

Result<placement::CrushPool> OsdMap::pool_placement(int64_t pool_id) const {
  const Pool* p = pool(pool_id);
  if (p == nullptr) return Status::not_found("no pool " + std::to_string(pool_id));
  return placement::CrushPool::create(*crush_, p->spec, states_);
}

Result<std::vector<std::vector<int32_t>>> OsdMap::up_sets(int64_t pool_id) const {
  Result<placement::CrushPool> cp = pool_placement(pool_id);
  if (!cp.ok()) return cp.status();
  std::vector<std::vector<int32_t>> sets(cp->num_groups());
  for (uint32_t pg = 0; pg < cp->num_groups(); ++pg) cp->devices_of(pg, sets[pg]);
  return sets;
}

}  // namespace granary::cluster
