//===- NarrowFloatGuard.h - Keep LLVM from computing bf16 values in f16 ----------*- C++ -*-===//
//
// LLVM 19's InstCombine shrinks `fptrunc (fmul (fpext bfloat %x), C) to half` into an f16
// multiply of `fptrunc bfloat %x to half`: both types are 16 bits wide, but bf16's range is not
// f16's, so a small %x flushes to zero (exec_fuzz found -O0 and -O2 disagreeing on
// `f16(a_bf16[i] * 2.0)`; exec half_convert_O2 checks every code). Before the optimisation
// pipeline, every bf16 -> f32 widening that feeds an f16 rounding is rewritten as the exact
// integer form (the bf16 bits shifted into the top of an f32), which InstCombine cannot shrink.
//
//===----------------------------------------------------------------------------------------===//
#pragma once

namespace llvm {
class Module;
}

namespace tessera::codegen {

// Rewrites the bf16 widenings that reach an f16 rounding through floating-point arithmetic.
// Returns how many it rewrote.
unsigned guardBFloatToHalfShrinking(llvm::Module& module);

}  // namespace tessera::codegen
