// GpuConsumer: one simulated accelerator running a DLIO / MLPerf Storage style training data
// loader against a StorageClient, and the accelerator utilisation (AU) it achieves.
//
// Per epoch e (0-based):
//  - Shuffle: the dataset's file indices are permuted (Fisher-Yates, from the last position
//    down, j = rng.uniform(i + 1)) with Random(shuffle_seed + (e + 1) * 0x9e3779b97f4a7c15).
//    Every rank must get the same shuffle_seed (the world builder draws it once from
//    Env::random()), so all ranks see the same permutation; rank r of A accelerators takes
//    the slice [r * F, (r + 1) * F) of it, F = files / A (the remainder is not read, as DLIO).
//  - Steps: S = F * samples_per_file / batch_size (integer division; the partial last batch is
//    dropped, as DLIO's drop_last).
//  - read_threads reader tasks take the shard's files in order from a shared cursor, read each
//    whole through the client (then close it: one more metadata operation on a pfs), spend
//    decode_cpu_s_per_sample per sample of it (compute_s), and add its samples to the batch being
//    filled; every batch_size samples make a batch, pushed into a prefetch queue of
//    prefetch_batches batches (a reader blocks while the queue is full). A reader stops when the
//    cursor reaches the end of the shard.
//  - The compute loop (the task calling run()) takes S batches: it waits for a batch (that
//    wait is the step's I/O wait), then sleeps compute_s_per_step (the accelerator computing).
//    The epoch ends when the last step's compute ends and the readers have stopped; the next
//    epoch's readers start only then (DLIO restarts its loader per epoch).
//
// AU, exactly as DLIO computes it for MLPerf Storage v1.0 (argonne-lcf/dlio_benchmark at
// bc693c62, the submodule of mlcommons/storage v1.0: utils/statscounter.py
// compute_metrics_train, end_train, end_run; main.py _train). Per epoch, with c the compute
// time per step and S the epoch's steps:
//    total_compute_time = the compute of steps 2..S = (S - 1) c  (statscounter: compute[1:])
//    total_time         = epoch end - epoch start - the first step's processing time, where
//                         the first step's processing is its I/O wait plus its compute
//                         (statscounter: proc[0], timed from before the first batch is
//                         fetched until its compute ends)
//    epoch_au           = total_compute_time / total_time  (0 when S = 1)
// and AU = the mean of epoch_au over the epochs (end_run: train_au_mean_percentage; DLIO then
// averages over ranks, as the runner does over loaders). The epoch starts when its loader
// starts (start_block precedes get_loader), so the loader's start-up beyond the first step is
// counted. With storage fast enough AU is 1 exactly; when every file takes T > c to arrive, one
// reader and one sample per batch, step k's batch is ready at k T, the epoch ends at S T + c and
// AU = (S - 1) c / ((S - 1) T) = c / T.
//
// Errors: a failed file read stops the epoch (the compute loop sees it at its next batch,
// releases readers blocked on the queue, waits for them) and run() returns the read's Status.
//
// Thread-safety: the loader's tasks share state under an EnvMutex; metrics() and status() are
// for after the run. The client and dataset must outlive the consumer.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "engine/env.h"
#include "engine/services/client.h"
#include "engine/services/dataset.h"

namespace granary::services {

struct GpuConsumerOptions {
  std::string name = "gpu0";           // task names: "<name>", "<name>.reader<k>"
  int rank = 0;                        // 0 .. accelerators - 1
  int accelerators = 1;                // simulated accelerators sharing the dataset
  int read_threads = 1;                // >= 1 (MLPerf allows up to 32)
  int batch_size = 1;                  // samples per step, >= 1
  int prefetch_batches = 2;            // >= 1
  double compute_s_per_step = 0;       // >= 0
  int epochs = 1;                      // >= 1
  uint64_t shuffle_seed = 0;           // the same on every rank
  double decode_cpu_s_per_sample = 0;  // reader CPU per sample (0: decoding is free)
  // With it, each file is read with its bytes (StorageClient::read_file with data: a storage
  // that keeps bytes) and handed to it; an error fails the read as a storage error would.
  // Without it, a read moves sizes only.
  std::function<Status(const DatasetFile& file, std::span<const std::byte> data)> verify = nullptr;
};

struct ConsumerMetrics {
  double start_s = 0;            // run() began
  double end_s = 0;              // the last step's compute ended
  double total_run_time_s = 0;   // end_s - start_s
  double compute_time_s = 0;     // DLIO's total_compute_time: every step's but each epoch's first
  double excluded_s = 0;         // each epoch's first step: its I/O wait plus its compute
  double au = 0;                 // the mean of epoch_au; 0 when nothing was computed
  std::vector<double> epoch_au;  // per epoch, see the header comment
  int64_t steps = 0;             // completed, all epochs
  std::vector<double> step_io_wait_s;  // per completed step, epoch after epoch
  std::vector<double> step_end_s;      // when each completed step's compute ended
  uint64_t files_read = 0;
  uint64_t bytes_read = 0;
  std::vector<double> file_read_latency_s;  // per file read, in completion order
};

class GpuConsumer {
 public:
  GpuConsumer(Env& env, HostId host, StorageClient& client, const Dataset& dataset,
              GpuConsumerOptions options);
  GpuConsumer(const GpuConsumer&) = delete;
  GpuConsumer& operator=(const GpuConsumer&) = delete;

  // Spawns run() as a (non-daemon) task called options.name on the host; its result is
  // status() after the run.
  void start(TaskOptions task_options = {});
  // The whole benchmark on the calling task: every epoch, then the AU. invalid_argument for
  // bad options (or a shard smaller than one batch), else the first read error, else OK.
  Status run();

  int64_t files_per_rank() const;
  int64_t steps_per_epoch() const;
  // The dataset file indices this rank reads in epoch `epoch`, in order.
  std::vector<size_t> epoch_files(int epoch) const;

  const ConsumerMetrics& metrics() const { return metrics_; }
  const Status& status() const { return status_; }

 private:
  struct Epoch;
  Status check_options() const;
  void reader(const std::shared_ptr<Epoch>& epoch);
  Status run_epoch(int epoch);

  Env& env_;
  HostId host_;
  StorageClient& client_;
  const Dataset& dataset_;
  GpuConsumerOptions options_;
  ConsumerMetrics metrics_;
  Status status_;
};

}  // namespace granary::services
