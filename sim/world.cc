#include "sim/world.h"

#include <algorithm>
#include <cmath>
#include <map>

#include "engine/crush/edit.h"
#include "engine/crush/text_format.h"

namespace granary::sim {

using models::LinkRole;
using models::StorageDesign;

namespace {

// Bytes of writes a Ceph client keeps in flight: librados' objecter_inflight_op_bytes default.
constexpr uint64_t kObjecterInflightBytes = uint64_t{100} << 20;

// A new store for a drive's (or filer head's) writes, over the dataset's objects (and a mixed
// run's volume images) unless the plan's stores start empty (a checkpoint run).
services::WrittenObjectStore& writable_store(const StoragePlan& st, World& world) {
  world.written.push_back(std::make_unique<services::WrittenObjectStore>(
      st.drive_capacity_bytes,
      world.union_index         ? static_cast<const services::ObjectIndex*>(world.union_index.get())
      : !st.stores_hold_dataset ? nullptr
                                : static_cast<const services::ObjectIndex*>(world.index.get()),
      services::WrittenObjectStoreOptions{.reserve_bytes = st.store_reserve_bytes}));
  return *world.written.back();
}

// The CRUSH map of the plan: loaded from its text file (one OSD per drive), or generated.
Result<crush::CrushMap> crush_map_of(const StoragePlan& st) {
  if (st.crush_map_path.empty()) return crush::generate_host_map(st.generated_map);
  auto loaded = crush::load_text_map(st.crush_map_path);
  if (!loaded.ok()) return loaded.status();
  if (loaded->max_devices() != st.drives) {
    return Status::invalid_argument(st.crush_map_path + ": the map has " +
                                    std::to_string(loaded->max_devices()) + " OSDs, the cluster " +
                                    std::to_string(st.drives) + " drives (one OSD per drive)");
  }
  return loaded;
}

// A mixed run's volume images beside the dataset, their layout, and the index over both.
Status build_volume_images(const BlockPlan& b, SimEnv& env, World& world) {
  auto images = services::Dataset::create(b.images, env.random());
  if (!images.ok()) return images.status();
  world.volume_images = std::make_unique<services::Dataset>(std::move(*images));
  auto vl = layout::RbdLayout::create(b.layout);
  if (!vl.ok()) return vl.status();
  world.volume_layout = std::make_unique<layout::RbdLayout>(*vl);
  world.volume_index = std::make_unique<services::DatasetObjectIndex>(
      *world.volume_images, services::DatasetObjectIndex::Naming::kRados, *vl);
  world.union_index = std::make_unique<services::UnionObjectIndex>(
      std::vector<const services::ObjectIndex*>{world.index.get(), world.volume_index.get()});
  return Status();
}

Status build_rados(const ClusterPlan& plan, SimEnv& env, World& world) {
  const StoragePlan& st = plan.storage;
  auto map = crush_map_of(st);
  if (!map.ok()) return map.status();
  world.crush_map = std::make_unique<crush::CrushMap>(std::move(*map));
  auto pool = placement::CrushPool::create(
      *world.crush_map, st.pool, placement::OsdStates::all_up_in(world.crush_map->max_devices()));
  if (!pool.ok()) return pool.status();
  world.pool = std::make_unique<placement::CrushPool>(std::move(*pool));
  placement::Placement* client_placement = world.pool.get();
  if (st.failure_map) {
    // The cluster map the monitor will change, and the placement the clients follow.
    cluster::Pool cp;
    cp.spec = st.pool;
    cp.redundancy = st.pool.erasure ? cluster::Redundancy::erasure_coded(st.ec.k, st.ec.m)
                                    : cluster::Redundancy::replicated(st.pool.size);
    auto osd_map = cluster::OsdMap::create(
        std::make_shared<const crush::CrushMap>(*world.crush_map), st.drives, {cp});
    if (!osd_map.ok()) return osd_map.status();
    world.osd_map = std::make_unique<cluster::OsdMap>(std::move(*osd_map));
    // A map client on every storage host and every client host (started with the services).
    std::vector<HostId> hosts;
    for (int d = 0; d < st.drives; ++d) hosts.push_back(env.host_of_drive(d));
    for (HostId h : plan.topology.client_sinks) hosts.push_back(h);
    for (HostId h : hosts) {
      if (world.host_maps.count(h) > 0) continue;
      World::HostMaps& m = world.host_maps[h];
      m.client = std::make_unique<cluster::MapClient>(
          env, h, *world.osd_map,
          cluster::MapClientOptions{.endpoint_name = "host." + std::to_string(h) + ".map"});
      auto placement = cluster::MapPlacement::create(*m.client, st.pool.id);
      if (!placement.ok()) return placement.status();
      m.placement = std::move(*placement);
    }
    client_placement = world.placement_on(env.host_of_drive(0));
  }
  auto rbd = layout::RbdLayout::create(st.layout);
  if (!rbd.ok()) return rbd.status();
  world.index = std::make_unique<services::DatasetObjectIndex>(
      *world.dataset, services::DatasetObjectIndex::Naming::kRados, *rbd);
  if (plan.block_volumes && !plan.block) {
    if (Status s = build_volume_images(*plan.block_volumes, env, world); !s.ok()) return s;
  }
  if (st.op_queue) {
    Random seeds = env.random().fork();
    services::OpQueueOptions qo = *st.op_queue;
    for (int d = 0; d < st.drives; ++d) {
      qo.name = services::osd_endpoint_name(d) + ".opq";
      world.op_queues.push_back(
          std::make_unique<services::OsdOpQueue>(env, env.host_of_drive(d), qo, seeds.next_u64()));
    }
  }
  if (plan.carry_data.on) {
    world.carried = std::make_unique<CarriedData>(plan.seed);
    if (Status s = mount_stores(env, st.drives, *world.carried); !s.ok()) return s;
  }
  for (int d = 0; d < st.drives; ++d) {
    services::OsdServiceOptions o = st.osds[d];
    if (!world.op_queues.empty()) o.op_queue = world.op_queues[d].get();
    if (st.failure_map) o.placement = world.placement_on(env.host_of_drive(d));
    if (world.carried) {
      world.object_services.push_back(std::make_unique<services::OsdService>(
          env, env.host_of_drive(d), env.device(d), *world.carried->stores()[d], o));
      continue;
    }
    world.object_services.push_back(std::make_unique<services::OsdService>(
        env, env.host_of_drive(d), env.device(d), writable_store(st, world), o));
  }
  // A training read's dataset, in place before the clock starts (a checkpoint's stores start
  // empty).
  if (world.carried && st.stores_hold_dataset) {
    if (Status s = write_dataset(env, *world.dataset, *rbd, *world.pool, st.ec, *world.carried);
        !s.ok()) {
      return s;
    }
  }
  // Writes: the objects in flight librados' objecter lets one writer process have
  // (objecter_inflight_op_bytes, 100 MiB; each checkpoint rank is a process of its own), at
  // least the read window.
  const int write_window = static_cast<int>(std::max<uint64_t>(
      st.inflight_objects,
      kObjecterInflightBytes / std::max<uint64_t>(1, rbd->spec().object_size_bytes)));
  world.backend = services::RadosBackend{
      *rbd, client_placement, st.inflight_objects, st.ec, nullptr, 1.0, write_window};
  return Status();
}

Status build_pfs(const ClusterPlan& plan, SimEnv& env, World& world) {
  const StoragePlan& st = plan.storage;
  auto allocator = layout::OstAllocator::create(st.osts, {});
  if (!allocator.ok()) return allocator.status();
  Random layout_rng = env.random().fork();
  auto layouts =
      services::allocate_pfs_layouts(*world.dataset, *allocator, st.pfs_layout, layout_rng);
  if (!layouts.ok()) return layouts.status();
  world.pfs_layouts = std::make_unique<services::PfsLayouts>(std::move(*layouts));
  world.index = std::make_unique<services::DatasetObjectIndex>(
      *world.dataset, services::DatasetObjectIndex::Naming::kPfs,
      layout::RbdLayout::default_layout(), world.pfs_layouts.get());
  for (int d = 0; d < st.drives; ++d) {
    world.object_services.push_back(std::make_unique<services::OsdService>(
        env, env.host_of_drive(d), env.device(d), writable_store(st, world), st.osds[d]));
  }
  for (size_t m = 0; m < st.mds.size(); ++m) {
    world.mds.push_back(std::make_unique<services::MetadataService>(
        env, plan.topology.mds[m],
        st.mds_know_dataset ? world.dataset->sizes_by_path()
                            : std::map<std::string, uint64_t, std::less<>>{},
        st.mds[m]));
  }
  world.backend =
      services::PfsBackend{world.pfs_layouts.get(), services::mds_endpoint_name(0),
                           st.request_bytes, st.inflight_requests, static_cast<int>(st.mds.size())};
  return Status();
}

void build_nfs(const ClusterPlan& plan, SimEnv& env, World& world) {
  const StoragePlan& st = plan.storage;
  world.index = std::make_unique<services::DatasetObjectIndex>(
      *world.dataset, services::DatasetObjectIndex::Naming::kNfs);
  for (int h = 0; h < st.heads; ++h) {
    // The head's files are written into one store its drive services share (a file lands
    // on whichever drive's worker takes each RPC; the simulated drives have no seek model).
    services::WrittenObjectStore& store = writable_store(st, world);
    world.head_mutexes.push_back(std::make_unique<services::EnvMutex>(env));
    world.head_unstable.push_back(std::make_unique<services::UnstableWrites>(env));
    for (int i = 0; i < st.drives_per_head; ++i) {
      const int drive = h * st.drives_per_head + i;
      services::OsdServiceOptions o = st.osds[drive];
      o.store_mutex = world.head_mutexes.back().get();
      o.unstable = world.head_unstable.back().get();
      world.object_services.push_back(std::make_unique<services::OsdService>(
          env, env.host_of_drive(drive), env.device(drive), store, o));
    }
  }
  world.backend = services::NfsBackend{st.heads, st.request_bytes, st.inflight_requests};
}

// Sets the links of `role` (a drive, by global drive number; a storage NIC, by storage host)
// to 1/factor of their own speed, both directions: what slow_drive and nic_degraded do.
std::function<void(int32_t, double)> link_slowdown(const models::Topology& topology,
                                                   const Platform& platform, LinkRole role) {
  std::map<int, size_t> links;  // drive number or storage host -> topology link
  for (size_t i = 0; i < topology.links.size(); ++i) {
    const auto& l = topology.links[i];
    if (l.role == role) links[topology.nodes[l.a].index] = i;
  }
  const Platform* plat = &platform;
  return [plat, links, base = std::map<size_t, std::pair<double, double>>()](
             int32_t which, double factor) mutable {
    auto it = links.find(which);
    if (it == links.end()) return;
    const size_t i = it->second;
    if (base.find(i) == base.end()) {
      base[i] = {plat->forward[i]->get_bandwidth(), plat->reverse[i]->get_bandwidth()};
    }
    plat->forward[i]->set_bandwidth(base[i].first / factor);
    plat->reverse[i]->set_bandwidth(base[i].second / factor);
  };
}

// What the checkpoint wrote is in the drives' stores: recovery moves it, and a copy that
// missed writes while its OSD was down is found by comparing stores.
void track_written_pgs(uint32_t pg_num, World& world, FailureDriverOptions& fo) {
  // (Names hash to PGs the same on every host and in every epoch.)
  const placement::Placement* placement = world.placement_on(world.host_maps.begin()->first);
  auto* stores = &world.written;
  fo.pg_contents = [placement, stores, pg_num](int32_t osd) {
    cluster::PgSizes c;
    c.objects.assign(pg_num, 0);
    c.bytes.assign(pg_num, 0);
    (*stores)[osd]->for_each_written([&](std::string_view name, const services::StoredObject& o) {
      const uint32_t pg = placement->group_of(name);
      ++c.objects[pg];
      c.bytes[pg] += o.client_bytes();
    });
    return c;
  };
  fo.copy_pg = [placement, stores](uint32_t pg, int32_t from, int32_t to) {
    std::vector<std::pair<std::string, services::StoredObject>> copied;
    (*stores)[from]->for_each_written([&](std::string_view name, const services::StoredObject& o) {
      if (placement->group_of(name) == pg) copied.emplace_back(std::string(name), o);
    });
    for (const auto& [name, o] : copied) {
      // (A full target drive keeps what it had: the recovery op charged the bytes anyway.)
      (void)(*stores)[to]->write(name, 0, o.size_bytes, o.client_bytes());
    }
  };
}

// A run that carries data: recovery peers the OSDs, which push the objects with their bytes; the
// planner's sizes and the staleness of a copy that comes back count the objects in the drives'
// stores (their onodes: names, client-visible sizes); a replaced drive is an empty store.
void carry_through_recovery(const ClusterPlan& plan, SimEnv& env, World& world,
                            FailureDriverOptions& fo) {
  const placement::Placement* placement = world.placement_on(world.host_maps.begin()->first);
  fo.carried = recovery::RecoveryManagerOptions::Carried{
      .ec = plan.storage.ec,
      .pg_of = [placement](const std::string& name) { return placement->group_of(name); }};
  auto* stores = &world.carried->stores();
  fo.copy_pg = nullptr;
  if (plan.checkpoint) {
    fo.pg_contents = [placement, stores, pg_num = plan.storage.pool.pg_num](int32_t osd) {
      cluster::PgSizes c;
      c.objects.assign(pg_num, 0);
      c.bytes.assign(pg_num, 0);
      store::DiskStore& store = *(*stores)[static_cast<size_t>(osd)];
      for (const std::string& name : store.list()) {
        Result<ObjectInfo> info = services::StoreBackend::stat_of(store, name);
        if (!info.ok()) continue;
        const uint32_t pg = placement->group_of(name);
        ++c.objects[pg];
        c.bytes[pg] += info->client_bytes();
      }
      return c;
    };
  }
  fo.replace_drive = [&env, stores](int32_t osd) {
    (void)empty_store(env, *(*stores)[static_cast<size_t>(osd)]);
  };
}

// The failure driver of a rados run with failures, started.
Status start_failures(const ClusterPlan& plan, SimEnv& env, const Platform& platform,
                      World& world) {
  const FailurePlan& f = *plan.failures;
  const models::Topology& topology = plan.topology;
  FailureDriverOptions fo;
  fo.events = f.events;
  fo.recovery = f.recovery;
  for (auto& q : world.op_queues) fo.op_queues.push_back(q.get());
  fo.op_cpu_s = f.op_cpu_s;
  fo.drives_per_host = f.drives_per_host;
  fo.monitor_host = env.host_of_drive(0);
  std::vector<services::OsdService*> osds;
  for (int d = 0; d < plan.storage.drives; ++d) {
    osds.push_back(world.object_services[d].get());
    fo.osd_hosts.push_back(env.host_of_drive(d));
  }
  const uint64_t object_bytes = f.object_bytes;
  uint64_t objects = 0;
  // What the pool stores: the dataset, or more (stored_tib), cut like the dataset in a slice.
  // A checkpoint's objects count as they are written (pg_contents below): stored_tib is then
  // what the pool held before.
  uint64_t stored = plan.checkpoint ? 0 : world.dataset->total_bytes();
  if (!plan.checkpoint) {
    for (const auto& file : world.dataset->files()) {
      objects += (file.size_bytes + object_bytes - 1) / object_bytes;
    }
  }
  if (f.extra_stored_bytes > static_cast<double>(stored)) {
    objects =
        static_cast<uint64_t>(std::ceil(f.extra_stored_bytes / static_cast<double>(object_bytes)));
    stored = static_cast<uint64_t>(f.extra_stored_bytes);
  }
  fo.sizes = cluster::PgSizes::spread(plan.storage.pool.pg_num, objects, stored);
  // slow_drive, nic_degraded: a drive's link (reads one way, writes the other), or a storage
  // host's NIC link, at 1/factor of its speed.
  fo.set_drive_slowdown = [&env, links = link_slowdown(topology, platform, LinkRole::kDrive)](
                              int32_t osd, double factor) mutable {
    links(osd, factor);
    env.set_drive_slowdown(osd, factor);
  };
  fo.set_nic_slowdown = link_slowdown(topology, platform, LinkRole::kStorageNic);
  fo.replace_drive = [stores = &world.written](int32_t osd) { (*stores)[osd]->clear(); };
  std::vector<int> link_index;  // [fo.links]: the topology link
  for (const FailurePlan::Link& l : f.links) {
    fo.links.push_back({l.name, l.cables, l.cut_off_hosts});
    link_index.push_back(l.topology_link);
  }
  fo.set_link_capacity = [plat = &platform, link_index,
                          base = std::map<size_t, std::pair<double, double>>()](
                             int32_t which, double fraction) mutable {
    if (which < 0 || which >= static_cast<int32_t>(link_index.size())) return;
    const size_t i = static_cast<size_t>(link_index[which]);
    if (base.find(i) == base.end()) {
      base[i] = {plat->forward[i]->get_bandwidth(), plat->reverse[i]->get_bandwidth()};
    }
    plat->forward[i]->set_bandwidth(base[i].first * fraction);
    plat->reverse[i]->set_bandwidth(base[i].second * fraction);
  };
  if (plan.checkpoint) track_written_pgs(plan.storage.pool.pg_num, world, fo);
  if (world.carried) carry_through_recovery(plan, env, world, fo);
  auto driver = FailureDriver::create(env, *world.osd_map, 1, std::move(osds), std::move(fo));
  if (!driver.ok()) return driver.status();
  world.failures = std::move(*driver);
  world.failures->start();
  return Status();
}

// Starts a mixed run's block I/O beside the main workload: a client, a volume and the driver's
// tasks (daemons: the I/O stops when the main workload ends) on each block node.
Status start_beside(const ClusterPlan& plan, SimEnv& env, World& world) {
  const BlockPlan& bp = *plan.block_volumes;
  const models::BlockWorkload& b = bp.spec.block;
  world.beside = &bp.spec;
  world.block_scale = bp.cluster_scale;
  std::vector<services::RadosBackend> backends;
  for (int c = 0; c < bp.nodes; ++c) {
    services::RadosBackend backend =
        std::get<services::RadosBackend>(world.backend_on(plan.topology.client_sinks[c]));
    backend.layout = *world.volume_layout;
    backends.push_back(std::move(backend));
  }
  std::vector<services::BlockVolume*> vols;
  std::vector<HostId> hosts;
  for (int c = 0; c < bp.nodes; ++c) {
    services::StorageClientOptions co;
    co.name = "blockclient" + std::to_string(c);
    co.cpu_s_per_op = plan.sim.storage.protocol.client_cpu_us_per_op * 1e-6;
    co.cpu_s_per_byte = plan.sim.storage.protocol.cpu_s_per_byte();
    const HostId host = plan.topology.client_sinks[c];
    world.block_clients.push_back(
        std::make_unique<services::StorageClient>(env, host, backends[c], co));
    services::BlockVolumeSpec vs;
    vs.size_bytes = b.volume_bytes;
    if (b.clone) {
      vs.image = "clones/node" + std::to_string(c);
      vs.parent = world.volume_images->files().front().path;
    } else {
      vs.image = world.volume_images->files()[c].path;
    }
    auto vol =
        services::BlockVolume::open(env, *world.block_clients.back(), *world.volume_layout, vs);
    if (!vol.ok()) return vol.status();
    world.volumes.push_back(std::move(*vol));
    vols.push_back(world.volumes.back().get());
    hosts.push_back(host);
  }
  world.block_driver =
      std::make_unique<BlockWorkloadDriver>(env, b, bp.boot, vols, hosts, env.random().next_u64());
  world.block_driver->start(TaskOptions{.daemon = true});
  return Status();
}

}  // namespace

Status build_world(const ClusterPlan& plan, SimEnv& env, const Platform& platform, World& world) {
  auto dataset = services::Dataset::create(plan.dataset, env.random());
  if (!dataset.ok()) return dataset.status();
  world.dataset = std::make_unique<services::Dataset>(std::move(*dataset));
  switch (plan.storage.design) {
    case StorageDesign::kRados:
      if (Status s = build_rados(plan, env, world); !s.ok()) return s;
      break;
    case StorageDesign::kPfs:
      if (Status s = build_pfs(plan, env, world); !s.ok()) return s;
      break;
    case StorageDesign::kNfs:
    case StorageDesign::kLocal:
      build_nfs(plan, env, world);
      break;
  }
  for (auto& [host, maps] : world.host_maps) maps.client->start();
  for (auto& svc : world.object_services) svc->start();
  for (auto& m : world.mds) m->start();
  if (world.osd_map) {
    if (Status s = start_failures(plan, env, platform, world); !s.ok()) return s;
  }
  if (plan.block_volumes && !plan.block) {
    if (Status s = start_beside(plan, env, world); !s.ok()) return s;
  }
  return Status();
}

services::StorageBackend World::backend_on(HostId host) const {
  services::StorageBackend b = backend;
  auto* rados = std::get_if<services::RadosBackend>(&b);
  cluster::MapPlacement* p = placement_on(host);
  if (rados == nullptr || p == nullptr) return b;
  rados->placement = p;
  rados->map_epoch = [p] { return p->epoch(); };
  return b;
}

cluster::MapPlacement* World::placement_on(HostId host) const {
  auto it = host_maps.find(host);
  return it == host_maps.end() ? nullptr : it->second.placement.get();
}

services::StorageBackend backend_of_client(const services::StorageBackend& backend,
                                           const models::Scenario& s, int c) {
  services::StorageBackend b = backend;
  if (auto* nf = std::get_if<services::NfsBackend>(&b);
      nf && s.storage.design == StorageDesign::kLocal) {
    nf->local_head = c;
  }
  return b;
}

void scrub_carried(SimEnv& env, World& world, HostId host) {
  if (!world.carried) return;
  while (world.failures && !world.failures->settled()) env.sleep_s(0.5);
  const auto& rados = std::get<services::RadosBackend>(world.backend);
  scrub(env, host, *rados.placement, rados.ec, *world.carried);
}

}  // namespace granary::sim
