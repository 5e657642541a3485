// The backward entry point of the bf16 transformer block (kernels/host_bf16.tessera, `block`,
// @autodiff): block_backward(x, Wqkv, Wo, dY) -> (dx, dWqkv, dWo), through rmsnorm_safe's
// gradient kernel, the products (transposed left operands through a copy), split_qkv's adjoint
// (a concat) and stdlib.nn's FlashAttention backward, checked every element against a float64
// reference of the same bf16 inputs, at odd sequence lengths; a second call gives the same bits.
//
// The reference replays the kernels' storage: every value a kernel stores in bf16 (h, qkv, dY,
// dq/dk/dv, dh, the gradients; p and dS where they are rounded for a product) is the exact value
// X of the reference's own operands, rounded to bf16. Each carries a bound e of the distance
// between the kernel's stored value and the reference's, by first-order error analysis:
//  - before the store, the kernel's f32 value Y is within d of X: f32 sums add (n + 4) 2^-24 of
//    their terms' magnitudes, and the bounds of the operands are carried through (|other
//    operand| times their bound); the recomputed probabilities move by p expm1(2 ds + (S + 8)
//    2^-24 + 6.5e-6 + 2^-23 (|s| + |lse|)), ds the bound of the row's scores;
//  - rounding is monotonic, so the stored value lies between round(X - d) and round(X + d): e is
//    the larger distance of those from round(X), 0 where no rounding boundary is that close;
//  - the attention output o is not replayed (its kernel rounds p against a running maximum): it
//    is the exact value with the forward's bound (AttentionReference.h, 2^-8 for p and the store).
// A gradient must be within e of the reference: where no bound reaches a rounding boundary, the
// same bits.
#include <algorithm>
#include <cmath>

#include "AttentionReference.h"
#include "ExecTest.h"
#include "host_bf16.h"

namespace {

int failures = 0;
const double kF32 = std::ldexp(1.0, -24), kBF16 = std::ldexp(1.0, -8);

std::vector<double> widen(const std::vector<uint16_t>& h) {
  std::vector<double> out(h.size());
  for (size_t i = 0; i < h.size(); ++i) out[i] = exec::fromBF16(h[i]);
  return out;
}

std::vector<uint16_t> readResult(const tessera_tensor& t) {
  std::vector<uint16_t> out(tessera_tensor_numel(&t));
  exec::check(tessera_memcpy(out.data(), t.data, out.size() * 2), "read result");
  return out;
}

// A matrix of values with the bound of each one's error.
struct Approx {
  int64_t rows = 0, cols = 0;
  std::vector<double> v, e;
  Approx() = default;
  Approx(int64_t r, int64_t c) : rows(r), cols(c), v(r * c, 0.0), e(r * c, 0.0) {}
  Approx(int64_t r, int64_t c, std::vector<double> values) : rows(r), cols(c), v(std::move(values)), e(r * c, 0.0) {}
  double& at(int64_t i, int64_t j) { return v[i * cols + j]; }
  double& err(int64_t i, int64_t j) { return e[i * cols + j]; }
  Approx t() const {
    Approx r(cols, rows);
    for (int64_t i = 0; i < rows; ++i)
      for (int64_t j = 0; j < cols; ++j) r.v[j * rows + i] = v[i * cols + j], r.e[j * rows + i] = e[i * cols + j];
    return r;
  }
};

double roundBF16(double x) { return exec::fromBF16(exec::toBF16(static_cast<float>(x))); }

// Stores X (the kernel's value within d of it) as bf16: the reference's value and its bound.
void store(double X, double d, double& v, double& e) {
  v = roundBF16(X);
  e = std::max(std::fabs(roundBF16(X - d) - v), std::fabs(roundBF16(X + d) - v));
}

// a @ b with f32 accumulation, stored in bf16.
Approx product(const Approx& a, const Approx& b) {
  Approx r(a.rows, b.cols);
  const int64_t K = a.cols;
  for (int64_t i = 0; i < a.rows; ++i)
    for (int64_t j = 0; j < b.cols; ++j) {
      double dot = 0, mag = 0, prop = 0;
      for (int64_t t = 0; t < K; ++t) {
        double x = a.v[i * K + t], y = b.v[t * b.cols + j], ex = a.e[i * K + t], ey = b.e[t * b.cols + j];
        dot += x * y, mag += std::fabs(x * y), prop += ex * std::fabs(y) + std::fabs(x) * ey + ex * ey;
      }
      store(dot, (K + 4) * kF32 * (mag + prop) + prop, r.v[i * b.cols + j], r.e[i * b.cols + j]);
    }
  return r;
}

// The gradients of one head's attention (columns c0.. of q, k, v in qkv, Dh wide; o and dy
// columns c0..) stored into dqkv's columns c0 (dq), C + c0 (dk), 2C + c0 (dv), as the kernels
// flash_attention_grad_kv_bf16 and _q_bf16 compute them (p and dS rounded for their products).
void attentionGradHead(const Approx& qkv, const Approx& o, const Approx& dy, int64_t C, int64_t c0, int64_t Dh,
                       Approx& dqkv) {
  const int64_t S = qkv.rows, ld = qkv.cols;
  const double scale = 1 / std::sqrt(double(Dh));
  auto Q = [&](int64_t i, int64_t d) { return i * ld + c0 + d; };
  auto K = [&](int64_t i, int64_t d) { return i * ld + C + c0 + d; };
  auto V = [&](int64_t i, int64_t d) { return i * ld + 2 * C + c0 + d; };
  auto R = [&](int64_t i, int64_t d) { return i * C + c0 + d; };
  // Sums (X), bounds (d) and magnitudes of the terms, per element of dq, dk, dv of this head.
  std::vector<double> sum[3], dev[3], mag[3];
  for (int c = 0; c < 3; ++c) sum[c].assign(S * Dh, 0.0), dev[c].assign(S * Dh, 0.0), mag[c].assign(S * Dh, 0.0);
  for (int64_t i = 0; i < S; ++i) {
    std::vector<double> s;
    double m, ds;
    scoreRowWithBound(qkv.v.data(), qkv.e.data(), S, Dh, ld, c0, C + c0, scale, i, s, m, ds);
    double l = 0;
    for (int64_t j = 0; j < S; ++j) l += std::exp(s[j] - m);
    const double lse = m + std::log(l);
    double di = 0, edi = 0, mdi = 0;
    for (int64_t d = 0; d < Dh; ++d) {
      double g = dy.v[R(i, d)], ov = o.v[R(i, d)];
      di += g * ov, mdi += std::fabs(g * ov), edi += std::fabs(g) * o.e[R(i, d)] + dy.e[R(i, d)] * std::fabs(ov);
    }
    edi += (Dh + 4) * kF32 * mdi;
    for (int64_t j = 0; j < S; ++j) {
      const double p = std::exp(s[j] - lse);
      const double ep =
          p * std::expm1(2 * ds + (S + 8) * kF32 + 6.5e-6 + 2 * kF32 * (std::fabs(s[j]) + std::fabs(lse)));
      double dp = 0, edp = 0, mdp = 0;
      for (int64_t d = 0; d < Dh; ++d) {
        double g = dy.v[R(i, d)], v = qkv.v[V(j, d)];
        dp += g * v, mdp += std::fabs(g * v), edp += std::fabs(g) * qkv.e[V(j, d)] + dy.e[R(i, d)] * std::fabs(v);
      }
      edp += (Dh + 4) * kF32 * mdp;
      double pr, epr, dsr, edsr;  // p and dS as rounded for the products
      store(p, ep, pr, epr);
      const double dS = p * (dp - di);
      store(dS, ep * std::fabs(dp - di) + (p + ep) * (edp + edi) + 2 * kF32 * std::fabs(dS), dsr, edsr);
      for (int64_t d = 0; d < Dh; ++d) {
        const double g = dy.v[R(i, d)], q = qkv.v[Q(i, d)], k = qkv.v[K(j, d)];
        const int64_t I = i * Dh + d, J = j * Dh + d;
        sum[2][J] += pr * g, mag[2][J] += std::fabs(pr * g),
            dev[2][J] += epr * std::fabs(g) + (std::fabs(pr) + epr) * dy.e[R(i, d)];
        sum[1][J] += dsr * q, mag[1][J] += std::fabs(dsr * q),
            dev[1][J] += edsr * std::fabs(q) + (std::fabs(dsr) + edsr) * qkv.e[Q(i, d)];
        sum[0][I] += dsr * k, mag[0][I] += std::fabs(dsr * k),
            dev[0][I] += edsr * std::fabs(k) + (std::fabs(dsr) + edsr) * qkv.e[K(j, d)];
      }
    }
  }
  for (int64_t i = 0; i < S; ++i)
    for (int64_t d = 0; d < Dh; ++d)
      for (int c = 0; c < 3; ++c) {
        const int64_t t = i * Dh + d, at = i * 3 * C + c * C + c0 + d;
        const double f = c == 2 ? 1 : scale;  // dk and dq: the f32 sum times scale
        const double X = f * sum[c][t];
        store(X, f * (dev[c][t] + (S + 4) * kF32 * (mag[c][t] + dev[c][t])) + kF32 * std::fabs(X), dqkv.v[at],
              dqkv.e[at]);
      }
}

// Every element within its bound, and the whole gradient within 2^-6 of the reference in the
// 2-norm (relative): the per-element bounds are worst cases (every possible rounding flip at
// once, up to an ulp each, in the same direction), so they would pass a gradient that is off by a
// few percent; the norm-wise bound is what catches that. bf16 stores at 2^-8 relative, and the
// chain's roundings move the gradients by 2^-8 to 2^-7 of their norm (measured on the CPU
// executor and the GPU), so 2^-6 is the documented bound.
void check(const char* what, const std::vector<uint16_t>& got, const Approx& want) {
  std::vector<double> g = widen(got);
  double worst = 0, diff2 = 0, norm2 = 0;
  int bad = 0;
  for (size_t i = 0; i < g.size(); ++i) {
    double err = std::fabs(g[i] - want.v[i]), bound = want.e[i];
    diff2 += err * err, norm2 += want.v[i] * want.v[i];
    if (bound > 0) worst = std::max(worst, err / bound);
    if (err <= bound && !std::isnan(g[i])) continue;
    ++bad;
    if (++failures <= 10)
      std::printf("FAIL: %s[%zu] = %.9g, reference %.9g, bound %.3g\n", what, i, g[i], want.v[i], bound);
  }
  double rel = norm2 > 0 ? std::sqrt(diff2 / norm2) : diff2 > 0 ? INFINITY : 0;
  std::printf("  %s: %zu elements, %d outside their bounds, worst %.3g of it; 2-norm relative error 2^%.2f\n", what,
              g.size(), bad, worst, std::log2(rel));
  if (!(rel <= 0x1p-6) && ++failures <= 10)
    std::printf("FAIL: %s off by 2^%.2f in the 2-norm (bound 2^-6)\n", what, std::log2(rel));
}

void blockBackward(int64_t S) {
  const int64_t C = 256, H = 4, Dh = 64;
  std::printf("block_backward S=%lld\n", (long long)S);
  std::vector<uint16_t> hx = exec::randomBF16(S * C, -2, 2), hq = exec::randomBF16(C * 3 * C, -0.1f, 0.1f),
                        hw = exec::randomBF16(C * C, -0.1f, 0.1f), hg = exec::randomBF16(S * C);
  exec::DeviceArray<uint16_t> dx(hx), dq(hq), dw(hw), dg(hg);
  tessera_tensor X = dx.view(TESSERA_BF16, {S, C}), Wqkv = dq.view(TESSERA_BF16, {C, 3 * C}),
                 Wo = dw.view(TESSERA_BF16, {C, C}), G = dg.view(TESSERA_BF16, {S, C});
  tessera_tensor out[2][3];
  for (auto& o : out)
    exec::check(host_bf16_block_backward(nullptr, &X, &Wqkv, &Wo, &G, &o[0], &o[1], &o[2]), "block_backward");
  std::vector<uint16_t> got[3];
  for (int r = 0; r < 3; ++r) {
    got[r] = readResult(out[0][r]);
    std::vector<uint16_t> again = readResult(out[1][r]);
    for (size_t i = 0; i < again.size(); ++i)
      if (again[i] != got[r][i] && ++failures <= 10) std::printf("FAIL: gradient %d not the same bits at %zu\n", r, i);
    tessera_free(out[0][r].data);
    tessera_free(out[1][r].data);
  }
  // Forward: h = rmsnorm(x), qkv = h Wqkv, o = attention per head.
  std::vector<double> x = widen(hx);
  Approx h(S, C), Wq(C, 3 * C, widen(hq)), Wout(C, C, widen(hw)), g(S, C, widen(hg));
  std::vector<double> inv(S);
  for (int64_t i = 0; i < S; ++i) {
    double ms = 0;
    for (int64_t c = 0; c < C; ++c) ms += x[i * C + c] * x[i * C + c];
    inv[i] = 1 / std::sqrt(ms / C + 1e-6);
    for (int64_t c = 0; c < C; ++c) {
      double X = x[i * C + c] * inv[i];
      store(X, std::fabs(X) * (C / 2 + 8) * kF32, h.at(i, c), h.err(i, c));
    }
  }
  Approx qkv = product(h, Wq), o(S, C);
  for (int64_t hd = 0; hd < H; ++hd)
    attendHeadWithBound(qkv.v.data(), qkv.e.data(), S, Dh, 3 * C, hd * Dh, C + hd * Dh, 2 * C + hd * Dh,
                        1 / std::sqrt(double(Dh)), o.v.data(), o.e.data(), C, hd * Dh, kBF16);
  // Backward.
  Approx dWo = product(o.t(), g), dy = product(g, Wout.t()), dqkv(S, 3 * C);
  for (int64_t hd = 0; hd < H; ++hd) attentionGradHead(qkv, o, dy, C, hd * Dh, Dh, dqkv);
  Approx dh = product(dqkv, Wq.t()), dWq = product(h.t(), dqkv), dxr(S, C);
  for (int64_t i = 0; i < S; ++i) {
    const double ei = (C + 8) * kF32;  // inv's relative error (f32 statistics)
    double m = 0, em = 0, mm = 0;
    for (int64_t c = 0; c < C; ++c) {
      double n = x[i * C + c] * inv[i];
      m += dh.at(i, c) * n, mm += std::fabs(dh.at(i, c) * n), em += dh.err(i, c) * std::fabs(n);
    }
    m /= C, em = em / C + (mm / C) * (2 * ei + (C + 4) * kF32);
    for (int64_t c = 0; c < C; ++c) {
      double n = x[i * C + c] * inv[i], u = dh.at(i, c);
      double X = inv[i] * (u - n * m);
      double d = inv[i] * (dh.err(i, c) + std::fabs(n) * em) + std::fabs(X) * 2 * ei +
                 inv[i] * (std::fabs(u) + std::fabs(n * m)) * 4 * kF32;
      store(X, d, dxr.at(i, c), dxr.err(i, c));
    }
  }
  check("dx", got[0], dxr);
  check("dWqkv", got[1], dWq);
  check("dWo", got[2], dWo);
}

}  // namespace

int main() {
  exec::requireDevice();
  blockBackward(37);
  blockBackward(130);
  blockBackward(1);
  if (failures) {
    std::printf("%d failure(s)\n", failures);
    return 1;
  }
  std::printf("PASS\n");
  return 0;
}
