#include "realmode/launcher.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <sstream>
#include <thread>
#include <vector>

#include "models/catalog.h"
#include "models/expectations.h"
#include "models/random_failures.h"
#include "models/scenario_json.h"
#include "realmode/auth.h"
#include "realmode/calibration.h"
#include "realmode/cluster_config.h"
#include "realmode/machine.h"
#include "sim/metrics.h"

namespace granary::realmode {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

// ---------------------------------------------------------------------------------------------
// Processes

std::string read_text(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// The folder of the running program.
std::string self_dir() {
  std::error_code ec;
  const fs::path exe = fs::read_symlink("/proc/self/exe", ec);
  return ec ? std::string(".") : exe.parent_path().string();
}

// A daemon or bench binary: next to this program, in ../realmode/ from it, or on PATH.
std::string binary(const std::string& name) {
  const std::string here = self_dir();
  for (const std::string& p : {here + "/" + name, here + "/../realmode/" + name}) {
    if (access(p.c_str(), X_OK) == 0) return fs::weakly_canonical(p).string();
  }
  return name;
}

// A shell command for the network set-up (as root); its error names it.
Status sh(const std::string& cmd) {
  const int rc = std::system((cmd + " 2>/dev/null").c_str());
  if (rc != 0)
    return Status::io_error("'" + cmd + "' failed (exit status " + std::to_string(rc) + ")");
  return Status::ok_status();
}

// ---------------------------------------------------------------------------------------------
// The cluster's folder and its state

// Hosts of the cluster file (an address, a process each): the OSDs (or OSTs) 0..S*D-1, OSD o
// on host o of storage server o / D (the scenario's numbering: server h holds OSDs h*D ..),
// then the monitor (rados) or the MDS (pfs), then the client nodes. Machines (a network
// namespace, a veth and an IP each): the storage servers 0..S-1 (their OSDs on ports 7000 +
// d of its IP), the monitor's S, the client nodes' S+1...
struct Layout {
  int storage = 0, drives = 1, clients = 0;
  int osds() const { return storage * drives; }
  int mon() const { return osds(); }
  int client(int c) const { return osds() + 1 + c; }
  int hosts() const { return osds() + 1 + clients; }
  int machines() const { return storage + 1 + clients; }
  int machine_of(int host) const { return host < osds() ? host / drives : host - osds() + storage; }
  int port_of(int host) const { return 7000 + (host < osds() ? host % drives : 0); }
};

Layout layout_of(const models::Scenario& s) {
  return Layout{s.cluster.storage.count, s.cluster.storage.drives_per_node,
                s.cluster.clients.count};
}

struct Cluster {
  models::Scenario scenario;
  std::string dir;
  json state;  // state.json: {"namespaces", "tag", "hosts": [...], "daemons": {...}, ...}
  // Where each machine's processes run and its files live (Layout's machines): this machine
  // (loopback, a network namespace) or a lab host over ssh. Made by make_machines.
  std::vector<std::unique_ptr<Machine>> machines;

  std::string path(const std::string& name) const { return dir + "/" + name; }
  Machine& machine_of(int host) {
    return *machines[static_cast<size_t>(layout_of(scenario).machine_of(host))];
  }
  // A daemon or bench binary as the machines run it: real.bin_dir's on lab hosts when set,
  // else this program's (the same path on every machine).
  std::string binary(const std::string& name) const {
    return scenario.real.ssh && !scenario.real.bin_dir.empty() ? scenario.real.bin_dir + "/" + name
                                                               : realmode::binary(name);
  }
  void save() const { std::ofstream(path("state.json")) << state.dump(2) << "\n"; }
  // The network namespace of a machine (Layout), of a host of the cluster file.
  std::string netns_of_machine(int machine) const {
    return state.value("namespaces", false)
               ? state["tag"].get<std::string>() + "h" + std::to_string(machine)
               : std::string();
  }
  std::string netns_of(int host) const {
    return netns_of_machine(layout_of(scenario).machine_of(host));
  }
};

std::string dir_of(const models::Scenario& s) {
  return s.real.dir.empty() ? "/tmp/granary-real-" + s.name : s.real.dir;
}

// A lab host's ssh target (real.hosts "ssh"): its known_hosts file in the cluster's folder, its
// multiplexed connection's socket in a short private folder of its own (socket paths are
// limited to about 100 bytes).
SshTarget ssh_target_of(const models::Scenario& s, const std::string& dir, int machine) {
  const models::LabHost& h = s.real.lab_hosts[static_cast<size_t>(machine)];
  const unsigned tag = static_cast<unsigned>(std::hash<std::string>{}(dir)) % 900000 + 100000;
  return SshTarget{h.ssh.empty() ? "root@" + h.address : h.ssh, h.ssh_port, s.real.ssh_identity,
                   dir + "/known_hosts", "/tmp/granary-ssh-" + std::to_string(tag)};
}

void make_machines(Cluster& c) {
  c.machines.clear();
  const Layout l = layout_of(c.scenario);
  for (int m = 0; m < l.machines(); ++m) {
    c.machines.push_back(c.scenario.real.ssh ? ssh_machine(ssh_target_of(c.scenario, c.dir, m))
                                             : local_machine(c.netns_of_machine(m)));
  }
}

// The cluster `up` made for the scenario, from its state.json.
Result<Cluster> open_cluster(const std::string& scenario_path) {
  Result<models::Scenario> s = models::load_scenario(scenario_path);
  if (!s.ok()) return s.status();
  Cluster c;
  c.scenario = std::move(s).value();
  c.dir = dir_of(c.scenario);
  const std::string text = read_text(c.path("state.json"));
  if (text.empty()) {
    return Status::not_found(scenario_path + ": no cluster is up in " + c.dir +
                             " (granary real up first)");
  }
  c.state = json::parse(text, nullptr, false);
  if (c.state.is_discarded()) return Status::corruption(c.path("state.json") + ": not JSON");
  make_machines(c);
  return c;
}

// What real mode cannot run from this scenario, naming the key.
Status check_runnable(const models::Scenario& s) {
  const std::string& f = s.source_path;
  const bool pfs = s.storage.design == models::StorageDesign::kPfs;
  if (s.storage.design != models::StorageDesign::kRados && !pfs) {
    return Status::invalid_argument(f +
                                    ": storage.design: granary real runs design 'rados' "
                                    "(granary-osd, granary-mon) or 'pfs' (granary-mds, OSTs)");
  }
  if (pfs && (s.storage.pfs.stripe_size_bytes % 65536 != 0 || s.storage.pfs.mds_count != 1)) {
    return Status::invalid_argument(
        f +
        ": storage.pfs: real mode runs one granary-mds with a stripe size that is a multiple "
        "of 64 KiB");
  }
  if (layout_of(s).hosts() > 200) {
    return Status::invalid_argument(
        f + ": cluster: real mode brings up at most 200 processes here (one per OSD: " +
        "storage.count x drive.count, a monitor, one per client node), found " +
        std::to_string(layout_of(s).hosts()));
  }
  // Random drive failures are drawn from the scenario's seed, as the simulator draws them.
  for (const models::FailureEvent& e : models::expand_failures(s, s.seed)) {
    using K = models::FailureKind;
    const bool netns_kind =
        e.kind == K::kNicDown || e.kind == K::kNicUp || e.kind == K::kNicDegraded;
    if (e.kind != K::kOsdCrash && e.kind != K::kOsdRestart && e.kind != K::kHostDown &&
        e.kind != K::kHostRestart && e.kind != K::kDriveFailure && e.kind != K::kDriveReplace &&
        e.kind != K::kPartition && e.kind != K::kHeal && e.kind != K::kSlowDrive && !netns_kind) {
      return Status::invalid_argument(
          f +
          ": failures: real mode injects osd_crash, osd_restart, host_down, host_restart, "
          "drive_failure, drive_replace, slow_drive, partition, heal, nic_down, nic_up and "
          "nic_degraded, found " +
          std::string(models::failure_kind_name(e.kind)));
    }
    if (pfs && (e.kind == K::kDriveFailure || e.kind == K::kDriveReplace)) {
      return Status::invalid_argument(
          f + ": failures: " + std::string(models::failure_kind_name(e.kind)) +
          " on a pfs: an OST keeps one copy (Lustre relies on the RAID beneath it), so a "
          "failed drive loses its stripes");
    }
    if (netns_kind && !s.real.namespaces) {
      return Status::invalid_argument(
          f + ": failures: " + std::string(models::failure_kind_name(e.kind)) +
          " needs real.hosts \"namespaces\" (a link to take down or shape)");
    }
  }
  return Status::ok_status();
}

// The link rate of machine m's veth, Gbit/s: real.link_gbps, else its modelled NICs.
double link_gbps(const models::Scenario& s, const Layout& l, int m) {
  if (s.real.link_gbps > 0) return s.real.link_gbps;
  const models::NicSpec& nic = m < l.storage ? s.cluster.storage.nic : s.cluster.clients.nic;
  return nic.profile.gbps * nic.profile.ports * nic.count;
}

Status make_namespaces(Cluster& c, const Layout& l) {
  const std::string tag = c.state["tag"];
  const std::string net = c.state["subnet"];  // "10.77.N"
  const std::string br = tag + "br";
  c.state["bridge"] = br;
  c.save();
  if (Status s = sh("ip link add " + br + " type bridge"); !s.ok()) return s;
  if (Status s = sh("ip link set " + br + " up"); !s.ok()) return s;
  for (int m = 0; m < l.machines(); ++m) {
    const std::string ns = c.netns_of_machine(m), veth = tag + "v" + std::to_string(m);
    c.state["netns"].push_back(ns);
    c.save();
    const std::string in = "ip netns exec " + ns + " ";
    const double gbps = link_gbps(c.scenario, l, m);
    const std::string rate =
        std::to_string(static_cast<int64_t>(std::llround(gbps * 1000))) + "mbit";
    for (const std::string& cmd :
         {"ip netns add " + ns, "ip link add " + veth + " type veth peer name eth0 netns " + ns,
          "ip link set " + veth + " master " + br + " up",
          in + "ip addr add " + net + "." + std::to_string(m + 2) + "/24 dev eth0",
          in + "ip link set eth0 up", in + "ip link set lo up",
          "tc qdisc add dev " + veth + " root tbf rate " + rate + " burst 256kb latency 10ms",
          in + "tc qdisc add dev eth0 root tbf rate " + rate + " burst 256kb latency 10ms"}) {
      if (Status s = sh(cmd); !s.ok()) return s;
    }
  }
  return Status::ok_status();
}

// The cluster file of the scenario's cluster.
ClusterConfig config_of(const Cluster& c, const Layout& l) {
  const models::Scenario& s = c.scenario;
  ClusterConfig config;
  config.key_file = c.path("key");
  const bool ns = c.state.value("namespaces", false);
  const bool pfs = s.storage.design == models::StorageDesign::kPfs;
  for (int h = 0; h < l.hosts(); ++h) {
    const int m = l.machine_of(h);
    // A server with several OSDs: a host per OSD ("storage<s>.<d>") naming the server.
    const std::string server = h < l.osds() ? "storage" + std::to_string(m) : std::string();
    const std::string name = h >= l.osds()
                                 ? (h == l.mon() ? std::string(pfs ? "mds" : "mon")
                                                 : "client" + std::to_string(m - l.storage - 1))
                             : l.drives == 1 ? server
                                             : server + "." + std::to_string(h % l.drives);
    const std::string port = std::to_string(l.port_of(h));
    const std::string address =
        s.real.ssh ? s.real.lab_hosts[static_cast<size_t>(m)].address + ":" + port
        : ns       ? c.state["subnet"].get<std::string>() + "." + std::to_string(m + 2) + ":" + port
                   : "127.0.0.1:" + std::to_string(free_loopback_port());
    config.hosts.push_back(
        {name, address, 4, l.drives == 1 ? std::string() : server, s.real.added_latency_s});
  }
  for (int o = 0; o < l.osds(); ++o) {
    config.osds.push_back(
        {o, o, c.path("osd." + std::to_string(o) + ".img"), s.real.drive_bytes, 32});
  }
  for (int cl = 0; cl < l.clients; ++cl) config.names["bench" + std::to_string(cl)] = l.client(cl);
  if (pfs) {
    config.pfs = ClusterPfs{l.mon(), c.path("mdt.img"), s.real.drive_bytes,
                            s.storage.pfs.stripe_size_bytes, s.storage.pfs.stripe_count};
    config.replicas = 0;
    config.handshake_timeout_s = 1;
    config.op_timeout_s = 2;
    config.sub_op_timeout_s = 2;
    return config;
  }
  config.replicas = s.storage.rados.replicas;
  if (s.storage.rados.ec_k > 0) config.ec = {s.storage.rados.ec_k, s.storage.rados.ec_m, 4096};
  config.pg_num = s.storage.rados.pg_num;
  const models::RecoverySpec& r = s.storage.rados.recovery;
  config.monitor =
      ClusterMonitor{l.mon(), r.heartbeat_interval_s, r.heartbeat_grace_s, r.down_out_interval_s};
  config.handshake_timeout_s = 1;
  config.op_timeout_s = 2;
  config.sub_op_timeout_s = 2;
  return config;
}

// An OSD's fault file (granary-osd --fault-file): what slow_drive writes.
std::string fault_file(const Cluster& c, int osd) {
  return c.path("osd." + std::to_string(osd) + ".faults");
}

std::vector<std::string> osd_argv(const Cluster& c, int osd) {
  return {c.binary("granary-osd"), "--config",     c.path("cluster.json"), "--osd",
          std::to_string(osd),     "--fault-file", fault_file(c, osd)};
}

// Starts a daemon (recorded in state.json before anything waits for it).
Status spawn_daemon(Cluster& c, const std::string& name, std::vector<std::string> argv, int host) {
  const std::string log = c.path(name + ".log");
  const int starts =
      c.state["daemons"].contains(name) ? c.state["daemons"][name].value("starts", 0) + 1 : 1;
  // This start's lines come after what the log holds now (a start that died before serving
  // leaves no serving line, so counting them would not do).
  const size_t log_from = c.machine_of(host).read(log).size();
  Result<int64_t> pid = c.machine_of(host).start(argv, log);
  if (!pid.ok()) return pid.status();
  c.state["daemons"][name] = {
      {"pid", *pid}, {"host", host}, {"log", log}, {"starts", starts}, {"log_from", log_from}};
  c.save();
  return Status::ok_status();
}

// Whether a daemon's log says its latest start serves.
bool serving(Cluster& c, const std::string& name) {
  const json& d = c.state["daemons"][name];
  const std::string text = c.machine_of(d["host"].get<int>()).read(d["log"]);
  return text.find("serving at", d.value("log_from", size_t{0})) != std::string::npos;
}

Status not_started(Cluster& c, const std::string& name) {
  const json& d = c.state["daemons"][name];
  Machine& m = c.machine_of(d["host"].get<int>());
  return Status::unavailable(name + " did not start within 30 s on " + m.describe() + ": " +
                             d["log"].get<std::string>() + " says: " + m.read(d["log"]));
}

// Waits until a daemon's log says it serves (once per start).
Status wait_serving(Cluster& c, const std::string& name) {
  for (double waited = 0; waited < 30; waited += 0.05) {
    if (serving(c, name)) return Status::ok_status();
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  return not_started(c, name);
}

// Stops a daemon: SIGCONT (one a partition stopped), SIGTERM, SIGKILL after `grace_s`; only a
// Granary process (a pid the system reused for another program is left alone).
void stop_daemon(Machine& m, int64_t pid, double grace_s) {
  if (!m.alive(pid) || !m.runs(pid, "granary")) return;
  m.signal(pid, SIGCONT);
  m.signal(pid, SIGTERM);
  for (double waited = 0; waited < grace_s && m.alive(pid); waited += 0.05) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  if (m.alive(pid)) m.signal(pid, SIGKILL);
}

// SIGKILL, and waits (up to 10 s) until it is gone.
void kill_daemon(Machine& m, int64_t pid) {
  m.signal(pid, SIGKILL);
  for (int i = 0; i < 200 && m.alive(pid); ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
}

Status start_daemon(Cluster& c, const std::string& name, std::vector<std::string> argv, int host) {
  if (Status s = spawn_daemon(c, name, std::move(argv), host); !s.ok()) return s;
  return wait_serving(c, name);
}

void say(const LaunchOptions& o, const std::string& line) {
  if (o.log) *o.log << "granary real: " << line << std::endl;
}

// ---------------------------------------------------------------------------------------------
// Runs

// The scenario's JSON without its failure timeline (the launcher injects it) nor its
// expectations.
Result<json> scenario_without_failures(const Cluster& c) {
  json j = json::parse(read_text(c.scenario.source_path), nullptr, false);
  if (j.is_discarded()) return Status::invalid_argument(c.scenario.source_path + ": not JSON");
  j.erase("failures");
  j.erase("expect");
  // The monitor's settings are the cluster file's (up wrote them); without a failure timeline
  // the scenario may not carry them.
  if (j.contains("storage") && j["storage"].contains("rados"))
    j["storage"]["rados"].erase("recovery");
  return j;
}

// `j` written as `name` in the cluster's folder, where the client machines read it.
Result<std::string> write_bench_scenario(Cluster& c, const json& j, const std::string& name) {
  const std::string path = c.path(name);
  const Layout l = layout_of(c.scenario);
  for (int cl = 0; cl < (c.scenario.real.ssh ? l.clients : 1); ++cl) {
    if (Status s = c.machine_of(l.client(cl)).write(path, j.dump(2) + "\n"); !s.ok()) return s;
  }
  return path;
}

// The scenario granary-bench runs: the original without its failure timeline, written where the
// client machines read it.
Result<std::string> bench_scenario(Cluster& c) {
  Result<json> j = scenario_without_failures(c);
  if (!j.ok()) return j.status();
  return write_bench_scenario(c, *j, "bench-scenario.json");
}

// Waits for a granary-bench process that `m` started with `status` as its status file,
// calling `each_poll` every 20 ms meanwhile; its report (the JSON at `report`), or an error
// naming its log and what the log says.
Result<json> await_bench(Machine& m, int64_t pid, const std::string& status, const std::string& log,
                         const std::string& report,
                         const std::function<void()>& each_poll = nullptr) {
  while (m.alive(pid)) {
    if (each_poll) each_poll();
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  if (m.read(status) != "0\n") {
    return Status::io_error(log + " on " + m.describe() + ": " + m.read(log));
  }
  return json::parse(m.read(report), nullptr, false);
}

struct Share {
  int64_t pid = -1;
  Machine* machine = nullptr;
  std::string report, log, status;
};

// granary-bench COMMAND on every client host, each its share; the shares' reports. The bench
// runs `scenario_path` (written by write_bench_scenario), or the scenario's when empty.
Result<std::vector<json>> run_shares(Cluster& c, const std::string& command,
                                     const std::function<void(double)>& while_running,
                                     const std::string& scenario_path = "") {
  const Layout l = layout_of(c.scenario);
  Result<std::string> scenario = scenario_path.empty() ? bench_scenario(c) : scenario_path;
  if (!scenario.ok()) return scenario.status();
  const int count =
      command == "run" && c.scenario.workloads[0].kind == models::WorkloadKind::kCheckpoint
          ? 1
          : l.clients;
  std::vector<Share> shares(static_cast<size_t>(count));
  const auto t0 = std::chrono::steady_clock::now();
  for (int i = 0; i < count; ++i) {
    Share& sh = shares[static_cast<size_t>(i)];
    sh.report = c.path(command + ".bench" + std::to_string(i) + ".json");
    sh.log = c.path(command + ".bench" + std::to_string(i) + ".log");
    sh.status = c.path(command + ".bench" + std::to_string(i) + ".status");
    sh.machine = &c.machine_of(l.client(i));
    for (const std::string& f : {sh.report, sh.status}) {
      if (Status s = sh.machine->remove(f); !s.ok()) return s;
    }
    Result<int64_t> pid =
        sh.machine->start({c.binary("granary-bench"), command, "--config", c.path("cluster.json"),
                           "--scenario", *scenario, "--name", "bench" + std::to_string(i),
                           "--share", std::to_string(i) + "/" + std::to_string(count), "--report",
                           sh.report, "--latency-samples"},
                          sh.log, sh.status);
    if (!pid.ok()) return pid.status();
    sh.pid = *pid;
  }
  std::vector<json> reports;
  std::string errors;
  for (Share& sh : shares) {
    Result<json> r = await_bench(*sh.machine, sh.pid, sh.status, sh.log, sh.report, [&] {
      if (while_running) {
        while_running(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
      }
    });
    if (!r.ok()) {
      errors += (errors.empty() ? "" : "; ") + r.status().message();
      continue;
    }
    reports.push_back(std::move(r).value());
  }
  if (!errors.empty()) return Status::io_error("granary-bench " + command + " failed: " + errors);
  return reports;
}

// A checkpoint beside the training read, its ranks in several shares: a checkpoint's time is its
// slowest rank's over all of them (the simulator's rule), averaged over the checkpoints every
// rank finished.
void merge_checkpoint(const std::vector<json>& shares, json& ck) {
  std::vector<double> slowest = ck["slowest_rank_write_s"].get<std::vector<double>>();
  int ranks = 0;
  for (const json& r : shares) {
    const json& other = r["checkpoint"];
    ranks += other["ranks_run"].get<int>();
    for (size_t i = 0; i < slowest.size(); ++i) {
      const double t = other["slowest_rank_write_s"][i].get<double>();
      slowest[i] = slowest[i] < 0 || t < 0 ? -1.0 : std::max(slowest[i], t);
    }
  }
  double sum = 0;
  int complete = 0;
  for (double t : slowest) {
    if (t < 0) break;
    sum += t;
    ++complete;
  }
  const double seconds = complete > 0 ? sum / complete : 0;
  ck["ranks_run"] = ranks;
  ck["slowest_rank_write_s"] = slowest;
  ck["checkpoints_complete"] = complete;
  ck["write_seconds"] = seconds;
  ck["write_gibps"] =
      seconds > 0 ? ck["checkpoint_bytes"].get<double>() / seconds / std::ldexp(1.0, 30) : 0.0;
}

// Another share's block I/O figures (its summary `rs` and latencies) into `s` and `latency`:
// counts and rates add up (the shares' windows are the same length); quantiles do not merge:
// each the largest of the shares'.
void merge_block(json& s, json& latency, const json& rs, const json& other_latency) {
  for (const char* k : {"volumes", "reads", "writes", "copyups", "parent_reads", "nodes_booted"}) {
    if (s.contains(k)) s[k] = s[k].get<uint64_t>() + rs[k].get<uint64_t>();
  }
  for (const char* k : {"iops", "read_iops", "write_iops", "read_mibps", "write_mibps"}) {
    s[k] = s[k].get<double>() + rs[k].get<double>();
  }
  s["measured_seconds"] =
      std::max(s["measured_seconds"].get<double>(), rs["measured_seconds"].get<double>());
  if (s.contains("boot_seconds")) {
    for (auto& [k, v] : s["boot_seconds"].items()) {
      v = std::max(v.get<double>(), rs["boot_seconds"][k].get<double>());
    }
    s["boot_complete"] = s["boot_complete"].get<bool>() && rs["boot_complete"].get<bool>();
  }
  for (auto& [op, q] : latency.items()) {
    if (!other_latency.contains(op)) continue;
    const json& other = other_latency[op];
    const double n = q["count"].get<double>(), m = other["count"].get<double>();
    q["mean"] =
        n + m > 0 ? (q["mean"].get<double>() * n + other["mean"].get<double>() * m) / (n + m) : 0.0;
    q["count"] = q["count"].get<uint64_t>() + other["count"].get<uint64_t>();
    for (const char* k : {"p50", "p90", "p99", "p999", "max"}) {
      q[k] = std::max(q[k].get<double>(), other[k].get<double>());
    }
    q.erase("cdf");  // a distribution's points do not merge either
  }
}

// Each share's latency samples (granary-bench --latency-samples): its `latency_samples_s`, or
// that of its `section` when given (shares without the section have no part in it: skipped);
// a null entry for a share that sent none.
std::vector<const json*> samples_of(const std::vector<json>& shares, const char* section) {
  std::vector<const json*> out;
  for (const json& r : shares) {
    const json* from = &r;
    if (section != nullptr) {
      if (!r.contains(section)) continue;
      from = &r[section];
    }
    out.push_back(from->contains("latency_samples_s") ? &(*from)["latency_samples_s"] : nullptr);
  }
  return out;
}

// The quantiles of each operation of `latency` over every share's samples — exactly what one
// process would compute from all of them — when every share sent them; the report's full form
// (the simulator's: count, mean, quantiles, cdf) or, for a training read's, p50, p99 and max.
void exact_latency(json& latency, const std::vector<const json*>& samples, bool full_form) {
  for (auto& [op, q] : latency.items()) {
    sim::LatencyRecorder all;
    bool complete = !samples.empty();
    for (const json* s : samples) {
      if (s == nullptr || !s->contains(op)) {
        complete = false;
        break;
      }
      for (const json& x : (*s)[op]) all.add(x.get<double>());
    }
    if (!complete || all.count() == 0) continue;
    q = full_form ? all.json_ms(q.value("what", ""))
                  : json{{"p50", all.percentile(50) * 1e3},
                         {"p99", all.percentile(99) * 1e3},
                         {"max", all.max() * 1e3}};
  }
}

// The shares' reports as one: sums, the accelerators' utilisation over all of them.
json merge(const std::vector<json>& shares) {
  json out = shares.front();
  out.erase("share");
  out.erase("command");
  if (out.contains("client_cpu_s")) {
    double cpu_s = 0;
    for (const json& r : shares) cpu_s += r.value("client_cpu_s", 0.0);
    out["client_cpu_s"] = cpu_s;
  }
  json& carry = out["carry_data"];
  for (size_t i = 1; i < shares.size(); ++i) {
    for (auto& [k, v] : carry.items())
      v = v.get<uint64_t>() + shares[i]["carry_data"][k].get<uint64_t>();
  }
  if (out.contains("summary") && out["summary"].value("workload", "") == "training_read") {
    json& s = out["summary"];
    double au_weighted = 0, run_s = 0;
    int accelerators = 0;
    uint64_t bytes = 0, files = 0;
    json per = json::array();
    double p99 = 0, mx = 0, p50 = 0;
    for (const json& r : shares) {
      const json& rs = r["summary"];
      const int a = rs["accelerators"];
      accelerators += a;
      au_weighted += a * rs["accelerator_utilization"]["mean"].get<double>();
      s["accelerator_utilization"]["min"] =
          std::min(s["accelerator_utilization"]["min"].get<double>(),
                   rs["accelerator_utilization"]["min"].get<double>());
      s["accelerator_utilization"]["max"] =
          std::max(s["accelerator_utilization"]["max"].get<double>(),
                   rs["accelerator_utilization"]["max"].get<double>());
      run_s = std::max(run_s, rs["run_seconds"].get<double>());
      bytes += rs["bytes_read"].get<uint64_t>();
      files += rs["files_read"].get<uint64_t>();
      for (const json& u : r["accelerators"]["utilization"]) per.push_back(u);
      p50 = std::max(p50, r["latency_ms"]["read"]["p50"].get<double>());
      p99 = std::max(p99, r["latency_ms"]["read"]["p99"].get<double>());
      mx = std::max(mx, r["latency_ms"]["read"]["max"].get<double>());
    }
    s["accelerators"] = accelerators;
    s["accelerator_utilization"]["mean"] = au_weighted / std::max(1, accelerators);
    s["run_seconds"] = run_s;
    s["epoch_seconds"] = run_s / std::max(1, s["epochs"].get<int>());
    s["bytes_read"] = bytes;
    s["files_read"] = files;
    s["read_gibps_mean"] = static_cast<double>(bytes) / std::max(run_s, 1e-9) / std::ldexp(1.0, 30);
    out["accelerators"]["utilization"] = per;
    // Quantiles do not merge: computed over every share's samples when they all sent them,
    // else the largest of the shares' (each its client host's).
    out["latency_ms"]["read"] = {{"p50", p50}, {"p99", p99}, {"max", mx}};
    exact_latency(out["latency_ms"], samples_of(shares, nullptr), false);
  }
  const std::string workload =
      out.contains("summary") ? out["summary"].value("workload", "") : std::string();
  if (workload == "block" || workload == "boot_storm") {
    for (size_t i = 1; i < shares.size(); ++i) {
      merge_block(out["summary"], out["latency_ms"], shares[i]["summary"], shares[i]["latency_ms"]);
    }
    exact_latency(out["latency_ms"], samples_of(shares, nullptr), true);
  }
  if (out.contains("block")) {  // block I/O beside the training read, in the shares that had some
    json& b = out["block"];
    for (size_t i = 1; i < shares.size(); ++i) {
      if (shares[i].contains("block")) {
        merge_block(b, b["latency_ms"], shares[i]["block"], shares[i]["block"]["latency_ms"]);
      }
    }
    exact_latency(b["latency_ms"], samples_of(shares, "block"), true);
    b.erase("latency_samples_s");
  }
  out.erase("latency_samples_s");
  if (out.contains("checkpoint")) merge_checkpoint(shares, out["checkpoint"]);
  out["shares"] = shares.size();
  return out;
}

// The failure timeline, injected from the run's start; each event once.
class Injector {
 public:
  Injector(Cluster& c, const LaunchOptions& o)
      : c_(c), o_(o), events_(models::expand_failures(c.scenario, c.scenario.seed)) {}
  void at(double t_s) {
    check_starting(t_s);
    while (next_ < events_.size() && events_[next_].at_s <= t_s) apply(events_[next_++], t_s);
  }
  // After the run: waits (up to 30 s) for the daemons still starting, so that verify finds them
  // serving; one that does not fails the run.
  void finish() {
    for (double waited = 0; !starting_.empty() && waited < 30; waited += 0.05) {
      check_starting(-1);  // no deadline passes: waits up to 30 s more
      if (!starting_.empty()) std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    for (const Starting& st : starting_) {
      if (status_.ok()) status_ = not_started(c_, st.name);
    }
    starting_.clear();
  }
  Status status() const { return status_; }
  // Every event: those injected, then those the workload ended before (injected false).
  json events() const {
    json all = done_;
    for (size_t i = next_; i < events_.size(); ++i) {
      json event = describe(events_[i]);
      event["injected"] = false;
      all.push_back(std::move(event));
    }
    return all;
  }

 private:
  void apply(const models::FailureEvent& e, double t_s) {
    using K = models::FailureKind;
    const std::string kind(models::failure_kind_name(e.kind));
    const bool ns = c_.state.value("namespaces", false);
    const std::string tag = c_.state["tag"];
    const Layout l = layout_of(c_.scenario);
    auto veth = [&](int machine) { return tag + "v" + std::to_string(machine); };
    // The OSDs an event acts on: its OSD, or every OSD of its storage server.
    const bool on_server = e.kind == K::kHostDown || e.kind == K::kHostRestart;
    std::vector<int> osds;
    for (int d = 0; d < (on_server ? l.drives : 1); ++d) {
      osds.push_back(on_server ? e.target * l.drives + d : e.target);
    }
    Status s;
    std::string what =
        kind + (on_server ? " of storage host " : " of osd.") + std::to_string(e.target);
    json extra;  // what the report adds to the event
    if (e.kind == K::kOsdCrash || e.kind == K::kHostDown) {
      for (int o : osds) {
        kill_daemon(c_.machine_of(o), c_.state["daemons"]["osd." + std::to_string(o)]["pid"]);
      }
    } else if (e.kind == K::kDriveFailure) {
      // The drive returns EIO to everything (the OSD's fault file), and its daemon stops at
      // its next I/O, as ceph-osd does; one with no I/O within 2 s is killed. The drive then
      // dies with its data: the OSD cannot come back on it (drive_replace gives it a new one).
      const std::string osd = "osd." + std::to_string(e.target);
      Machine& m = c_.machine_of(e.target);
      const int64_t pid = c_.state["daemons"][osd]["pid"];
      faults_[e.target].failed = true;
      s = write_faults(e.target);
      bool stopped = false;
      for (int i = 0; i < 40 && s.ok() && !(stopped = !m.alive(pid)); ++i) {
        std::this_thread::sleep_for(std::chrono::milliseconds(50));
      }
      if (!stopped) kill_daemon(m, pid);
      extra["stopped_by"] = stopped ? "drive_error" : "sigkill";
      what += stopped ? ": the daemon stopped on its drive's EIO" : ": no I/O within 2 s, killed";
      if (s.ok()) s = m.remove(c_.path(osd + ".img"));
    } else if (e.kind == K::kSlowDrive) {
      faults_[e.target].slow = e.factor;
      s = write_faults(e.target);
      char factor[32];
      std::snprintf(factor, sizeof factor, "%g", e.factor);
      what += " to " + std::string(factor) + "x its service time";
    } else if (e.kind == K::kOsdRestart || e.kind == K::kHostRestart ||
               e.kind == K::kDriveReplace) {
      // Every OSD first (each replays its journal), then their serving lines.
      for (int o : osds) {
        // A new drive is not the slow one it replaces.
        if (e.kind == K::kDriveReplace && s.ok()) {
          faults_.erase(o);
          s = c_.machine_of(o).remove(fault_file(c_, o));
        }
        std::vector<std::string> argv = osd_argv(c_, o);
        if (e.kind == K::kDriveReplace) argv.push_back("--mkfs");  // a new, empty drive
        if (s.ok()) s = spawn_daemon(c_, "osd." + std::to_string(o), argv, o);
      }
      // Not waited for here: the timeline goes on while they replay their journals and peer
      // (check_starting records when each serves, or fails the run after 30 s).
      for (int o : osds) {
        const std::string osd = "osd." + std::to_string(o);
        if (s.ok()) {
          starting_.push_back(
              {osd, c_.state["daemons"][osd]["starts"].get<int>(), t_s + 30, done_.size()});
        }
      }
    } else if (e.kind == K::kPartition || e.kind == K::kHeal) {
      // In namespaces the hosts' links go down (up); on loopback their daemons are stopped
      // (SIGSTOP: alive, silent, data intact) and continued.
      const bool cut = e.kind == K::kPartition;
      what = kind + " of storage hosts";
      for (int32_t h : e.hosts) {
        what += " " + std::to_string(h);
        Status one;
        if (ns) {
          one = sh("ip link set " + veth(h) + (cut ? " down" : " up"));
        } else {
          for (int d = 0; d < l.drives; ++d) {
            const int o = h * l.drives + d;
            const std::string osd = "osd." + std::to_string(o);
            const int64_t pid = c_.state["daemons"][osd]["pid"];
            if (!c_.machine_of(o).signal(pid, cut ? SIGSTOP : SIGCONT) && one.ok()) {
              one = Status::io_error(std::string(cut ? "SIGSTOP" : "SIGCONT") + " to " + osd +
                                     " failed");
            }
          }
        }
        if (s.ok()) s = one;
      }
      what += ns ? " (links)" : (cut ? " (SIGSTOP)" : " (SIGCONT)");
    } else if (e.kind == K::kNicDegraded) {
      // The host's link shaped to its rate over `factor`, both ends (1 restores it).
      what = kind + " of storage host " + std::to_string(e.target);
      const std::string rate = std::to_string(static_cast<int64_t>(std::llround(
                                   link_gbps(c_.scenario, l, e.target) * 1000 / e.factor))) +
                               "mbit";
      const std::string tbf = " root tbf rate " + rate + " burst 256kb latency 10ms";
      s = sh("tc qdisc change dev " + veth(e.target) + tbf);
      if (s.ok()) {
        s = sh("ip netns exec " + c_.netns_of_machine(e.target) + " tc qdisc change dev eth0" +
               tbf);
      }
      what += " to " + rate;
    } else {
      what = kind + " of storage host " + std::to_string(e.target);
      s = sh("ip link set " + veth(e.target) + (e.kind == K::kNicDown ? " down" : " up"));
    }
    if (!s.ok() && status_.ok()) status_ = s;
    say(o_, what + " at " + std::to_string(t_s) + " s" + (s.ok() ? "" : ": " + s.message()));
    json event = describe(e);
    if (extra.is_object()) event.update(extra);
    event["injected_at_s"] = t_s;
    event["injected"] = true;
    event["ok"] = s.ok();
    done_.push_back(std::move(event));
  }
  // An event of the timeline as the report lists it.
  static json describe(const models::FailureEvent& e) {
    json j = {{"at_s", e.at_s},
              {"kind", std::string(models::failure_kind_name(e.kind))},
              {"target", e.target}};
    if (!e.hosts.empty()) j["hosts"] = e.hosts;
    if (e.random) j["random"] = true;  // drawn by a random_drive_failures entry
    if (e.kind == models::FailureKind::kNicDegraded || e.kind == models::FailureKind::kSlowDrive) {
      j["factor"] = e.factor;
    }
    return j;
  }
  // Daemons a restart started and that do not serve yet: when one does, its event records
  // `serving_at_s` (its last daemon's); one still silent at its deadline fails the run.
  struct Starting {
    std::string name;
    int start = 0;  // which start of the daemon
    double deadline_s = 0;
    size_t event = 0;  // its event in done_
  };
  void check_starting(double t_s) {
    for (auto it = starting_.begin(); it != starting_.end();) {
      if (c_.state["daemons"][it->name]["starts"].get<int>() != it->start) {
        // Started again since (a drive replaced while it replayed its journal): that start's
        // event follows it.
        done_[it->event]["superseded"] = true;
        it = starting_.erase(it);
      } else if (const json& d = c_.state["daemons"][it->name];
                 !serving(c_, it->name) &&
                 !c_.machine_of(d["host"].get<int>()).alive(d["pid"].get<int64_t>())) {
        // It died first (its drive failed meanwhile): the timeline's doing, not a failed start.
        done_[it->event]["stopped_before_serving"] = true;
        it = starting_.erase(it);
      } else if (serving(c_, it->name)) {
        if (t_s >= 0) done_[it->event]["serving_at_s"] = t_s;  // after the run: not timed
        it = starting_.erase(it);
      } else if (t_s >= 0 && t_s > it->deadline_s) {
        if (status_.ok()) status_ = not_started(c_, it->name);
        done_[it->event]["ok"] = false;
        it = starting_.erase(it);
      } else {
        ++it;
      }
    }
  }
  std::vector<Starting> starting_;

  // Writes an OSD's fault file (granary-osd --fault-file) with its faults now: whole, then
  // renamed over the old one, so that the daemon never reads half of it.
  Status write_faults(int osd) {
    const Faults& f = faults_[osd];
    char factor[32];
    std::snprintf(factor, sizeof factor, "%.17g", f.slow);
    return c_.machine_of(osd).write(fault_file(c_, osd),
                                    "{\"slow_factor\": " + std::string(factor) +
                                        ", \"failed\": " + (f.failed ? "true" : "false") + "}\n");
  }
  Cluster& c_;
  const LaunchOptions& o_;
  struct Faults {
    double slow = 1;
    bool failed = false;
  };
  std::map<int, Faults> faults_;              // OSD -> its drive's, as its fault file says
  std::vector<models::FailureEvent> events_;  // the timeline, random draws included
  size_t next_ = 0;
  Status status_;
  json done_ = json::array();
};

}  // namespace

json merge_share_reports(const std::vector<json>& shares) {
  return merge(shares);
}

Status real_up(const LaunchOptions& o) {
  Result<models::Scenario> s = models::load_scenario(o.scenario_path);
  if (!s.ok()) return s.status();
  if (Status r = check_runnable(*s); !r.ok()) return r;
  Cluster c;
  c.scenario = std::move(s).value();
  c.dir = dir_of(c.scenario);
  if (fs::exists(c.path("state.json"))) {
    return Status::invalid_argument(o.scenario_path + ": a cluster is already up in " + c.dir +
                                    " (granary real down first)");
  }
  std::error_code ec;
  fs::create_directories(c.dir, ec);
  if (ec) return Status::io_error(c.dir + ": " + ec.message());
  const Layout l = layout_of(c.scenario);
  const unsigned tag = static_cast<unsigned>(std::hash<std::string>{}(c.dir)) % 9000 + 1000;
  c.state = {{"scenario", fs::absolute(o.scenario_path).string()},
             {"namespaces", c.scenario.real.namespaces},
             {"ssh", c.scenario.real.ssh},
             {"tag", "gr" + std::to_string(tag)},
             {"subnet", "10.77." + std::to_string(tag % 250 + 1)},
             {"netns", json::array()},
             {"daemons", json::object()},
             {"filled", false}};
  c.save();
  if (c.scenario.real.namespaces) {
    if (geteuid() != 0) {
      return Status::permission_denied(o.scenario_path +
                                       ": real.hosts \"namespaces\" needs root (ip netns, tc)");
    }
    say(o, "making " + std::to_string(l.machines()) + " network namespaces on bridge " +
               c.state["tag"].get<std::string>() + "br");
    if (Status r = make_namespaces(c, l); !r.ok()) return r;
  }
  make_machines(c);
  Result<ClusterKey> key = ClusterKey::generate();
  if (!key.ok()) return key.status();
  if (Status r = key->save(c.path("key")); !r.ok()) return r;
  const ClusterConfig config = config_of(c, l);
  std::ofstream(c.path("cluster.json")) << cluster_config_json(config);
  if (c.scenario.real.ssh) {
    // Every lab host gets the cluster's folder with the key (its owner's only) and the file.
    say(o, "copying the cluster key and file to " + std::to_string(l.machines()) + " lab hosts");
    const std::string key_text = read_text(c.path("key"));
    for (auto& m : c.machines) {
      for (const auto& [path, text] :
           {std::pair{c.path("key"), key_text},
            std::pair{c.path("cluster.json"), cluster_config_json(config)}}) {
        if (Status r = m->write(path, text); !r.ok()) return r;
      }
    }
  }
  const bool pfs = config.pfs.has_value();
  say(o, "cluster file " + c.path("cluster.json") + ": " + std::to_string(l.osds()) +
             (pfs ? " OSTs on " : " OSDs on ") + std::to_string(l.storage) + " servers, " +
             (pfs ? "an MDS, " : "a monitor, ") + std::to_string(l.clients) + " client hosts");
  if (Status r = pfs ? start_daemon(
                           c, "mds",
                           {c.binary("granary-mds"), "--config", c.path("cluster.json"), "--mkfs"},
                           l.mon())
                     : start_daemon(c, "mon",
                                    {c.binary("granary-mon"), "--config", c.path("cluster.json")},
                                    l.mon());
      !r.ok()) {
    return r;
  }
  // All OSDs at once (each formats its drive first), so that none is marked down for starting
  // after the others.
  for (int osd = 0; osd < l.osds(); ++osd) {
    std::vector<std::string> argv = osd_argv(c, osd);
    argv.push_back("--mkfs");
    if (Status r = spawn_daemon(c, "osd." + std::to_string(osd), argv, osd); !r.ok()) return r;
  }
  for (int osd = 0; osd < l.osds(); ++osd) {
    if (Status r = wait_serving(c, "osd." + std::to_string(osd)); !r.ok()) return r;
  }
  say(o, "up in " + c.dir);
  return Status::ok_status();
}

Result<json> real_run(const LaunchOptions& o, int* failed_expectations) {
  Result<Cluster> opened = open_cluster(o.scenario_path);
  if (!opened.ok()) return opened.status();
  Cluster& c = *opened;
  if (Status r = check_runnable(c.scenario); !r.ok()) return r;
  // A dataset or volume images to write first: all but a checkpoint alone.
  const bool to_fill = c.scenario.workloads[0].kind != models::WorkloadKind::kCheckpoint ||
                       c.scenario.workloads.size() > 1;
  if (to_fill && !c.state.value("filled", false)) {
    say(o, "filling the dataset");
    Result<std::vector<json>> filled = run_shares(c, "fill", nullptr);
    if (!filled.ok()) return filled.status();
    c.state["filled"] = true;
    c.save();
  }
  say(o, "running " + c.scenario.name + " (seed " + std::to_string(c.scenario.seed) + ")");
  Injector injector(c, o);
  Result<std::vector<json>> shares = run_shares(c, "run", [&](double t_s) { injector.at(t_s); });
  injector.finish();
  if (!shares.ok()) return shares.status();
  if (!injector.status().ok()) return injector.status();
  json report = merge(*shares);
  report["scenario"]["sha256"] = c.scenario.source_sha256;
  report["scenario"]["source"] = c.scenario.source_path;
  report["real"] = {{"hosts", c.scenario.real.ssh                  ? "ssh"
                              : c.state.value("namespaces", false) ? "namespaces"
                                                                   : "loopback"},
                    {"dir", c.dir}};
  report["failures"] = injector.events();
  if (!c.scenario.expectations.empty()) {
    const auto outcomes = models::evaluate(c.scenario.expectations, report);
    report["expectations"] = models::outcomes_to_json(c.scenario.expectations, outcomes, report);
    *failed_expectations = static_cast<int>(
        std::count_if(outcomes.begin(), outcomes.end(), [](const auto& e) { return !e.passed; }));
  }
  return report;
}

Result<json> real_verify(const LaunchOptions& o) {
  Result<Cluster> opened = open_cluster(o.scenario_path);
  if (!opened.ok()) return opened.status();
  Result<std::vector<json>> shares = run_shares(*opened, "verify", nullptr);
  if (!shares.ok()) return shares.status();
  return merge(*shares);
}

namespace {

// The CPU seconds (user and system) process `pid` has used on `m`, from /proc/PID/stat; 0 when
// it cannot be read (the process is gone).
double process_cpu_s(Machine& m, int64_t pid) {
  const std::string stat = m.read("/proc/" + std::to_string(pid) + "/stat");
  const size_t paren = stat.rfind(')');
  if (paren == std::string::npos) return 0;
  std::istringstream in(stat.substr(paren + 1));
  std::vector<std::string> f;
  for (std::string field; in >> field;) f.push_back(field);
  // After the command's ')': state, ppid, ..., utime (field 14 of proc(5)), stime (15).
  if (f.size() < 13) return 0;
  return (std::strtod(f[11].c_str(), nullptr) + std::strtod(f[12].c_str(), nullptr)) /
         static_cast<double>(sysconf(_SC_CLK_TCK));
}

// The CPU seconds every OSD process of the cluster has used.
double osd_cpu_s(Cluster& c) {
  double total = 0;
  for (const auto& [name, d] : c.state["daemons"].items()) {
    if (name.rfind("osd.", 0) != 0) continue;
    total += process_cpu_s(c.machine_of(d["host"].get<int>()), d["pid"].get<int64_t>());
  }
  return total;
}

// The drive probe (granary-bench probe-drive) on the first storage server's machine, on a file
// in the cluster's folder beside the OSDs' drives.
Result<json> probe_drive_of(Cluster& c, const CalibrateOptions& co) {
  Machine& m = c.machine_of(0);
  const std::string report = c.path("calibrate-drive.json"), log = c.path("calibrate-drive.log"),
                    status = c.path("calibrate-drive.status");
  for (const std::string& f : {report, status}) {
    if (Status s = m.remove(f); !s.ok()) return s;
  }
  Result<int64_t> pid =
      m.start({c.binary("granary-bench"), "probe-drive", "--file", c.path("calibrate-drive.img"),
               "--mib", std::to_string(c.scenario.real.drive_bytes >> 20), "--seconds",
               std::to_string(co.drive_seconds), "--report", report},
              log, status);
  if (!pid.ok()) return pid.status();
  Result<json> j = await_bench(m, *pid, status, log, report);
  if (!j.ok()) return Status::io_error("granary-bench probe-drive failed: " + j.status().message());
  if (j->is_discarded()) return Status::io_error(report + ": not JSON");
  return j;
}

// This machine, for the calibration's record.
json machine_json() {
  char host[256] = {};
  gethostname(host, sizeof host - 1);
  utsname u{};
  uname(&u);
  return {{"hostname", host},
          {"cpus", std::thread::hardware_concurrency()},
          {"kernel", std::string(u.sysname) + " " + u.release}};
}

}  // namespace

Result<json> real_calibrate(const LaunchOptions& o, const CalibrateOptions& co) {
  if (!(co.probe_seconds > 0 && co.probe_seconds <= 3600) ||
      !(co.drive_seconds > 0 && co.drive_seconds <= 3600)) {
    return Status::invalid_argument("calibrate: the probes' seconds must be in (0, 3600]");
  }
  Result<models::Scenario> s = models::load_scenario(o.scenario_path);
  if (!s.ok()) return s.status();
  if (s->storage.design != models::StorageDesign::kRados) {
    return Status::invalid_argument(o.scenario_path +
                                    ": storage.design: granary real calibrate probes RBD "
                                    "volumes through the OSDs: design 'rados'");
  }
  if (s->storage.rados.ec_k > 0) {
    // The simulator charges an erasure-coded read a request at the primary and one per shard
    // it reads: the probes' CPU per client request would not be its per-request figure.
    return Status::invalid_argument(
        o.scenario_path +
        ": storage.rados: granary real calibrate measures a replicated pool (one server request "
        "per read, as the simulator counts them); calibrate a copy of the scenario with "
        "\"replicas\" and use its figures for the erasure-coded one");
  }
  Result<Cluster> opened = open_cluster(o.scenario_path);
  if (!opened.ok()) return opened.status();
  Cluster& c = *opened;
  say(o, "probing the drive on " + c.machine_of(0).describe());
  Result<json> drive = probe_drive_of(c, co);
  if (!drive.ok()) return drive.status();
  Result<json> base = scenario_without_failures(c);
  if (!base.ok()) return base.status();
  // The probes overwrite the volume the scenario's own block workload may use.
  c.state["filled"] = false;
  c.save();
  std::vector<ProbeRun> runs;
  for (const ClusterProbe& p : cluster_probes()) {
    Result<std::string> path = write_bench_scenario(c, probe_scenario(*base, p, co.probe_seconds),
                                                    "calibrate-" + p.name + ".json");
    if (!path.ok()) return path.status();
    if (runs.empty()) {
      say(o, "filling the probes' volume");
      Result<std::vector<json>> filled = run_shares(c, "fill", nullptr, *path);
      if (!filled.ok()) return filled.status();
    }
    say(o, "probe " + p.name + ": " + std::to_string(p.block_kib) + " KiB " +
               (p.read_fraction > 0 ? "reads" : "writes") + " at queue depth " +
               std::to_string(p.queue_depth) + " for " + json(co.probe_seconds).dump() + " s");
    const double osd0 = osd_cpu_s(c);
    Result<std::vector<json>> shares = run_shares(c, "run", nullptr, *path);
    if (!shares.ok()) return shares.status();
    ProbeRun r{p, merge(*shares), osd_cpu_s(c) - osd0, 0};
    r.client_cpu_s = r.report.value("client_cpu_s", 0.0);
    runs.push_back(std::move(r));
  }
  say(o, "fitting the simulator's figures (two simulations)");
  Result<json> fit = fit_calibration(*base, c.scenario.source_path, *drive, runs);
  if (!fit.ok()) return fit.status();
  json out = {
      {"granary_calibration", 1},
      {"scenario", {{"source", c.scenario.source_path}, {"sha256", c.scenario.source_sha256}}},
      {"machine", machine_json()},
      {"real",
       {{"hosts", c.scenario.real.ssh                  ? "ssh"
                  : c.state.value("namespaces", false) ? "namespaces"
                                                       : "loopback"},
        {"dir", c.dir}}},
      {"seconds", {{"probe", co.probe_seconds}, {"drive_mode", co.drive_seconds}}},
      {"drive_probe", *drive}};
  for (auto& [k, v] : fit->items()) out[k] = v;
  return out;
}

Status real_down(const LaunchOptions& o) {
  Result<models::Scenario> s = models::load_scenario(o.scenario_path);
  if (!s.ok()) return s.status();
  Cluster c;
  c.scenario = std::move(s).value();
  c.dir = dir_of(c.scenario);
  c.state = json::parse(read_text(c.path("state.json")), nullptr, false);
  if (!c.state.is_discarded()) {
    make_machines(c);
    for (const auto& [name, d] : c.state["daemons"].items()) {
      stop_daemon(c.machine_of(d["host"].get<int>()), d["pid"].get<int64_t>(), 5);
    }
    for (const json& ns : c.state.value("netns", json::array())) {
      (void)sh("ip netns delete " + ns.get<std::string>());
    }
    if (c.state.contains("bridge")) {
      (void)sh("ip link delete " + c.state["bridge"].get<std::string>());
    }
    if (c.scenario.real.ssh) {
      for (auto& m : c.machines) {
        if (Status r = m->remove(c.dir); !r.ok()) say(o, r.message());
      }
      for (int m = 0; m < layout_of(c.scenario).machines(); ++m) {
        close_ssh_connection(ssh_target_of(c.scenario, c.dir, m));
      }
      std::error_code ignored;  // the connections' sockets' folder, empty now
      fs::remove(ssh_target_of(c.scenario, c.dir, 0).control_dir, ignored);
    }
  }
  std::error_code ec;
  fs::remove_all(c.dir, ec);
  if (ec) return Status::io_error(c.dir + ": " + ec.message());
  say(o, "down: " + c.dir + " removed");
  return Status::ok_status();
}

}  // namespace granary::realmode
