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
// AU, as MLPerf Storage defines it (total_compute_time / total_benchmark_running_time, the
// first step's I/O excluded):
//    total_compute_time   = sum over all steps of compute_s_per_step
//                         = epochs * S * compute_s_per_step
//    total_running_time   = end of the last step's compute - start of run()
//    excluded_io          = sum over epochs of the I/O wait of that epoch's first step, i.e.
//                           the time from the epoch's start until its first batch is ready
//                           (the loader's start-up, which each epoch pays again)
//    AU = total_compute_time / (total_running_time - excluded_io).
// Per epoch, epoch_au = S * compute_s_per_step / (epoch end - epoch start - first step wait),
// the figure DLIO reports per epoch. With storage fast enough AU is 1 exactly; when every file
// takes T > compute_s_per_step to arrive, one reader and one sample per batch, AU =
// S c / ((S - 1) T + c).
//
// Errors: a failed file read stops the epoch (the compute loop sees it at its next batch,
// releases readers blocked on the queue, waits for them) and run() returns the read's Status.
//
// Thread-safety: the loader's tasks share state under an EnvMutex; metrics() and status() are
// for after the run. The client and dataset must outlive the consumer.
#pragma once

#include <cstdint>
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
};

struct ConsumerMetrics {
  double start_s = 0;           // run() began
  double end_s = 0;             // the last step's compute ended
  double total_run_time_s = 0;  // end_s - start_s
  double compute_time_s = 0;    // total_compute_time
  double excluded_io_s = 0;     // the first step's I/O wait of every epoch
  double au = 0;                // see the header comment; 0 when nothing was computed
  std::vector<double> epoch_au;
  int64_t steps = 0;                   // completed, all epochs
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
