// Floating-point formats converted in software, the same LLVM IR on every target, so the GPU and
// the CPU round bit for bit alike: fp8 (e4m3, e5m2), fp6 (e2m3, e3m2), fp4 (e2m1), and f16 /
// bf16 when a store rounds other than to nearest even (the hardware conversions only do that).
// Values of these formats are carried as their codes (i8; i16 for f16/bf16 before the bitcast).
// Rounding modes: nearest even, toward zero, stochastic (docs/codegen.md "Narrow floats").
#pragma once

#include "ir/IR.h"
#include "llvm/IR/IRBuilder.h"

namespace llvm {
class Module;
}

namespace tessera::codegen {

enum class SoftRound { NearestEven, TowardZero, Stochastic };

// fp8, fp6 and fp4: formats that have no LLVM type and are always converted in software.
bool isSoftFloat(ir::ScalarKind k);
// f32 -> code of `to` (fp8/fp6/fp4, or f16/bf16 as an i16 code). `random` (i64, used by
// Stochastic only; may be null otherwise) supplies the bits that decide rounding up: the value
// rounds away from zero with probability (distance to the lower neighbour) / (spacing).
// `saturate` clamps overflow to the largest finite value (fp6/fp4 always saturate: they have
// neither infinity nor NaN, and NaN becomes 0).
llvm::Value* encodeSoftFloat(llvm::IRBuilder<>& b, llvm::Module& m, ir::ScalarKind to, llvm::Value* f32, SoftRound mode,
                             bool saturate, llvm::Value* random);
// code of fp8/fp6/fp4 (i8) -> f32, exact.
llvm::Value* decodeSoftFloat(llvm::IRBuilder<>& b, llvm::Module& m, ir::ScalarKind from, llvm::Value* code);
// 64 well-mixed bits from a key (splitmix64's finaliser), the same on every target.
llvm::Value* mixBits(llvm::IRBuilder<>& b, llvm::Value* key);

}  // namespace tessera::codegen
