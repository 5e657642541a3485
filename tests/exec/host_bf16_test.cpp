// Host functions on 16-bit tensors (kernels/host_bf16.tessera): the spec's attention module and
// transformer block in bf16, products with transposed operands, f16 row ops, each called
// through its entry point with fresh random inputs at odd sizes, every element checked in
// float64 against the 16-bit inputs, with a bound that follows the kernels' arithmetic:
//  - every stored 16-bit value rounds once: 2^-8 (bf16) or 2^-11 (f16) of its magnitude;
//  - products and row statistics accumulate in f32: (n + 4) * 2^-24 of the terms' magnitudes;
//  - attention rounds p to the operands' type for the P V product (2^-8 of sum_j p_j |v_j| / l)
//    and moves each exp by the scores' error; stdlib's exp2-based exps add 6.5e-6 relative;
//  - errors of inputs computed by earlier kernels are carried through (|w| times their bound).
// A second call gives the same bits (block, attention).
#include "host_bf16.h"

#include <cmath>

#include "AttentionReference.h"
#include "ExecTest.h"

namespace {

int failures = 0;
const double kF32 = std::ldexp(1.0, -24), kBF16 = std::ldexp(1.0, -8), kF16 = std::ldexp(1.0, -11);

void expectClose(const char* what, size_t i, double got, double want, double bound) {
  if (std::fabs(got - want) <= bound && !std::isnan(got)) return;
  if (++failures <= 10) std::printf("FAIL: %s[%zu] = %.9g, reference %.9g, bound %.3g\n", what, i, got, want, bound);
}

std::vector<double> widen(const std::vector<uint16_t>& h, bool bf16 = true) {
  std::vector<double> out(h.size());
  for (size_t i = 0; i < h.size(); ++i) out[i] = bf16 ? exec::fromBF16(h[i]) : exec::fromHalf(h[i]);
  return out;
}

std::vector<uint16_t> readResult(const tessera_tensor& t) {
  std::vector<uint16_t> out(tessera_tensor_numel(&t));
  exec::check(tessera_memcpy(out.data(), t.data, out.size() * 2), "read result");
  return out;
}

void sameBits(const char* what, const std::vector<uint16_t>& a, const std::vector<uint16_t>& b) {
  for (size_t i = 0; i < a.size(); ++i)
    if (a[i] != b[i] && ++failures <= 10) std::printf("FAIL: %s not the same bits at %zu\n", what, i);
}

// A value and the bound of its error.
struct Approx {
  std::vector<double> v, e;
};

// a [M, K] (with errors) @ w [K, N] (exact 16-bit values; wt: w given as [N, K]), f32
// accumulation, rounded to bf16.
Approx product(const Approx& a, const std::vector<double>& w, int64_t M, int64_t K, int64_t N, bool wt = false) {
  Approx r{std::vector<double>(M * N), std::vector<double>(M * N)};
  for (int64_t i = 0; i < M; ++i)
    for (int64_t j = 0; j < N; ++j) {
      double dot = 0, mag = 0, prop = 0;
      for (int64_t t = 0; t < K; ++t) {
        double wv = wt ? w[j * K + t] : w[t * N + j];
        dot += a.v[i * K + t] * wv, mag += std::fabs(a.v[i * K + t] * wv), prop += a.e[i * K + t] * std::fabs(wv);
      }
      r.v[i * N + j] = dot, r.e[i * N + j] = (K + 4) * kF32 * mag + prop + kBF16 * (std::fabs(dot) + prop);
    }
  return r;
}

// Attention of one head: rows i of q (columns qc.., Dh wide, row stride ld) against k and v of
// the same layout, scale 1/sqrt(Dh) or 1; o written at (i, oc + e) with row stride ldo.
void attendHead(const Approx& x, int64_t S, int64_t Dh, int64_t ld, int64_t qc, int64_t kc, int64_t vc, double scale,
                Approx& o, int64_t ldo, int64_t oc) {
  attendHeadWithBound(x.v.data(), x.e.data(), S, Dh, ld, qc, kc, vc, scale, o.v.data(), o.e.data(), ldo, oc, kBF16);
}

void attention(int64_t S, int64_t D) {
  std::printf("attention S=%lld D=%lld\n", (long long)S, (long long)D);
  std::vector<uint16_t> hq = exec::randomBF16(S * D), hk = exec::randomBF16(S * D), hv = exec::randomBF16(S * D);
  exec::DeviceArray<uint16_t> dq(hq), dk(hk), dv(hv);
  tessera_tensor Q = dq.view(TESSERA_BF16, {S, D}), K = dk.view(TESSERA_BF16, {S, D}),
                 V = dv.view(TESSERA_BF16, {S, D});
  tessera_tensor O, O2;
  exec::check(host_bf16_attention(nullptr, &Q, &K, &V, &O), "attention");
  exec::check(host_bf16_attention(nullptr, &Q, &K, &V, &O2), "attention (again)");
  std::vector<uint16_t> o = readResult(O), o2 = readResult(O2);
  sameBits("attention", o, o2);
  // q, k, v side by side as one [S, 3D] matrix of exact values.
  Approx x{std::vector<double>(S * 3 * D), std::vector<double>(S * 3 * D, 0.0)};
  std::vector<double> q = widen(hq), k = widen(hk), v = widen(hv);
  for (int64_t i = 0; i < S; ++i)
    for (int64_t d = 0; d < D; ++d)
      x.v[i * 3 * D + d] = q[i * D + d], x.v[i * 3 * D + D + d] = k[i * D + d],
                      x.v[i * 3 * D + 2 * D + d] = v[i * D + d];
  Approx want{std::vector<double>(S * D), std::vector<double>(S * D)};
  attendHead(x, S, D, 3 * D, 0, D, 2 * D, 1.0, want, D, 0);  // the spec's module has no scale
  std::vector<double> got = widen(o);
  for (size_t i = 0; i < got.size(); ++i) expectClose("attention", i, got[i], want.v[i], want.e[i] + 1e-30);
  tessera_free(O.data);
  tessera_free(O2.data);
}

void block(int64_t S) {
  const int64_t C = 256, H = 4, Dh = 64;
  std::printf("block S=%lld\n", (long long)S);
  std::vector<uint16_t> hx = exec::randomBF16(S * C, -2, 2), hq = exec::randomBF16(C * 3 * C, -0.1f, 0.1f),
                        hw = exec::randomBF16(C * C, -0.1f, 0.1f);
  exec::DeviceArray<uint16_t> dx(hx), dq(hq), dw(hw);
  tessera_tensor X = dx.view(TESSERA_BF16, {S, C}), Wqkv = dq.view(TESSERA_BF16, {C, 3 * C}),
                 Wo = dw.view(TESSERA_BF16, {C, C});
  tessera_tensor Y, Y2;
  exec::check(host_bf16_block(nullptr, &X, &Wqkv, &Wo, &Y), "block");
  exec::check(host_bf16_block(nullptr, &X, &Wqkv, &Wo, &Y2), "block (again)");
  std::vector<uint16_t> y = readResult(Y), y2 = readResult(Y2);
  sameBits("block", y, y2);
  {
    // capture_graph on a stream: the launches captured and replayed (the first call makes the
    // graph, the second updates and replays it, on another output): the same bits as the direct call.
    tessera_stream stream = nullptr;
    exec::check(tessera_stream_create(&stream), "stream");
    tessera_launch_options opts{};
    opts.stream = stream;
    for (int call = 0; call < 2; ++call) {
      tessera_tensor Yg;
      exec::check(host_bf16_block_graph(&opts, &X, &Wqkv, &Wo, &Yg), "block_graph");
      exec::check(tessera_stream_synchronize(stream), "synchronize");
      sameBits("block_graph (captured)", y, readResult(Yg));
      tessera_free(Yg.data);
    }
    exec::check(tessera_stream_destroy(stream), "destroy stream");
  }
  std::vector<double> x = widen(hx);
  Approx h{std::vector<double>(S * C), std::vector<double>(S * C)};
  for (int64_t i = 0; i < S; ++i) {
    double ms = 0;
    for (int64_t c = 0; c < C; ++c) ms += x[i * C + c] * x[i * C + c];
    double inv = 1 / std::sqrt(ms / C + 1e-6);
    for (int64_t c = 0; c < C; ++c) {
      double v = x[i * C + c] * inv;
      h.v[i * C + c] = v, h.e[i * C + c] = std::fabs(v) * ((C / 2 + 8) * kF32 + kBF16);
    }
  }
  Approx qkv = product(h, widen(hq), S, C, 3 * C);
  Approx o{std::vector<double>(S * C), std::vector<double>(S * C)};
  for (int64_t hd = 0; hd < H; ++hd)
    attendHead(qkv, S, Dh, 3 * C, hd * Dh, C + hd * Dh, 2 * C + hd * Dh, 1 / std::sqrt(double(Dh)), o, C, hd * Dh);
  Approx r = product(o, widen(hw), S, C, C);
  std::vector<double> got = widen(y);
  for (size_t i = 0; i < got.size(); ++i) expectClose("block", i, got[i], r.v[i], 2 * r.e[i] + 1e-30);
  tessera_free(Y.data);
  tessera_free(Y2.data);
}

void products(int64_t M, int64_t K, int64_t N) {
  std::printf("products M=%lld K=%lld N=%lld\n", (long long)M, (long long)K, (long long)N);
  std::vector<uint16_t> ha = exec::randomBF16(M * K), hb = exec::randomBF16(N * K), hc = exec::randomBF16(M * N);
  exec::DeviceArray<uint16_t> da(ha), db(hb), dc(hc);
  tessera_tensor A = da.view(TESSERA_BF16, {M, K}), B = db.view(TESSERA_BF16, {N, K}),
                 Cm = dc.view(TESSERA_BF16, {M, N});
  tessera_tensor Y1, Y2;
  exec::check(host_bf16_products(nullptr, &A, &B, &Cm, &Y1, &Y2), "products");
  Approx a{widen(ha), std::vector<double>(M * K, 0.0)};
  Approx r1 = product(a, widen(hb), M, K, N, true);
  // A^T @ C: a [K, M] view of A's values.
  std::vector<double> av = widen(ha);
  Approx at{std::vector<double>(K * M), std::vector<double>(K * M, 0.0)};
  for (int64_t i = 0; i < M; ++i)
    for (int64_t t = 0; t < K; ++t) at.v[t * M + i] = av[i * K + t];
  Approx r2 = product(at, widen(hc), K, M, N);
  std::vector<double> g1 = widen(readResult(Y1)), g2 = widen(readResult(Y2));
  for (size_t i = 0; i < g1.size(); ++i) expectClose("A @ B.T", i, g1[i], r1.v[i], r1.e[i] + 1e-30);
  for (size_t i = 0; i < g2.size(); ++i) expectClose("A.T @ C", i, g2[i], r2.v[i], r2.e[i] + 1e-30);
  tessera_free(Y1.data);
  tessera_free(Y2.data);
}

void rowsF16(int64_t R, int64_t C) {
  std::printf("rows_f16 R=%lld C=%lld\n", (long long)R, (long long)C);
  std::vector<float> f = exec::randomFloats(R * C, -4, 4);
  std::vector<uint16_t> hx(R * C);
  for (size_t i = 0; i < f.size(); ++i) hx[i] = exec::toHalf(f[i]);
  exec::DeviceArray<uint16_t> dx(hx);
  tessera_tensor X = dx.view(TESSERA_F16, {R, C});
  tessera_tensor Y1, Y2;
  exec::check(host_bf16_rows_f16(nullptr, &X, &Y1, &Y2), "rows_f16");
  std::vector<double> x = widen(hx, false), g1 = widen(readResult(Y1), false), g2 = widen(readResult(Y2), false);
  for (int64_t i = 0; i < R; ++i) {
    double m = -INFINITY, l = 0;
    for (int64_t c = 0; c < C; ++c) m = std::max(m, x[i * C + c]);
    for (int64_t c = 0; c < C; ++c) l += std::exp(x[i * C + c] - m);
    double lse = m + std::log(l);
    for (int64_t c = 0; c < C; ++c) {
      size_t at = i * C + c;
      double sm = std::exp(x[at] - m) / l, ls = x[at] - lse, y = ls * 0.5 + x[at];
      expectClose("softmax", at, g1[at], sm, (kF16 + 1e-5 + (C + 4) * kF32) * sm + 1e-7);
      double els = kF16 * std::fabs(ls) + 1e-5 * (std::fabs(x[at]) + std::fabs(lse)) + 1e-6;
      expectClose("log_softmax * 0.5 + x", at, g2[at], y,
                  kF16 * (std::fabs(y) + 0.5 * std::fabs(ls) + els) + 0.5 * els);
    }
  }
  tessera_free(Y1.data);
  tessera_free(Y2.data);
}

}  // namespace

int main() {
  exec::requireDevice();
  attention(37, 64);
  attention(130, 128);
  attention(1, 64);
  block(37);
  block(130);
  products(29, 41, 17);
  products(130, 96, 140);
  rowsF16(13, 77);
  rowsF16(3, 1);
  if (failures) {
    std::printf("%d failure(s)\n", failures);
    return 1;
  }
  std::printf("PASS\n");
  return 0;
}
