// fp8 (e4m3, e5m2) values in code generation: stored and carried as their 8-bit codes (i8);
// conversions to and from f32 are software routines (MiniFloat.cpp) shared by both targets.
#pragma once

#include "ir/IR.h"
#include "llvm/IR/IRBuilder.h"

namespace llvm {
class Module;
}

namespace tessera::codegen {

bool isSoftFloat8(ir::ScalarKind k);
// f32 -> fp8 code (i8), round to nearest even; `saturate` clamps to the largest finite value.
llvm::Value* encodeFloat8(llvm::IRBuilder<>& b, llvm::Module& m, ir::ScalarKind to, llvm::Value* f32, bool saturate);
// fp8 code (i8) -> f32, exact.
llvm::Value* decodeFloat8(llvm::IRBuilder<>& b, llvm::Module& m, ir::ScalarKind from, llvm::Value* code);

}  // namespace tessera::codegen
