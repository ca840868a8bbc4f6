// A placement that forwards every call to another one; tests derive from it to change one
// answer (a device gone, positions rotated, a new interval) and keep the rest.
#ifndef GRANARY_TESTS_ENGINE_PLACEMENT_FORWARDING_PLACEMENT_H_
#define GRANARY_TESTS_ENGINE_PLACEMENT_FORWARDING_PLACEMENT_H_

#include <string>
#include <string_view>
#include <vector>

#include "engine/placement/placement.h"

namespace granary::placement::test {

class ForwardingPlacement : public Placement {
 public:
  explicit ForwardingPlacement(Placement& inner) : inner_(inner) {}
  std::string describe() const override { return inner_.describe(); }
  uint32_t num_groups() const override { return inner_.num_groups(); }
  uint32_t group_of(std::string_view name) const override { return inner_.group_of(name); }
  void devices_of(uint32_t group, std::vector<int32_t>& out) override {
    inner_.devices_of(group, out);
  }
  int replicas() const override { return inner_.replicas(); }
  int32_t device_id_bound() const override { return inner_.device_id_bound(); }
  std::vector<double> target_shares() const override { return inner_.target_shares(); }
  int64_t failure_domain(int32_t d) const override { return inner_.failure_domain(d); }
  uint64_t interval_of(uint32_t group) const override { return inner_.interval_of(group); }

 protected:
  Placement& inner() { return inner_; }
  const Placement& inner() const { return inner_; }

 private:
  Placement& inner_;
};

}  // namespace granary::placement::test

#endif  // GRANARY_TESTS_ENGINE_PLACEMENT_FORWARDING_PLACEMENT_H_
