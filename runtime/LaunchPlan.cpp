//===- LaunchPlan.cpp - Self-contained copies of checked launches ---------------------------===//
#include "runtime/LaunchPlan.h"

namespace tessera::rt {

LaunchPlan &LaunchPlan::operator=(const LaunchPlan &o) {
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
  workspaceGroupBytes = o.workspaceGroupBytes;
  workspace = o.workspace;
  buildArgPtrs(); // never share the other plan's pointers
  return *this;
}

void LaunchPlan::buildArgPtrs() {
  argPtrs.clear();
  if (!kernel)
    return;
  for (uint32_t i = 0; i < kernel->num_params; ++i)
    argPtrs.push_back(kernel->params[i].kind == TESSERA_PARAM_TENSOR
                          ? static_cast<void *>(&tensors[i])
                          : static_cast<void *>(scalars[i].data()));
  argPtrs.push_back(&launchTiles);
  argPtrs.push_back(&workspace);
  argPtrs.push_back(&workspaceGroupBytes);
}

} // namespace tessera::rt
