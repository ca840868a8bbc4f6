// EnvMutex: a mutex for data shared by the tasks of a service, made of an Env semaphore.
//
// In simulation (and in the MemoryEnv) tasks never run concurrently, so the lock is never
// contended unless a task blocks while holding it; in real mode tasks are threads and it is a
// real lock. It is BasicLockable, so std::lock_guard and std::unique_lock work with it.
// Services hold it only around plain data, never across a blocking Env call.
//
// Thread-safety: safe to use from any task of its Env.
#pragma once

#include <memory>

#include "engine/env.h"

namespace granary::services {

class EnvMutex {
 public:
  explicit EnvMutex(Env& env) : sem_(env.make_semaphore(1)) {}
  void lock() { sem_->acquire(); }
  void unlock() { sem_->release(); }

 private:
  std::unique_ptr<Semaphore> sem_;
};

}  // namespace granary::services
