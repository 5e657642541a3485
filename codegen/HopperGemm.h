// The sm_90a form of a tile.mma loop kernel (one that the `mma-form` pass recorded): a
// persistent, warp-specialised kernel with a TMA producer warpgroup, two wgmma consumer
// warpgroups and an mbarrier ring of shared-memory stages. docs/codegen.md ("Hopper form of
// tile.mma") gives the design.
#pragma once

#include <string>
#include <vector>

#include "codegen/KernelInterface.h"

namespace llvm {
class Module;
}
namespace tessera::ir {
class Module;
}

namespace tessera::codegen {

// Describes the Hopper variant of every kernel of `m` that has one in kernels[i].gpuVariants
// (`kernels` in module order, as lowerKernels returns them).
void planHopperVariants(ir::Module& m, std::vector<KernelInterface>& kernels);

// Without an sm_90a target: the -Rpass-missed=tensor-cores remark of each chain of products
// (ir/passes/ChainForm.cpp) that keeps the portable form.
void remarkChainsWithoutHopper(ir::Module& m, std::vector<KernelInterface>& kernels);

// Emits the variants planned by planHopperVariants into `out`, an sm_90a module.
bool emitHopperVariants(ir::Module& m, const std::vector<KernelInterface>& kernels, llvm::Module& out,
                        std::string& error);

}  // namespace tessera::codegen
