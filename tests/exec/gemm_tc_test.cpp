// examples/gemm_tc: C = A @ B with bf16 inputs and f32 accumulation, one 128x128 output tile per
// group walking k in steps of 32. Sizes are random and need not be multiples of the tiles: blocks
// at the edges are clipped (and zero-filled in shared memory). Every product is rounded, then
// added, in k order, so the reference (the same order in f32) matches bit for bit.
#include "ExecTest.h"
#include "gemm_tc.h"

int main() {
  exec::requireDevice();
  std::uniform_int_distribution<int64_t> mn(1, 300), kd(1, 200);
  int64_t M = mn(exec::rng()), N = mn(exec::rng()), K = kd(exec::rng());
  std::printf("M=%lld N=%lld K=%lld\n", (long long)M, (long long)N, (long long)K);
  std::vector<float> af = exec::randomFloats(M * K), bf = exec::randomFloats(K * N);
  std::vector<uint16_t> a(M * K), b(K * N);
  for (size_t i = 0; i < a.size(); ++i) a[i] = exec::toBF16(af[i]);
  for (size_t i = 0; i < b.size(); ++i) b[i] = exec::toBF16(bf[i]);
  std::vector<float> want(M * N);
  for (int64_t m = 0; m < M; ++m)
    for (int64_t n = 0; n < N; ++n) {
      float acc = 0.0f;
      for (int64_t k = 0; k < K; ++k) {
        volatile float p = exec::fromBF16(a[m * K + k]) * exec::fromBF16(b[k * N + n]);
        acc = acc + p;
      }
      want[m * N + n] = acc;
    }
  exec::DeviceArray<uint16_t> da(a), db(b);
  exec::DeviceArray<float> dc(std::vector<float>(M * N, -7.0f));
  exec::check(gemm_tc::gemm_tc(da.view(TESSERA_BF16, {M, K}), db.view(TESSERA_BF16, {K, N}),
                               dc.view(TESSERA_F32, {M, N})),
              "gemm_tc");
  exec::check(tessera_synchronize(), "synchronize");
  return exec::finish(exec::allEqual(dc.read(), want, "C"));
}
