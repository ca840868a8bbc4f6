#include "engine/recovery/planner.h"

#include <algorithm>

#include "engine/placement/placement.h"

namespace granary::recovery {

namespace {

bool valid_osd(int32_t osd) {
  return osd >= 0 && osd != placement::kNoDevice;
}

bool contains(const std::vector<int32_t>& v, int32_t x) {
  return std::find(v.begin(), v.end(), x) != v.end();
}

void add(RecoveryPlan& plan, RecoveryOp op) {
  plan.bytes_to_write += op.bytes_to_write;
  plan.bytes_to_read += op.bytes_to_read;
  if (op.restores_redundancy) plan.minimum_bytes += op.bytes_to_write;
  plan.ops.push_back(std::move(op));
}

}  // namespace

Result<RecoveryPlan> plan_recovery(const std::vector<std::vector<int32_t>>& old_acting,
                                   const std::vector<std::vector<int32_t>>& new_up,
                                   const std::vector<uint64_t>& pg_bytes,
                                   const cluster::Redundancy& red, const PlanOptions& options) {
  if (Status s = red.validate(); !s.ok()) return s;
  if (old_acting.size() != new_up.size() || pg_bytes.size() != new_up.size()) {
    return Status::invalid_argument(
        "plan_recovery needs one entry per PG in each input: " + std::to_string(old_acting.size()) +
        " old acting sets, " + std::to_string(new_up.size()) + " new up sets, " +
        std::to_string(pg_bytes.size()) + " PG sizes");
  }
  const auto pg_num = static_cast<uint32_t>(new_up.size());
  auto readable = [&](int32_t osd) {
    if (!valid_osd(osd)) return false;
    if (options.readable.empty()) return true;
    return static_cast<size_t>(osd) < options.readable.size() && options.readable[osd];
  };
  std::vector<std::vector<const cluster::StaleCopy*>> stale_of(pg_num);
  for (const cluster::StaleCopy& c : options.stale) {
    if (c.pg >= pg_num) {
      return Status::invalid_argument("a stale copy of PG " + std::to_string(c.pg) +
                                      " is beyond the " + std::to_string(pg_num) + " PGs");
    }
    stale_of[c.pg].push_back(&c);
  }
  auto stale_entry = [&](uint32_t pg, int32_t osd) -> const cluster::StaleCopy* {
    for (const cluster::StaleCopy* c : stale_of[pg]) {
      if (c->osd == osd) return c;
    }
    return nullptr;
  };

  RecoveryPlan plan;
  const int size = red.size;
  const int k = red.needed_to_read();
  for (uint32_t pg = 0; pg < pg_num; ++pg) {
    const std::vector<int32_t>& old = old_acting[pg];
    const std::vector<int32_t>& up = new_up[pg];
    const size_t ops_before = plan.ops.size();
    bool unrecoverable = false;
    if (red.erasure) {
      if (old.size() > static_cast<size_t>(size) || up.size() > static_cast<size_t>(size)) {
        return Status::invalid_argument("PG " + std::to_string(pg) +
                                        ": an erasure set has more than " + std::to_string(size) +
                                        " positions");
      }
      auto holder = [&](int i) {
        return i < static_cast<int>(old.size()) ? old[i] : placement::kNoDevice;
      };
      // Readable chunks without missed writes, by position.
      std::vector<int> current;
      for (int i = 0; i < size; ++i) {
        if (readable(holder(i)) && stale_entry(pg, holder(i)) == nullptr) current.push_back(i);
      }
      const uint64_t chunk = red.shard_bytes(pg_bytes[pg]);
      auto rebuild_sources = [&](int skip) {
        std::vector<int32_t> s;
        for (int i : current) {
          if (i == skip) continue;
          if (static_cast<int>(s.size()) == k) break;
          s.push_back(holder(i));
        }
        return s;
      };
      for (int i = 0; i < size; ++i) {
        const int32_t want = i < static_cast<int>(up.size()) ? up[i] : placement::kNoDevice;
        const int32_t have = holder(i);
        const bool have_readable = readable(have);
        const cluster::StaleCopy* stale = have_readable ? stale_entry(pg, have) : nullptr;
        if (!valid_osd(want)) {
          if (!(have_readable && stale == nullptr)) ++plan.unplaced;  // chunk i stays missing
          continue;
        }
        if (want == have && have_readable && stale == nullptr) continue;  // in place
        RecoveryOp op;
        op.pg = pg;
        op.shard = i;
        op.target = want;
        if (want == have && stale != nullptr) {
          // Missed writes of chunk i: rebuild them from k other current chunks.
          if (static_cast<int>(current.size()) < k) {
            unrecoverable = true;
            continue;
          }
          const uint64_t missed = red.shard_bytes(stale->bytes);
          op.kind = RecoveryKind::kRecovery;
          op.sources = rebuild_sources(i);
          op.bytes_to_write = missed;
          op.bytes_to_read = missed * op.sources.size();
          op.restores_redundancy = true;
        } else if (have_readable && stale == nullptr) {
          // Chunk i exists on its old holder: copy it over.
          op.kind = RecoveryKind::kBackfill;
          op.sources = {have};
          op.bytes_to_write = chunk;
          op.bytes_to_read = chunk;
          op.restores_redundancy = false;
        } else {
          // Chunk i is lost (or stale): decode it from k current chunks.
          if (static_cast<int>(current.size()) < k) {
            unrecoverable = true;
            continue;
          }
          op.kind = RecoveryKind::kBackfill;
          op.sources = rebuild_sources(i);
          op.bytes_to_write = chunk;
          op.bytes_to_read = chunk * op.sources.size();
          op.restores_redundancy = true;
        }
        add(plan, std::move(op));
      }
    } else {
      std::vector<int32_t> sources;  // readable current copies, old acting order
      std::vector<int32_t> stale_members;
      for (int32_t osd : old) {
        if (!readable(osd) || contains(sources, osd) || contains(stale_members, osd)) continue;
        (stale_entry(pg, osd) == nullptr ? sources : stale_members).push_back(osd);
      }
      int members = 0;
      for (int32_t osd : up) members += valid_osd(osd) ? 1 : 0;
      plan.unplaced += static_cast<uint32_t>(std::max(0, size - members));
      // Copies that exist nowhere readable any more: the first backfills restore them.
      int restoring = std::max(
          0, members - static_cast<int>(sources.size()) - static_cast<int>(stale_members.size()));
      for (int32_t target : up) {
        if (!valid_osd(target) || contains(sources, target)) continue;
        if (sources.empty()) {
          unrecoverable = true;
          continue;
        }
        RecoveryOp op;
        op.pg = pg;
        op.target = target;
        op.sources = {sources.front()};
        if (const cluster::StaleCopy* stale =
                contains(stale_members, target) ? stale_entry(pg, target) : nullptr) {
          op.kind = RecoveryKind::kRecovery;
          op.bytes_to_write = stale->bytes;
          op.restores_redundancy = true;
        } else {
          op.kind = RecoveryKind::kBackfill;
          op.bytes_to_write = pg_bytes[pg];
          op.restores_redundancy = restoring > 0;
          if (restoring > 0) --restoring;
        }
        op.bytes_to_read = op.bytes_to_write;
        add(plan, std::move(op));
      }
    }
    if (plan.ops.size() > ops_before) ++plan.pgs_to_move;
    if (unrecoverable) ++plan.pgs_unrecoverable;
  }
  return plan;
}

Result<RecoveryPlan> plan_recovery(const cluster::PgData& data, const cluster::OsdMap& map,
                                   int64_t pool_id, const cluster::PgSizes& sizes) {
  const cluster::Pool* pool = map.pool(pool_id);
  if (pool == nullptr) return Status::not_found("no pool " + std::to_string(pool_id));
  Result<std::vector<std::vector<int32_t>>> up = map.up_sets(pool_id);
  if (!up.ok()) return up.status();
  PlanOptions options;
  options.readable.resize(static_cast<size_t>(map.max_osd()));
  for (int32_t osd = 0; osd < map.max_osd(); ++osd) options.readable[osd] = map.is_up(osd);
  options.stale = data.stale;
  return plan_recovery(data.holders, *up, sizes.bytes, pool->redundancy, options);
}

void apply_completed(const RecoveryOp& op, const cluster::Redundancy& red, cluster::PgData& data) {
  GRANARY_CHECK(op.pg < data.holders.size());
  std::vector<int32_t>& holders = data.holders[op.pg];
  if (red.erasure) {
    GRANARY_CHECK(op.shard >= 0 && op.shard < red.size);
    if (holders.size() < static_cast<size_t>(red.size)) {
      holders.resize(static_cast<size_t>(red.size), placement::kNoDevice);
    }
    holders[static_cast<size_t>(op.shard)] = op.target;
  } else if (!contains(holders, op.target)) {
    holders.push_back(op.target);
  }
  std::erase_if(data.stale,
                [&](const cluster::StaleCopy& c) { return c.pg == op.pg && c.osd == op.target; });
}

}  // namespace granary::recovery
