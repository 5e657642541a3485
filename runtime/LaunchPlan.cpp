//===- LaunchPlan.cpp - Self-contained copies of checked launches ---------------------------===//
#include "runtime/LaunchPlan.h"

namespace tessera::rt {

LaunchPlan& LaunchPlan::operator=(const LaunchPlan& o) {
  kernel = o.kernel;
  module = o.module;
  tensors = o.tensors;
  scalars = o.scalars;
  symbols = o.symbols;
  for (int i = 0; i < 3; ++i) {
    grid[i] = o.grid[i];
    group[i] = o.group[i];
  }
  groups = o.groups;
  groupTiles = o.groupTiles;
  launchTiles = o.launchTiles;
  sharedBytes = o.sharedBytes;
  defaultGrid = o.defaultGrid;
  workspaceGroupBytes = o.workspaceGroupBytes;
  workspace = o.workspace;
  buildArgPtrs();  // never share the other plan's pointers
  return *this;
}

void LaunchPlan::buildArgPtrs() {
  argPtrs.clear();
  if (!kernel) return;
  for (uint32_t i = 0; i < kernel->num_params; ++i)
    argPtrs.push_back(kernel->params[i].kind == TESSERA_PARAM_TENSOR ? static_cast<void*>(&tensors[i])
                                                                     : static_cast<void*>(scalars[i].data()));
  argPtrs.push_back(&launchTiles);
  argPtrs.push_back(&workspace);
  argPtrs.push_back(&workspaceGroupBytes);
}

GpuLaunchDims gpuLaunchDims(const LaunchPlan& plan) {
  GpuLaunchDims d;
  for (int i = 0; i < 3; ++i) {
    d.grid[i] = plan.grid[i];
    d.block[i] = plan.group[i];
  }
  const tessera_kernel_desc* k = plan.kernel;
  uint32_t v = k ? tessera_kernel_gpu_tiles(k) : 1;
  if (!k || (k->flags & TESSERA_KERNEL_GROUPED) || v <= 1 || plan.launchTiles <= 0 || plan.groupTiles == 0) return d;
  uint64_t threads = (static_cast<uint64_t>(plan.launchTiles) + v - 1) / v;
  uint64_t block = plan.groupTiles;
  if (threads < block) block = (threads + 31) / 32 * 32 < block ? (threads + 31) / 32 * 32 : block;
  d.block[0] = static_cast<uint32_t>(block);
  d.block[1] = d.block[2] = 1;
  d.grid[0] = static_cast<uint32_t>((threads + block - 1) / block);  // <= plan.groups: checked
  d.grid[1] = d.grid[2] = 1;
  return d;
}

}  // namespace tessera::rt
