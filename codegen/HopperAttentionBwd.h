// The sm_90a form of the FlashAttention backward (kernels the `attention-backward-form` pass
// recorded): the key/value kernel (dK, dV) and the query kernel (dQ) of FlashAttention-2's
// two-kernel backward as persistent, warp-specialised wgmma kernels with a TMA producer, a
// row-statistics producer (log-sum-exp and Delta = rowsum(dO * O)) and two consumer warpgroups
// that keep every tile value in registers. Deterministic: every output element is summed by one
// thread in a fixed order. docs/codegen.md ("Hopper form of the attention backward").
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

// Adds the backward variants (one per head dimension the kernel admits) of every kernel of `m`
// that has one to kernels[i].gpuVariants (`kernels` in module order), with its remarks.
void planAttentionBwdVariants(ir::Module& m, std::vector<KernelInterface>& kernels);

// Emits the variants planned by planAttentionBwdVariants into `out`, an sm_90a module.
bool emitAttentionBwdVariants(ir::Module& m, const std::vector<KernelInterface>& kernels, llvm::Module& out,
                              std::string& error);

}  // namespace tessera::codegen
