// The Env conformance suite (tests/engine/env_conformance.h) on MemoryEnv: hosts and devices as
// the world asks, bytes kept, devices crashed with MemoryEnv::crash_device.
#include <memory>
#include <string>

#include "engine/testing/memory_env.h"
#include "tests/engine/env_conformance.h"

namespace granary::testing {
namespace {

class MemoryHarness final : public EnvHarness {
 public:
  EnvTraits traits() const override {
    EnvTraits t;
    t.keeps_bytes = true;
    t.can_crash = true;
    t.one_world_per_process = false;
    // A virtual clock in doubles: only rounding separates a time from its formula.
    t.absolute_s = 1e-9;
    t.relative = 1e-12;
    return t;
  }

  Env& build(const WorldSpec& world) override {
    GRANARY_CHECK(env_ == nullptr);  // one world per harness
    env_ = std::make_unique<MemoryEnv>(world.seed);
    for (size_t i = 0; i < world.hosts.size(); ++i) {
      const HostSpec& h = world.hosts[i];
      env_->add_host("h" + std::to_string(i), h.cores, h.nic_bytes_per_s, h.latency_s);
    }
    for (const DeviceSpec& d : world.devices) {
      env_->add_device(d.host, d.capacity_bytes, d.bytes_per_s, d.latency_s);
    }
    return *env_;
  }

  void set_host_down(HostId host, bool down) override { env_->set_host_down(host, down); }

  Status run() override {
    MemoryRunOptions options;
    options.max_time_s = 1e6;  // a world that never ends fails instead of hanging the test
    return env_->run(options);
  }

  Status crash_device(DeviceId id, uint64_t seed) override {
    env_->crash_device(id, seed);
    return Status::ok_status();
  }

 private:
  std::unique_ptr<MemoryEnv> env_;
};

std::unique_ptr<EnvHarness> make_memory_harness() {
  return std::make_unique<MemoryHarness>();
}

INSTANTIATE_TEST_SUITE_P(Memory, EnvConformance,
                         ::testing::Values(EnvUnderTest{"MemoryEnv", &make_memory_harness}),
                         env_under_test_name);

}  // namespace
}  // namespace granary::testing
