// examples/gemm_tc: one 128x128 output tile per group of 4 warps, k in steps of 32 (GemmTest.h).
#include "gemm_tc.h"

#include "GemmTest.h"

int main() {
  return exec::runGemm("gemm_tc", [](auto a, auto b, auto c) { return gemm_tc::gemm_tc(a, b, c); });
}
