//===- CpuExecutor.h - Runs launch plans on the machine's cores -------------------*- C++ -*-===//
//
// Groups are split into contiguous, equal ranges, one per worker; groups do not interact, and
// each group runs with a fixed tile order, so results are the same for every thread count.
//
//===----------------------------------------------------------------------------------------===//
#ifndef TESSERA_RUNTIME_CPUEXECUTOR_H
#define TESSERA_RUNTIME_CPUEXECUTOR_H

#include <memory>
#include <mutex>

#include "runtime/LaunchPlan.h"
#include "runtime/ThreadPool.h"

namespace tessera::rt {

class CpuExecutor {
 public:
  static CpuExecutor& instance();
  // Runs the plan to completion; a fault comes back as TESSERA_ERROR_KERNEL_FAULT.
  tessera_status run(const LaunchPlan& plan);
  void setThreads(unsigned n);  // 0 = default
  unsigned threads();

 private:
  static unsigned defaultThreads();
  std::mutex mutex_;  // one launch at a time; launches from several host threads serialize
  std::unique_ptr<ThreadPool> pool_;
};

}  // namespace tessera::rt

#endif
