// --resource-usage and the resource fields of the kernel descriptor: per kernel and GPU
// architecture, registers, spills, stack, static and dynamic shared memory, local memory, the
// occupancy they allow, and the instructions that decide speed (tensor cores, TMA, cp.async).
// Figures come from the cubin itself (codegen/target/CubinInfo.h) and ptxas's report, never guessed.
#pragma once

#include <string>
#include <vector>

#include "codegen/lower/KernelInterface.h"
#include "codegen/target/GpuTarget.h"

namespace tessera::codegen {

// Fills kernels[i].resources with an entry for `arch` from the cubin, ptxas's -v report and the
// PTX of that architecture. Returns false with `error` set if a kernel's function is missing.
bool collectResources(std::vector<KernelInterface>& kernels, const GpuArch& arch, const std::string& cubin,
                      const std::string& ptxasReport, const std::string& ptx, std::string& error);

// The threads per group a launch of `k` uses by default (its group shape, or the runtime's 256).
uint32_t defaultGroupThreads(const KernelInterface& k);

// Text in the style of ptxas -v (one block per kernel and architecture), and one JSON document.
std::string formatResourcesText(const std::string& module, const std::vector<KernelInterface>& kernels);
std::string formatResourcesJson(const std::string& module, const std::vector<KernelInterface>& kernels);

}  // namespace tessera::codegen
