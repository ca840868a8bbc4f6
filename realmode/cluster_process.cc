// ClusterProcess and granary-osd's body (cluster_process.h).
#include "realmode/cluster_process.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <nlohmann/json.hpp>
#include <random>
#include <sstream>

#include "engine/cluster/monitor.h"
#include "engine/recovery/primary_peering.h"
#include "engine/services/file_mapping.h"
#include "engine/services/mds.h"
#include "engine/services/mds_store.h"
#include "engine/services/osd.h"
#include "engine/store/disk_store.h"
#include "realmode/uring_device.h"

namespace granary::realmode {

std::string osd_endpoint(const ClusterConfig& config, int32_t osd) {
  return config.pfs ? services::ost_endpoint_name(static_cast<uint32_t>(osd))
                    : services::osd_endpoint_name(osd);
}

Result<std::unique_ptr<Transport>> open_attached_transport(RealEnv& env, TransportOptions options) {
  options.pool = env.pool();
  RealEnv* target = &env;
  Result<std::unique_ptr<Transport>> transport = Transport::open(
      std::move(options),
      [target](HostId from, std::string to, Message m) {
        target->deliver_from_network(from, std::move(to), std::move(m));
      },
      nullptr);
  if (transport.ok()) env.attach_transport(transport->get());
  return transport;
}

Result<std::unique_ptr<ClusterProcess>> ClusterProcess::open(const ClusterConfig& config,
                                                             HostId host, uint64_t seed) {
  if (host < 0 || static_cast<size_t>(host) >= config.hosts.size()) {
    return Status::invalid_argument("host " + std::to_string(host) +
                                    " is not in the cluster configuration's " +
                                    std::to_string(config.hosts.size()) + " hosts");
  }
  std::unique_ptr<ClusterProcess> p(new ClusterProcess(config, host));
  Result<ClusterKey> key = ClusterKey::load(config.key_file);
  if (!key.ok()) return key.status();
  if (!config.pfs) {
    Result<cluster::OsdMap> map = config.osd_map();
    if (!map.ok()) return map.status();
    p->initial_map_ = std::make_unique<cluster::OsdMap>(std::move(map).value());
    Result<placement::CrushPool> pool = p->initial_map_->pool_placement(kClusterPoolId);
    if (!pool.ok()) return pool.status();
    p->static_pool_ = std::make_unique<placement::CrushPool>(std::move(pool).value());
  }
  p->env_ = std::make_unique<RealEnv>(seed);
  for (size_t i = 0; i < config.hosts.size(); ++i) {
    RealHostOptions o;
    o.name = config.hosts[i].name;
    o.cores = config.hosts[i].cores;
    o.local = static_cast<HostId>(i) == host;
    o.latency_s = config.hosts[i].added_latency_s;
    Result<HostId> added = p->env_->add_host(o);
    if (!added.ok()) return added.status();
  }
  for (const ClusterOsd& o : config.osds) p->env_->place(osd_endpoint(config, o.id), o.host);
  if (config.pfs) p->env_->place(services::mds_endpoint_name(0), config.pfs->mds_host);
  for (const auto& [name, h] : config.names) p->env_->place(name, h);
  if (config.monitor) p->env_->place(kMonitorEndpoint, config.monitor->host);
  TransportOptions t;
  t.provider = config.provider;
  t.handshake_timeout_s = config.handshake_timeout_s;
  t.host = host;
  t.hosts = config.addresses();
  t.key = *key;
  Result<std::unique_ptr<Transport>> transport = open_attached_transport(*p->env_, t);
  if (!transport.ok()) return transport.status();
  p->transport_ = std::move(transport).value();
  return p;
}

ClusterProcess::~ClusterProcess() {
  transport_.reset();  // its progress thread delivers into the Env: it goes first
}

Status ClusterProcess::follow_maps(const std::string& endpoint_name) {
  if (!config_.monitor) {
    return Status::invalid_argument("the cluster configuration has no monitor to follow");
  }
  if (map_client_) return Status::invalid_argument("this process follows the maps already");
  cluster::MapClientOptions o;
  o.endpoint_name = endpoint_name;
  o.monitor_endpoint = kMonitorEndpoint;
  // An update lost with a connection (a peer that restarted) is caught up within this long.
  o.renew_interval_s = 4 * config_.monitor->heartbeat_interval_s;
  o.confirm = true;
  map_client_ = std::make_unique<cluster::MapClient>(*env_, host_, *initial_map_, o);
  Result<std::unique_ptr<cluster::MapPlacement>> placement =
      cluster::MapPlacement::create(*map_client_, kClusterPoolId);
  if (!placement.ok()) return placement.status();
  map_placement_ = std::move(placement).value();
  map_client_->start();
  return Status();
}

services::PfsBackend ClusterProcess::pfs_backend() const {
  services::PfsBackend b;  // layouts from the MDS
  b.mds_endpoint = services::mds_endpoint_name(0);
  b.op_timeout_s = config_.op_timeout_s;
  return b;
}

services::RadosBackend ClusterProcess::rados_backend() {
  services::RadosBackend b;
  b.placement = &placement();
  b.ec = config_.ec;
  b.map_epoch = map_epoch();
  if (b.map_epoch) {
    b.resend_check_s = std::min(0.5, config_.op_timeout_s);
    b.same_map_resend_s = config_.op_timeout_s;
  } else {
    b.op_timeout_s = config_.op_timeout_s;
  }
  return b;
}

placement::Placement& ClusterProcess::placement() {
  if (map_placement_) return *map_placement_;
  GRANARY_CHECK(static_pool_ != nullptr);  // not a pfs cluster
  return *static_pool_;
}

std::function<uint32_t()> ClusterProcess::map_epoch() {
  if (!map_client_) return nullptr;
  cluster::MapClient* client = map_client_.get();
  return [client] { return client->epoch(); };
}

namespace {

// A daemon's log: `log`, or stderr.
std::function<void(const std::string&)> log_or_stderr(std::function<void(const std::string&)> log) {
  if (log) return log;
  return [](const std::string& line) { std::fprintf(stderr, "%s\n", line.c_str()); };
}

// A task that keeps the daemon's run going until `stop` says so (polled every 100 ms).
void spawn_until_stopped(ClusterProcess& p, HostId host, const std::string& name,
                         const std::function<bool()>& stop) {
  p.env().spawn(host, name + ".main", [&p, stop] {
    while (!(stop && stop())) p.env().sleep_s(0.1);
  });
}

// Read repair's peers (OsdServiceOptions::peers_of): the object's acting set on the map.
std::function<std::vector<std::string>(const std::string&)> acting_peers(
    const ClusterConfig& config, cluster::MapPlacement& placement) {
  return [&placement, &config](const std::string& object) {
    std::vector<int32_t> acting;
    placement.devices_of(placement.group_of(object), acting);
    std::vector<std::string> peers;
    for (int32_t d : acting) {
      if (d != placement::kNoDevice) peers.push_back(osd_endpoint(config, d));
    }
    return peers;
  };
}

// A read error the service could not repair leaves it unavailable (engine/services/osd.h):
// the daemon then stops as on a write error, so that its peers and the monitor see it dead.
void spawn_health_watch(ClusterProcess& p, HostId host, const std::string& name,
                        const services::OsdService& service) {
  p.env().spawn(
      host, name + ".health",
      [&p, &service, name] {
        for (;;) {
          p.env().sleep_s(0.05);
          if (!service.available()) {
            std::fprintf(stderr, "%s: a read error it could not repair; stopping\n", name.c_str());
            std::fflush(stderr);
            std::_Exit(kDriveErrorExitStatus);
          }
        }
      },
      TaskOptions{.daemon = true});
}

// A daemon's drive (device 0 of its Env) and the store on it: formatted first when `mkfs`,
// then mounted (the journal replayed).
Result<std::unique_ptr<store::DiskStore>> open_store(
    ClusterProcess& p, const UringDeviceOptions& d, bool mkfs, const std::string& name,
    const std::function<void(const std::string&)>& log,
    const std::function<void(UringDevice&)>& prepare = nullptr) {
  Result<std::unique_ptr<UringDevice>> device = UringDevice::open(d);
  if (!device.ok()) return device.status();
  if (prepare) prepare(**device);
  if (Result<DeviceId> added = p.env().add_device(std::move(device).value()); !added.ok()) {
    return added.status();
  }
  Device& drive = p.env().device(0);
  if (mkfs) {
    if (Status s = store::DiskStore::format(drive); !s.ok()) return s;
    log(name + ": formatted " + d.path);
  }
  Result<std::unique_ptr<store::DiskStore>> store = store::DiskStore::mount(drive);
  if (!store.ok()) log(name + ": mounting " + d.path + " failed");
  return store;
}

// Applies the fault file to the drive at start and whenever the file changes (its modification
// time or its presence), from a daemon task polling it every 100 ms.
void follow_fault_file(ClusterProcess& p, HostId host, const std::string& name,
                       const std::string& path, UringDevice& drive,
                       const std::function<void(const std::string&)>& log) {
  auto applied_bad = std::make_shared<std::vector<std::pair<uint64_t, uint64_t>>>();
  auto apply = [&drive, path, name, log, applied_bad] {
    Result<DriveFaults> f = read_drive_faults(path);
    if (!f.ok()) {
      log(name + ": " + f.status().message() + " (faults unchanged)");
      return;
    }
    if (f->bad_ranges != *applied_bad) {  // (blocks remapped since stay remapped)
      *applied_bad = f->bad_ranges;
      drive.set_bad_ranges(f->bad_ranges);
      log(name + ": " + std::to_string(drive.bad_blocks()) + " unreadable blocks on the drive");
    }
    if (f->failed != drive.failed()) {
      drive.set_failed(f->failed);
      log(name + ": " +
          (f->failed ? "drive failed: every I/O returns EIO" : "drive no longer failing"));
    }
    if (f->slow_factor == drive.slowdown()) return;
    drive.set_slowdown(f->slow_factor);
    char factor[32];
    std::snprintf(factor, sizeof factor, "%g", f->slow_factor);
    log(name + ": " +
        (f->slow_factor > 1 ? "drive slowed: every I/O takes " + std::string(factor) + "x as long"
                            : std::string("drive back to its own speed")));
  };
  auto stamp = [path] {
    struct stat st {};
    if (::stat(path.c_str(), &st) != 0) return int64_t{-1};
    return int64_t{st.st_mtim.tv_sec} * 1000000000 + st.st_mtim.tv_nsec;
  };
  apply();
  p.env().spawn(
      host, name + ".faults",
      [&p, apply, stamp, seen = stamp()]() mutable {
        for (;;) {
          p.env().sleep_s(0.1);
          if (const int64_t now = stamp(); now != seen) {
            seen = now;
            apply();
          }
        }
      },
      TaskOptions{.daemon = true});
}

}  // namespace

Result<DriveFaults> read_drive_faults(const std::string& path) {
  std::ifstream in(path);
  if (!in) return DriveFaults{};
  std::stringstream text;
  text << in.rdbuf();
  const nlohmann::json j = nlohmann::json::parse(text.str(), nullptr, false);
  bool good = !j.is_discarded() && j.is_object();
  DriveFaults f;
  if (good) {
    for (const auto& [key, value] : j.items()) {
      if (key == "slow_factor" && value.is_number() && value.get<double>() >= 1 &&
          value.get<double>() <= 1e6) {
        f.slow_factor = value.get<double>();
      } else if (key == "failed" && value.is_boolean()) {
        f.failed = value.get<bool>();
      } else if (key == "bad_ranges" && value.is_array()) {
        for (const nlohmann::json& r : value) {
          if (!r.is_array() || r.size() != 2 || !r[0].is_number_unsigned() ||
              !r[1].is_number_unsigned() || r[1].get<uint64_t>() == 0) {
            good = false;
            break;
          }
          f.bad_ranges.emplace_back(r[0].get<uint64_t>(), r[1].get<uint64_t>());
        }
      } else {
        good = false;
      }
    }
  }
  if (!good) {
    return Status::invalid_argument(path +
                                    ": expected {\"slow_factor\": a number in 1..1e6, "
                                    "\"failed\": a boolean, \"bad_ranges\": [[offset, "
                                    "length > 0], ...]}, found " +
                                    text.str());
  }
  return f;
}

Status run_osd_daemon(const ClusterConfig& config, int osd, const OsdDaemonOptions& options) {
  const auto log = log_or_stderr(options.log);
  if (osd < 0 || static_cast<size_t>(osd) >= config.osds.size()) {
    return Status::invalid_argument("--osd " + std::to_string(osd) + ": the configuration has " +
                                    std::to_string(config.osds.size()) + " OSDs");
  }
  const ClusterOsd& me = config.osds[static_cast<size_t>(osd)];
  const std::string name = osd_endpoint(config, me.id);
  Result<std::unique_ptr<ClusterProcess>> opened =
      ClusterProcess::open(config, me.host, 1000 + osd);
  if (!opened.ok()) return opened.status();
  ClusterProcess& p = **opened;
  UringDeviceOptions d;
  d.id = 0;
  d.host = me.host;
  d.path = me.drive;
  d.capacity_bytes = me.drive_bytes;
  d.queue_depth = me.queue_depth;
  // Fail-stop on a drive error, as ceph-osd aborts on an EIO of its device: no reply built on
  // a failed I/O, and the peers and the monitor see a dead OSD.
  d.on_error = [name](const Status& error) {
    std::fprintf(stderr, "%s: drive error: %s; stopping\n", name.c_str(), error.message().c_str());
    std::fflush(stderr);
    std::_Exit(kDriveErrorExitStatus);
  };
  // The journal's region once the store is mounted (the hook sees the writes of mkfs and mount
  // before that, and counts none of them).
  auto journal = std::make_shared<std::atomic<uint64_t>>(0);  // offset << 32 | size in KiB
  if (options.kill_at_journal_write > 0) {
    auto seen = std::make_shared<std::atomic<int>>(0);
    d.before_write = [journal, seen, n = options.kill_at_journal_write, path = me.drive, name](
                         uint64_t offset, const Payload& data) {
      const uint64_t j = journal->load();
      const uint64_t begin = j >> 32, end = begin + (j & 0xffffffffu) * 1024;
      if (j == 0 || offset < begin || offset >= end || ++*seen != n) return;
      // Half of the write's sectors, synced, then the end: a torn journal write.
      const uint64_t half = data.size_bytes / 1024 * 512;
      std::fprintf(stderr, "%s: killing itself in journal write %d (%llu of %llu bytes at %llu)\n",
                   name.c_str(), n, static_cast<unsigned long long>(half),
                   static_cast<unsigned long long>(data.size_bytes),
                   static_cast<unsigned long long>(offset));
      const int fd = ::open(path.c_str(), O_WRONLY);
      if (fd >= 0 && half > 0) {
        ssize_t ignored = ::pwrite(fd, data.bytes.data(), half, static_cast<off_t>(offset));
        (void)ignored;
        ::fsync(fd);
      }
      ::raise(SIGKILL);
    };
  }
  // The drive's injected faults hold from its first I/O (a failed drive fails mkfs or mount).
  Result<std::unique_ptr<store::DiskStore>> store =
      open_store(p, d, options.mkfs, name, log, [&](UringDevice& drive) {
        if (!options.fault_file.empty()) {
          follow_fault_file(p, me.host, name, options.fault_file, drive, log);
        }
      });
  if (!store.ok()) return store.status();
  Device& drive = p.env().device(0);
  {
    const auto [offset, bytes] = (*store)->journal_region();
    journal->store(offset << 32 | bytes / 1024);
  }
  log(name + ": mounted " + me.drive + ", " +
      std::to_string((*store)->mount_report().records_replayed) + " journal records replayed");
  services::OsdServiceOptions o;
  o.endpoint_name = name;
  o.worker_tasks = options.worker_tasks;
  o.sub_op_timeout_s = config.sub_op_timeout_s;
  // An erasure-coded primary reads around a shard that stays silent this long (its OSD dead,
  // not yet marked down), rebuilding the range from the others.
  o.shard_timeout_s = config.sub_op_timeout_s;
  o.parallel_store_reads = true;
  const HostId host = me.host;
  std::unique_ptr<cluster::HeartbeatAgent> heartbeat;
  std::unique_ptr<recovery::PrimaryPeering> peering;
  if (config.monitor) {
    if (Status s = p.follow_maps(name + ".map"); !s.ok()) return s;
    cluster::HeartbeatOptions h;
    h.monitor_endpoint = kMonitorEndpoint;
    h.interval_s = config.monitor->heartbeat_interval_s;
    h.incarnation = std::random_device{}() | (uint64_t{std::random_device{}()} << 32) | 1;
    heartbeat = std::make_unique<cluster::HeartbeatAgent>(p.env(), host, me.id, h);
    recovery::PrimaryPeeringOptions po;
    po.osd = me.id;
    po.reply_endpoint = name + ".peer";
    po.ec = config.ec;
    po.member_timeout_s = config.sub_op_timeout_s;
    po.active_wait_s = config.op_timeout_s;
    po.log = log;
    // Not before the monitor has confirmed the map and marked this OSD up in it (a restart
    // starts from the initial map; see PrimaryPeeringOptions::ready).
    cluster::MapClient* maps = p.map_client();
    const int32_t id = me.id;
    po.ready = [maps, id] {
      if (!maps->confirmed()) return false;
      const cluster::OsdMap map = maps->map();
      const placement::OsdStates& s = map.osd_states();
      return id < s.max_osd && s.up[static_cast<size_t>(id)];
    };
    peering = std::make_unique<recovery::PrimaryPeering>(p.env(), host, *p.map_placement(), po);
    o.placement = p.map_placement();
    recovery::PrimaryPeering* raw = peering.get();
    o.await_active = [raw](uint32_t pg) { return raw->await_active(pg); };
    o.active_now = [raw](uint32_t pg) { return raw->active_now(pg); };
    // A peering primary's scan waits for this OSD's map to reach the primary's epoch, so
    // that a shard or replica write of the interval before, not applied yet, is refused as
    // stale instead of landing after the listing (and being acknowledged by the old primary
    // while the new one rolls the object back).
    RealEnv* env = &p.env();
    const double bound_s = config.sub_op_timeout_s;
    o.await_epoch = [maps, env, bound_s](uint32_t epoch) {
      for (double waited = 0; maps->epoch() < epoch; waited += 0.01) {
        if (waited >= bound_s) return false;
        env->sleep_s(0.01);
      }
      return true;
    };
  }
  if (config.monitor && config.ec.k == 0) o.peers_of = acting_peers(config, *p.map_placement());
  services::OsdService service(p.env(), host, drive, **store, o);
  service.start();
  if (heartbeat) heartbeat->start();
  if (peering) peering->start();
  spawn_health_watch(p, host, name, service);
  spawn_until_stopped(p, host, name, options.stop);
  log(name + ": serving at " + config.hosts[static_cast<size_t>(host)].address +
      (config.monitor ? " (following the monitor's maps)" : "") +
      (config.pfs ? " (an OST of the pfs)" : ""));
  Status result = p.env().run();
  const uint64_t repairs = service.stats().read_repairs;
  log(name + ": stopped" +
      (repairs > 0 ? " (" + std::to_string(repairs) + " copies rewritten by read repair)" : ""));
  return result;
}

Status run_mon_daemon(const ClusterConfig& config, const MonDaemonOptions& options) {
  const auto log = log_or_stderr(options.log);
  if (!config.monitor) {
    return Status::invalid_argument("the cluster configuration has no \"monitor\" section");
  }
  const HostId host = config.monitor->host;
  Result<std::unique_ptr<ClusterProcess>> opened = ClusterProcess::open(config, host, 999);
  if (!opened.ok()) return opened.status();
  ClusterProcess& p = **opened;
  cluster::MonitorOptions mo;
  mo.endpoint_name = kMonitorEndpoint;
  mo.heartbeat_interval_s = config.monitor->heartbeat_interval_s;
  mo.heartbeat_grace_s = config.monitor->heartbeat_grace_s;
  mo.down_out_interval_s = config.monitor->down_out_interval_s;
  // No recovery manager asks for pg_temp in real mode: each OSD peers its own PGs.
  mo.prime_pg_temp = false;
  cluster::MonitorService monitor(p.env(), host, p.initial_map(), mo);
  monitor.start();
  p.env().spawn(host, "mon.main", [&] {
    size_t said = 0;
    while (!(options.stop && options.stop())) {
      const std::vector<cluster::MapChange> history = monitor.history();
      for (; said < history.size(); ++said) {
        const cluster::MapChange& c = history[said];
        char at[32];
        std::snprintf(at, sizeof at, "%.3f", c.at_s);
        log(std::string(kMonitorEndpoint) + ": epoch " + std::to_string(c.epoch) + " at " + at +
            " s: " + c.what);
      }
      p.env().sleep_s(0.05);
    }
  });
  log(std::string(kMonitorEndpoint) + ": serving at " +
      config.hosts[static_cast<size_t>(host)].address + ", epoch " +
      std::to_string(p.initial_map().epoch()) + ", " + std::to_string(config.osds.size()) +
      " OSDs");
  Status result = p.env().run();
  log(std::string(kMonitorEndpoint) + ": stopped");
  return result;
}

Status run_mds_daemon(const ClusterConfig& config, const MdsDaemonOptions& options) {
  const auto log = log_or_stderr(options.log);
  if (!config.pfs)
    return Status::invalid_argument("the cluster configuration has no \"pfs\" section");
  const ClusterPfs& pfs = *config.pfs;
  const std::string name = services::mds_endpoint_name(0);
  Result<std::unique_ptr<ClusterProcess>> opened = ClusterProcess::open(config, pfs.mds_host, 998);
  if (!opened.ok()) return opened.status();
  ClusterProcess& p = **opened;
  UringDeviceOptions d;
  d.id = 0;
  d.host = pfs.mds_host;
  d.path = pfs.mdt_drive;
  d.capacity_bytes = pfs.mdt_drive_bytes;
  Result<std::unique_ptr<store::DiskStore>> store = open_store(p, d, options.mkfs, name, log);
  if (!store.ok()) return store.status();
  services::DiskNamespaceStore ns(**store);
  Result<services::MdsNamespace> files = ns.load();
  if (!files.ok()) return files.status();
  log(name + ": mounted " + pfs.mdt_drive + ", " +
      std::to_string((*store)->mount_report().records_replayed) + " journal records replayed, " +
      std::to_string(files->size()) + " files");
  // Every OSD is an OST of the pool, index = its id, served by its host (the OSS).
  std::vector<layout::Ost> osts;
  for (const ClusterOsd& o : config.osds) {
    osts.push_back({static_cast<uint32_t>(o.id), static_cast<uint32_t>(o.host), o.drive_bytes,
                    o.drive_bytes, layout::OstState::kActive});
  }
  Result<layout::OstAllocator> allocator = layout::OstAllocator::create(std::move(osts), {});
  if (!allocator.ok()) return allocator.status();
  services::MetadataServiceOptions o;
  o.endpoint_name = name;
  o.parallel_ops = options.worker_tasks;
  o.allocator = &*allocator;
  o.layout_spec.stripe_size_bytes = pfs.stripe_size_bytes;
  o.layout_spec.stripe_count = pfs.stripe_count == -1 ? layout::kStripeCountAll : pfs.stripe_count;
  // A fresh file system draws the same layouts every time; a restarted one goes on differently.
  o.layout_seed = 1 + files->size();
  o.store = &ns;
  services::MetadataService mds(p.env(), pfs.mds_host, std::move(files).value(), o);
  mds.start();
  spawn_until_stopped(p, pfs.mds_host, name, options.stop);
  log(name + ": serving at " + config.hosts[static_cast<size_t>(pfs.mds_host)].address + ", " +
      std::to_string(config.osds.size()) + " OSTs, stripe count " +
      std::to_string(pfs.stripe_count) + ", stripe size " + std::to_string(pfs.stripe_size_bytes) +
      " bytes");
  Status result = p.env().run();
  const services::MdsStats st = mds.stats();
  log(name + ": stopped after " + std::to_string(st.opens) + " opens and creates, " +
      std::to_string(st.closes) + " closes, " + std::to_string(st.errors) + " errors");
  return result;
}

}  // namespace granary::realmode
