//===- CpuExecutor.cpp - Distributing groups over worker threads -----------------------------===//
#include "runtime/CpuExecutor.h"

#include <atomic>
#include <cstdlib>
#include <string>
#include <thread>
#include <vector>

#include "runtime/CpuGroup.h"
#include "runtime/Status.h"

namespace tessera::rt {

CpuExecutor& CpuExecutor::instance() {
  static CpuExecutor* executor = new CpuExecutor;  // outlives static destructors of users
  return *executor;
}

unsigned CpuExecutor::defaultThreads() {
  if (const char* env = std::getenv("TESSERA_CPU_THREADS")) {
    long n = std::strtol(env, nullptr, 10);
    if (n > 0 && n <= 4096) return static_cast<unsigned>(n);
  }
  unsigned n = std::thread::hardware_concurrency();
  return n ? n : 1;
}

void CpuExecutor::setThreads(unsigned n) {
  std::lock_guard<std::mutex> lock(mutex_);
  pool_ = std::make_unique<ThreadPool>(n ? n : defaultThreads());
}

unsigned CpuExecutor::threads() {
  std::lock_guard<std::mutex> lock(mutex_);
  if (!pool_) pool_ = std::make_unique<ThreadPool>(defaultThreads());
  return pool_->size();
}

tessera_status CpuExecutor::run(const LaunchPlan& plan) {
  const tessera_kernel_desc& k = *plan.kernel;
  if (!k.cpu_entry)
    return fail(TESSERA_ERROR_NOT_SUPPORTED, "kernel '", k.name, "' has no CPU code (module '", plan.module->name,
                "' was built without it)");
  if (plan.groups == 0 || plan.launchTiles == 0) return TESSERA_SUCCESS;
  std::lock_guard<std::mutex> lock(mutex_);
  if (!pool_) pool_ = std::make_unique<ThreadPool>(defaultThreads());
  uint64_t groups = (static_cast<uint64_t>(plan.launchTiles) + plan.groupTiles - 1) / plan.groupTiles;
  unsigned workers = pool_->size();
  std::atomic<uint64_t> firstFault{UINT64_MAX};
  std::vector<std::string> faults(workers);
  std::vector<uint64_t> faultGroup(workers, UINT64_MAX);

  // Kernels without a group shape and without synchronisation cannot observe groups: each
  // worker runs its whole range of tiles in one call, which the compiled tile loop vectorises.
  bool wholeRange = (k.flags & TESSERA_KERNEL_CPU_PER_GROUP) && !(k.flags & TESSERA_KERNEL_GROUPED);
  pool_->run([&](unsigned w) {
    thread_local GroupRunner runner;
    uint64_t begin = groups * w / workers, end = groups * (w + 1) / workers;
    if (wholeRange) {
      if (begin < end && !runner.runTiles(plan, begin * plan.groupTiles, (end - begin) * plan.groupTiles, faults[w])) {
        faultGroup[w] = begin;
        uint64_t cur = firstFault.load();
        while (begin < cur && !firstFault.compare_exchange_weak(cur, begin)) {
        }
      }
      return;
    }
    for (uint64_t g = begin; g < end; ++g) {
      if (g > firstFault.load(std::memory_order_relaxed))
        return;  // a lower group already faulted: that one is reported
      if (!runner.run(plan, g, faults[w])) {
        faultGroup[w] = g;
        uint64_t cur = firstFault.load();
        while (g < cur && !firstFault.compare_exchange_weak(cur, g)) {
        }
        return;
      }
    }
  });
  if (firstFault.load() == UINT64_MAX) return TESSERA_SUCCESS;
  for (unsigned w = 0; w < workers; ++w)
    if (faultGroup[w] == firstFault.load())
      return fail(TESSERA_ERROR_KERNEL_FAULT, "kernel '", k.name, "': group ", faultGroup[w],
                  " faulted on the CPU: ", faults[w]);
  return TESSERA_SUCCESS;
}

}  // namespace tessera::rt

extern "C" {
tessera_status tessera_cpu_set_threads(uint32_t n) {
  if (n > 4096)
    return tessera::rt::fail(TESSERA_ERROR_INVALID_ARGUMENT, "tessera_cpu_set_threads: ", n,
                             " threads is more than 4096");
  tessera::rt::CpuExecutor::instance().setThreads(n);
  return TESSERA_SUCCESS;
}
uint32_t tessera_cpu_threads(void) { return tessera::rt::CpuExecutor::instance().threads(); }
}
