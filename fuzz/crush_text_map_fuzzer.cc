// libFuzzer target for the CRUSH text map parser (engine/crush/text_format.h).
//
// Any input must give a map or a one-line error, never a crash, a hang or an allocation past
// the limits of crush_map.h. A map that parses must print (write_text_map) to text that parses
// again (and, from the second print on, to the same text); and mapping a few inputs through its
// first rule must stay in range.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>
#include <vector>

#include "engine/crush/crush_map.h"
#include "engine/crush/mapper.h"
#include "engine/crush/text_format.h"

namespace {

[[noreturn]] void fail(const char* what, const std::string& detail) {
  std::fprintf(stderr, "crush_text_map_fuzzer: %s\n%s\n", what, detail.c_str());
  std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace granary::crush;
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  auto map = parse_text_map(text, "<fuzz>");
  if (!map.ok()) {
    const std::string msg = map.status().message();
    if (msg.find('\n') != std::string::npos) fail("error message spans lines", msg);
    if (msg.size() > 1024) fail("error message longer than 1 KiB", msg);
    return 0;
  }
  // The printed map parses again. It may differ from the first print once, as crushtool's
  // does: device classes are numbered in the order they are first seen, and the printed map
  // lists devices by id (crushtool -d | crushtool -c | crushtool -d changes the same way).
  // From the second print on, the text is a fixed point.
  const std::string printed = write_text_map(*map);
  auto again = parse_text_map(printed, "<printed>");
  if (!again.ok()) fail("printed map does not parse", again.status().message() + "\n" + printed);
  const std::string printed2 = write_text_map(*again);
  auto third = parse_text_map(printed2, "<printed twice>");
  if (!third.ok()) fail("reprinted map does not parse", third.status().message() + "\n" + printed2);
  if (write_text_map(*third) != printed2) fail("reprinted map does not print the same", printed2);

  // A few mappings through the first rule, with Ceph's default device weights.
  for (int32_t r = 0; r < map->max_rules(); ++r) {
    const Rule* rule = map->rule(r);
    if (!rule) continue;
    const std::vector<uint32_t> weights = default_device_weights(*map);
    Mapper mapper(*map);
    const int result_max = std::max(1, std::min(rule->max_size, 16));
    std::vector<int32_t> result(result_max);
    const ChooseArgs* choose_args = map->choose_args_for(0);
    for (int32_t x = 0; x < 8; ++x) {
      const int n = mapper.do_rule(r, x, result, weights, choose_args);
      if (n < 0 || n > result_max) fail("do_rule returned a bad size", std::to_string(n));
      for (int i = 0; i < n; ++i) {
        const int32_t item = result[i];
        if (item != kItemNone && (item < -map->max_buckets() || item >= map->max_devices())) {
          fail("do_rule returned an item out of range", std::to_string(item));
        }
      }
    }
    break;
  }
  return 0;
}
