// The check shared by the tile.mma GEMM kernels (examples/gemm_tc, kernels/gemm_wide): C = A @ B
// with bf16 inputs and f32 accumulation on random sizes that need not be multiples of the tiles
// (edge blocks are clipped and zero-filled in shared memory). The reference sums the products
// (exact in f32 for bf16 inputs) in k order in f32, as the CPU executor does (bit for bit there);
// the GPU accumulates on tensor cores (mma.sync) in another order, so each element is checked
// against the error bound of any f32 summation order: 2 * K * 2^-23 * sum |a_k b_k|.
#pragma once

#include <cmath>

#include "ExecTest.h"

namespace exec {

// launch(a, b, c) runs the kernel and returns its status.
template <class Launch>
int runGemm(const char* name, Launch launch) {
  requireDevice();
  std::uniform_int_distribution<int64_t> mn(1, 300), kd(1, 200);
  int64_t M = mn(rng()), N = mn(rng()), K = kd(rng());
  std::printf("M=%lld N=%lld K=%lld\n", (long long)M, (long long)N, (long long)K);
  std::vector<uint16_t> a = randomBF16(M * K), b = randomBF16(K * N);
  std::vector<float> want(M * N);
  std::vector<double> bound(M * N);
  for (int64_t m = 0; m < M; ++m)
    for (int64_t n = 0; n < N; ++n) {
      float acc = 0.0f;
      double mag = 0;
      for (int64_t k = 0; k < K; ++k) {
        volatile float p = fromBF16(a[m * K + k]) * fromBF16(b[k * N + n]);
        acc = acc + p;
        mag += std::fabs(static_cast<double>(p));
      }
      want[m * N + n] = acc;
      bound[m * N + n] = 2.0 * K * std::ldexp(mag, -23);
    }
  DeviceArray<uint16_t> da(a), db(b);
  DeviceArray<float> dc(std::vector<float>(M * N, -7.0f));
  check(launch(da.view(TESSERA_BF16, {M, K}), db.view(TESSERA_BF16, {K, N}), dc.view(TESSERA_F32, {M, N})), name);
  check(tessera_synchronize(), "synchronize");
  return finish(allWithin(dc.read(), want, bound, "C"));
}

}  // namespace exec
