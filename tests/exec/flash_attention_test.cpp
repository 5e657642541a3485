// examples/flash_attention: for each block of 128 rows (the last one clipped), O = softmax(Q K^T)
// V over that block's rows, one group per block. bf16 storage, f32 arithmetic in the kernel's
// order. exp comes from libdevice on the GPU and libm on the CPU, so the check allows the bf16
// output one rounding step (2^-8 relative) plus a small absolute slack; every element is checked.
#include <cmath>

#include "ExecTest.h"
#include "flash_attention.h"

int main() {
  exec::requireDevice();
  std::uniform_int_distribution<int64_t> rows(1, 700), dims(1, 128);
  int64_t S = rows(exec::rng()), D = dims(exec::rng());
  std::printf("S=%lld D=%lld\n", (long long)S, (long long)D);
  std::vector<uint16_t> q = exec::randomBF16(S * D), k = exec::randomBF16(S * D), v = exec::randomBF16(S * D);
  auto f = exec::fromBF16;
  std::vector<float> want(S * D);
  for (int64_t b0 = 0; b0 < S; b0 += 128) {
    int64_t n = std::min<int64_t>(128, S - b0);
    std::vector<float> p(n);
    for (int64_t i = 0; i < n; ++i) {
      for (int64_t j = 0; j < n; ++j) {
        float acc = 0.0f;
        for (int64_t d = 0; d < D; ++d) {
          volatile float prod = f(q[(b0 + i) * D + d]) * f(k[(b0 + j) * D + d]);
          acc = acc + prod;
        }
        p[j] = acc;
      }
      float m = -INFINITY, s = 0.0f;
      for (int64_t j = 0; j < n; ++j) m = std::max(m, p[j]);
      for (int64_t j = 0; j < n; ++j) s += std::exp(p[j] - m);
      for (int64_t j = 0; j < n; ++j) p[j] = std::exp(p[j] - m) / s;
      for (int64_t d = 0; d < D; ++d) {
        float acc = 0.0f;
        for (int64_t j = 0; j < n; ++j) {
          volatile float prod = p[j] * f(v[(b0 + j) * D + d]);
          acc = acc + prod;
        }
        want[(b0 + i) * D + d] = acc;
      }
    }
  }
  exec::DeviceArray<uint16_t> dq(q), dk(k), dv(v), dout(std::vector<uint16_t>(S * D, 0xFFFF));
  exec::check(flash_attention::flash_attention(dq.view(TESSERA_BF16, {S, D}), dk.view(TESSERA_BF16, {S, D}),
                                               dv.view(TESSERA_BF16, {S, D}), dout.view(TESSERA_BF16, {S, D})),
              "flash_attention");
  exec::check(tessera_synchronize(), "synchronize");
  std::vector<uint16_t> got = dout.read();
  std::vector<float> gotf(got.size());
  for (size_t i = 0; i < got.size(); ++i) gotf[i] = f(got[i]);
  return exec::finish(exec::allClose(gotf, want, 1.0 / 256, 1e-6, "O"));
}
