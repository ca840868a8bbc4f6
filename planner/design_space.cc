// Design points as edits of the cases' scenario files (design_space.h).
#include "planner/design_space.h"

#include <algorithm>
#include <nlohmann/json.hpp>
#include <set>

#include "models/json_diagnostics.h"
#include "models/scenario_json.h"

namespace granary::planner {
namespace {

using nlohmann::json;

std::string design_name(models::StorageDesign d) {
  return std::string(models::storage_design_name(d));
}

// Keeps only `keep` of object `j`.
void keep_only(json& j, std::initializer_list<const char*> keep) {
  if (!j.is_object()) return;
  json out = json::object();
  for (const char* k : keep) {
    if (j.contains(k)) out[k] = j[k];
  }
  j = std::move(out);
}

// The point's edits on one scenario's JSON (design_space.h); an error message when the choice
// cannot apply (a protocol that does not carry the design).
std::string apply(const DesignChoice& c, const models::Scenario& base, json& j) {
  json& storage = j["cluster"]["storage"];
  if (c.storage_servers) storage["count"] = *c.storage_servers;
  if (c.drive) {
    keep_only(storage["drive"], {"count"});
    storage["drive"]["profile"] = *c.drive;
  }
  if (c.drives_per_server) storage["drive"]["count"] = *c.drives_per_server;
  if (c.nic) {
    keep_only(storage["nic"], {"count"});
    storage["nic"]["profile"] = *c.nic;
  }
  if (c.nics_per_server) storage["nic"]["count"] = *c.nics_per_server;
  if (c.server) {
    storage["profile"] = *c.server;
    storage.erase("cpu_cores");
    storage.erase("server_gbytes_per_s");
  }
  if (c.gds) j["cluster"]["clients"]["gpudirect_storage"] = *c.gds;
  const models::StorageDesign design = c.design.value_or(base.storage.design);
  if (c.design) {
    j["storage"]["design"] = design_name(design);
    // The sections of the other designs go (a scenario refuses them).
    for (const char* other : {"rados", "pfs", "nfs", "local"}) {
      if (other != design_name(design)) j["storage"].erase(other);
    }
  }
  const auto& fits = models::protocols_for_design(design);
  if (c.protocol) {
    if (std::find(fits.begin(), fits.end(), *c.protocol) == fits.end()) {
      return "protocol " + *c.protocol + " does not carry design " + design_name(design) +
             " (it takes " + models::json_diag::list(fits) + ")";
    }
    j["storage"]["protocol"] = *c.protocol;
  } else if (std::find(fits.begin(), fits.end(), base.storage.protocol.name) == fits.end()) {
    j["storage"]["protocol"] = fits.front();
  }
  if (c.redundancy && design == models::StorageDesign::kRados) {
    json& rados = j["storage"]["rados"];
    if (!rados.is_object()) rados = json::object();
    rados.erase("replicas");
    rados.erase("erasure");
    if (c.redundancy->k > 0) {
      rados["erasure"] = {{"k", c.redundancy->k}, {"m", c.redundancy->m}};
    } else {
      rados["replicas"] = c.redundancy->replicas;
    }
  }
  return {};
}

std::string label_of(const models::Scenario& s) {
  const auto& st = s.cluster.storage;
  std::string out = std::to_string(st.count) + " x " +
                    (st.server.name.empty() ? std::string("server") : st.server.name) + ", " +
                    std::to_string(st.drives_per_node) + " x " + st.drive.name + ", " +
                    std::to_string(st.nic.count) + " x " + st.nic.profile.name + ", " +
                    design_name(s.storage.design);
  if (s.storage.design == models::StorageDesign::kRados) {
    const auto& r = s.storage.rados;
    out += " " + (r.ec_k > 0 ? Redundancy{0, r.ec_k, r.ec_m} : Redundancy{r.replicas, 0, 0}).name();
  }
  out += " over " + s.storage.protocol.name;
  if (s.cluster.clients.gpudirect_storage) out += ", GDS";
  return out;
}

// The value of axis `values` at position `i`, or nothing for an empty axis.
// The axes' values of a point, for an invalid one: "storage_servers=4, drive=x".
std::string choice_label(const DesignChoice& c) {
  std::vector<std::string> parts;
  auto add = [&](const char* axis, const std::optional<std::string>& v) {
    if (v) parts.push_back(std::string(axis) + "=" + *v);
  };
  auto num = [](const std::optional<int>& v) {
    return v ? std::optional<std::string>(std::to_string(*v)) : std::nullopt;
  };
  add("storage_servers", num(c.storage_servers));
  add("drives_per_server", num(c.drives_per_server));
  add("drive", c.drive);
  add("nic", c.nic);
  add("nics_per_server", num(c.nics_per_server));
  add("server", c.server);
  if (c.redundancy) add("redundancy", c.redundancy->name());
  if (c.design) add("design", design_name(*c.design));
  add("protocol", c.protocol);
  if (c.gds) add("gds", std::string(*c.gds ? "true" : "false"));
  return parts.empty() ? std::string("the base design") : models::json_diag::list(parts);
}

template <class T>
std::optional<T> pick(const std::vector<T>& values, int64_t i) {
  if (values.empty()) return std::nullopt;
  return values[static_cast<size_t>(i)];
}

}  // namespace

int64_t space_size(const DesignSpace& s) {
  int64_t n = 1;
  for (size_t k : {s.storage_servers.size(), s.drives_per_server.size(), s.drives.size(),
                   s.nics.size(), s.nics_per_server.size(), s.servers.size(), s.redundancy.size(),
                   s.designs.size(), s.protocols.size(), s.gds.size()}) {
    n *= static_cast<int64_t>(std::max<size_t>(k, 1));
  }
  return n;
}

std::vector<DesignPoint> enumerate_points(const Plan& plan, const models::Catalog& catalog) {
  const DesignSpace& s = plan.space;
  std::vector<json> bases;
  for (const PlanCase& c : plan.cases) bases.push_back(json::parse(c.scenario_text));
  // Mixed-radix digits, the last axis varying fastest.
  const std::vector<size_t> sizes = {s.storage_servers.size(), s.drives_per_server.size(),
                                     s.drives.size(),          s.nics.size(),
                                     s.nics_per_server.size(), s.servers.size(),
                                     s.redundancy.size(),      s.designs.size(),
                                     s.protocols.size(),       s.gds.size()};
  const int64_t total = space_size(s);
  std::vector<DesignPoint> points;
  std::set<std::vector<std::string>> seen;
  for (int64_t n = 0; n < total; ++n) {
    std::vector<int64_t> digit(sizes.size());
    int64_t rest = n;
    for (size_t a = sizes.size(); a-- > 0;) {
      const auto radix = static_cast<int64_t>(std::max<size_t>(sizes[a], 1));
      digit[a] = rest % radix;
      rest /= radix;
    }
    DesignPoint p;
    DesignChoice& c = p.choice;
    c.storage_servers = pick(s.storage_servers, digit[0]);
    c.drives_per_server = pick(s.drives_per_server, digit[1]);
    c.drive = pick(s.drives, digit[2]);
    c.nic = pick(s.nics, digit[3]);
    c.nics_per_server = pick(s.nics_per_server, digit[4]);
    c.server = pick(s.servers, digit[5]);
    c.redundancy = pick(s.redundancy, digit[6]);
    c.design = pick(s.designs, digit[7]);
    c.protocol = pick(s.protocols, digit[8]);
    if (!s.gds.empty()) c.gds = static_cast<bool>(s.gds[static_cast<size_t>(digit[9])]);
    for (size_t i = 0; i < plan.cases.size() && p.invalid.empty(); ++i) {
      json j = bases[i];
      p.invalid = apply(c, plan.cases[i].scenario, j);
      if (!p.invalid.empty()) break;
      p.scenario_texts.push_back(j.dump(2) + "\n");
    }
    if (!p.invalid.empty()) {
      p.scenario_texts.clear();
    } else if (!seen.insert(p.scenario_texts).second) {
      continue;  // the same scenarios as an earlier point
    }
    for (size_t i = 0; i < p.scenario_texts.size(); ++i) {
      auto parsed =
          models::parse_scenario(p.scenario_texts[i], plan.cases[i].scenario_path, catalog);
      if (!parsed.ok()) {
        p.invalid = parsed.status().message();
        break;
      }
      p.scenarios.push_back(std::move(parsed).value());
    }
    if (!p.invalid.empty()) {
      p.scenarios.clear();
      p.scenario_texts.clear();
      p.label = choice_label(c);
    } else {
      p.label = label_of(p.scenarios.front());
    }
    p.index = static_cast<int>(points.size());
    points.push_back(std::move(p));
  }
  return points;
}

}  // namespace granary::planner
