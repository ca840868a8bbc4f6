// PhaseBarrier: tasks meeting between the phases of a run (a checkpoint's ranks: every rank
// writes checkpoint c before any writes c + 1). The last of `parties` to arrive lets all go.
// One barrier per phase: it is not reusable.
//
// Thread-safety: safe from any task of its Env (an EnvMutex and an Env semaphore).
#pragma once

#include <memory>
#include <mutex>

#include "engine/env.h"
#include "engine/services/env_mutex.h"

namespace granary::services {

class PhaseBarrier {
 public:
  PhaseBarrier(Env& env, int parties) : parties_(parties), mu_(env), gate_(env.make_semaphore(0)) {}
  void arrive_and_wait() {
    bool last = false;
    {
      std::lock_guard<EnvMutex> lock(mu_);
      last = ++arrived_ == parties_;
    }
    if (last) {
      for (int i = 1; i < parties_; ++i) gate_->release();
    } else {
      gate_->acquire();
    }
  }

 private:
  int parties_;
  int arrived_ = 0;
  EnvMutex mu_;
  std::unique_ptr<Semaphore> gate_;
};

}  // namespace granary::services
