// The sm_90a form of online-softmax attention (a kernel the `attention-form` pass recorded): a
// persistent, warp-specialised FlashAttention forward with a TMA producer warpgroup, two wgmma
// consumer warpgroups holding every tile value in registers, and an mbarrier ring of key/value
// stages. docs/codegen.md ("Hopper form of attention") gives the design.
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

// Adds the attention variants (one per head dimension the kernel admits) of every kernel of `m`
// that has one to kernels[i].gpuVariants (`kernels` in module order), with its remarks.
void planAttentionVariants(ir::Module& m, std::vector<KernelInterface>& kernels);

// Emits the variants planned by planAttentionVariants into `out`, an sm_90a module.
bool emitAttentionVariants(ir::Module& m, const std::vector<KernelInterface>& kernels, llvm::Module& out,
                           std::string& error);

}  // namespace tessera::codegen
