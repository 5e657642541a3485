// Tile IR -> LLVM IR. Every kernel (a tile.func with the `kernel` attribute) becomes an entry
// point of the GPU module (an NVPTX kernel taking tessera_kernel_tensor blocks by value, the
// scalars, and the launch's tile count) or of the host module (a tessera_cpu_fn for the CPU
// executor), and its KernelInterface describes it to the host side. Device functions must have
// been inlined (the `inline` pass) before.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "codegen/lower/KernelInterface.h"

namespace llvm {
class Module;
}
namespace tessera::ir {
class Module;
class Operation;
enum class ScalarKind : uint8_t;
}  // namespace tessera::ir

namespace tessera::codegen {

enum class DeviceTarget { Gpu, Cpu };

struct LowerOptions {
  bool boundsCheck = false;  // check every tensor and shared-memory index (--bounds-check)
};

// Lowers every kernel of `m` into `out`. On the CPU the entry of kernel k is named k + "_cpu".
// `kernels` receives one interface per kernel, in module order, with gpuEntry or cpuEntry set.
bool lowerKernels(ir::Module& m, DeviceTarget target, llvm::Module& out, std::vector<KernelInterface>& kernels,
                  std::string& error, const LowerOptions& opts = {});

// The host-side description of one kernel function (parameters, symbols, group, shared bytes).
bool describeKernel(ir::Operation& func, KernelInterface& k, std::string& error);
// The tessera_dtype number of a scalar (basic/DTypes.def); index values are i64.
int32_t dtypeOf(ir::ScalarKind k);

}  // namespace tessera::codegen
