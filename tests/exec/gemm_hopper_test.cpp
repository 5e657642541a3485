// tests/exec/kernels/gemm_hopper: C = A @ B (bf16 in, f32 and bf16 out) on shapes that take each
// path of the tile.mma loop on an sm_90 GPU: TMA-friendly views (16-byte rows) with partial tiles
// at every edge run the Hopper form; rows of 999 or 1030 bf16 elements cannot be TMA-copied
// and run the mma.sync form; a C one element off 16-byte alignment makes the Hopper form store
// element by element. Every element is checked against an f32 reference within the bound
// of any f32 summation order (2 K 2^-23 sum |a_k b_k|), plus the bf16 rounding of the output for
// gemm_bf16; a second launch must give the same bits. The CPU executor runs the small shapes.
#include "gemm_hopper.h"

#include <cmath>
#include <cstdlib>
#include <cstring>

#include "ExecTest.h"

namespace {

struct Shape {
  int64_t M, N, K;
  int64_t cOffset = 0;  // C starts this many elements into its buffer (not 16-byte aligned)
};

bool runShape(Shape s) {
  const int64_t M = s.M, N = s.N, K = s.K, off = s.cOffset;
  std::printf("M=%lld N=%lld K=%lld%s\n", (long long)M, (long long)N, (long long)K,
              off ? " (C off 16-byte alignment)" : "");
  std::vector<uint16_t> a = exec::randomBF16(M * K), b = exec::randomBF16(K * N);
  std::vector<float> want(M * N);
  std::vector<double> bound(M * N), bound16(M * N);
  std::vector<float> bt(K * N);
  for (int64_t k = 0; k < K; ++k)
    for (int64_t n = 0; n < N; ++n) bt[n * K + k] = exec::fromBF16(b[k * N + n]);
  std::vector<float> af(M * K);
  for (int64_t i = 0; i < M * K; ++i) af[i] = exec::fromBF16(a[i]);
  for (int64_t m = 0; m < M; ++m)
    for (int64_t n = 0; n < N; ++n) {
      const float* x = &af[m * K];
      const float* y = &bt[n * K];
      float acc = 0.0f;
      double mag = 0;
      for (int64_t k = 0; k < K; ++k) {
        float p = x[k] * y[k];  // exact: bf16 x bf16 fits in f32
        acc += p;
        mag += std::fabs(static_cast<double>(p));
      }
      want[m * N + n] = acc;
      bound[m * N + n] = 2.0 * K * std::ldexp(mag, -23);
      // bf16 output: plus half a bf16 ulp of the exact value (rounding to nearest).
      bound16[m * N + n] = bound[m * N + n] * 1.01 + std::ldexp(std::fabs(acc) + bound[m * N + n], -8);
    }
  exec::DeviceArray<uint16_t> da(a), db(b);
  exec::DeviceArray<float> dc(std::vector<float>(M * N + off, std::nanf("")));
  exec::DeviceArray<uint16_t> dc16(std::vector<uint16_t>(M * N + off, 0x7FC1));  // NaN
  auto A = da.view(TESSERA_BF16, {M, K}), B = db.view(TESSERA_BF16, {K, N});
  tessera_tensor C = dc.view(TESSERA_F32, {M, N}), C16 = dc16.view(TESSERA_BF16, {M, N});
  C.data = static_cast<float*>(C.data) + off;
  C16.data = static_cast<uint16_t*>(C16.data) + off;
  exec::check(gemm_hopper::gemm_f32(A, B, C), "gemm_f32");
  exec::check(gemm_hopper::gemm_bf16(A, B, C16), "gemm_bf16");
  exec::check(tessera_synchronize(), "synchronize");
  std::vector<float> got = dc.read();
  std::vector<uint16_t> got16 = dc16.read();
  got.erase(got.begin(), got.begin() + off);
  got16.erase(got16.begin(), got16.begin() + off);
  std::vector<float> got16f(M * N);
  for (int64_t i = 0; i < M * N; ++i) got16f[i] = exec::fromBF16(got16[i]);
  bool ok = exec::allWithin(got, want, bound, "C (f32)");
  ok &= exec::allWithin(got16f, want, bound16, "C (bf16)");
  // C @scale(4.0): the stored codes are the product / 4 (exact scaling by a power of two).
  exec::check(gemm_hopper::gemm_bf16_scaled(A, B, C16), "gemm_bf16_scaled");
  exec::check(tessera_synchronize(), "synchronize");
  got16 = dc16.read();
  got16.erase(got16.begin(), got16.begin() + off);
  std::vector<float> wantQ(M * N);
  std::vector<double> boundQ(M * N);
  for (int64_t i = 0; i < M * N; ++i) {
    got16f[i] = exec::fromBF16(got16[i]);
    wantQ[i] = want[i] / 4;
    boundQ[i] = bound16[i] / 4;
  }
  ok &= exec::allWithin(got16f, wantQ, boundQ, "C (bf16 @scale(4.0))");
  exec::check(gemm_hopper::gemm_f32(A, B, C), "gemm_f32 again");
  exec::check(tessera_synchronize(), "synchronize");
  std::vector<float> again = dc.read();
  again.erase(again.begin(), again.begin() + off);
  // Determinism on one device (no "(exact)" digest: GPU and CPU sum in different orders, which
  // scripts/differential-exec.sh would compare).
  bool same = again.size() == got.size() && std::memcmp(again.data(), got.data(), got.size() * sizeof(float)) == 0;
  std::printf("C (f32), second launch: %s\n", same ? "same bits" : "DIFFERENT bits");
  return ok && same;
}

}  // namespace

int main() {
  exec::requireDevice();
  bool gpu = std::strstr(tessera_device_name(), "sm_") != nullptr;
  std::vector<Shape> shapes = {{128, 256, 64}, {1, 8, 8}, {200, 264, 136}, {136, 272, 80, 1}};
  std::uniform_int_distribution<int64_t> mn(1, 40), kd(1, 30);
  shapes.push_back({mn(exec::rng()) * 8, mn(exec::rng()) * 8, kd(exec::rng()) * 8});  // TMA-friendly
  shapes.push_back({mn(exec::rng()), mn(exec::rng()), kd(exec::rng())});              // any
  // TESSERA_TEST_SMALL=1 (compute-sanitizer runs) keeps to the small shapes.
  if (gpu && !std::getenv("TESSERA_TEST_SMALL")) {
    shapes.push_back({1000, 1032, 1000});  // Hopper form: partial tiles in M, N and K
    shapes.push_back({1000, 1030, 999});   // rows of 999 / 1030 elements: the mma.sync form
    shapes.push_back({2048, 2304, 1536});
  }
  bool ok = true;
  for (Shape s : shapes) ok &= runShape(s);
  return exec::finish(ok);
}
