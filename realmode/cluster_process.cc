// ClusterProcess and granary-osd's body (cluster_process.h).
#include "realmode/cluster_process.h"

#include <cstdio>

#include "engine/services/file_mapping.h"
#include "engine/services/osd.h"
#include "engine/store/disk_store.h"
#include "realmode/uring_device.h"

namespace granary::realmode {

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
  Result<placement::Ring> ring = config.ring();
  if (!ring.ok()) return ring.status();
  p->ring_ = std::make_unique<placement::Ring>(std::move(ring).value());
  p->env_ = std::make_unique<RealEnv>(seed);
  for (size_t i = 0; i < config.hosts.size(); ++i) {
    RealHostOptions o;
    o.name = config.hosts[i].name;
    o.cores = config.hosts[i].cores;
    o.local = static_cast<HostId>(i) == host;
    Result<HostId> added = p->env_->add_host(o);
    if (!added.ok()) return added.status();
  }
  for (const ClusterOsd& o : config.osds) p->env_->place(services::osd_endpoint_name(o.id), o.host);
  for (const auto& [name, h] : config.names) p->env_->place(name, h);
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

Status run_osd_daemon(const ClusterConfig& config, int osd, const OsdDaemonOptions& options) {
  auto log = options.log ? options.log : [](const std::string& line) {
    std::fprintf(stderr, "%s\n", line.c_str());
  };
  if (osd < 0 || static_cast<size_t>(osd) >= config.osds.size()) {
    return Status::invalid_argument("--osd " + std::to_string(osd) + ": the configuration has " +
                                    std::to_string(config.osds.size()) + " OSDs");
  }
  const ClusterOsd& me = config.osds[static_cast<size_t>(osd)];
  const std::string name = services::osd_endpoint_name(me.id);
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
  Result<std::unique_ptr<UringDevice>> device = UringDevice::open(d);
  if (!device.ok()) return device.status();
  if (Result<DeviceId> added = p.env().add_device(std::move(device).value()); !added.ok()) {
    return added.status();
  }
  Device& drive = p.env().device(0);
  if (options.mkfs) {
    if (Status s = store::DiskStore::format(drive); !s.ok()) return s;
    log(name + ": formatted " + me.drive);
  }
  Result<std::unique_ptr<store::DiskStore>> store = store::DiskStore::mount(drive);
  if (!store.ok()) {
    log(name + ": mounting " + me.drive + " failed");
    return store.status();
  }
  log(name + ": mounted " + me.drive + ", " +
      std::to_string((*store)->mount_report().records_replayed) + " journal records replayed");
  services::OsdServiceOptions o;
  o.endpoint_name = name;
  o.worker_tasks = options.worker_tasks;
  o.sub_op_timeout_s = config.sub_op_timeout_s;
  services::OsdService service(p.env(), me.host, drive, **store, o);
  service.start();
  const HostId host = me.host;
  p.env().spawn(host, name + ".main", [&] {
    while (!(options.stop && options.stop())) p.env().sleep_s(0.1);
  });
  log(name + ": serving at " + config.hosts[static_cast<size_t>(host)].address);
  Status result = p.env().run();
  log(name + ": stopped");
  return result;
}

}  // namespace granary::realmode
