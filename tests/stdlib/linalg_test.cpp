// The thin entries over the tile kernels: stdlib.linalg gemm_bf16 / gemm_f16 (C = A @ B, f32
// accumulation) and stdlib.nn flash_attention_bf16 (O = softmax(Q K^T) V over blocks of 128
// rows), against float64 references, every element. Bounds: the sum over k of |a b| times
// (K + 2) units of f32 rounding for the products; attention's bf16 output one rounding step
// (2^-8 relative) plus the f32 error of its two products.
#include "StdTest.h"

using namespace stdtest;

namespace {

bool gemm(DT dt) {
  int64_t M = 128 * randomIn(1, 3), N = 128 * randomIn(1, 3), K = 32 * randomIn(1, 8);
  Host a(dt, exec::randomFloats(M * K)), b(dt, exec::randomFloats(K * N));
  Dev da(a), db(b), dc(DT::F32, M * N);
  tessera_tensor ta = da.view({M, K}), tb = db.view({K, N}), tc = dc.view({M, N});
  exec::check((dt == DT::BF16 ? tessera_std_linalg_gemm_bf16 : tessera_std_linalg_gemm_f16)(nullptr, &ta, &tb, &tc), "gemm");
  exec::check(tessera_synchronize(), "synchronize");
  std::vector<double> want(M * N), bound(M * N);
  for (int64_t i = 0; i < M; ++i)
    for (int64_t j = 0; j < N; ++j) {
      double s = 0, mag = 0;
      for (int64_t k = 0; k < K; ++k) {
        double p = double(a.v[i * K + k]) * b.v[k * N + j];
        s += p, mag += std::fabs(p);
      }
      want[i * N + j] = s, bound[i * N + j] = (K + 2) * 0x1p-24 * mag + 1e-30;
    }
  return within(dc.read(), want, bound, std::string("gemm_") + name(dt) + " " + std::to_string(M) + "x" +
                                            std::to_string(N) + "x" + std::to_string(K));
}

bool attention() {
  int64_t S = 128 * randomIn(1, 3), D = 16 * randomIn(1, 8);
  Host q(DT::BF16, exec::randomFloats(S * D)), k(DT::BF16, exec::randomFloats(S * D)), v(DT::BF16, exec::randomFloats(S * D));
  Dev dq(q), dk(k), dv(v), dout(DT::BF16, S * D);
  tessera_tensor tq = dq.view({S, D}), tk = dk.view({S, D}), tv = dv.view({S, D}), to = dout.view({S, D});
  exec::check(tessera_std_nn_flash_attention_bf16(nullptr, &tq, &tk, &tv, &to), "flash_attention_bf16");
  exec::check(tessera_synchronize(), "synchronize");
  std::vector<double> want(S * D), bound(S * D);
  for (int64_t b0 = 0; b0 < S; b0 += 128)
    for (int64_t i = 0; i < 128; ++i) {
      std::vector<double> p(128);
      double m = -INFINITY, s = 0;
      for (int64_t j = 0; j < 128; ++j) {
        double acc = 0;
        for (int64_t d = 0; d < D; ++d) acc += double(q.v[(b0 + i) * D + d]) * k.v[(b0 + j) * D + d];
        p[j] = acc, m = std::max(m, acc);
      }
      for (double& x : p) s += std::exp(x - m);
      for (double& x : p) x = std::exp(x - m) / s;
      for (int64_t d = 0; d < D; ++d) {
        double acc = 0, mag = 0;
        for (int64_t j = 0; j < 128; ++j) acc += p[j] * v.v[(b0 + j) * D + d], mag += p[j] * std::fabs(v.v[(b0 + j) * D + d]);
        want[(b0 + i) * D + d] = acc;
        bound[(b0 + i) * D + d] = 0x1p-8 * std::fabs(acc) + 1e-4 * mag + 1e-6;
      }
    }
  return within(dout.read(), want, bound, "flash_attention_bf16 S=" + std::to_string(S) + " D=" + std::to_string(D));
}

}  // namespace

int main() {
  exec::requireDevice();
  bool ok = gemm(DT::BF16);
  ok &= gemm(DT::F16);
  ok &= attention();
  return exec::finish(ok);
}
