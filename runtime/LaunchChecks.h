//===- LaunchChecks.h - Arguments against kernel metadata, launch size ------------*- C++ -*-===//
//
// Everything a launch checks before anything runs: argument count and kinds, dtypes, ranks,
// null and host pointers, symbol bindings (equal symbols bind equal sizes), constant and
// expression extents, aliased mut tensors, and the grid (explicit, or DESIGN.md's defaults)
// against the kernel and the device limits. Messages name kernel, parameter and problem.
//
//===----------------------------------------------------------------------------------------===//
#ifndef TESSERA_RUNTIME_LAUNCHCHECKS_H
#define TESSERA_RUNTIME_LAUNCHCHECKS_H

#include "runtime/Backend.h"
#include "runtime/LaunchPlan.h"

namespace tessera::rt {

// `module` is the module of `kernel` when the registry cannot find it by address (an autotune
// candidate, whose descriptor lives in its kernel's table); null: look it up.
tessera_status planLaunch(const tessera_kernel_desc* kernel, const tessera_launch_options* opts,
                          const tessera_arg* args, uint32_t numArgs, Backend& backend, LaunchPlan& plan,
                          const tessera_module_desc* module = nullptr);
// The same with symbols bound before the checks (tessera_launch_bound).
tessera_status planLaunchBound(const tessera_kernel_desc* kernel, const tessera_launch_options* opts,
                               const tessera_arg* args, uint32_t numArgs, const tessera_symbol_binding* bindings,
                               uint32_t numBindings, Backend& backend, LaunchPlan& plan,
                               const tessera_module_desc* module = nullptr);

}  // namespace tessera::rt

#endif
