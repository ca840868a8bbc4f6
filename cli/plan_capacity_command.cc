// granary plan capacity: the cheapest design of a plan's space that meets its targets
// (planner/planner.h, docs/plan-format.md). Simulations run in forked children, --jobs at once;
// each finished simulation is appended to the run cache (--cache, by default next to --out), so
// that a cancelled plan continues where it stopped. Under mpirun the simulations are split over
// the ranks (cli/mpi_pool.h).
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>

#include "cli/commands.h"
#include "cli/db_options.h"
#include "cli/mpi_pool.h"
#include "planner/planner.h"
#include "sim/child_run.h"

namespace granary::cli {
namespace {

struct CapacityArgs {
  std::string path;
  std::string out;
  std::string cache;
  std::string choice_dir;
  std::string catalog_db;
  int jobs = 0;
  bool quiet = false;
  bool screen_only = false;
  std::string progress = "text";  // --progress: text or json
};

// The run cache as a file of JSON lines, {"key": ..., "entry": ...}; a line cut short by a
// cancelled run is ignored.
class FileCache final : public planner::ResultCache {
 public:
  static Result<std::unique_ptr<FileCache>> open(const std::string& path) {
    auto c = std::unique_ptr<FileCache>(new FileCache(path));
    std::ifstream in(path);
    std::string line;
    while (std::getline(in, line)) {
      auto j = nlohmann::json::parse(line, nullptr, /*allow_exceptions=*/false);
      if (j.is_object() && j.contains("key") && j["key"].is_string() && j.contains("entry")) {
        c->entries_[j["key"].get<std::string>()] = j["entry"];
      }
    }
    c->out_.open(path, std::ios::app);
    if (!c->out_) return Status::io_error(path + ": cannot open the run cache for writing");
    return c;
  }
  std::optional<nlohmann::json> find(const std::string& key) override {
    auto it = entries_.find(key);
    if (it == entries_.end()) return std::nullopt;
    ++hits_;
    return it->second;
  }
  Status store(const std::string& key, const nlohmann::json& entry) override {
    entries_[key] = entry;
    out_ << nlohmann::json{{"key", key}, {"entry", entry}}.dump() << "\n";
    out_.flush();
    if (!out_) return Status::io_error(path_ + ": cannot append to the run cache");
    return Status::ok_status();
  }
  size_t size() const { return entries_.size(); }
  int hits() const { return hits_; }

 private:
  explicit FileCache(std::string path) : path_(std::move(path)) {}
  std::string path_;
  std::map<std::string, nlohmann::json> entries_;
  std::ofstream out_;
  int hits_ = 0;
};

// "$1,234,567".
std::string dollars(double v) {
  std::string digits = std::to_string(static_cast<int64_t>(std::llround(v)));
  for (int i = static_cast<int>(digits.size()) - 3; i > 0; i -= 3) digits.insert(i, ",");
  return "$" + digits;
}

void print_summary(const nlohmann::json& r) {
  const auto& n = r["counts"];
  std::cout << "plan " << r["plan"]["name"].get<std::string>() << ": " << n["points"] << " points ("
            << n["invalid"] << " invalid, " << n["ruled_out"] << " ruled out by the bounds, "
            << n["candidates"] << " candidates, " << n["simulated"] << " simulated)\n";
  if (r["choice"].is_null()) {
    std::cout << "no design: " << r["no_choice"].get<std::string>() << "\n";
    return;
  }
  const auto& c = r["choice"];
  const auto& p = r["points"][c["point"].get<size_t>()];
  std::cout << "cheapest design that meets every target: point " << c["point"] << ", "
            << c["label"].get<std::string>() << "\n  cost " << dollars(c["cost_usd"].get<double>())
            << " (example prices), usable " << fmt(p["usable_tb"].get<double>(), 1) << " TB";
  if (!p["power_kw"].is_null()) std::cout << ", " << fmt(p["power_kw"].get<double>(), 1) << " kW";
  if (!p["rack_units"].is_null()) std::cout << ", " << p["rack_units"] << " U";
  std::cout << "\n  binding target: " << c["binding"].get<std::string>();
  if (!c["margin"].is_null())
    std::cout << " (margin " << fmt(c["margin"].get<double>() * 100, 1) << "%)";
  std::cout << "\n";
  for (const auto& t : p["targets"]) {
    std::cout << "    " << t["name"].get<std::string>() << ": "
              << (t["value"].is_null() ? std::string("-") : fmt(t["value"].get<double>(), 4))
              << " (" << t["basis"].get<std::string>() << ")\n";
  }
  std::cout << "front (cost vs margin):";
  for (const auto& id : r["front"]) {
    const auto& f = r["points"][id.get<size_t>()];
    std::cout << " " << id << " " << dollars(f["cost_usd"].get<double>()) << " "
              << (f["margin"].is_null() ? std::string("-")
                                        : fmt(f["margin"].get<double>() * 100, 1) + "%")
              << ";";
  }
  std::cout << "\n";
}

Status write_choice(const CapacityArgs& a, const planner::Plan& plan, const nlohmann::json& r) {
  if (a.choice_dir.empty() || r["choice"].is_null()) return Status::ok_status();
  std::error_code ec;
  std::filesystem::create_directories(a.choice_dir, ec);
  const auto& texts = r["choice"]["scenarios"];
  for (size_t i = 0; i < plan.cases.size(); ++i) {
    const std::string f = a.choice_dir + "/" + plan.cases[i].name + ".json";
    std::ofstream(f) << texts[i].get<std::string>();
    if (!std::ifstream(f)) return Status::io_error(f + ": cannot write the chosen scenario");
  }
  return Status::ok_status();
}

void run_capacity(const CapacityArgs& a, ExitCode& code) {
  // Under mpirun every rank reads the plan; rank 0 plans and the others simulate its batches.
  std::unique_ptr<MpiPool> mpi;
  if (launched_by_mpirun()) {
    auto pool = MpiPool::start();
    if (!pool.ok()) return fail_input(code, pool.status());
    mpi = std::move(pool).value();
  }
  const bool worker = mpi != nullptr && mpi->rank() > 0;
  auto catalog = load_catalog(a.catalog_db);
  auto plan =
      catalog.ok() ? planner::load_plan(a.path, *catalog) : Result<planner::Plan>(catalog.status());
  if (!plan.ok()) {
    if (worker) {
      code.value = 2;
      return;
    }
    return fail_input(code, plan.status());
  }
  // Under MPI the ranks are the parallelism: one simulation at a time per rank by default.
  const int jobs = a.jobs > 0 ? a.jobs
                   : mpi      ? 1
                              : static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  if (worker) return mpi->serve(*catalog, jobs);
  std::unique_ptr<FileCache> cache;
  const std::string cache_path = !a.cache.empty() ? a.cache
                                 : a.out.empty()  ? ""
                                                  : a.out + ".runs.jsonl";
  if (!cache_path.empty()) {
    auto c = FileCache::open(cache_path);
    if (!c.ok()) return fail_input(code, c.status());
    cache = std::move(c).value();
    if (cache->size() > 0 && !a.quiet) {
      std::cerr << "granary: " << cache_path << ": " << cache->size()
                << " simulations from an earlier run (resuming)\n";
    }
  }
  planner::PlannerOptions options;
  options.batch = jobs * (mpi ? mpi->size() : 1);
  options.cache = cache.get();
  options.screen_only = a.screen_only;
  if (a.progress == "json") {
    // One JSON object per line on stderr (for granary-gui): each step's message, and each
    // simulated point as it is recorded, with the share of the search's budget done.
    auto done = std::make_shared<int>(0);
    const double budget = plan->search.max_points + plan->search.front_points;
    options.progress = [done, budget](const std::string& line) {
      std::cerr
          << nlohmann::json{{"progress", std::min(0.99, *done / budget)}, {"message", line}}.dump()
          << std::endl;
    };
    options.on_point = [done, budget](const nlohmann::json& point) {
      ++*done;
      std::cerr
          << nlohmann::json{{"progress", std::min(0.99, *done / budget)}, {"point", point}}.dump()
          << std::endl;
    };
  } else if (!a.quiet) {
    options.progress = [](const std::string& line) { std::cerr << "granary: " << line << "\n"; };
  }
  auto result = planner::run_plan(
      *plan, *catalog,
      [&](const std::vector<planner::SimulationRun>& batch) {
        return mpi ? mpi->run(batch, jobs)
                   : sim::run_in_children(planner::scenarios_of(batch), jobs);
      },
      options);
  if (!result.ok()) return fail_input(code, result.status());
  if (!a.out.empty()) {
    std::ofstream out(a.out);
    out << result->dump(2) << "\n";
    if (!out) return fail_input(code, a.out + ": cannot write the plan result");
  }
  if (Status s = write_choice(a, *plan, *result); !s.ok()) return fail_input(code, s);
  print_summary(*result);
  if ((*result)["choice"].is_null() && !a.screen_only) code.value = 1;
}

}  // namespace

void add_capacity_subcommand(CLI::App& plan, ExitCode& code) {
  auto args = std::make_shared<CapacityArgs>();
  CLI::App* cmd =
      plan.add_subcommand("capacity",
                          "The cheapest storage design of a plan's space that meets its targets "
                          "(docs/plan-format.md); exit 1 when none does");
  cmd->add_option("plan", args->path, "plan file")->required()->check(CLI::ExistingFile);
  cmd->add_option("--out", args->out, "write the plan result (JSON) to this file");
  cmd->add_option("--cache", args->cache,
                  "the run cache that makes a plan resumable (default: OUT.runs.jsonl)");
  cmd->add_option("--jobs", args->jobs,
                  "simulations at once (default: the machine's cores; under mpirun, per rank: 1)")
      ->check(CLI::Range(1, 1024));
  cmd->add_option("--choice-dir", args->choice_dir,
                  "write the chosen design's scenarios (one per case) to this folder");
  cmd->add_flag("--quiet", args->quiet, "no progress lines on stderr");
  cmd->add_option("--progress", args->progress,
                  "text: a line per step on stderr; json: a JSON object per line, with each "
                  "simulated point (docs/plan-format.md)")
      ->check(CLI::IsMember({"text", "json"}));
  cmd->add_flag("--screen-only", args->screen_only,
                "screen every point and simulate none (exit 1: no choice without simulation)");
  add_catalog_db_option(*cmd, args->catalog_db);
  cmd->callback([args, &code] { run_capacity(*args, code); });
}

}  // namespace granary::cli
