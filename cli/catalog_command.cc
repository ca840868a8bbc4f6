// granary catalog (init, list, export): the hardware catalog in the Granary database (db/,
// docs/history-and-catalog.md). Every database error is one line naming the file (exit 2).
#include <cstdio>
#include <fstream>
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>

#include "cli/commands.h"
#include "cli/db_options.h"
#include "db/catalog_db.h"

namespace granary::cli {

namespace {

struct CatalogArgs {
  std::string db;
  std::string table;  // list: empty for every table
  std::string out;    // export: empty for stdout
};

nlohmann::json origin_json(const db::RowOrigin& o) {
  return {{"source", o.source}, {"builtin", o.builtin}, {"user_edited", o.user_edited}};
}

// Every row of every table, as `granary catalog export` writes it.
Result<nlohmann::json> catalog_json(db::HardwareCatalogDb& c) {
  nlohmann::json out = {{"database", c.path()},
                        {"note", "price_usd figures are examples, not quotes"}};
  auto drives = c.drives();
  if (!drives.ok()) return drives.status();
  for (const auto& r : *drives) {
    const models::DriveProfile& d = r.profile;
    nlohmann::json j = {{"name", d.name},
                        {"kind", models::drive_kind_name(d.kind)},
                        {"capacity_tb", d.capacity_tb},
                        {"read_gbytes_per_s", d.read_gbytes_per_s},
                        {"write_gbytes_per_s", d.write_gbytes_per_s},
                        {"read_kiops", d.read_kiops},
                        {"write_kiops", d.write_kiops},
                        {"read_latency_us", d.read_latency_us},
                        {"write_latency_us", d.write_latency_us},
                        {"queue_depth", d.queue_depth},
                        {"price_usd", d.price_usd}};
    j.update(origin_json(r.origin));
    out["drives"].push_back(j);
  }
  auto nics = c.nics();
  if (!nics.ok()) return nics.status();
  for (const auto& r : *nics) {
    nlohmann::json j = {{"name", r.profile.name},
                        {"gbps", r.profile.gbps},
                        {"ports", r.profile.ports},
                        {"latency_us", r.profile.latency_us},
                        {"price_usd", r.profile.price_usd}};
    j.update(origin_json(r.origin));
    out["nics"].push_back(j);
  }
  auto accelerators = c.accelerators();
  if (!accelerators.ok()) return accelerators.status();
  for (const auto& r : *accelerators) {
    nlohmann::json j = {{"name", r.profile.name},
                        {"compute_s_per_step", r.profile.compute_s_per_step},
                        {"price_usd", r.profile.price_usd}};
    j.update(origin_json(r.origin));
    out["accelerators"].push_back(j);
  }
  auto servers = c.servers();
  if (!servers.ok()) return servers.status();
  for (const auto& r : *servers) {
    const models::ServerProfile& p = r.profile;
    nlohmann::json j = {{"name", p.name},
                        {"cpu_cores", p.cpu_cores},
                        {"drive_bays", p.drive_bays},
                        {"nic_slots", p.nic_slots},
                        {"server_gbytes_per_s", p.server_gbytes_per_s},
                        {"rack_units", p.rack_units},
                        {"power_watts", p.power_watts},
                        {"price_usd", p.price_usd}};
    j.update(origin_json(r.origin));
    out["servers"].push_back(j);
  }
  auto switches = c.switches();
  if (!switches.ok()) return switches.status();
  for (const auto& r : *switches) {
    const models::SwitchProfile& p = r.profile;
    nlohmann::json j = {{"name", p.name},
                        {"ports", p.ports},
                        {"port_gbps", p.port_gbps},
                        {"max_split", p.max_split},
                        {"latency_us", p.latency_us},
                        {"rack_units", p.rack_units},
                        {"power_watts", p.power_watts},
                        {"price_usd", p.price_usd}};
    j.update(origin_json(r.origin));
    out["switches"].push_back(j);
  }
  return out;
}

Result<db::HardwareCatalogDb> open_catalog(const std::string& flag, bool create) {
  auto path = database_path(flag);
  if (!path.ok()) return path.status();
  return db::HardwareCatalogDb::open(*path, {.create_if_missing = create});
}

const char* origin_text(const db::RowOrigin& o) {
  return o.builtin ? (o.user_edited ? "built-in, edited" : "built-in") : "added";
}

void print_table(const nlohmann::json& all, db::CatalogTable t) {
  const char* name = db::catalog_table_name(t);
  std::printf("%s:\n", name);
  for (const nlohmann::json& r : all.value(name, nlohmann::json::array())) {
    std::string figures;
    for (const auto& [key, value] : r.items()) {
      if (key == "name" || key == "source" || key == "builtin" || key == "user_edited") continue;
      figures += (figures.empty() ? "" : ", ") + key + " " + value.dump();
    }
    db::RowOrigin o{r["source"], r["builtin"], r["user_edited"]};
    std::printf("  %-26s %s [%s]\n", r["name"].get<std::string>().c_str(), figures.c_str(),
                origin_text(o));
  }
}

void catalog_list(const CatalogArgs& a, ExitCode& code) {
  std::optional<db::CatalogTable> only;
  if (!a.table.empty()) {
    auto t = db::parse_catalog_table(a.table);
    if (!t.ok()) return fail_input(code, t.status());
    only = *t;
  }
  auto c = open_catalog(a.db, false);
  if (!c.ok()) return fail_input(code, c.status());
  auto all = catalog_json(*c);
  if (!all.ok()) return fail_input(code, all.status());
  for (db::CatalogTable t : db::kCatalogTables) {
    if (!only || *only == t) print_table(*all, t);
  }
  std::printf("(price_usd: example prices, not quotes)\n");
}

void catalog_export(const CatalogArgs& a, ExitCode& code) {
  auto c = open_catalog(a.db, false);
  if (!c.ok()) return fail_input(code, c.status());
  auto all = catalog_json(*c);
  if (!all.ok()) return fail_input(code, all.status());
  if (a.out.empty()) {
    std::cout << all->dump(2) << "\n";
    return;
  }
  std::ofstream f(a.out, std::ios::binary);
  f << all->dump(2) << "\n";
  if (!f) return fail_input(code, "--out: cannot write '" + a.out + "'");
}

void catalog_init(const CatalogArgs& a, ExitCode& code) {
  auto c = open_catalog(a.db, true);
  if (!c.ok()) return fail_input(code, c.status());
  auto d = c->drives();
  auto n = c->nics();
  auto x = c->accelerators();
  auto sv = c->servers();
  auto sw = c->switches();
  for (const Status& s : {d.status(), n.status(), x.status(), sv.status(), sw.status()}) {
    if (!s.ok()) return fail_input(code, s);
  }
  std::cout << c->path() << ": " << d->size() << " drives, " << n->size() << " NICs, " << x->size()
            << " accelerators, " << sv->size() << " servers, " << sw->size() << " switches\n";
}

}  // namespace

void register_catalog_commands(CLI::App& app, ExitCode& code) {
  auto args = std::make_shared<CatalogArgs>();
  CLI::App* catalog =
      app.add_subcommand("catalog", "The hardware catalog database (drives, NICs, accelerators)");
  catalog->require_subcommand(1);
  auto db_flag = [&](CLI::App* cmd) {
    cmd->add_option("--db", args->db,
                    "the database file (default: $GRANARY_DB, else "
                    "$XDG_DATA_HOME/granary/granary.sqlite, else "
                    "~/.local/share/granary/granary.sqlite)")
        ->type_name("PATH");
  };
  CLI::App* init = catalog->add_subcommand(
      "init", "Create the database (when missing) and seed it with the built-in catalog");
  db_flag(init);
  init->callback([args, &code] { catalog_init(*args, code); });
  CLI::App* list = catalog->add_subcommand("list", "The catalog's rows, one table or all");
  list->add_option("table", args->table,
                   "drives, nics, accelerators, servers or switches (default: all)");
  db_flag(list);
  list->callback([args, &code] { catalog_list(*args, code); });
  CLI::App* out = catalog->add_subcommand("export", "Every row of every table as JSON");
  out->add_option("--out", args->out, "write to this file (default: stdout)");
  db_flag(out);
  out->callback([args, &code] { catalog_export(*args, code); });
}

}  // namespace granary::cli
