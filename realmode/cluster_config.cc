// ClusterConfig (cluster_config.h): nlohmann/json, every field checked where it is read.
#include "realmode/cluster_config.h"

#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <fstream>
#include <nlohmann/json.hpp>
#include <random>
#include <set>
#include <sstream>

#include "engine/crush/edit.h"

namespace granary::realmode {

namespace {

// Whether a listening socket could bind 127.0.0.1:port now.
bool loopback_port_free(int port) {
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  if (fd < 0) return false;
  sockaddr_in sa{};
  sa.sin_family = AF_INET;
  sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  sa.sin_port = htons(static_cast<uint16_t>(port));
  const bool ok = bind(fd, reinterpret_cast<sockaddr*>(&sa), sizeof sa) == 0;
  close(fd);
  return ok;
}

// The lowest port the kernel gives to outgoing connections (net.ipv4.ip_local_port_range).
int ephemeral_low() {
  std::ifstream in("/proc/sys/net/ipv4/ip_local_port_range");
  int low = 32768;
  return (in >> low) ? low : 32768;
}

}  // namespace

int free_loopback_port() {
  // Below the ephemeral range: a port the kernel picked there could be taken by the source
  // port of an outgoing connection (another daemon's, to a peer) before its owner binds it.
  static std::atomic<int> next{-1};
  const int low = 10000, high = std::max(low + 1, ephemeral_low());
  if (next.load() < 0) {
    next = low + static_cast<int>(std::random_device{}() % static_cast<unsigned>(high - low));
  }
  for (int tries = 0; tries < high - low; ++tries) {
    int port = next.fetch_add(1);
    port = low + (port - low) % (high - low);
    if (loopback_port_free(port)) return port;
  }
  // Nothing free below the range: the kernel's choice.
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in sa{};
  sa.sin_family = AF_INET;
  sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  bind(fd, reinterpret_cast<sockaddr*>(&sa), sizeof sa);
  socklen_t len = sizeof sa;
  getsockname(fd, reinterpret_cast<sockaddr*>(&sa), &len);
  close(fd);
  return ntohs(sa.sin_port);
}

namespace {

using nlohmann::json;

// Reads one field with its JSON path, or records the first problem.
class Reader {
 public:
  explicit Reader(std::string file) : file_(std::move(file)) {}
  bool ok() const { return status_.ok(); }
  Status status() const { return status_; }
  void fail(const std::string& path, const std::string& what) {
    if (status_.ok()) status_ = Status::invalid_argument(file_ + ": " + path + ": " + what);
  }
  const json* field(const json& obj, const std::string& path, const char* key, bool required) {
    if (!obj.is_object()) {
      fail(path, std::string("expected an object, found ") + obj.type_name());
      return nullptr;
    }
    auto it = obj.find(key);
    if (it == obj.end()) {
      if (required) fail(path + "/" + key, "missing");
      return nullptr;
    }
    return &*it;
  }
  std::string string(const json& obj, const std::string& path, const char* key, bool required,
                     std::string fallback = "") {
    const json* v = field(obj, path, key, required);
    if (v == nullptr) return fallback;
    if (!v->is_string() || v->get<std::string>().empty()) {
      fail(path + "/" + key, std::string("expected a non-empty string, found ") + v->dump());
      return fallback;
    }
    return v->get<std::string>();
  }
  int64_t integer(const json& obj, const std::string& path, const char* key, bool required,
                  int64_t lo, int64_t hi, int64_t fallback) {
    const json* v = field(obj, path, key, required);
    if (v == nullptr) return fallback;
    if (!v->is_number_integer() || v->get<int64_t>() < lo || v->get<int64_t>() > hi) {
      fail(path + "/" + key, "expected an integer in " + std::to_string(lo) + ".." +
                                 std::to_string(hi) + ", found " + v->dump());
      return fallback;
    }
    return v->get<int64_t>();
  }
  double number(const json& obj, const std::string& path, const char* key, double lo, double hi,
                double fallback) {
    const json* v = field(obj, path, key, false);
    if (v == nullptr) return fallback;
    if (!v->is_number() || v->get<double>() < lo || v->get<double>() > hi) {
      std::ostringstream range;
      range << lo << ".." << hi;
      fail(path + "/" + key, "expected a number in " + range.str() + ", found " + v->dump());
      return fallback;
    }
    return v->get<double>();
  }

 private:
  std::string file_;
  Status status_;
};

void check_keys(Reader& r, const json& obj, const std::string& path,
                std::initializer_list<const char*> known) {
  if (!obj.is_object()) return;
  for (const auto& [k, v] : obj.items()) {
    bool found = false;
    for (const char* n : known) found = found || k == n;
    if (!found) r.fail(path + "/" + k, "unknown key");
  }
}

// "pool": replicas, or an erasure code whose k + m shards go to distinct hosts.
void parse_pool(Reader& r, const json& pool, ClusterConfig& c) {
  check_keys(r, pool, "/pool", {"replicas", "erasure", "pg_num"});
  // Copies and shards go to distinct servers (rules replicated_host, erasure_host): at most
  // one per server with OSDs.
  std::set<std::string> servers;
  for (const ClusterOsd& o : c.osds) servers.insert(c.hosts[static_cast<size_t>(o.host)].domain());
  const auto n = static_cast<int64_t>(servers.size());
  c.pg_num = static_cast<uint32_t>(r.integer(pool, "/pool", "pg_num", false, 1, 65536, 32));
  const json* erasure = r.field(pool, "/pool", "erasure", false);
  if (erasure == nullptr) {
    c.replicas = static_cast<int>(r.integer(pool, "/pool", "replicas", true, 1, n, 1));
    return;
  }
  if (pool.contains("replicas")) {
    r.fail("/pool", "expected \"replicas\" or \"erasure\", found both");
    return;
  }
  const std::string p = "/pool/erasure";
  check_keys(r, *erasure, p, {"k", "m", "stripe_unit_bytes"});
  c.replicas = 0;
  c.ec.k = static_cast<int>(r.integer(*erasure, p, "k", true, 1, 32, 1));
  c.ec.m = static_cast<int>(r.integer(*erasure, p, "m", true, 1, 32, 1));
  if (r.ok() && c.ec.k + c.ec.m > n) {
    r.fail(p, "k + m = " + std::to_string(c.ec.k + c.ec.m) +
                  " shards go to as many distinct servers, found " + std::to_string(n) +
                  " servers with OSDs");
  }
  c.ec.stripe_unit_bytes = static_cast<uint64_t>(
      r.integer(*erasure, p, "stripe_unit_bytes", false, 4096, 1 << 24, 4096));
  if (r.ok() && c.ec.stripe_unit_bytes % 4096 != 0) {
    r.fail(p + "/stripe_unit_bytes",
           "expected a multiple of 4096, found " + std::to_string(c.ec.stripe_unit_bytes));
  }
}

// "pfs": the OSDs serve as OSTs, a metadata server on its host keeps the namespace on its
// drive (its MDT) and allocates each new file's layout.
void parse_pfs(Reader& r, const json& pfs, ClusterConfig& c) {
  const std::string p = "/pfs";
  check_keys(r, pfs, p, {"mds", "stripe_size_bytes", "stripe_count"});
  ClusterPfs out;
  if (const json* m = r.field(pfs, p, "mds", true); m != nullptr) {
    check_keys(r, *m, p + "/mds", {"host", "drive", "drive_bytes"});
    out.mds_host = static_cast<int32_t>(
        r.integer(*m, p + "/mds", "host", true, 0, static_cast<int64_t>(c.hosts.size()) - 1, 0));
    out.mdt_drive = r.string(*m, p + "/mds", "drive", true);
    out.mdt_drive_bytes = static_cast<uint64_t>(
        r.integer(*m, p + "/mds", "drive_bytes", true, 16 << 20, int64_t{100} << 40, 16 << 20));
    if (r.ok() && out.mdt_drive_bytes % 4096 != 0) {
      r.fail(p + "/mds/drive_bytes",
             "expected a multiple of 4096, found " + std::to_string(out.mdt_drive_bytes));
    }
  }
  out.stripe_size_bytes = static_cast<uint64_t>(
      r.integer(pfs, p, "stripe_size_bytes", false, 65536, (int64_t{4} << 30) - 65536, 1 << 20));
  if (r.ok() && out.stripe_size_bytes % 65536 != 0) {
    r.fail(p + "/stripe_size_bytes", "expected a multiple of 65536 (Lustre's), found " +
                                         std::to_string(out.stripe_size_bytes));
  }
  const auto osts = static_cast<int64_t>(c.osds.size());
  out.stripe_count = static_cast<int32_t>(r.integer(pfs, p, "stripe_count", false, -1, osts, 1));
  if (r.ok() && out.stripe_count == 0) {
    r.fail(p + "/stripe_count",
           "expected 1.." + std::to_string(osts) + " or -1 (every OST), found 0");
  }
  c.pfs = out;
  c.replicas = 0;
}

}  // namespace

std::vector<std::string> ClusterConfig::addresses() const {
  std::vector<std::string> out;
  for (const ClusterHost& h : hosts) out.push_back(h.address);
  return out;
}

Result<cluster::OsdMap> ClusterConfig::osd_map() const {
  if (pfs) return Status::invalid_argument("a pfs cluster has no cluster map (no pool)");
  // One bucket per server, in the order of the servers' first hosts; its OSDs in id order.
  std::vector<crush::GeneratedHost> buckets;
  std::set<std::string> seen;
  for (const ClusterHost& first : hosts) {
    const std::string& server = first.domain();
    if (!seen.insert(server).second) continue;
    crush::GeneratedHost b{server, {}};
    for (const ClusterOsd& o : osds) {
      if (hosts[static_cast<size_t>(o.host)].domain() != server) continue;
      // Ceph's weight: the capacity in TiB, in 16.16 fixed point.
      const uint64_t w = ((o.drive_bytes >> 20) * crush::kWeightOne) >> 20;
      b.devices.emplace_back(o.id, static_cast<uint32_t>(std::max<uint64_t>(w, 1)));
    }
    if (!b.devices.empty()) buckets.push_back(std::move(b));
  }
  Result<crush::CrushMap> crush = crush::generate_map_of_hosts(buckets);
  if (!crush.ok()) return crush.status();
  cluster::Pool pool;
  pool.spec.id = kClusterPoolId;
  pool.spec.pg_num = pg_num;
  if (ec.k > 0) {
    pool.spec.size = ec.k + ec.m;
    pool.spec.crush_rule = 1;  // erasure_host
    pool.spec.erasure = true;
    pool.redundancy = cluster::Redundancy::erasure_coded(ec.k, ec.m);
  } else {
    pool.spec.size = replicas;
    pool.spec.crush_rule = 0;  // replicated_host
    pool.redundancy = cluster::Redundancy::replicated(replicas);
  }
  return cluster::OsdMap::create(std::make_shared<const crush::CrushMap>(std::move(crush).value()),
                                 static_cast<int32_t>(osds.size()), {pool});
}

Result<ClusterConfig> parse_cluster_config(const std::string& text, const std::string& path) {
  json j;
  try {
    j = json::parse(text);
  } catch (const json::parse_error& e) {
    return Status::invalid_argument(path + ": not JSON: " + e.what());
  }
  Reader r(path);
  ClusterConfig c;
  check_keys(r, j, "",
             {"version", "provider", "key_file", "hosts", "osds", "names", "pool", "pfs", "monitor",
              "timeouts"});
  if (r.integer(j, "", "version", true, 1, 1, 1) != 1) return r.status();
  c.provider = r.string(j, "", "provider", false, c.provider);
  c.key_file = r.string(j, "", "key_file", true);
  const json* hosts = r.field(j, "", "hosts", true);
  if (hosts != nullptr && (!hosts->is_array() || hosts->empty())) {
    r.fail("/hosts", "expected a non-empty array of hosts, found " + hosts->dump());
  }
  if (!r.ok()) return r.status();
  std::set<std::string> addresses;
  for (size_t i = 0; i < hosts->size(); ++i) {
    const std::string p = "/hosts/" + std::to_string(i);
    const json& h = (*hosts)[i];
    check_keys(r, h, p, {"name", "address", "cores", "server", "added_latency_s"});
    ClusterHost host;
    host.name = r.string(h, p, "name", true);
    host.address = r.string(h, p, "address", true);
    host.cores = static_cast<int>(r.integer(h, p, "cores", false, 1, 4096, 1));
    host.server = r.string(h, p, "server", false, "");
    host.added_latency_s = r.number(h, p, "added_latency_s", 0, 1, 0);
    if (r.ok() && !addresses.insert(host.address).second) {
      r.fail(p + "/address", "'" + host.address + "' is another host's address too");
    }
    c.hosts.push_back(host);
  }
  const auto n_hosts = static_cast<int64_t>(c.hosts.size());
  const json* osds = r.field(j, "", "osds", true);
  if (osds != nullptr && (!osds->is_array() || osds->empty())) {
    r.fail("/osds", "expected a non-empty array of OSDs, found " + osds->dump());
  }
  if (!r.ok()) return r.status();
  for (size_t i = 0; i < osds->size(); ++i) {
    const std::string p = "/osds/" + std::to_string(i);
    const json& o = (*osds)[i];
    check_keys(r, o, p, {"id", "host", "drive", "drive_bytes", "queue_depth"});
    ClusterOsd osd;
    osd.id = static_cast<int32_t>(
        r.integer(o, p, "id", true, static_cast<int64_t>(i), static_cast<int64_t>(i), 0));
    osd.host = static_cast<int32_t>(r.integer(o, p, "host", true, 0, n_hosts - 1, 0));
    osd.drive = r.string(o, p, "drive", true);
    osd.drive_bytes = static_cast<uint64_t>(
        r.integer(o, p, "drive_bytes", true, 16 << 20, int64_t{100} << 40, 16 << 20));
    osd.queue_depth = static_cast<unsigned>(r.integer(o, p, "queue_depth", false, 1, 4096, 32));
    if (r.ok() && osd.drive_bytes % 4096 != 0) {
      r.fail(p + "/drive_bytes",
             "expected a multiple of 4096, found " + std::to_string(osd.drive_bytes));
    }
    c.osds.push_back(osd);
  }
  if (const json* names = r.field(j, "", "names", false); names != nullptr) {
    if (!names->is_object()) {
      r.fail("/names", "expected an object of name: host, found " + names->dump());
    } else {
      for (const auto& [name, host] : names->items()) {
        if (!host.is_number_integer() || host.get<int64_t>() < 0 ||
            host.get<int64_t>() >= n_hosts) {
          r.fail("/names/" + name,
                 "expected a host in 0.." + std::to_string(n_hosts - 1) + ", found " + host.dump());
          break;
        }
        c.names[name] = static_cast<int32_t>(host.get<int64_t>());
      }
    }
  }
  if (const json* pfs = r.field(j, "", "pfs", false); pfs != nullptr) {
    if (j.contains("pool")) r.fail("", "expected \"pool\" (RADOS) or \"pfs\", found both");
    if (j.contains("monitor")) {
      r.fail("/monitor",
             "a pfs cluster has no monitor (its OSTs do not replicate: nothing to map)");
    }
    parse_pfs(r, *pfs, c);
  } else if (const json* pool = r.field(j, "", "pool", true); pool != nullptr) {
    parse_pool(r, *pool, c);
  }
  if (const json* m = r.field(j, "", "monitor", false); m != nullptr) {
    check_keys(r, *m, "/monitor",
               {"host", "heartbeat_interval_s", "heartbeat_grace_s", "down_out_interval_s"});
    ClusterMonitor mon;
    mon.host = static_cast<int32_t>(r.integer(*m, "/monitor", "host", true, 0, n_hosts - 1, 0));
    mon.heartbeat_interval_s =
        r.number(*m, "/monitor", "heartbeat_interval_s", 0.01, 3600, mon.heartbeat_interval_s);
    mon.heartbeat_grace_s =
        r.number(*m, "/monitor", "heartbeat_grace_s", 0.01, 3600, mon.heartbeat_grace_s);
    mon.down_out_interval_s =
        r.number(*m, "/monitor", "down_out_interval_s", 0, 1e6, mon.down_out_interval_s);
    c.monitor = mon;
  }
  if (const json* t = r.field(j, "", "timeouts", false); t != nullptr) {
    check_keys(r, *t, "/timeouts", {"op_s", "sub_op_s", "handshake_s"});
    c.op_timeout_s = r.number(*t, "/timeouts", "op_s", 0.01, 3600, c.op_timeout_s);
    c.sub_op_timeout_s = r.number(*t, "/timeouts", "sub_op_s", 0.01, 3600, c.sub_op_timeout_s);
    c.handshake_timeout_s =
        r.number(*t, "/timeouts", "handshake_s", 0.01, 3600, c.handshake_timeout_s);
  }
  if (!r.ok()) return r.status();
  return c;
}

Result<ClusterConfig> load_cluster_config(const std::string& path) {
  std::ifstream in(path);
  if (!in) return Status::not_found(path + ": cannot open the cluster configuration");
  std::stringstream ss;
  ss << in.rdbuf();
  if (in.bad()) return Status::io_error(path + ": read failed");
  return parse_cluster_config(ss.str(), path);
}

std::string cluster_config_json(const ClusterConfig& c) {
  json j;
  j["version"] = 1;
  j["provider"] = c.provider;
  j["key_file"] = c.key_file;
  j["hosts"] = json::array();
  for (const ClusterHost& h : c.hosts) {
    json host = {{"name", h.name}, {"address", h.address}, {"cores", h.cores}};
    if (!h.server.empty()) host["server"] = h.server;
    if (h.added_latency_s > 0) host["added_latency_s"] = h.added_latency_s;
    j["hosts"].push_back(std::move(host));
  }
  j["osds"] = json::array();
  for (const ClusterOsd& o : c.osds) {
    j["osds"].push_back({{"id", o.id},
                         {"host", o.host},
                         {"drive", o.drive},
                         {"drive_bytes", o.drive_bytes},
                         {"queue_depth", o.queue_depth}});
  }
  j["names"] = json::object();
  for (const auto& [n, h] : c.names) j["names"][n] = h;
  if (c.pfs) {
    j["pfs"] = {{"mds",
                 {{"host", c.pfs->mds_host},
                  {"drive", c.pfs->mdt_drive},
                  {"drive_bytes", c.pfs->mdt_drive_bytes}}},
                {"stripe_size_bytes", c.pfs->stripe_size_bytes},
                {"stripe_count", c.pfs->stripe_count}};
  } else if (c.ec.k > 0) {
    j["pool"] = {
        {"erasure", {{"k", c.ec.k}, {"m", c.ec.m}, {"stripe_unit_bytes", c.ec.stripe_unit_bytes}}},
        {"pg_num", c.pg_num}};
  } else {
    j["pool"] = {{"replicas", c.replicas}, {"pg_num", c.pg_num}};
  }
  if (c.monitor) {
    j["monitor"] = {{"host", c.monitor->host},
                    {"heartbeat_interval_s", c.monitor->heartbeat_interval_s},
                    {"heartbeat_grace_s", c.monitor->heartbeat_grace_s},
                    {"down_out_interval_s", c.monitor->down_out_interval_s}};
  }
  j["timeouts"] = {{"op_s", c.op_timeout_s},
                   {"sub_op_s", c.sub_op_timeout_s},
                   {"handshake_s", c.handshake_timeout_s}};
  return j.dump(2) + "\n";
}

}  // namespace granary::realmode
