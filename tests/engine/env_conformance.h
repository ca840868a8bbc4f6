// The Env conformance suite: the properties that engine/env.h promises, written once against an
// EnvHarness and run against every Env.
//
// Each Env gets a harness (how to build a world of hosts and devices, run it, crash a device)
// and one instantiation of the value-parameterised suite `EnvConformance`:
//   tests/engine/testing/memory_env_conformance_test.cc  MemoryEnv   (engine_tests)
//   tests/sim/sim_env_conformance_test.cc                SimEnv      (sim_tests)
//   tests/realmode/real_env_conformance_test.cc          RealEnv     (realmode_tests) A test whose
//   property needs a capability the Env does not
// have (keeping bytes, crashing a device) checks the weaker form the contract states for it or
// skips with the reason.
//
// SimGrid allows one simulation per process: a harness whose traits say
// `one_world_per_process` builds one world per test, and its suite is run test by test in
// separate processes (ctest does that: gtest_discover_tests gives every test its own entry).
// The determinism test forks a child per run, so it needs no second world in the process.
//
// Not thread-safe; for tests.
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <memory>
#include <ostream>
#include <string>
#include <vector>

#include "engine/env.h"

namespace granary::testing {

// A host of the world. Hosts are numbered 0, 1, ... in WorldSpec order.
struct HostSpec {
  int cores = 1;
  // The NIC's bandwidth for what leaves the host, and the one-way latency of a message that
  // leaves it (a message from a to b takes latency_s of a).
  double nic_bytes_per_s = 1e9;
  double latency_s = 0;
};

// A drive on a host. Devices are numbered 0, 1, ... in WorldSpec order.
struct DeviceSpec {
  HostId host = 0;
  // The capacity the harness asks for; an Env may make devices larger (the simulator's are
  // 2^62 bytes), so tests read Device::capacity_bytes().
  uint64_t capacity_bytes = uint64_t{1} << 30;
  double bytes_per_s = 1e9;
  double latency_s = 0;
};

struct WorldSpec {
  std::vector<HostSpec> hosts;
  std::vector<DeviceSpec> devices;
  uint64_t seed = 1;
};

// What an Env can do, and how exact its clock is.
struct EnvTraits {
  // Devices return the bytes written to them (otherwise reads carry sizes only).
  bool keeps_bytes = false;
  // crash_device() works, and run() may be called again after it.
  bool can_crash = false;
  // Only one world may be built in a process (SimGrid).
  bool one_world_per_process = false;
  // The same seed and world give the same run, event for event (a virtual clock). A real
  // world's runs differ in their timings; its determinism test checks only that every event
  // happened.
  bool deterministic = true;
  // A measured time t matches an expected time e when |t - e| <= absolute_s + relative * e.
  double absolute_s = 0;
  double relative = 0;
};

class EnvHarness {
 public:
  virtual ~EnvHarness() = default;
  virtual EnvTraits traits() const = 0;
  // Why this Env cannot run on this machine (e.g. the kernel refuses io_uring), or empty: the
  // suite then skips every test, saying why.
  virtual std::string unavailable_reason() const { return ""; }
  // Builds the world; once per harness. The Env lives as long as the harness.
  virtual Env& build(const WorldSpec& world) = 0;
  // Runs the tasks spawned so far until no non-daemon task is left (daemons are terminated).
  // Once, or again after crash_device() where traits().can_crash.
  virtual Status run() = 0;
  // Marks `host` down or up again (engine/env.h, "Hosts that go down"); from tasks too.
  virtual void set_host_down(HostId host, bool down) = 0;
  // A power loss on device `id` between runs (engine/env.h's Device durability contract).
  virtual Status crash_device(DeviceId id, uint64_t seed) {
    (void)id;
    (void)seed;
    return Status::not_supported("this Env cannot crash a device");
  }
};

// One Env under test: a name for the test names and a way to make a fresh harness.
struct EnvUnderTest {
  std::string name;
  std::unique_ptr<EnvHarness> (*make)();
};

class EnvConformance : public ::testing::TestWithParam<EnvUnderTest> {
 protected:
  // Fails a second test of a one-world-per-process Env in the same process with a message
  // that says how to run the suite, instead of letting SimGrid abort.
  void SetUp() override;
};

// For INSTANTIATE_TEST_SUITE_P: the test name suffix is the Env's name.
std::string env_under_test_name(const ::testing::TestParamInfo<EnvUnderTest>& info);
// For gtest's messages: the Env's name.
void PrintTo(const EnvUnderTest& under_test, std::ostream* out);

}  // namespace granary::testing
