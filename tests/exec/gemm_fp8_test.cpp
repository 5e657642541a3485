// examples/gemm_fp8: C = A @ Bt.T with fp8 e4m3 operands (per-tensor @scale 0.5 and 4.0
// for gemm_fp8_f32, none for gemm_fp8_bf16), e5m2 operands (gemm_e5m2_f32) and bf16 operands
// (gemm_bt_f32), B given K-major.
// Inputs are random fp8 codes over the whole finite range and random bf16 values. The reference
// sums the products (exact in f32 for fp8 x fp8 and for bf16 x bf16; the scales are powers of
// two, so scaling is exact too) in k order in f32. Error bounds
// (docs/language.md, "fp8 matrix products"), with S = sum_k |a_k b_k|:
//   - any f32 summation order: 2 K 2^-23 S (the CPU executor and mma.sync);
//   - fp8 on Hopper tensor cores, which add each k32 step (32 products and the accumulator)
//     aligned to the step's largest term with about 13 bits below it: plus 33 2^-12 sum_j t_j,
//     t_j the largest magnitude among step j's products and the accumulator before it;
//   - bf16 output: plus half a bf16 ulp of the exact value.
// On an sm_90 GPU, K % 16 == 0 runs the Hopper form (TMA needs rows of a multiple of 16 bytes)
// and K = 999 the portable form. A second launch must give the same bits.
#include "gemm_fp8.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>

#include "ExecTest.h"

namespace {

float decodeE4M3(uint8_t c) {
  int e = (c >> 3) & 15, m = c & 7;
  float v = e == 0 ? std::ldexp(static_cast<float>(m), -9) : std::ldexp(1.0f + m / 8.0f, e - 7);
  return (c & 0x80) ? -v : v;
}

float decodeE5M2(uint8_t c) {
  int e = (c >> 2) & 31, m = c & 3;
  float v = e == 0 ? std::ldexp(static_cast<float>(m), -16) : std::ldexp(1.0f + m / 4.0f, e - 15);
  return (c & 0x80) ? -v : v;
}

// Random codes over the whole finite range: e4m3 without its NaN (S.1111.111), e5m2 without
// infinities and NaNs (exponent 31).
std::vector<uint8_t> randomFp8(size_t n, bool e5m2) {
  std::uniform_int_distribution<int> byte(0, 255);
  std::vector<uint8_t> v(n);
  for (auto& x : v) {
    do x = static_cast<uint8_t>(byte(exec::rng()));
    while (e5m2 ? ((x >> 2) & 31) == 31 : (x & 0x7F) == 0x7F);
  }
  return v;
}

struct Shape {
  int64_t M, N, K;
};

// Reference of A (M x K) times Bt (N x K) transposed, scaled by `scale`; `tensorCore8`: add the
// fp8 tensor-core term to the bound.
void reference(const std::vector<float>& a, const std::vector<float>& bt, Shape s, float scale, bool tensorCore8,
               std::vector<float>& want, std::vector<double>& bound, std::vector<double>& bound16) {
  const int64_t M = s.M, N = s.N, K = s.K;
  want.assign(M * N, 0), bound.assign(M * N, 0), bound16.assign(M * N, 0);
  for (int64_t m = 0; m < M; ++m)
    for (int64_t n = 0; n < N; ++n) {
      const float* x = &a[m * K];
      const float* y = &bt[n * K];
      float acc = 0.0f;
      double mag = 0, steps = 0, top = 0;
      for (int64_t k = 0; k < K; ++k) {
        if (k % 32 == 0) top = std::fabs(acc);  // a k32 step starts: the accumulator joins it
        float p = (x[k] * scale) * y[k];        // exact
        top = std::max(top, std::fabs(static_cast<double>(p)));
        acc += p;
        mag += std::fabs(static_cast<double>(p));
        if (k % 32 == 31 || k == K - 1) steps += top;
      }
      want[m * N + n] = acc;
      double b = 2.0 * K * std::ldexp(mag, -23);
      // Each k32 step adds 33 terms (32 products and the accumulator) aligned to the largest
      // exponent among them, keeping about 13 bits below it: each term may lose 2^-12 of the
      // largest term's magnitude.
      if (tensorCore8) b += 33 * std::ldexp(steps, -12);
      bound[m * N + n] = b;
      bound16[m * N + n] = b * 1.01 + std::ldexp(std::fabs(acc) + b, -8);
    }
}

bool sameBits(const std::vector<float>& x, const std::vector<float>& y, const char* what) {
  bool same = x.size() == y.size() && std::memcmp(x.data(), y.data(), x.size() * sizeof(float)) == 0;
  std::printf("%s, second launch: %s\n", what, same ? "same bits" : "DIFFERENT bits");
  return same;
}

bool runShape(Shape s) {
  const int64_t M = s.M, N = s.N, K = s.K;
  std::printf("M=%lld N=%lld K=%lld\n", (long long)M, (long long)N, (long long)K);
  std::vector<uint8_t> a8 = randomFp8(M * K, false), b8 = randomFp8(N * K, false);
  std::vector<float> af(M * K), bf(N * K);
  for (int64_t i = 0; i < M * K; ++i) af[i] = decodeE4M3(a8[i]);
  for (int64_t i = 0; i < N * K; ++i) bf[i] = decodeE4M3(b8[i]);
  std::vector<float> want, wantScaled;
  std::vector<double> bound, bound16, boundScaled, unused;
  reference(af, bf, s, 1.0f, true, want, bound, bound16);
  reference(af, bf, s, 2.0f, true, wantScaled, boundScaled, unused);  // 0.5 * 4.0
  exec::DeviceArray<uint8_t> da(a8), db(b8);
  exec::DeviceArray<float> dc(std::vector<float>(M * N, std::nanf("")));
  exec::DeviceArray<uint16_t> dc16(std::vector<uint16_t>(M * N, 0x7FC1));  // NaN
  auto A = da.view(TESSERA_F8_E4M3, {M, K}), Bt = db.view(TESSERA_F8_E4M3, {N, K});
  tessera_tensor C = dc.view(TESSERA_F32, {M, N}), C16 = dc16.view(TESSERA_BF16, {M, N});
  exec::check(gemm_fp8::gemm_fp8_f32(A, Bt, C), "gemm_fp8_f32");
  exec::check(gemm_fp8::gemm_fp8_bf16(A, Bt, C16), "gemm_fp8_bf16");
  exec::check(tessera_synchronize(), "synchronize");
  std::vector<float> got = dc.read();
  std::vector<uint16_t> got16 = dc16.read();
  std::vector<float> got16f(M * N);
  for (int64_t i = 0; i < M * N; ++i) got16f[i] = exec::fromBF16(got16[i]);
  bool ok = exec::allWithin(got, wantScaled, boundScaled, "C (fp8, scaled, f32)");
  ok &= exec::allWithin(got16f, want, bound16, "C (fp8, bf16)");
  exec::check(gemm_fp8::gemm_fp8_f32(A, Bt, C), "gemm_fp8_f32 again");
  exec::check(tessera_synchronize(), "synchronize");
  ok &= sameBits(dc.read(), got, "C (fp8, scaled, f32)");

  // e5m2 operands.
  a8 = randomFp8(M * K, true), b8 = randomFp8(N * K, true);
  for (int64_t i = 0; i < M * K; ++i) af[i] = decodeE5M2(a8[i]);
  for (int64_t i = 0; i < N * K; ++i) bf[i] = decodeE5M2(b8[i]);
  reference(af, bf, s, 1.0f, true, want, bound, unused);
  exec::DeviceArray<uint8_t> fa(a8), fb(b8);
  auto A5 = fa.view(TESSERA_F8_E5M2, {M, K}), B5 = fb.view(TESSERA_F8_E5M2, {N, K});
  exec::check(gemm_fp8::gemm_e5m2_f32(A5, B5, C), "gemm_e5m2_f32");
  exec::check(tessera_synchronize(), "synchronize");
  got = dc.read();
  ok &= exec::allWithin(got, want, bound, "C (e5m2, f32)");
  exec::check(gemm_fp8::gemm_e5m2_f32(A5, B5, C), "gemm_e5m2_f32 again");
  exec::check(tessera_synchronize(), "synchronize");
  ok &= sameBits(dc.read(), got, "C (e5m2, f32)");

  // bf16 operands, B K-major.
  std::vector<uint16_t> a16 = exec::randomBF16(M * K), b16 = exec::randomBF16(N * K);
  for (int64_t i = 0; i < M * K; ++i) af[i] = exec::fromBF16(a16[i]);
  for (int64_t i = 0; i < N * K; ++i) bf[i] = exec::fromBF16(b16[i]);
  reference(af, bf, s, 1.0f, false, want, bound, unused);
  exec::DeviceArray<uint16_t> ea(a16), eb(b16);
  exec::check(gemm_fp8::gemm_bt_f32(ea.view(TESSERA_BF16, {M, K}), eb.view(TESSERA_BF16, {N, K}), C), "gemm_bt_f32");
  exec::check(tessera_synchronize(), "synchronize");
  got = dc.read();
  ok &= exec::allWithin(got, want, bound, "C (bf16 operands, f32)");
  exec::check(gemm_fp8::gemm_bt_f32(ea.view(TESSERA_BF16, {M, K}), eb.view(TESSERA_BF16, {N, K}), C), "again");
  exec::check(tessera_synchronize(), "synchronize");
  ok &= sameBits(dc.read(), got, "C (bf16 operands, f32)");
  return ok;
}

}  // namespace

int main() {
  exec::requireDevice();
  bool gpu = std::strstr(tessera_device_name(), "sm_") != nullptr;
  std::vector<Shape> shapes = {{128, 256, 128}, {1, 8, 16}, {200, 264, 144}, {77, 130, 999}};
  std::uniform_int_distribution<int64_t> mn(1, 40), kd(1, 20);
  shapes.push_back({mn(exec::rng()) * 8, mn(exec::rng()) * 8, kd(exec::rng()) * 16});  // TMA-friendly
  shapes.push_back({mn(exec::rng()), mn(exec::rng()), kd(exec::rng())});               // any
  // TESSERA_TEST_SMALL=1 (compute-sanitizer runs) keeps to the small shapes.
  if (gpu && !std::getenv("TESSERA_TEST_SMALL")) {
    shapes.push_back({1000, 1030, 1008});  // Hopper form: partial tiles in M, N and K
    shapes.push_back({1000, 1030, 999});   // rows of 999 bytes: the portable form
    shapes.push_back({2048, 2304, 256});   // 144 output tiles: CTAs of the persistent grid take two
  }
  bool ok = true;
  for (Shape s : shapes) ok &= runShape(s);
  return exec::finish(ok);
}
