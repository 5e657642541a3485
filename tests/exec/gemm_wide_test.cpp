// kernels/gemm_wide: a tile.mma GEMM in groups of 8 warps (2 x 4 over a 64x64 tile) (GemmTest.h).
#include "gemm_wide.h"

#include "GemmTest.h"

int main() {
  return exec::runGemm("gemm_wide", [](auto a, auto b, auto c) { return gemm_wide::gemm_wide(a, b, c); });
}
