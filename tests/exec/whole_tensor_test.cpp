// kernels/whole_tensor: whole-tensor tile programs whose operands are transposed, at odd sizes
// (the last block of rows is partial), checked element by element against a CPU reference:
// tile.dot sums over k in index order with separate roundings (docs/tile-ir.md), which the
// reference does too, so the products are exact; the sums are exact as well.
#include "whole_tensor.h"

#include "ExecTest.h"

int main() {
  exec::requireDevice();
  std::uniform_int_distribution<int64_t> size(1, 90);
  int64_t M = size(exec::rng()), N = size(exec::rng()), K = size(exec::rng());
  std::printf("M=%lld N=%lld K=%lld\n", (long long)M, (long long)N, (long long)K);
  std::vector<float> a = exec::randomFloats(K * M), b = exec::randomFloats(K * N), c(M * N, 0.0f);
  std::vector<float> want(M * N);
  for (int64_t i = 0; i < M; ++i)
    for (int64_t j = 0; j < N; ++j) {
      float acc = 0.0f;
      for (int64_t k = 0; k < K; ++k) acc = acc + a[k * M + i] * b[k * N + j];
      want[i * N + j] = acc;
    }
  exec::DeviceArray<float> da(a), db(b), dc(c);
  exec::check(
      whole_tensor::dot_t(da.view(TESSERA_F32, {K, M}), db.view(TESSERA_F32, {K, N}), dc.view(TESSERA_F32, {M, N})),
      "dot_t");
  exec::check(tessera_synchronize(), "synchronize");
  bool ok = exec::allEqual(dc.read(), want, "A.T @ B");

  // C = A + B.T with A: [M, N], B: [N, M].
  std::vector<float> a2 = exec::randomFloats(M * N), b2 = exec::randomFloats(N * M), want2(M * N);
  for (int64_t i = 0; i < M; ++i)
    for (int64_t j = 0; j < N; ++j) want2[i * N + j] = a2[i * N + j] + b2[j * M + i];
  exec::DeviceArray<float> da2(a2), db2(b2), dc2(c);
  exec::check(
      whole_tensor::add_t(da2.view(TESSERA_F32, {M, N}), db2.view(TESSERA_F32, {N, M}), dc2.view(TESSERA_F32, {M, N})),
      "add_t");
  exec::check(tessera_synchronize(), "synchronize");
  ok &= exec::allEqual(dc2.read(), want2, "A + B.T");

  std::vector<float> a3 = exec::randomFloats(40 * 24), b3 = exec::randomFloats(24 * 40), want3(40 * 24),
                     c3(40 * 24, 0.0f);
  for (int64_t i = 0; i < 40; ++i)
    for (int64_t j = 0; j < 24; ++j) want3[i * 24 + j] = a3[i * 24 + j] + b3[j * 40 + i];
  exec::DeviceArray<float> da3(a3), db3(b3), dc3(c3);
  exec::check(whole_tensor::static_add(da3.view(TESSERA_F32, {40, 24}), db3.view(TESSERA_F32, {24, 40}),
                                       dc3.view(TESSERA_F32, {40, 24})),
              "static_add (default launch)");
  exec::check(tessera_synchronize(), "synchronize");
  ok &= exec::allEqual(dc3.read(), want3, "static A + B.T");

  // Y = relu(Z) + Z with Z, Y: [M, K+1] (an extent expression through the row split).
  std::vector<float> x4 = exec::randomFloats(M * K), z4 = exec::randomFloats(M * (K + 1)), want4(M * (K + 1)),
                     y4(M * (K + 1), 0.0f);
  for (size_t i = 0; i < z4.size(); ++i) want4[i] = (z4[i] > 0.0f ? z4[i] : 0.0f) + z4[i];
  exec::DeviceArray<float> dx4(x4), dz4(z4), dy4(y4);
  exec::check(whole_tensor::plus_one_col(dx4.view(TESSERA_F32, {M, K}), dz4.view(TESSERA_F32, {M, K + 1}),
                                         dy4.view(TESSERA_F32, {M, K + 1})),
              "plus_one_col");
  exec::check(tessera_synchronize(), "synchronize");
  ok &= exec::allEqual(dy4.read(), want4, "relu(Z) + Z, Z: [M, K+1]");

  // C = A + B * 2 (no tile op) and C = exp(A) - A on a rank-1 tensor: row split without tile ops.
  std::vector<float> a5 = exec::randomFloats(M * N), b5 = exec::randomFloats(M * N), want5(M * N), c5(M * N, 0.0f);
  for (size_t i = 0; i < a5.size(); ++i) want5[i] = a5[i] + b5[i] * 2.0f;
  exec::DeviceArray<float> da5(a5), db5(b5), dc5(c5);
  exec::check(
      whole_tensor::axpb(da5.view(TESSERA_F32, {M, N}), db5.view(TESSERA_F32, {M, N}), dc5.view(TESSERA_F32, {M, N})),
      "axpb");
  int64_t L = M * N + 3;
  std::vector<float> a6 = exec::randomFloats(L), c6(L, 0.0f);
  exec::DeviceArray<float> da6(a6), dc6(c6);
  exec::check(whole_tensor::exp_1d(da6.view(TESSERA_F32, {L}), dc6.view(TESSERA_F32, {L})), "exp_1d");
  exec::check(tessera_synchronize(), "synchronize");
  ok &= exec::allEqual(dc5.read(), want5, "A + B * 2");
  // exp is not correctly rounded on either device: a bound of 8 ulp of exp(a) + |a| (the GPU's
  // ex2.approx form is within 2 ulp, plus the scaling and the subtraction's rounding).
  std::vector<float> got6 = dc6.read();
  int64_t bad = 0;
  for (int64_t i = 0; i < L; ++i) {
    double want = std::exp(double(a6[i])) - double(a6[i]);
    double bound = 8.0 * std::ldexp(1.0, -23) * (std::exp(double(a6[i])) + std::fabs(double(a6[i])));
    if (!(std::fabs(double(got6[i]) - want) <= bound)) {
      if (bad++ < 5) std::printf("exp(A) - A [%lld]: got %.9g want %.9g\n", (long long)i, got6[i], want);
    }
  }
  std::printf("exp(A) - A: %lld of %lld elements outside the bound\n", (long long)bad, (long long)L);
  ok &= bad == 0;
  return exec::finish(ok);
}
