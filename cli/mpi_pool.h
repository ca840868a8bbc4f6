// Simulations across machines with MPI (Open MPI): `mpirun -np N granary plan capacity ...`.
// Every rank reads the plan; rank 0 runs the planner, and each batch of simulations it hands
// out is split over the ranks (item i to rank i mod N), each rank simulating its share in
// forked children, --jobs at once (sim/child_run.h), and sending the reports back to rank 0. The
// planner's result does not depend on how its batches run (planner/planner.h), so it is
// byte-identical to a single-process run's.
//
// Messages are JSON text (MPI_CHAR): rank 0 sends {"runs": [{"text", "path"}]} (the scenario's
// text and the path its relative names resolve against) or {"stop": true}; a rank answers
// {"reports": [report or {"error": message}]}.
//
// MPI is used only when the process was started by mpirun (Open MPI's or PMIx's environment):
// a plain `granary plan capacity` never initialises it.
//
// Not thread-safe: one pool per process, from the main thread.
#pragma once

#include <memory>
#include <nlohmann/json.hpp>
#include <vector>

#include "engine/status.h"
#include "models/catalog.h"
#include "models/scenario.h"
#include "planner/planner.h"

namespace granary::cli {

// True when mpirun started this process.
bool launched_by_mpirun();

class MpiPool {
 public:
  // MPI_Init (once per process). IOError when MPI cannot start.
  static Result<std::unique_ptr<MpiPool>> start();
  // Stops the other ranks (rank 0) and calls MPI_Finalize.
  ~MpiPool();
  MpiPool(const MpiPool&) = delete;
  MpiPool& operator=(const MpiPool&) = delete;

  int rank() const { return rank_; }
  int size() const { return size_; }

  // Rank 0: the reports of `runs`, split over every rank (`jobs` children at once on each).
  std::vector<Result<nlohmann::json>> run(const std::vector<planner::SimulationRun>& runs,
                                          int jobs);
  // Other ranks: simulate what rank 0 sends, parsing scenarios against `catalog`, until it
  // says stop.
  void serve(const models::Catalog& catalog, int jobs);

 private:
  MpiPool(int rank, int size) : rank_(rank), size_(size) {}
  int rank_ = 0;
  int size_ = 1;
  bool stopped_ = false;
};

}  // namespace granary::cli
