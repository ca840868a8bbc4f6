// The Env conformance suite (tests/engine/env_conformance.h) on SimEnv.
//
// The world is a star: every host is linked to one switch by its NIC (up: the host's bandwidth
// and latency; down: its bandwidth, no latency, so that a message from a to b takes a's
// latency, as the harness promises), and every device is a drive host linked to its server by
// a drive link (its bandwidth and latency both ways). SimGrid runs as the runner configures it
// (configure_engine), without a drive model (DriveQueue): a device operation is its link's
// transfer. One world per process: ctest runs each test alone. The suite runs twice: on
// SimEnv as large simulations use it (size-only devices), and with keep_device_bytes (devices
// that keep bytes: simulation.carry_data), where the device tests check contents too.
#include <memory>
#include <simgrid/Exception.hpp>
#include <simgrid/s4u.hpp>
#include <string>

#include "models/topology.h"
#include "sim/platform.h"
#include "sim/sim_env.h"
#include "tests/engine/env_conformance.h"

namespace granary::testing {
namespace {

namespace sg4 = simgrid::s4u;

class SimHarness final : public EnvHarness {
 public:
  explicit SimHarness(bool keep_bytes) : keep_bytes_(keep_bytes) {}
  ~SimHarness() override {
    env_.reset();  // before the engine
    engine_.reset();
  }

  EnvTraits traits() const override {
    EnvTraits t;
    t.keeps_bytes = keep_bytes_;
    t.can_crash = false;
    t.one_world_per_process = true;
    // SimGrid's solver works to about 1e-9 s and 1e-5 of a flop count (precision/timing,
    // precision/work-amount); a microsecond and a millionth cover both.
    t.absolute_s = 1e-6;
    t.relative = 1e-6;
    return t;
  }

  Env& build(const WorldSpec& world) override {
    GRANARY_CHECK(engine_ == nullptr);  // one world per harness, and per process
    static int argc = 1;
    static char arg0[] = "sim_tests";
    static char* argv[] = {arg0, nullptr};
    engine_ = std::make_unique<sg4::Engine>(&argc, argv);
    sim::configure_engine(*engine_, {});

    auto* zone = sg4::create_dijkstra_zone("world", true);
    platform_.hosts.clear();
    for (size_t i = 0; i < world.hosts.size(); ++i) {
      models::TopologyNode n;
      n.name = "h" + std::to_string(i);
      n.kind = models::NodeKind::kStorage;
      n.index = static_cast<int>(i);
      topology_.nodes.push_back(n);
      topology_.storage.push_back(static_cast<int>(i));
      sg4::Host* h = zone->create_host(n.name, kCoreSpeedFlops);
      h->set_core_count(world.hosts[i].cores);
      h->seal();
      platform_.hosts.push_back(h);
    }
    auto* router = zone->create_router("switch");
    models::TopologyNode sw;
    sw.name = "switch";
    topology_.switches.push_back(static_cast<int>(topology_.nodes.size()));
    topology_.nodes.push_back(sw);
    platform_.hosts.push_back(nullptr);
    for (size_t i = 0; i < world.hosts.size(); ++i) {
      const HostSpec& spec = world.hosts[i];
      sg4::Host* h = platform_.hosts[i];
      auto* up = zone->create_link(h->get_name() + ".nic>", spec.nic_bytes_per_s);
      up->set_latency(spec.latency_s);
      up->seal();
      auto* down = zone->create_link(h->get_name() + ".nic<", spec.nic_bytes_per_s);
      down->seal();
      zone->add_route(h->get_netpoint(), router, nullptr, nullptr, {sg4::LinkInRoute(up)}, false);
      zone->add_route(router, h->get_netpoint(), nullptr, nullptr, {sg4::LinkInRoute(down)}, false);
    }
    for (size_t d = 0; d < world.devices.size(); ++d) {
      const DeviceSpec& spec = world.devices[d];
      models::TopologyNode n;
      n.name = "h" + std::to_string(spec.host) + ".drive" + std::to_string(d);
      n.kind = models::NodeKind::kDrive;
      n.index = static_cast<int>(d);
      n.owner = spec.host;
      topology_.drives.push_back(static_cast<int>(topology_.nodes.size()));
      topology_.nodes.push_back(n);
      sg4::Host* drive = zone->create_host(n.name, kCoreSpeedFlops);
      drive->seal();
      platform_.hosts.push_back(drive);
      sg4::Host* server = platform_.hosts[static_cast<size_t>(spec.host)];
      auto* read = zone->create_link(n.name + ">", spec.bytes_per_s);
      read->set_latency(spec.latency_s);
      read->seal();
      auto* write = zone->create_link(n.name + "<", spec.bytes_per_s);
      write->set_latency(spec.latency_s);
      write->seal();
      zone->add_route(drive->get_netpoint(), server->get_netpoint(), nullptr, nullptr,
                      {sg4::LinkInRoute(read)}, false);
      zone->add_route(server->get_netpoint(), drive->get_netpoint(), nullptr, nullptr,
                      {sg4::LinkInRoute(write)}, false);
    }
    zone->seal();
    env_ = std::make_unique<sim::SimEnv>(topology_, platform_, world.seed);
    if (keep_bytes_) env_->keep_device_bytes();
    return *env_;
  }

  void set_host_down(HostId host, bool down) override { env_->set_host_down(host, down); }

  Status run() override {
    GRANARY_CHECK(!ran_);  // SimGrid runs a world once
    ran_ = true;
    try {
      engine_->run();
    } catch (const simgrid::Exception& e) {
      return Status::io_error(std::string("simulation failed: ") + e.what());
    }
    return Status::ok_status();
  }

 private:
  static constexpr double kCoreSpeedFlops = 1e9;
  bool keep_bytes_;
  std::unique_ptr<sg4::Engine> engine_;
  models::Topology topology_;
  sim::Platform platform_;
  std::unique_ptr<sim::SimEnv> env_;
  bool ran_ = false;
};

std::unique_ptr<EnvHarness> make_sim_harness() {
  return std::make_unique<SimHarness>(false);
}

std::unique_ptr<EnvHarness> make_sim_bytes_harness() {
  return std::make_unique<SimHarness>(true);
}

INSTANTIATE_TEST_SUITE_P(Sim, EnvConformance,
                         ::testing::Values(EnvUnderTest{"SimEnv", &make_sim_harness},
                                           EnvUnderTest{"SimEnvKeepingBytes",
                                                        &make_sim_bytes_harness}),
                         env_under_test_name);

}  // namespace
}  // namespace granary::testing
