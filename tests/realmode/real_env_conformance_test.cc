// The Env conformance suite (tests/engine/env_conformance.h) on RealEnv: one thread per task,
// wall-clock time, the NIC modelled in user space, devices that are UringDevices on
// preallocated files in the temporary folder (O_DIRECT through io_uring). Times are wall times,
// so the tolerance is the scheduler's jitter; runs are not reproducible event by event and a
// drive cannot be power-cut from here (the crash tests kill daemons instead).
#include <stdlib.h>

#include <filesystem>
#include <memory>
#include <string>

#include "realmode/real_env.h"
#include "realmode/uring_device.h"
#include "tests/engine/env_conformance.h"

namespace granary::testing {
namespace {

using realmode::RealEnv;
using realmode::UringDevice;
using realmode::UringDeviceOptions;

// Why io_uring with O_DIRECT cannot be used in the temporary folder, or empty (probed once).
const std::string& uring_unavailable() {
  static const std::string why = [] {
    char dir[] = "/tmp/granary-probe-XXXXXX";
    if (mkdtemp(dir) == nullptr) return std::string("cannot create a folder in /tmp");
    UringDeviceOptions o;
    o.path = std::string(dir) + "/probe";
    o.capacity_bytes = 1 << 20;
    auto d = UringDevice::open(o);
    std::string reason;
    if (!d.ok() && d.status().code() == Status::Code::kNotSupported) reason = d.status().message();
    d = Status::io_error("closed");
    std::filesystem::remove_all(dir);
    return reason;
  }();
  return why;
}

class RealHarness final : public EnvHarness {
 public:
  ~RealHarness() override {
    env_.reset();  // closes the devices before their files go
    if (!dir_.empty()) std::filesystem::remove_all(dir_);
  }

  EnvTraits traits() const override {
    EnvTraits t;
    t.keeps_bytes = true;
    t.can_crash = false;
    t.one_world_per_process = false;
    t.deterministic = false;
    // Wall time: a wake-up comes a scheduler's jitter late (tens of microseconds idle, a few
    // milliseconds on a loaded 2-core machine).
    t.absolute_s = 0.02;
    t.relative = 0.005;
#if defined(__SANITIZE_THREAD__)
    // ThreadSanitizer slows every synchronisation: wake-ups come up to ~0.1 s late (measured
    // 64 ms on the 2-core machine under `make tsan`).
    t.absolute_s = 0.15;
    t.relative = 0.02;
#endif
    return t;
  }

  std::string unavailable_reason() const override {
    return uring_unavailable();
  }

  Env& build(const WorldSpec& world) override {
    GRANARY_CHECK(env_ == nullptr);  // one world per harness
    env_ = std::make_unique<RealEnv>(world.seed);
    for (size_t i = 0; i < world.hosts.size(); ++i) {
      const HostSpec& h = world.hosts[i];
      realmode::RealHostOptions o;
      o.name = "h" + std::to_string(i);
      o.cores = h.cores;
      o.nic_bytes_per_s = h.nic_bytes_per_s;
      o.latency_s = h.latency_s;
      GRANARY_CHECK(env_->add_host(o).ok());
    }
    if (!world.devices.empty()) {
      char dir[] = "/tmp/granary-realenv-XXXXXX";
      GRANARY_CHECK(mkdtemp(dir) != nullptr);
      dir_ = dir;
    }
    for (size_t i = 0; i < world.devices.size(); ++i) {
      const DeviceSpec& d = world.devices[i];
      UringDeviceOptions o;
      o.id = static_cast<DeviceId>(i);
      o.host = d.host;
      o.path = dir_ + "/drive" + std::to_string(i);
      o.capacity_bytes = d.capacity_bytes;
      auto device = UringDevice::open(o);
      GRANARY_CHECK(device.ok());
      GRANARY_CHECK(env_->add_device(std::move(device).value()).ok());
    }
    return *env_;
  }

  void set_host_down(HostId host, bool down) override {
    env_->set_host_down(host, down);
  }

  Status run() override {
    realmode::RealRunOptions options;
    options.max_time_s = 120;  // a world that never ends fails instead of hanging the test
    return env_->run(options);
  }

 private:
  std::string dir_;
  std::unique_ptr<RealEnv> env_;
};

std::unique_ptr<EnvHarness> make_real_harness() {
  return std::make_unique<RealHarness>();
}

INSTANTIATE_TEST_SUITE_P(Real, EnvConformance,
                         ::testing::Values(EnvUnderTest{"RealEnv", &make_real_harness}),
                         env_under_test_name);

}  // namespace
}  // namespace granary::testing
