//===- CpuGroup.h - Runs one group's tiles with exact group semantics -------------*- C++ -*-===//
//
// One GroupRunner per worker thread. A group gets zeroed shared memory; kernels that call the
// runtime's sync services (TESSERA_KERNEL_CPU_SYNC) run each tile as a fiber and are resumed
// round-robin in tile order 0..n-1, so tbarrier, partition syncs and warp shuffles/votes have
// exact CUDA semantics and a single fixed interleaving (identical bits on every run).
//
//===----------------------------------------------------------------------------------------===//
#ifndef TESSERA_RUNTIME_CPUGROUP_H
#define TESSERA_RUNTIME_CPUGROUP_H

#include <string>
#include <vector>

#include "runtime/Fiber.h"
#include "runtime/LaunchPlan.h"

namespace tessera::rt {

class GroupRunner {
 public:
  GroupRunner() = default;
  GroupRunner(const GroupRunner&) = delete;
  GroupRunner& operator=(const GroupRunner&) = delete;

  // Runs group `group` of `plan`. Returns false if the group faulted (message in `fault`).
  bool run(const LaunchPlan& plan, uint64_t group, std::string& fault);
  // Runs `count` tiles of an ungrouped, unsynchronised kernel starting at global tile `first`
  // in one call of its per-group entry.
  bool runTiles(const LaunchPlan& plan, uint64_t first, uint64_t count, std::string& fault);

  // Runtime services behind tessera_cpu_ops (called from compiled code on a tile's fiber).
  void partitionSync(uint32_t tile, uint32_t size);
  uint64_t shuffle(uint32_t tile, uint64_t value, int32_t mode, int32_t x, uint32_t width);
  uint32_t vote(uint32_t tile, int32_t mode, int32_t pred);
  void reportFault(const char* message);
  uint32_t tiles() const { return tiles_; }

 private:
  enum class State : uint8_t { Runnable, Blocked, Finished };
  // Arrival and finish counts for the aligned partitions of one size.
  struct Partitions {
    uint32_t size = 0;
    std::vector<uint32_t> arrived, finished;
  };

  void runFibers();
  static void fiberMain();
  Partitions& partitionsFor(uint32_t size);
  uint32_t live(const Partitions& ps, uint32_t index) const;
  void releaseIfComplete(Partitions& ps, uint32_t index);
  bool laneLive(uint32_t tile) const { return state_[tile] != State::Finished; }

  const LaunchPlan* plan_ = nullptr;
  uint32_t tiles_ = 0;
  std::vector<tessera_cpu_ctx> ctx_;
  std::vector<State> state_;
  std::vector<uint32_t> waitSize_;
  std::vector<uint64_t> exchange_;  // one warp-exchange slot per tile
  std::vector<Partitions> partitions_;
  std::vector<FiberStack> stacks_;
  std::vector<FiberContext> fibers_;
  FiberContext scheduler_;
  uint32_t current_ = 0;
  std::vector<unsigned char> sharedStorage_;
  std::vector<unsigned char> workspaceStorage_;
  bool faulted_ = false;
  bool fiberMode_ = false;  // sync services only work on fibers
  std::string faultMessage_;
};

}  // namespace tessera::rt

#endif
