#include "engine/cluster/pg_states.h"

#include <algorithm>
#include <utility>

#include "engine/placement/placement.h"

namespace granary::cluster {

std::string pg_state_name(uint32_t state) {
  // Ceph's order (src/osd/osd_types.cc pg_state_string).
  static const std::pair<uint32_t, const char*> kNames[] = {
      {kPgActive, "active"},
      {kPgClean, "clean"},
      {kPgRecoveryWait, "recovery_wait"},
      {kPgRecovering, "recovering"},
      {kPgDown, "down"},
      {kPgUndersized, "undersized"},
      {kPgDegraded, "degraded"},
      {kPgRemapped, "remapped"},
      {kPgPeering, "peering"},
      {kPgBackfillWait, "backfill_wait"},
      {kPgBackfilling, "backfilling"},
      {kPgPeered, "peered"},
  };
  std::string out;
  for (const auto& [bit, name] : kNames) {
    if ((state & bit) == 0) continue;
    if (!out.empty()) out += '+';
    out += name;
  }
  return out.empty() ? "inactive" : out;
}

PgSizes PgSizes::spread(uint32_t pg_num, uint64_t total_objects, uint64_t total_bytes) {
  PgSizes s;
  s.objects.resize(pg_num);
  s.bytes.resize(pg_num);
  if (pg_num == 0) return s;
  for (uint32_t pg = 0; pg < pg_num; ++pg) {
    s.objects[pg] = total_objects / pg_num + (pg < total_objects % pg_num ? 1 : 0);
    s.bytes[pg] = total_bytes / pg_num + (pg < total_bytes % pg_num ? 1 : 0);
  }
  return s;
}

Result<PgData> PgData::of_map(const OsdMap& map, int64_t pool_id) {
  Result<std::vector<std::vector<int32_t>>> up = map.up_sets(pool_id);
  if (!up.ok()) return up.status();
  PgData d;
  d.holders = std::move(up).value();
  return d;
}

void PgData::add_stale(int32_t osd, const PgSizes& written_while_down) {
  for (uint32_t pg = 0; pg < holders.size(); ++pg) {
    if (std::find(holders[pg].begin(), holders[pg].end(), osd) == holders[pg].end()) continue;
    const uint64_t objects =
        pg < written_while_down.objects.size() ? written_while_down.objects[pg] : 0;
    const uint64_t bytes = pg < written_while_down.bytes.size() ? written_while_down.bytes[pg] : 0;
    if (objects == 0 && bytes == 0) continue;
    stale.push_back(StaleCopy{pg, osd, objects, bytes});
  }
}

void PgData::settle(uint32_t pg, std::vector<int32_t> up) {
  GRANARY_CHECK(pg < holders.size());
  holders[pg] = std::move(up);
  std::erase_if(stale, [&](const StaleCopy& c) { return c.pg == pg; });
}

uint32_t PgStatesReport::count(uint32_t bits) const {
  uint32_t n = 0;
  for (const PgStatus& s : pgs) n += (s.state & bits) == bits ? 1 : 0;
  return n;
}

namespace {

bool valid_osd(int32_t osd) {
  return osd >= 0 && osd != placement::kNoDevice;
}

}  // namespace

Result<PgStatesReport> pg_states(const PgStatesInput& in) {
  if (in.map == nullptr) return Status::invalid_argument("pg_states needs the current OsdMap");
  const OsdMap& map = *in.map;
  const Pool* pool = map.pool(in.pool_id);
  if (pool == nullptr) return Status::not_found("no pool " + std::to_string(in.pool_id));
  const Redundancy& red = pool->redundancy;
  const int size = red.size;

  Result<std::vector<std::vector<int32_t>>> up_sets = map.up_sets(in.pool_id);
  if (!up_sets.ok()) return up_sets.status();
  const uint32_t pg_num = static_cast<uint32_t>(up_sets->size());

  std::vector<std::vector<int32_t>> previous_up;
  if (in.previous != nullptr) {
    Result<std::vector<std::vector<int32_t>>> p = in.previous->up_sets(in.pool_id);
    if (!p.ok()) return p.status();
    previous_up = std::move(p).value();
    if (previous_up.size() != pg_num) {
      return Status::invalid_argument(
          "the previous epoch has " + std::to_string(previous_up.size()) + " PGs in pool " +
          std::to_string(in.pool_id) + ", the current one " + std::to_string(pg_num));
    }
  }
  PgData implied;
  const PgData* data = in.data;
  if (data == nullptr) {
    implied.holders = in.previous != nullptr ? previous_up : *up_sets;
    data = &implied;
  }
  auto check_size = [&](size_t n, const char* what) {
    if (n == pg_num) return Status::ok_status();
    return Status::invalid_argument(std::string(what) + " has " + std::to_string(n) +
                                    " PGs, pool " + std::to_string(in.pool_id) + " has " +
                                    std::to_string(pg_num));
  };
  if (Status s = check_size(data->holders.size(), "the PG data"); !s.ok()) return s;
  if (in.sizes != nullptr) {
    if (Status s = check_size(in.sizes->objects.size(), "the object counts"); !s.ok()) return s;
    if (Status s = check_size(in.sizes->bytes.size(), "the byte counts"); !s.ok()) return s;
  }
  if (in.moving != nullptr) {
    if (Status s = check_size(in.moving->size(), "the moving flags"); !s.ok()) return s;
  }
  // Stale copies by PG.
  std::vector<std::vector<const StaleCopy*>> stale_of(pg_num);
  for (const StaleCopy& c : data->stale) {
    if (c.pg >= pg_num) {
      return Status::invalid_argument("a stale copy of PG " + std::to_string(c.pg) +
                                      " is beyond the pool's " + std::to_string(pg_num) + " PGs");
    }
    stale_of[c.pg].push_back(&c);
  }
  auto stale_entry = [&](uint32_t pg, int32_t osd) -> const StaleCopy* {
    for (const StaleCopy* c : stale_of[pg]) {
      if (c->osd == osd) return c;
    }
    return nullptr;
  };
  const bool peering_window = in.previous != nullptr && in.since_change_s < in.peering_s;

  PgStatesReport report;
  report.pgs.resize(pg_num);
  for (uint32_t pg = 0; pg < pg_num; ++pg) {
    const std::vector<int32_t>& up = (*up_sets)[pg];
    const std::vector<int32_t>& holders = data->holders[pg];
    PgStatus st;
    bool acting_differs = false;
    uint64_t stale_objects = 0, stale_bytes = 0, stale_copy_objects = 0;
    bool has_stale = false;
    auto note_stale = [&](uint32_t p, int32_t osd) {
      if (const StaleCopy* c = stale_entry(p, osd)) {
        has_stale = true;
        stale_objects = std::max(stale_objects, c->objects);
        stale_bytes = std::max(stale_bytes, c->bytes);
        stale_copy_objects += c->objects;
        return true;
      }
      return false;
    };
    if (red.erasure) {
      for (int i = 0; i < size; ++i) {
        const int32_t want = i < static_cast<int>(up.size()) ? up[i] : placement::kNoDevice;
        const int32_t have =
            i < static_cast<int>(holders.size()) ? holders[i] : placement::kNoDevice;
        const bool available = valid_osd(have) && map.is_up(have);
        if (valid_osd(want)) ++st.up_size;
        if (available) {
          ++st.acting_size;
          if (!note_stale(pg, have)) ++st.current;
          if (want != have) ++st.misplaced;
        }
        if (valid_osd(want) && (!available || want != have)) ++st.to_create;
        if ((available ? have : placement::kNoDevice) != want) acting_differs = true;
      }
    } else {
      std::vector<int32_t> acting;
      for (int32_t osd : holders) {
        if (!valid_osd(osd) || !map.is_up(osd)) continue;
        if (std::find(acting.begin(), acting.end(), osd) != acting.end()) continue;
        acting.push_back(osd);
      }
      st.acting_size = static_cast<int>(acting.size());
      for (int32_t osd : acting) {
        if (!note_stale(pg, osd)) ++st.current;
        if (std::find(up.begin(), up.end(), osd) == up.end()) ++st.misplaced;
      }
      for (int32_t osd : up) {
        if (!valid_osd(osd)) continue;
        ++st.up_size;
        if (std::find(acting.begin(), acting.end(), osd) == acting.end()) ++st.to_create;
      }
      acting_differs = st.misplaced > 0 || st.to_create > 0;
    }

    const bool changed = peering_window && previous_up[pg] != up;
    const bool moving = in.moving == nullptr || (*in.moving)[pg];
    uint32_t s = 0;
    const bool down = st.acting_size < red.needed_to_read();
    if (down) {
      s |= kPgDown;
    } else if (changed) {
      s |= kPgPeering;
    } else if (st.acting_size < pool->min_size) {
      s |= kPgPeered;
    } else {
      s |= kPgActive;
    }
    if (st.acting_size < size) s |= kPgUndersized;
    const bool degraded = st.current < size || has_stale;
    if (degraded) s |= kPgDegraded;
    if (acting_differs) s |= kPgRemapped;
    if (!down && !changed) {
      if (st.to_create > 0) s |= moving ? kPgBackfilling : kPgBackfillWait;
      if (has_stale) s |= moving ? kPgRecovering : kPgRecoveryWait;
    }
    if ((s & kPgActive) != 0 && (s & (kPgUndersized | kPgDegraded | kPgRemapped | kPgBackfilling |
                                      kPgBackfillWait | kPgRecovering | kPgRecoveryWait)) == 0) {
      s |= kPgClean;
    }
    st.state = s;
    report.pgs[pg] = st;
    ++report.by_name[pg_state_name(s)];

    if (in.sizes == nullptr) continue;
    const uint64_t objects = in.sizes->objects[pg];
    const uint64_t bytes = in.sizes->bytes[pg];
    report.objects += objects;
    report.bytes += bytes;
    report.object_copies += objects * static_cast<uint64_t>(size);
    const int present = std::min(st.acting_size, size);
    report.degraded_object_copies +=
        objects * static_cast<uint64_t>(size - present) + stale_copy_objects;
    report.misplaced_object_copies +=
        objects * static_cast<uint64_t>(std::min(st.misplaced, present));
    if (present < size) {
      report.degraded_objects += objects;
      report.degraded_bytes += bytes;
    } else if (has_stale) {
      report.degraded_objects += std::min(objects, stale_objects);
      report.degraded_bytes += std::min(bytes, stale_bytes);
    }
    if ((s & kPgActive) == 0) {
      report.unavailable_objects += objects;
      report.unavailable_bytes += bytes;
    }
  }
  return report;
}

}  // namespace granary::cluster
