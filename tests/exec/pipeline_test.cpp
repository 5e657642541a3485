// examples/pipeline: C = A @ B through two shared buffers filled by async copies, one block of 64
// rows of C per group, K walked in chunks of 32 (a chunk past the end of K is clipped and its
// buffer zero-filled). Each chunk's products are summed in k order and then added to the
// accumulator, in f32; the reference does the same, so results match bit for bit.
#include "pipeline.h"

#include "ExecTest.h"

int main() {
  exec::requireDevice();
  std::uniform_int_distribution<int64_t> mn(1, 260), kd(1, 150);
  int64_t M = mn(exec::rng()), N = mn(exec::rng()), K = kd(exec::rng());
  std::printf("M=%lld N=%lld K=%lld\n", (long long)M, (long long)N, (long long)K);
  std::vector<uint16_t> a = exec::randomBF16(M * K), b = exec::randomBF16(K * N);
  std::vector<float> want(M * N);
  for (int64_t m = 0; m < M; ++m)
    for (int64_t n = 0; n < N; ++n) {
      float acc = 0.0f;
      for (int64_t k0 = 0; k0 < K; k0 += 32) {
        float part = 0.0f;
        for (int64_t k = k0; k < std::min<int64_t>(K, k0 + 32); ++k) {
          volatile float p = exec::fromBF16(a[m * K + k]) * exec::fromBF16(b[k * N + n]);
          part = part + p;
        }
        acc = acc + part;
      }
      want[m * N + n] = acc;
    }
  exec::DeviceArray<uint16_t> da(a), db(b);
  exec::DeviceArray<float> dc(std::vector<float>(M * N, -7.0f));
  exec::check(
      pipeline::pipeline(da.view(TESSERA_BF16, {M, K}), db.view(TESSERA_BF16, {K, N}), dc.view(TESSERA_F32, {M, N})),
      "pipeline");
  exec::check(tessera_synchronize(), "synchronize");
  return exec::finish(exec::allEqual(dc.read(), want, "C"));
}
