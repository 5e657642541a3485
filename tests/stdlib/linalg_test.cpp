// The thin entries over the tile kernels: stdlib.linalg gemm_bf16 / gemm_f16 (C = A @ B, f32
// accumulation) and stdlib.nn flash_attention_{bf16,f16,f32} and their causal forms (with the
// log-sum-exp output), against float64 references, every element, at odd sequence lengths and head
// dims 64 and 128. GEMM bound: the sum over k of |a b| times (K + 2) units of f32 rounding. The
// GEMMs run at multiples of the 128 x 128 x 32 tiling and at sizes that are not (the blocks at
// the edges are clipped: docs/stdlib.md said such sizes were refused, issue 33).
#include "StdTest.h"

using namespace stdtest;

namespace {

bool gemm(DT dt, bool whole) {
  int64_t M = whole ? 128 * randomIn(1, 3) : randomIn(1, 300), N = whole ? 128 * randomIn(1, 3) : randomIn(1, 300),
          K = whole ? 32 * randomIn(1, 8) : randomIn(1, 100);
  Host a(dt, exec::randomFloats(M * K)), b(dt, exec::randomFloats(K * N));
  Dev da(a), db(b), dc(DT::F32, M * N);
  tessera_tensor ta = da.view({M, K}), tb = db.view({K, N}), tc = dc.view({M, N});
  exec::check((dt == DT::BF16 ? tessera_std_linalg_gemm_bf16 : tessera_std_linalg_gemm_f16)(nullptr, &ta, &tb, &tc),
              "gemm");
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
  return within(
      dc.read(), want, bound,
      std::string("gemm_") + name(dt) + " " + std::to_string(M) + "x" + std::to_string(N) + "x" + std::to_string(K));
}

// O = softmax(scale Q K^T) V and LSE = log sum_j exp(scale q_i . k_j) per (batch, head, row), causal:
// keys j <= i only. The bound for O is the output's rounding (2^-8 relative) plus 2^-8 of
// sum_j p_j |v_j| / l (p rounded to the 16-bit type for the P V product); LSE is f32 arithmetic
// over at most S terms.
bool attention(DT dt, bool causal) {
  int64_t B = randomIn(1, 2), H = randomIn(1, 3), S = 2 * randomIn(0, 120) + 1, D = 64 * randomIn(1, 2);
  int64_t n = B * H * S * D;
  Host q(dt, exec::randomFloats(n)), k(dt, exec::randomFloats(n)), v(dt, exec::randomFloats(n));
  Dev dq(q), dk(k), dv(v), dout(dt, n), dlse(DT::F32, B * H * S);
  tessera_tensor tq = dq.view({B, H, S, D}), tk = dk.view({B, H, S, D}), tv = dv.view({B, H, S, D}),
                 to = dout.view({B, H, S, D}), tl = dlse.view({B, H, S});
  float scale = 1.0f / std::sqrt(float(D));
  auto entry =
      dt == DT::BF16  ? (causal ? tessera_std_nn_flash_attention_causal_bf16 : tessera_std_nn_flash_attention_bf16)
      : dt == DT::F16 ? (causal ? tessera_std_nn_flash_attention_causal_f16 : tessera_std_nn_flash_attention_f16)
                      : (causal ? tessera_std_nn_flash_attention_causal_f32 : tessera_std_nn_flash_attention_f32);
  const double unit = dt == DT::F32 ? 0x1p-16 : 0x1p-8;  // f32: exp (to 6.5e-6), rescaling, sums
  exec::check(entry(nullptr, &tq, &tk, &tv, &to, &tl, scale), "flash_attention");
  exec::check(tessera_synchronize(), "synchronize");
  std::vector<double> want(n), bound(n), wantLse(B * H * S), boundLse(B * H * S);
  for (int64_t bh = 0; bh < B * H; ++bh)
    for (int64_t i = 0; i < S; ++i) {
      const int64_t base = bh * S * D, keys = causal ? i + 1 : S;
      std::vector<double> p(keys);
      double m = -INFINITY, l = 0;
      for (int64_t j = 0; j < keys; ++j) {
        double acc = 0;
        for (int64_t d = 0; d < D; ++d) acc += double(q.v[base + i * D + d]) * k.v[base + j * D + d];
        p[j] = double(scale) * acc, m = std::max(m, p[j]);
      }
      for (double& x : p) x = std::exp(x - m), l += x;
      wantLse[bh * S + i] = m + std::log(l);
      boundLse[bh * S + i] = 1e-6 * std::fabs(m) + 4 * keys * 0x1p-24 + 1e-5;
      for (int64_t d = 0; d < D; ++d) {
        double acc = 0, mag = 0;
        for (int64_t j = 0; j < keys; ++j)
          acc += p[j] * v.v[base + j * D + d], mag += p[j] * std::fabs(v.v[base + j * D + d]);
        want[base + i * D + d] = acc / l;
        bound[base + i * D + d] = unit * std::fabs(acc / l) + unit * mag / l + 1e-6;
      }
    }
  std::string what = std::string("flash_attention") + (causal ? "_causal_" : "_") + name(dt) +
                     " B=" + std::to_string(B) + " H=" + std::to_string(H) + " S=" + std::to_string(S) +
                     " D=" + std::to_string(D);
  bool ok = within(dout.read(), want, bound, what + " O");
  return within(dlse.read(), wantLse, boundLse, what + " LSE") && ok;
}

}  // namespace

int main() {
  exec::requireDevice();
  bool ok = true;
  for (bool whole : {true, false}) ok &= gemm(DT::BF16, whole) & gemm(DT::F16, whole);
  for (DT dt : {DT::BF16, DT::F16, DT::F32})
    for (bool causal : {false, true}) ok &= attention(dt, causal);
  return exec::finish(ok);
}
