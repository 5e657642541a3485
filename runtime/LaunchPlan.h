//===- LaunchPlan.h - A checked launch, ready for a backend ----------------------*- C++ -*-===//
//
// LaunchChecks turns (kernel, options, args) into a LaunchPlan or an error; backends only run
// plans. A plan owns copies of its arguments so a captured launch can be replayed later.
//
//===----------------------------------------------------------------------------------------===//
#ifndef TESSERA_RUNTIME_LAUNCHPLAN_H
#define TESSERA_RUNTIME_LAUNCHPLAN_H

#include <array>
#include <cstdint>
#include <vector>

#include "tessera/runtime.h"

namespace tessera::rt {

// Tiles per hardware group that the runtime picks for kernels without a group shape.
constexpr uint32_t kDefaultGroupTiles = 256;

struct LaunchPlan {
  const tessera_kernel_desc* kernel = nullptr;
  const tessera_module_desc* module = nullptr;
  // Per parameter: the argument block for tensors, the scalar bits for scalars.
  std::vector<tessera_kernel_tensor> tensors;
  std::vector<std::array<uint8_t, 8>> scalars;
  std::vector<int64_t> symbols;  // bound symbol values
  uint32_t grid[3] = {1, 1, 1};
  uint32_t group[3] = {1, 1, 1};
  uint64_t groups = 0;       // product of grid
  uint32_t groupTiles = 0;   // product of group
  int64_t launchTiles = 0;   // tiles that run; < groups*groupTiles only for ungrouped defaults
  uint64_t sharedBytes = 0;  // kernel's + dynamic
  // The grid is the kernel's default one (grid_blocks), so a GPU variant that walks the whole
  // output itself computes the same thing.
  bool defaultGrid = false;
  // Tile values kept in memory: bytes per group (the backend allocates groups * this for the
  // launch and points `workspace` at it; the CPU executor gives each worker one group's worth).
  uint64_t workspaceGroupBytes = 0;
  void* workspace = nullptr;
  // argPtrs[i] points at parameter i's storage, then launchTiles, workspace and
  // workspaceGroupBytes (the GPU entry's trailing parameters).
  std::vector<void*> argPtrs;

  LaunchPlan() = default;
  LaunchPlan(const LaunchPlan& o) { *this = o; }
  LaunchPlan& operator=(const LaunchPlan& o);
  void buildArgPtrs();
};

// The hardware launch of a plan on the GPU. It is the plan's grid and group, except for kernels
// without a group shape whose GPU entry runs V > 1 tiles per thread (TESSERA_KERNEL_GPU_TILES_*):
// those start ceil(launchTiles / V) threads, in 1-d groups of the plan's group size (fewer, in
// whole warps, when the launch is smaller) on a 1-d grid. Such kernels cannot observe groups, so
// only the number of threads matters; launch checks and the CPU executor keep the plan's own
// grid.
struct GpuLaunchDims {
  uint32_t grid[3] = {1, 1, 1};
  uint32_t block[3] = {1, 1, 1};
};
GpuLaunchDims gpuLaunchDims(const LaunchPlan& plan);

}  // namespace tessera::rt

#endif
