// The sm_90a forms of kernels that a Tile IR pass recorded, each with a planning step (the
// variants it adds to kernels[i].gpuVariants, `kernels` in module order as lowerKernels returns
// them, and its remarks) and an emitting step (the planned variants into `out`, an sm_90a module):
//   - codegen/hopper/HopperGemmPlan.cpp, HopperGemm.cpp: a tile.mma loop kernel (`mma-form`) or the
//     steps of a whole-tensor program's products (`product-steps`): a persistent,
//     warp-specialised kernel with a TMA producer warpgroup, two wgmma consumer warpgroups, an
//     mbarrier ring of shared-memory stages and the program's epilogue on the accumulators;
//   - codegen/hopper/HopperAttention.cpp: online-softmax attention (`attention-form`): a persistent,
//     warp-specialised FlashAttention forward whose two wgmma consumer warpgroups hold every tile
//     value in registers, one variant per head dimension;
//   - codegen/hopper/HopperAttentionBwd.cpp: the FlashAttention backward (`attention-backward-form`): the
//     key/value kernel (dK, dV) and the query kernel (dQ) of FlashAttention-2's two-kernel
//     backward, deterministic, one variant per head dimension.
// docs/codegen.md ("Hopper form of tile.mma", "Hopper form of attention", "Hopper form of the
// attention backward") gives the designs.
#pragma once

#include <string>
#include <vector>

#include "codegen/lower/KernelInterface.h"

namespace llvm {
class Module;
}
namespace tessera::ir {
class Module;
}

namespace tessera::codegen {

void planHopperVariants(ir::Module& m, std::vector<KernelInterface>& kernels);
bool emitHopperVariants(ir::Module& m, const std::vector<KernelInterface>& kernels, llvm::Module& out,
                        std::string& error);
// Without an sm_90a target: the -Rpass-missed=tensor-cores remark of each whole-tensor program
// with products (ir/passes/ProductPlan.h) that keeps the portable form.
void remarkProductsWithoutHopper(ir::Module& m, std::vector<KernelInterface>& kernels);

void planAttentionVariants(ir::Module& m, std::vector<KernelInterface>& kernels);
bool emitAttentionVariants(ir::Module& m, const std::vector<KernelInterface>& kernels, llvm::Module& out,
                           std::string& error);

void planAttentionBwdVariants(ir::Module& m, std::vector<KernelInterface>& kernels);
bool emitAttentionBwdVariants(ir::Module& m, const std::vector<KernelInterface>& kernels, llvm::Module& out,
                              std::string& error);

}  // namespace tessera::codegen
