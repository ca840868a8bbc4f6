// Simulations split over MPI ranks (mpi_pool.h).
#include "cli/mpi_pool.h"

#include <mpi.h>

#include <cstdlib>
#include <string>

#include "models/scenario_json.h"
#include "sim/child_run.h"

namespace granary::cli {
namespace {

using nlohmann::json;

constexpr int kTag = 14;

void send_text(const std::string& text, int to) {
  MPI_Send(text.data(), static_cast<int>(text.size()), MPI_CHAR, to, kTag, MPI_COMM_WORLD);
}

std::string receive_text(int from) {
  MPI_Status status;
  MPI_Probe(from, kTag, MPI_COMM_WORLD, &status);
  int count = 0;
  MPI_Get_count(&status, MPI_CHAR, &count);
  std::string text(static_cast<size_t>(count), '\0');
  MPI_Recv(text.data(), count, MPI_CHAR, from, kTag, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  return text;
}

json report_json(const Result<json>& r) {
  return r.ok() ? *r : json{{"error", r.status().message()}};
}

}  // namespace

bool launched_by_mpirun() {
  return std::getenv("OMPI_COMM_WORLD_SIZE") != nullptr || std::getenv("PMIX_RANK") != nullptr;
}

Result<std::unique_ptr<MpiPool>> MpiPool::start() {
  int argc = 0;
  char** argv = nullptr;
  if (MPI_Init(&argc, &argv) != MPI_SUCCESS) return Status::io_error("MPI_Init failed");
  int rank = 0, size = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  return std::unique_ptr<MpiPool>(new MpiPool(rank, size));
}

MpiPool::~MpiPool() {
  if (rank_ == 0 && !stopped_) {
    for (int r = 1; r < size_; ++r) send_text(json{{"stop", true}}.dump(), r);
  }
  MPI_Finalize();
}

std::vector<Result<json>> MpiPool::run(const std::vector<planner::SimulationRun>& runs, int jobs) {
  // Item i goes to rank i mod size; rank 0 keeps its own share.
  std::vector<std::vector<size_t>> share(static_cast<size_t>(size_));
  for (size_t i = 0; i < runs.size(); ++i) share[i % static_cast<size_t>(size_)].push_back(i);
  for (int r = 1; r < size_; ++r) {
    json msg = {{"runs", json::array()}};
    for (size_t i : share[static_cast<size_t>(r)]) {
      msg["runs"].push_back({{"text", *runs[i].text}, {"path", runs[i].scenario->source_path}});
    }
    send_text(msg.dump(), r);
  }
  std::vector<const models::Scenario*> own;
  for (size_t i : share[0]) own.push_back(runs[i].scenario);
  std::vector<Result<json>> out(runs.size(), Status::io_error("not run"));
  std::vector<Result<json>> mine = sim::run_in_children(own, jobs);
  for (size_t k = 0; k < share[0].size(); ++k) out[share[0][k]] = std::move(mine[k]);
  for (int r = 1; r < size_; ++r) {
    const json answer = json::parse(receive_text(r), nullptr, /*allow_exceptions=*/false);
    const auto& mine_r = share[static_cast<size_t>(r)];
    for (size_t k = 0; k < mine_r.size(); ++k) {
      if (!answer.is_object() || !answer.contains("reports") || k >= answer["reports"].size()) {
        out[mine_r[k]] = Status::io_error("MPI rank " + std::to_string(r) + " sent no report");
        continue;
      }
      const json& rep = answer["reports"][k];
      out[mine_r[k]] = rep.contains("error") ? Result<json>(Status::invalid_argument(rep["error"]))
                                             : Result<json>(rep);
    }
  }
  return out;
}

void MpiPool::serve(const models::Catalog& catalog, int jobs) {
  for (;;) {
    const json msg = json::parse(receive_text(0), nullptr, /*allow_exceptions=*/false);
    if (!msg.is_object() || msg.contains("stop") || !msg.contains("runs")) return;
    std::vector<models::Scenario> scenarios;
    std::vector<Result<json>> parsed;
    for (const json& run : msg["runs"]) {
      auto s = models::parse_scenario(run["text"].get<std::string>(),
                                      run["path"].get<std::string>(), catalog);
      parsed.push_back(s.ok() ? Result<json>(json()) : Result<json>(s.status()));
      if (s.ok()) scenarios.push_back(std::move(s).value());
    }
    std::vector<const models::Scenario*> runs;
    for (const auto& s : scenarios) runs.push_back(&s);
    std::vector<Result<json>> reports = sim::run_in_children(runs, jobs);
    json answer = {{"reports", json::array()}};
    size_t next = 0;
    for (const auto& p : parsed) {
      answer["reports"].push_back(p.ok() ? report_json(reports[next++]) : report_json(p));
    }
    send_text(answer.dump(), 0);
  }
}

}  // namespace granary::cli
