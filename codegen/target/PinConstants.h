// Constants in registers across hot loops: a late pass over a device module, after LLVM's
// pipeline and before PTX emission (PinConstants.cpp says why).
#pragma once

namespace llvm {
class Module;
}  // namespace llvm

namespace tessera::codegen {

// Replaces, inside loops of kernels, each constant that ptxas would re-materialise with a MOV on
// every iteration by the same bits held in a register from the entry block. True if it changed
// anything.
bool pinLoopConstants(llvm::Module& module);

}  // namespace tessera::codegen
