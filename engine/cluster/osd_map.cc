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
  if (!pg_temp.empty()) {
    // Counts only: a priming epoch may carry an entry for most PGs of a pool.
    size_t cleared = 0;
    for (const PgTempEntry& t : pg_temp) cleared += t.clear ? 1 : 0;
    out += (out.empty() ? "" : "; ") + std::string("pg_temp");
    if (pg_temp.size() > cleared) out += " " + std::to_string(pg_temp.size() - cleared) + " set";
    if (cleared > 0)
      out += (cleared < pg_temp.size() ? ", " : " ") + std::to_string(cleared) + " cleared";
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

Result<OsdMap> OsdMap::restore(uint32_t epoch, std::shared_ptr<const crush::CrushMap> crush,
                               placement::OsdStates states, std::vector<Pool> pools,
                               const std::vector<PgTempEntry>& pg_temp) {
  if (epoch < 1) return Status::invalid_argument("an OsdMap's epoch must be >= 1, got 0");
  const auto n = static_cast<size_t>(std::max(0, states.max_osd));
  if (states.reweight.size() != n || states.up.size() != n || states.exists.size() != n) {
    return Status::invalid_argument(
        "OSD states: expected " + std::to_string(n) + " entries each (max_osd), found " +
        std::to_string(states.reweight.size()) + " reweights, " + std::to_string(states.up.size()) +
        " up flags and " + std::to_string(states.exists.size()) + " exists flags");
  }
  for (size_t osd = 0; osd < n; ++osd) {
    if (states.reweight[osd] > 0x10000) {
      return Status::invalid_argument("osd." + std::to_string(osd) + ": reweight " +
                                      std::to_string(states.reweight[osd]) +
                                      " is more than 1.0 (0x10000)");
    }
    if (!states.exists[osd] && (states.up[osd] || states.reweight[osd] > 0)) {
      return Status::invalid_argument("osd." + std::to_string(osd) +
                                      ": does not exist, so it must be down and out");
    }
  }
  Result<OsdMap> map = create(std::move(crush), states.max_osd, std::move(pools));
  if (!map.ok()) return map.status();
  map->states_ = std::move(states);
  if (!pg_temp.empty()) {
    Incremental inc;
    inc.pg_temp = pg_temp;
    if (Status s = map->apply(inc); !s.ok()) return s;
  }
  map->epoch_ = epoch;
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
  for (const PgTempEntry& t : inc.pg_temp) {
    const Pool* p = next.pool(t.pool);
    const std::string name = "pg_temp " + std::to_string(t.pool) + "." + std::to_string(t.pg);
    if (p == nullptr) return Status::invalid_argument(name + ": no such pool");
    if (t.pg >= p->spec.pg_num) {
      return Status::invalid_argument(name + ": the pool has " + std::to_string(p->spec.pg_num) +
                                      " PGs");
    }
    if (t.clear) {
      next.pg_temp_.erase({t.pool, t.pg});
      continue;
    }
    if (p->redundancy.erasure && !t.osds.empty() &&
        static_cast<int>(t.osds.size()) != p->redundancy.size) {
      return Status::invalid_argument(name + ": an erasure pool's pg_temp has one OSD per " +
                                      "position (" + std::to_string(p->redundancy.size) +
                                      "), got " + std::to_string(t.osds.size()));
    }
    for (int32_t osd : t.osds) {
      if (osd == placement::kNoDevice && p->redundancy.erasure) continue;
      if (Status s = check(osd, "pg_temp of"); !s.ok()) return s;
    }
    next.pg_temp_[{t.pool, t.pg}] = t.osds;
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

const std::vector<int32_t>* OsdMap::pg_temp(int64_t pool_id, uint32_t pg) const {
  auto it = pg_temp_.find({pool_id, pg});
  return it == pg_temp_.end() ? nullptr : &it->second;
}

std::vector<int32_t> OsdMap::acting_of(int64_t pool_id, uint32_t pg,
                                       const std::vector<int32_t>& up) const {
  const std::vector<int32_t>* temp = pg_temp(pool_id, pg);
  if (temp == nullptr) return up;
  if (temp->empty()) return {};  // no copy to serve: blocked
  const Pool* p = pool(pool_id);
  const bool erasure = p != nullptr && p->redundancy.erasure;
  std::vector<int32_t> acting;
  bool any = false;
  for (int32_t osd : *temp) {
    const bool serves = osd != placement::kNoDevice && is_up(osd);
    any = any || serves;
    if (serves) {
      acting.push_back(osd);
    } else if (erasure) {
      acting.push_back(placement::kNoDevice);
    }
  }
  return any ? acting : up;  // none of its OSDs up: the up set (Ceph)
}

Result<std::vector<std::vector<int32_t>>> OsdMap::acting_sets(int64_t pool_id) const {
  auto sets = up_sets(pool_id);
  if (!sets.ok()) return sets.status();
  for (uint32_t pg = 0; pg < sets->size(); ++pg) (*sets)[pg] = acting_of(pool_id, pg, (*sets)[pg]);
  return sets;
}

std::vector<PgTempEntry> prime_pg_temp(const OsdMap& before, const OsdMap& after) {
  std::vector<PgTempEntry> entries;
  for (const Pool& p : after.pools()) {
    const int64_t id = p.spec.id;
    auto up_before = before.up_sets(id);
    auto up_after = after.up_sets(id);
    if (!up_before.ok() || !up_after.ok() || up_before->size() != up_after->size()) continue;
    for (uint32_t pg = 0; pg < up_after->size(); ++pg) {
      const std::vector<int32_t>& next_up = (*up_after)[pg];
      if ((*up_before)[pg] == next_up) continue;
      std::vector<int32_t> kept;
      bool any = false;
      for (int32_t osd : before.acting_of(id, pg, (*up_before)[pg])) {
        const bool serves = osd != placement::kNoDevice && after.is_up(osd);
        any = any || serves;
        if (serves) {
          kept.push_back(osd);
        } else if (p.redundancy.erasure) {
          kept.push_back(placement::kNoDevice);
        }
      }
      if (!any) continue;  // nobody served it: no worse off
      if (kept == next_up) {
        if (after.pg_temp(id, pg) != nullptr) entries.push_back(PgTempEntry{id, pg, true, {}});
        continue;
      }
      const std::vector<int32_t>* current = after.pg_temp(id, pg);
      if (current == nullptr || *current != kept) {
        entries.push_back(PgTempEntry{id, pg, false, std::move(kept)});
      }
    }
  }
  return entries;
}

}  // namespace granary::cluster
