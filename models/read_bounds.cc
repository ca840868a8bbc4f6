#include "models/read_bounds.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace granary::models {
namespace {

// "12,345" (thousands separated), or 3 significant digits below 100.
std::string num(double v) {
  char buf[64];
  if (std::abs(v) < 100) {
    std::snprintf(buf, sizeof buf, "%.3g", v);
    return buf;
  }
  std::snprintf(buf, sizeof buf, "%.0f", std::round(v));
  std::string digits = buf, out;
  const size_t lead = digits[0] == '-' ? 1 : 0;
  for (size_t i = 0; i < digits.size(); ++i) {
    if (i > lead && (digits.size() - i) % 3 == 0) out += ',';
    out += digits[i];
  }
  return out;
}

std::string mib(double bytes) {
  return num(bytes / (1 << 20)) + " MiB";
}

// The data requests one file read sends and the drive reads behind them (see the header).
struct RequestShape {
  double requests = 1, drive_ops = 1;
  std::string text;  // "35 object read(s) of 4 MiB"
};

RequestShape request_shape(const Scenario& s, double file, double drives) {
  RequestShape r;
  switch (s.storage.design) {
    case StorageDesign::kRados: {
      const double object = static_cast<double>(s.storage.rados.object_size_bytes);
      r.requests = std::ceil(file / object);
      const int k = s.storage.rados.ec_k;
      r.drive_ops = r.requests * (k > 0 ? k : 1);
      r.text = num(r.requests) + " object read(s) of " + mib(file / r.requests) +
               (k > 0 ? ", each " + std::to_string(k) + " shard reads" : "");
      break;
    }
    case StorageDesign::kPfs: {
      const PfsSpec& p = s.storage.pfs;
      const double osts = drives;  // one OST per drive
      const double stripe = static_cast<double>(p.stripe_size_bytes);
      double count = p.stripe_count < 0 ? std::min(osts, 2000.0) : p.stripe_count;
      count = std::max(1.0, std::min(count, std::ceil(file / stripe)));
      const double rpc = static_cast<double>(4u << 20);
      r.requests = count * std::ceil(file / count / rpc);
      r.drive_ops = r.requests;
      r.text = num(r.requests) + " RPC(s) of up to 4 MiB over " + num(count) + " OST(s)";
      break;
    }
    case StorageDesign::kNfs:
    case StorageDesign::kLocal: {
      // Whole-file reads in requests of one size: NFS RPCs of rsize, local block reads.
      const bool nfs = s.storage.design == StorageDesign::kNfs;
      const double size =
          static_cast<double>(nfs ? s.storage.nfs.rsize_bytes : s.storage.local.io_bytes);
      r.requests = std::ceil(file / size);
      r.drive_ops = r.requests;
      r.text = num(r.requests) + (nfs ? " RPC(s) of " : " block read(s) of ") + mib(size);
      break;
    }
  }
  return r;
}

// Requests in flight per file read: the design's window.
double window_of(const StorageSpec& st) {
  switch (st.design) {
    case StorageDesign::kRados:
      return st.rados.inflight_objects;
    case StorageDesign::kPfs:
      return st.pfs.inflight_rpcs;
    case StorageDesign::kNfs:
      return st.nfs.inflight_rpcs;
    case StorageDesign::kLocal:
      return st.local.inflight_ios;
  }
  return 1;
}

// The index of the most loaded entry, and the sum of the loads.
size_t busiest(const std::vector<double>& load) {
  return static_cast<size_t>(std::max_element(load.begin(), load.end()) - load.begin());
}
double total_of(const std::vector<double>& load) {
  double total = 0;
  for (double x : load) total += x;
  return total;
}

// "storage2.drive5" (design local: "client2.local.drive5"): a drive's topology name from its
// index.
std::string drive_name(size_t index, int per_server, const StorageNodesSpec& nodes) {
  const size_t per = static_cast<size_t>(std::max(1, per_server));
  const std::string server = std::to_string(index / per);
  return (nodes.in_client_nodes ? "client" + server + ".local" : "storage" + server) + ".drive" +
         std::to_string(index % per);
}

}  // namespace

ReadBounds read_bounds(const Scenario& s, const TrainingWorkload& w, const Topology& topology,
                       int client_cores, const PlacementLoad* placement,
                       const std::function<double(double)>& hdd_positioning_s) {
  ReadBounds b;
  const double eff = s.storage.protocol.efficiency;
  b.efficiency = eff;
  // The data path at line rate and at the protocol's efficiency (drives and the clients'
  // memory or PCIe paths carry no protocol overhead).
  b.line_rate_bytes_per_s = read_max_flow(topology).bytes_per_s;
  Topology at_eff = topology;
  for (auto& l : at_eff.links) {
    if (l.role != LinkRole::kDrive && l.role != LinkRole::kClientMemory) {
      l.forward_bytes_per_s *= eff;
      l.reverse_bytes_per_s *= eff;
    }
  }
  b.data_path = read_max_flow(at_eff);

  const double file = std::max(1.0, w.sample_bytes_mean * w.samples_per_file);
  b.file_bytes = file;
  const ClusterSpec& c = s.cluster;
  const double drives = static_cast<double>(c.storage.count) * c.storage.drives_per_node;

  // Requests per file and the drive reads behind them.
  const RequestShape rs = request_shape(s, file, drives);
  const double requests = rs.requests, drive_ops = rs.drive_ops;
  const std::string& shape = rs.text;
  b.requests_per_file = requests;
  b.drive_ops_per_file = drive_ops;

  auto add = [&](std::string resource, double files_per_s, std::string detail) {
    if (!(files_per_s > 0) || !std::isfinite(files_per_s)) return;
    b.ceilings.push_back({std::move(resource), files_per_s * file, files_per_s, std::move(detail)});
  };
  const std::string per_file = " per " + mib(file) + " file";

  // Data path: the max-flow's cut, line rate and efficiency apart.
  {
    const std::string cut = b.data_path.bottleneck.empty() ? "" : b.data_path.bottleneck.front();
    b.ceilings.push_back(
        {"data path", b.data_path.bytes_per_s, b.data_path.bytes_per_s / file, cut});
  }
  // Hard disks: one operation at a time, positioning then transfer, at the queue depth the
  // readers keep (docs/models.md, "Drives").
  const bool hdd = c.storage.drive.kind == DriveKind::kHdd && hdd_positioning_s;
  double drive_bytes_per_s = c.storage.drive.read_gbytes_per_s * 1e9;  // what one drive serves
  if (hdd) {
    const double window = window_of(s.storage);
    const double readers =
        static_cast<double>(c.clients.count) * c.clients.accelerators_per_node * w.read_threads;
    const double q = std::max(1.0, readers * std::min(window, requests) / drives);
    const double op = file / drive_ops;  // bytes per drive operation
    const double media = c.storage.drive.read_gbytes_per_s * 1e9;
    const double per_op_s = hdd_positioning_s(q) + op / media;
    drive_bytes_per_s = op / per_op_s;
    add("hard disks", drives / per_op_s / drive_ops,
        num(drives) + " disks x " + mib(op) + " / (" + num(hdd_positioning_s(q) * 1e3) +
            " ms positioning at queue depth " + num(q) + " + " + num(op / media * 1e3) +
            " ms transfer) = " + num(drives * op / per_op_s / 1e9) + " GB/s");
  }
  // Drives and storage servers as placed: the busiest one's capacity over its share.
  if (placement != nullptr && !placement->drive_bytes.empty()) {
    const auto& bytes = placement->drive_bytes;
    const double total = total_of(bytes);
    const size_t n = bytes.size();
    if (total > 0) {
      const size_t hot = busiest(bytes);
      const double share = bytes[hot] / total;
      const double bw = drive_bytes_per_s;
      const double repeat = placement->repeat;
      add("drives as placed", repeat * bw / share / file,
          "the busiest of " + num(static_cast<double>(n) * repeat) + " drives (" +
              drive_name(hot, placement->drives_per_server, c.storage) + ") serves " +
              num(100 * share / repeat) + "% of the reads (" + num(100 / (n * repeat)) +
              "% if even): " + num(bw / 1e9) + " GB/s / " + num(share / repeat) + " = " +
              num(repeat * bw / share / 1e9) + " GB/s");
      const int per = std::max(1, placement->drives_per_server);
      std::vector<double> server(std::max<size_t>(1, (n + per - 1) / per), 0.0);
      for (size_t d = 0; d < n; ++d) server[d / per] += bytes[d];
      const size_t hs = busiest(server);
      const double sshare = server[hs] / total;
      const NicSpec& nic = c.storage.nic;
      double nic_bw = nic.count * nic.profile.ports * nic.profile.gbps * 1e9 / 8 * eff;
      const bool internal =
          c.storage.server_gbytes_per_s > 0 && c.storage.server_gbytes_per_s * 1e9 < nic_bw;
      if (internal) nic_bw = c.storage.server_gbytes_per_s * 1e9;
      // (Design local: each node's drive path is in the data path, and every node's drives
      // carry its own reads.)
      if (nic_bw > 0 && !c.storage.in_client_nodes) {
        add("storage servers as placed", repeat * nic_bw / sshare / file,
            "the busiest of " + num(static_cast<double>(server.size()) * repeat) +
                " storage servers (storage" + std::to_string(hs) + ") sends " +
                num(100 * sshare / repeat) + "% of the reads (" +
                num(100 / (server.size() * repeat)) + "% if even): " +
                (internal ? std::string("its internal limit, ")
                          : std::string("its storage NICs at ") + num(eff) + " efficiency, ") +
                num(nic_bw / 1e9) + " GB/s / " + num(sshare / repeat) + " = " +
                num(repeat * nic_bw / sshare / 1e9) + " GB/s");
      }
      const auto& ops = placement->drive_ops;
      const double ops_total = total_of(ops);
      if (c.storage.drive.read_kiops > 0 && ops.size() == n && ops_total > 0) {
        const size_t ho = busiest(ops);
        const double oshare = ops[ho] / ops_total;
        const double iops = c.storage.drive.read_iops_limit();
        // Total drive operations per second when the busiest drive runs at its rated IOPS.
        const double total_ops = repeat * iops / oshare;
        add("drive IOPS as placed", total_ops / drive_ops,
            "the busiest of " + num(static_cast<double>(n) * repeat) + " drives (" +
                drive_name(ho, placement->drives_per_server, c.storage) + ") serves " +
                num(100 * oshare / repeat) + "% of the drive reads: " + num(iops) + " IOPS / " +
                num(oshare / repeat) + " / " + num(drive_ops) + " drive read(s)" + per_file);
      }
    }
  }
  // Drive IOPS.
  if (c.storage.drive.read_kiops > 0) {
    const DriveProfile& d = c.storage.drive;
    const double iops = d.read_iops_limit();
    // A queue_depth below Little's law's units caps a flash drive under its rated IOPS.
    const std::string capped = iops < d.read_kiops * 1e3
                                   ? " (queue_depth " + num(d.queue_depth) +
                                         " commands at once of the " + num(d.littles_law_units()) +
                                         " the rated " + num(d.read_kiops * 1e3) + " need)"
                                   : "";
    add("drive IOPS", drives * iops / drive_ops,
        num(drives) + " drives x " + num(iops) + " read IOPS" + capped + " / " + num(drive_ops) +
            " drive read(s)" + per_file + " (" + shape + ")");
  }
  // Metadata servers.
  const bool pfs = s.storage.design == StorageDesign::kPfs;
  if (pfs) {
    const PfsSpec& p = s.storage.pfs;
    add("metadata servers", p.mds_count * p.file_reads_per_s(),
        num(p.mds_count) + " MDS x 1 / (1/" + num(p.open_per_s()) + " opens/s + 1/" +
            num(p.close_per_s()) + " closes/s) = " + num(p.mds_count * p.file_reads_per_s()) +
            " file reads/s");
  }
  // Storage servers' CPU: per request and per byte moved (the protocol's cpu_us_per_mib on
  // each request's length; an erasure-coded primary's gather moves the file's bytes and the
  // k - 1 shards it fetches (k - 1)/k of them more).
  const double byte_s = s.storage.protocol.cpu_s_per_byte();
  const double mib_text = s.storage.protocol.zero_copy ? 0 : s.storage.protocol.cpu_us_per_mib;
  const double server_op_s = s.storage.protocol.server_cpu_us_per_op * 1e-6;
  {
    const int k = s.storage.design == StorageDesign::kRados ? s.storage.rados.ec_k : 0;
    const double ops = k > 0 ? requests * k : requests;
    const double server_bytes = k > 0 ? file * (2.0 * k - 1) / k : file;
    const double per_file_s = ops * server_op_s + server_bytes * byte_s;
    if (per_file_s > 0) {
      std::string d = num(c.storage.count) + " servers x " + num(c.storage.cpu_cores) +
                      " cores / (" + num(ops) + " request(s)" + per_file + " x " +
                      num(s.storage.protocol.server_cpu_us_per_op) + " us";
      if (byte_s > 0) d += " + " + mib(server_bytes) + " x " + num(mib_text) + " us/MiB";
      add("storage CPU", c.storage.count * c.storage.cpu_cores / per_file_s, d + ")");
    }
  }
  // Client nodes' CPU: requests, bytes moved, metadata operations and decoding.
  {
    const double op_s = s.storage.protocol.client_cpu_us_per_op * 1e-6;
    const double metadata_ops = pfs ? 2 : 0;
    const double per_file_s = (requests + metadata_ops) * op_s + file * byte_s +
                              w.samples_per_file * w.decode_cpu_s_per_sample;
    if (per_file_s > 0) {
      std::string d = num(c.clients.count) + " client nodes x " + std::to_string(client_cores) +
                      " cores / (" + num(requests + metadata_ops) + " operation(s) x " +
                      num(s.storage.protocol.client_cpu_us_per_op) + " us";
      if (byte_s > 0) d += " + " + mib(file) + " x " + num(mib_text) + " us/MiB";
      if (w.decode_cpu_s_per_sample > 0) {
        d += " + " + num(w.samples_per_file) + " sample(s) x " +
             num(w.decode_cpu_s_per_sample * 1e3) + " ms decode";
      }
      add("client CPU", c.clients.count * client_cores / per_file_s, d + ")" + per_file);
    }
  }
  std::stable_sort(b.ceilings.begin(), b.ceilings.end(), [](const Ceiling& x, const Ceiling& y) {
    return x.bytes_per_s < y.bytes_per_s;
  });

  const double accelerators =
      static_cast<double>(c.clients.count) * c.clients.accelerators_per_node;
  if (w.compute_s_per_step > 0) {
    b.demand_bytes_per_s = accelerators * w.batch_size * w.sample_bytes_mean / w.compute_s_per_step;
  }
  return b;
}

}  // namespace granary::models
