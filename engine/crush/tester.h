// crushtool --test, reimplemented: runs rules over a range of inputs and prints mappings,
// per-device utilisation and result-size statistics in crushtool's exact output format.
// Pure function of its arguments (it writes to the given stream); safe from any thread.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <ostream>

#include "engine/crush/crush_map.h"
#include "engine/status.h"

namespace granary::crush {

struct TestOptions {
  std::optional<int32_t> rule;     // default: every rule
  std::optional<int32_t> num_rep;  // default: each rule's min_size..max_size
  int32_t min_x = 0;
  int32_t max_x = 1023;
  std::optional<uint32_t> pool_id;   // mixes x with the pool id, as pools with hashpspool do
  std::map<int32_t, float> weights;  // per-device reweight overrides in [0, 1]
  int64_t choose_args_index = 0;     // crushtool uses set 0, else the -1 (compat) set
  bool show_mappings = false;
  bool show_statistics = false;
  bool show_utilization = false;
  bool show_utilization_all = false;
  bool show_bad_mappings = false;
};

// crushtool's conversion of a --weight value to 16.16: (int)(w * 0x10000) in single
// precision, clamped to [0, 0x10000].
uint32_t reweight_from_float(float w);

// Runs the test and writes crushtool's stdout to `out`. Errors (unknown rule, bad range)
// come back as a Status and nothing is written.
Status run_crush_test(const CrushMap& map, const TestOptions& options, std::ostream& out);

}  // namespace granary::crush
