// tests/exec/kernels/products: whole-tensor programs of products with epilogues (a bias, GELU,
// SiLU, a select, a scalar, a residual; Wt.T; SwiGLU's two products sharing X; three layers).
// On an sm_90 GPU with views TMA can read they run as steps of the TMA + wgmma schedule
// (intermediates rounded to the operands' 16-bit type in scratch matrices); elsewhere on the
// portable path (intermediates in f32). Every element is checked against a float64 evaluation of
// the program that carries, per element, a bound on the error any of the forms may make: each
// f32 sum of K products in any order (K 2^-24 sum |terms|, plus the propagated operand errors),
// each f32 operation (2^-24 of its result, 2^-21 for the library's tanh and exp), an activation's
// Lipschitz constant on the error of its argument, and each rounding to bf16/f16 (half an ulp:
// 2^-9 / 2^-12 of the value, taken as 2^-8 / 2^-11). Hostile values in the residual (NaN, inf)
// must come out at their elements only. Shapes: partial tiles at every edge of the sm_90a form,
// odd extents TMA cannot read (the portable path on every device), one row. A second launch must
// give the same bits.
#include "products.h"

#include <cmath>
#include <cstring>
#include <functional>

#include "ExecTest.h"

namespace {

using exec::fromBF16;
using exec::fromHalf;

// A value of the reference with its error bound.
struct Val {
  double v = 0, err = 0;
};

constexpr double kF32 = 0x1p-24, kLib = 0x1p-21, kBF16 = 0x1p-8, kF16 = 0x1p-11;

// An f32 operation's result: its rounding (and `extra` relative error of a library function).
Val op(double v, double err, double extra = 0) { return {v, err + (kF32 + extra) * std::fabs(v) + 1e-38}; }
Val round16(Val a, double rel) { return {a.v, a.err + rel * (std::fabs(a.v) + a.err)}; }

double gelu(double x) { return 0.5 * x * (1 + std::tanh(0.7978845608028654 * (x + 0.044715 * x * x * x))); }
double silu(double x) { return x / (1 + std::exp(-x)); }
// Lipschitz constants of the activations (|d/dx| bounds).
constexpr double kGeluL = 1.13, kSiluL = 1.1;

// A matrix of reference values, row-major.
struct Mat {
  int64_t rows = 0, cols = 0;
  std::vector<Val> e;
  Val& at(int64_t r, int64_t c) { return e[r * cols + c]; }
};

// A [rows, K] times B: B(k, n) reads the weight; every f32 sum of K terms in any order.
Mat product(Mat& a, int64_t K, int64_t N, const std::function<double(int64_t, int64_t)>& B) {
  Mat r{a.rows, N, std::vector<Val>(a.rows * N)};
  for (int64_t m = 0; m < a.rows; ++m)
    for (int64_t n = 0; n < N; ++n) {
      double v = 0, mag = 0, err = 0;
      for (int64_t k = 0; k < K; ++k) {
        double w = B(k, n);
        Val x = a.at(m, k);
        v += x.v * w, mag += std::fabs(x.v * w), err += x.err * std::fabs(w);
      }
      r.at(m, n) = {v, err + 1.01 * K * kF32 * (mag + err) + 1e-38};
    }
  return r;
}

Mat input(const std::vector<uint16_t>& x, int64_t rows, int64_t cols, bool half = false) {
  Mat r{rows, cols, std::vector<Val>(rows * cols)};
  for (int64_t i = 0; i < rows * cols; ++i) r.e[i] = {half ? fromHalf(x[i]) : fromBF16(x[i]), 0};
  return r;
}

template <class F>
void each(Mat& m, F f) {
  for (int64_t r = 0; r < m.rows; ++r)
    for (int64_t c = 0; c < m.cols; ++c) m.at(r, c) = f(m.at(r, c), r, c);
}

// got (f32 values of the output) against the reference: within each bound, NaN and infinities
// exactly where the reference has them.
bool check(const std::vector<float>& got, const Mat& want, const char* what) {
  size_t bad = 0;
  double worst = 0;
  for (size_t i = 0; i < want.e.size(); ++i) {
    const Val& w = want.e[i];
    bool ok;
    if (std::isnan(w.v))
      ok = std::isnan(got[i]);
    else if (std::isinf(w.v))
      ok = got[i] == w.v;
    else {
      double err = std::fabs(static_cast<double>(got[i]) - w.v);
      ok = err <= w.err && !std::isnan(got[i]);
      worst = std::max(worst, err / w.err);
    }
    if (!ok && bad++ < 5) std::printf("  %s[%zu] = %.9g, expected %.9g (bound %.3g)\n", what, i, got[i], w.v, w.err);
  }
  std::printf("%s: %zu elements, %zu outside their bounds, worst error %.3g of its bound\n", what, want.e.size(), bad,
              worst);
  std::printf("digest %s %016llx (within a bound)\n", what, static_cast<unsigned long long>(exec::digest(got)));
  return bad == 0;
}

std::vector<float> widen(const std::vector<uint16_t>& v, bool half = false) {
  std::vector<float> r(v.size());
  for (size_t i = 0; i < v.size(); ++i) r[i] = half ? fromHalf(v[i]) : fromBF16(v[i]);
  return r;
}

std::vector<uint16_t> random16(size_t n, float scale, bool half = false) {
  std::vector<float> f = exec::randomFloats(n, -scale, scale);
  std::vector<uint16_t> h(n);
  for (size_t i = 0; i < n; ++i) h[i] = half ? exec::toHalf(f[i]) : exec::toBF16(f[i]);
  return h;
}

// Launches twice: the result of the first, and whether the second gave the same bits.
template <class T, class L>
std::vector<T> twice(exec::DeviceArray<T>& out, L launch, bool& same, const char* what) {
  launch();
  exec::check(tessera_synchronize(), what);
  std::vector<T> first = out.read();
  launch();
  exec::check(tessera_synchronize(), what);
  same &= exec::allEqual(out.read(), first, what);
  return first;
}

bool biasGeluRes(int64_t M, int64_t K, int64_t N) {
  auto x = random16(M * K, 1), w = random16(K * N, 0.5f), b = random16(N, 1), r = random16(M * N, 1);
  if (M * N > 3) r[1] = 0x7FC0, r[M * N - 2] = 0x7F80;  // NaN, +inf
  exec::DeviceArray<uint16_t> dx(x), dw(w), db(b), dr(r), dout(std::vector<uint16_t>(M * N, 0x7FC1));
  bool same = true;
  auto got = twice(
      dout,
      [&] {
        exec::check(products::bias_gelu_res(dx.view(TESSERA_BF16, {M, K}), dw.view(TESSERA_BF16, {K, N}),
                                            db.view(TESSERA_BF16, {N}), dr.view(TESSERA_BF16, {M, N}),
                                            dout.view(TESSERA_BF16, {M, N})),
                    "bias_gelu_res");
      },
      same, "bias_gelu_res (second launch)");
  Mat X = input(x, M, K);
  Mat y = product(X, K, N, [&](int64_t k, int64_t n) { return fromBF16(w[k * N + n]); });
  each(y, [&](Val p, int64_t m, int64_t n) {
    Val s = op(p.v + fromBF16(b[n]), p.err);
    Val g = op(gelu(s.v), kGeluL * s.err, 4 * kLib);
    return round16(op(g.v + fromBF16(r[m * N + n]), g.err), kBF16);
  });
  return check(widen(got), y, "bias_gelu_res") && same;
}

bool linearSilu(int64_t M, int64_t K, int64_t N) {
  auto x = random16(M * K, 1), wt = random16(N * K, 0.5f);
  const float alpha = 0.75f;
  exec::DeviceArray<uint16_t> dx(x), dw(wt);
  exec::DeviceArray<float> dout(std::vector<float>(M * N, std::nanf("")));
  bool same = true;
  auto got = twice(
      dout,
      [&] {
        exec::check(products::linear_silu(dx.view(TESSERA_BF16, {M, K}), dw.view(TESSERA_BF16, {N, K}), alpha,
                                          dout.view(TESSERA_F32, {M, N})),
                    "linear_silu");
      },
      same, "linear_silu (second launch)");
  Mat X = input(x, M, K);
  Mat y = product(X, K, N, [&](int64_t k, int64_t n) { return fromBF16(wt[n * K + k]); });
  each(y, [&](Val p, int64_t, int64_t) {
    Val s = op(silu(p.v), kSiluL * p.err, 4 * kLib);
    return op(s.v * alpha, s.err * alpha);
  });
  return check(got, y, "linear_silu") && same;
}

bool leaky(int64_t M, int64_t K, int64_t N) {
  auto x = random16(M * K, 1, true), w = random16(K * N, 0.5f, true);
  exec::DeviceArray<uint16_t> dx(x), dw(w), dout(std::vector<uint16_t>(M * N, 0x7E01));
  bool same = true;
  auto got = twice(
      dout,
      [&] {
        exec::check(
            products::leaky(dx.view(TESSERA_F16, {M, K}), dw.view(TESSERA_F16, {K, N}), dout.view(TESSERA_F16, {M, N})),
            "leaky");
      },
      same, "leaky (second launch)");
  Mat X = input(x, M, K, true);
  Mat y = product(X, K, N, [&](int64_t k, int64_t n) { return fromHalf(w[k * N + n]); });
  // Near 0 either branch may be taken: both are within the error of y there.
  each(y, [&](Val p, int64_t, int64_t) { return round16(op(p.v > 0 ? p.v : 0.125 * p.v, 1.125 * p.err), kF16); });
  return check(widen(got, true), y, "leaky") && same;
}

bool swiglu(int64_t M, int64_t D, int64_t H, int64_t E) {
  auto x = random16(M * D, 1), w1 = random16(D * H, 0.5f), w3 = random16(D * H, 0.5f), w2 = random16(H * E, 0.5f);
  exec::DeviceArray<uint16_t> dx(x), dw1(w1), dw3(w3), dw2(w2), dout(std::vector<uint16_t>(M * E, 0x7FC1));
  bool same = true;
  auto got = twice(
      dout,
      [&] {
        exec::check(products::swiglu(dx.view(TESSERA_BF16, {M, D}), dw1.view(TESSERA_BF16, {D, H}),
                                     dw3.view(TESSERA_BF16, {D, H}), dw2.view(TESSERA_BF16, {H, E}),
                                     dout.view(TESSERA_BF16, {M, E})),
                    "swiglu");
      },
      same, "swiglu (second launch)");
  Mat X = input(x, M, D);
  Mat a = product(X, D, H, [&](int64_t k, int64_t n) { return fromBF16(w1[k * H + n]); });
  Mat g = product(X, D, H, [&](int64_t k, int64_t n) { return fromBF16(w3[k * H + n]); });
  each(a, [&](Val p, int64_t m, int64_t n) {
    Val s = op(silu(p.v), kSiluL * p.err, 4 * kLib);
    Val q = g.at(m, n);
    return round16(op(s.v * q.v, std::fabs(s.v) * q.err + std::fabs(q.v) * s.err + s.err * q.err), kBF16);
  });
  Mat y = product(a, H, E, [&](int64_t k, int64_t n) { return fromBF16(w2[k * E + n]); });
  each(y, [&](Val p, int64_t, int64_t) { return round16(p, kBF16); });
  return check(widen(got), y, "swiglu") && same;
}

bool mlp3(int64_t M, int64_t D, int64_t H, int64_t F, int64_t E) {
  auto x = random16(M * D, 1), w1 = random16(D * H, 0.5f), b1 = random16(H, 1), w2 = random16(H * F, 0.5f),
       w3t = random16(E * F, 0.5f);
  exec::DeviceArray<uint16_t> dx(x), dw1(w1), db1(b1), dw2(w2), dw3(w3t);
  exec::DeviceArray<float> dout(std::vector<float>(M * E, std::nanf("")));
  bool same = true;
  auto got = twice(
      dout,
      [&] {
        exec::check(products::mlp3(dx.view(TESSERA_BF16, {M, D}), dw1.view(TESSERA_BF16, {D, H}),
                                   db1.view(TESSERA_BF16, {H}), dw2.view(TESSERA_BF16, {H, F}),
                                   dw3.view(TESSERA_BF16, {E, F}), dout.view(TESSERA_F32, {M, E})),
                    "mlp3");
      },
      same, "mlp3 (second launch)");
  Mat X = input(x, M, D);
  Mat h1 = product(X, D, H, [&](int64_t k, int64_t n) { return fromBF16(w1[k * H + n]); });
  each(h1, [&](Val p, int64_t, int64_t n) {
    Val s = op(p.v + fromBF16(b1[n]), p.err);
    return round16({std::max(s.v, 0.0), s.err}, kBF16);
  });
  Mat h2 = product(h1, H, F, [&](int64_t k, int64_t n) { return fromBF16(w2[k * F + n]); });
  each(h2, [&](Val p, int64_t, int64_t) { return round16(op(gelu(p.v), kGeluL * p.err, 4 * kLib), kBF16); });
  Mat y = product(h2, F, E, [&](int64_t k, int64_t n) { return fromBF16(w3t[n * F + k]); });
  return check(got, y, "mlp3") && same;
}

}  // namespace

int main() {
  exec::requireDevice();
  bool ok = true;
  // (M, K, N): partial tiles of the sm_90a form in every dimension (rows of 16-byte multiples),
  // odd extents TMA cannot read, one row, and random multiples of 8.
  std::uniform_int_distribution<int64_t> rows(1, 300), dims(1, 40);
  struct Shape {
    int64_t m, k, n;
  };
  std::vector<Shape> shapes = {{200, 72, 264}, {130, 136, 8}, {77, 33, 19}, {1, 8, 16}};
  shapes.push_back({rows(exec::rng()), 8 * dims(exec::rng()), 8 * dims(exec::rng())});
  for (const Shape& s : shapes) {
    std::printf("M=%lld K=%lld N=%lld\n", (long long)s.m, (long long)s.k, (long long)s.n);
    ok &= biasGeluRes(s.m, s.k, s.n);
    ok &= linearSilu(s.m, s.k, s.n);
    ok &= leaky(s.m, s.k, s.n);
    ok &= swiglu(s.m, s.k, s.n + 8, s.k + 16);
    ok &= mlp3(s.m, s.k, s.n, s.k + 8, s.n + 24);
  }
  return exec::finish(ok);
}
