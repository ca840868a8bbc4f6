#include "engine/cluster/acting.h"

#include <algorithm>

#include "engine/placement/placement.h"

namespace granary::cluster {

std::vector<int32_t> choose_acting(const ActingInput& in) {
  const std::vector<int32_t>& up = *in.up;
  const std::vector<int32_t>& h = *in.holders;
  auto real = [](int32_t o) { return o >= 0 && o != placement::kNoDevice; };
  auto current = [&](int32_t o) {
    return real(o) && in.is_up(o) && in.intact(o) && !in.is_stale(o);
  };
  auto dead_but_up = [&](int32_t o) { return real(o) && in.is_up(o) && !in.intact(o); };
  std::vector<int32_t> devices;
  int copies = 0;
  if (in.redundancy.erasure) {
    devices.assign(up.size(), placement::kNoDevice);
    for (size_t i = 0; i < up.size(); ++i) {
      const int32_t holder = i < h.size() ? h[i] : placement::kNoDevice;
      if (real(up[i]) && ((holder == up[i] && current(up[i])) || dead_but_up(up[i]))) {
        devices[i] = up[i];
      } else if (current(holder)) {
        devices[i] = holder;
      }
      copies += devices[i] != placement::kNoDevice && current(devices[i]);
    }
  } else {
    bool complete = true;
    for (int32_t o : up) {
      const bool holds = std::find(h.begin(), h.end(), o) != h.end() && current(o);
      if (holds || dead_but_up(o)) {
        devices.push_back(o);
      } else {
        complete = false;
      }
    }
    if (!complete) {
      for (int32_t o : h) {
        if (current(o) && std::find(devices.begin(), devices.end(), o) == devices.end()) {
          devices.push_back(o);
        }
      }
    }
    for (int32_t o : devices) copies += current(o);
  }
  if (copies < in.redundancy.needed_to_read()) devices.clear();
  return devices;
}

bool same_acting(const std::vector<int32_t>& a, const std::vector<int32_t>& b, bool erasure) {
  if (erasure || a.empty() || b.empty()) return a == b;
  if (a.size() != b.size() || a[0] != b[0]) return false;
  return std::is_permutation(a.begin(), a.end(), b.begin());
}

}  // namespace granary::cluster
