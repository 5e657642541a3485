//===- Autotune.h - Choosing and searching the candidates of autotuned kernels ----*- C++ -*-===//
//
// An autotuned kernel carries a table of compiled candidates (tessera_autotune_desc). A launch
// runs the candidate recorded for its key (module, kernel, the candidates' code, the device and
// the bound shape symbols), searching first when the mode allows; tessera_autotune_search is the
// search alone. docs/abi.md, "Autotuning".
//
//===----------------------------------------------------------------------------------------===//
#ifndef TESSERA_RUNTIME_AUTOTUNE_H
#define TESSERA_RUNTIME_AUTOTUNE_H

#include <string>

#include "runtime/Backend.h"
#include "runtime/LaunchPlan.h"

namespace tessera::rt::autotune {

tessera_autotune_mode mode();
// The tuning key of a launch: module, kernel, the candidates' code hash, the device and the
// bound shape symbols (a winner is recorded per key).
std::string keyOf(const LaunchPlan& plan, const tessera_autotune_desc& table, Backend& backend);
void setMode(tessera_autotune_mode mode);

// `plan` is the checked plan of `kernel` itself; replaces it with the plan of the candidate
// this launch runs (searching first in mode ON when no winner is recorded for its key).
tessera_status select(const tessera_kernel_desc* kernel, const tessera_launch_options* opts, const tessera_arg* args,
                      uint32_t numArgs, Backend& backend, LaunchPlan& plan);

// Times every candidate on the arguments (plan0: the kernel's own checked plan), records the
// fastest for the key (unless the mode is OFF) and leaves the arguments as they were.
tessera_status search(const tessera_kernel_desc* kernel, const tessera_launch_options* opts, const tessera_arg* args,
                      uint32_t numArgs, Backend& backend, const LaunchPlan& plan0, tessera_autotune_result& out);

// The checked plan of candidate `index` of `kernel` (index 0 of a kernel without a table: the
// kernel itself).
tessera_status planCandidate(const tessera_kernel_desc* kernel, uint32_t index, const tessera_launch_options* opts,
                             const tessera_arg* args, uint32_t numArgs, Backend& backend,
                             const tessera_module_desc* module, LaunchPlan& plan);

}  // namespace tessera::rt::autotune

#endif
