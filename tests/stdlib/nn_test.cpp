// stdlib.nn against float64 references on fresh random inputs, every element, bounds per dtype
// (docs/stdlib.md): softmax, log_softmax, rmsnorm_safe, layernorm_safe, cross_entropy (f32,
// bf16, f16), gelu/silu and the bias epilogues. Row lengths are random and odd, and one case is
// longer than the 8192 elements staged in shared memory. "Safe": rows of 1e30 (f32) and 6e4
// (f16), constant rows and all-zero rows stay finite and correct, and so do rows of subnormals
// and tiny rows (1e-40, 1e-25, 1e-19; f16 6e-7) with eps 1e-5 and 0, whose 1 / max|x| overflows
// or whose squares underflow (issue 33: NaN, 0 or wrong values before). Masked rows (every
// element -inf) give softmax 0, log_softmax -inf and a cross entropy of +inf, not NaN (issue 33),
// and partly masked rows the softmax of the rest. Every entry gives the same bits on a second
// launch.
#include "StdTest.h"

using namespace stdtest;

namespace {

// The f32 part of an entry's bound: a few units in the last place plus the fixed-order sums'
// growth (tiles fold up to ~40 elements, then 8 tree levels), relative.
constexpr double kF32 = 8e-6;

// Below the normal range a rounding errs by half the subnormals' spacing, not by half an ulp of
// the value: 2^-25 (f16; 3e-8 here), 2^-134 (bf16), 2^-150 (f32, where a subnormal result takes
// two roundings: the product by the scale and by the weight).
double outBound(DT out, double ref, double f32part) {
  return f32part + halfUlp(out) * std::fabs(ref) + (out == DT::F16 ? 3e-8 : out == DT::BF16 ? 0x1p-134 : 0x1p-149);
}

using RowKernel = tessera_status (*)(const tessera_launch_options*, const tessera_tensor*, const tessera_tensor*);

struct Rows {
  int64_t R, N;
};

// Row 0 masked (every element -inf) and row 1 partly (about a third of its elements), when there
// are rows to spare.
std::vector<float> withMaskedRows(std::vector<float> v, Rows s) {
  if (s.R < 3) return v;
  for (int64_t j = 0; j < s.N; ++j) v[j] = -INFINITY;
  for (int64_t j = 0; j < s.N; ++j)
    if (randomIn(0, 2) == 0) v[s.N + j] = -INFINITY;
  return v;
}

bool checkSoftmax(DT dt, Rows s, bool log) {
  Host x(dt, withMaskedRows(exec::randomFloats(s.R * s.N, -8.0f, 8.0f), s));
  Dev dx(x), dy(dt, s.R * s.N);
  tessera_tensor tx = dx.view({s.R, s.N}), ty = dy.view({s.R, s.N});
  RowKernel k = log ? (dt == DT::F32    ? tessera_std_nn_log_softmax_f32
                       : dt == DT::BF16 ? tessera_std_nn_log_softmax_bf16
                                        : tessera_std_nn_log_softmax_f16)
                    : (dt == DT::F32    ? tessera_std_nn_softmax_f32
                       : dt == DT::BF16 ? tessera_std_nn_softmax_bf16
                                        : tessera_std_nn_softmax_f16);
  exec::check(k(nullptr, &tx, &ty), "softmax");
  exec::check(tessera_synchronize(), "synchronize");
  std::vector<float> got = dy.read();
  std::vector<double> want(got.size()), bound(got.size());
  for (int64_t r = 0; r < s.R; ++r) {
    double m = -INFINITY, sum = 0;
    for (int64_t j = 0; j < s.N; ++j) m = std::max(m, static_cast<double>(x.v[r * s.N + j]));
    for (int64_t j = 0; j < s.N; ++j) sum += std::exp(x.v[r * s.N + j] - m);
    for (int64_t j = 0; j < s.N; ++j) {
      size_t i = r * s.N + j;
      double d = x.v[i] - m;
      want[i] = log ? d - std::log(sum) : std::exp(d) / sum;
      if (m == -INFINITY) want[i] = log ? -INFINITY : 0.0;  // a masked row
      bound[i] = outBound(dt, want[i], log ? kF32 * (std::fabs(want[i]) + 1) : kF32 * want[i]);
    }
  }
  std::string what = std::string(log ? "log_softmax_" : "softmax_") + name(dt) + " N=" + std::to_string(s.N);
  bool ok = within(got, want, bound, what);
  exec::check(k(nullptr, &tx, &ty), "softmax again");
  exec::check(tessera_synchronize(), "synchronize");
  return ok & same(dy.read(), got, what + " on a second launch");
}

using NormKernel = tessera_status (*)(const tessera_launch_options*, const tessera_tensor*, const tessera_tensor*,
                                      const tessera_tensor*, float);
using LayerKernel = tessera_status (*)(const tessera_launch_options*, const tessera_tensor*, const tessera_tensor*,
                                       const tessera_tensor*, const tessera_tensor*, float);

// rmsnorm (layer = false) or layernorm of rows `v` (already chosen: random, huge, constant).
bool checkNorm(DT dt, Rows s, std::vector<float> v, bool layer, float eps, const std::string& label) {
  Host x(dt, std::move(v)), w(dt, exec::randomFloats(s.N, 0.5f, 1.5f)), b(dt, exec::randomFloats(s.N, -1.0f, 1.0f));
  Dev dx(x), dw(w), db(b), dy(dt, s.R * s.N);
  tessera_tensor tx = dx.view({s.R, s.N}), tw = dw.view({s.N}), tb = db.view({s.N}), ty = dy.view({s.R, s.N});
  auto launch = [&] {
    if (layer) {
      LayerKernel k = dt == DT::F32    ? tessera_std_nn_layernorm_safe_f32
                      : dt == DT::BF16 ? tessera_std_nn_layernorm_safe_bf16
                                       : tessera_std_nn_layernorm_safe_f16;
      exec::check(k(nullptr, &tx, &tw, &tb, &ty, eps), "layernorm_safe");
    } else {
      NormKernel k = dt == DT::F32    ? tessera_std_nn_rmsnorm_safe_f32
                     : dt == DT::BF16 ? tessera_std_nn_rmsnorm_safe_bf16
                                      : tessera_std_nn_rmsnorm_safe_f16;
      exec::check(k(nullptr, &tx, &tw, &ty, eps), "rmsnorm_safe");
    }
    exec::check(tessera_synchronize(), "synchronize");
    return dy.read();
  };
  std::vector<float> got = launch();
  std::vector<double> want(got.size()), bound(got.size());
  for (int64_t r = 0; r < s.R; ++r) {
    double mean = 0, ss = 0;
    if (layer) {
      for (int64_t j = 0; j < s.N; ++j) mean += x.v[r * s.N + j];
      mean /= s.N;
    }
    for (int64_t j = 0; j < s.N; ++j) ss += (x.v[r * s.N + j] - mean) * (x.v[r * s.N + j] - mean);
    double t = ss / s.N + eps;
    double inv = t == 0 ? 0 : 1 / std::sqrt(t);
    for (int64_t j = 0; j < s.N; ++j) {
      size_t i = r * s.N + j;
      want[i] = (x.v[i] - mean) * inv * w.v[j] + (layer ? b.v[j] : 0);
      // x - mean cancels: the bound follows |x| + |mean|, not the result.
      double scale = (std::fabs(x.v[i]) + std::fabs(mean)) * inv * std::fabs(w.v[j]) + (layer ? std::fabs(b.v[j]) : 0);
      // (x h) ih can fall below f32's normal range (rows of subnormals): that product rounds to
      // half a subnormal step, which the multiplication by w carries into the result.
      bound[i] = outBound(dt, want[i], kF32 * scale + 0x1p-150 * std::fabs(w.v[j]));
    }
  }
  std::string what = std::string(layer ? "layernorm_safe_" : "rmsnorm_safe_") + name(dt) + " " + label;
  bool ok = within(got, want, bound, what);
  size_t bad = 0;
  for (float g : got) bad += !std::isfinite(g);
  if (bad) std::printf("  %s: %zu results are not finite\n", what.c_str(), bad);
  return ok && !bad && same(launch(), got, what + " on a second launch");
}

// Rows of subnormals and tiny rows, eps 1e-5 and 0: 1 / max|x| overflows (subnormals) and the
// squares underflow (below 1e-19), which gave NaN for every element, or 0 and wrong values with
// eps = 0. f16's subnormals are below 6.1e-5 (its squares underflow in f32 only through f16 x).
bool checkTinyRows(DT dt, Rows s) {
  std::vector<float> scales =
      dt == DT::F16 ? std::vector<float>{6e-7f, 3e-5f} : std::vector<float>{1e-40f, 1e-25f, 1e-19f};
  bool ok = true;
  for (float tiny : scales)
    for (float eps : {1e-5f, 0.0f})
      for (bool layer : {false, true}) {
        std::vector<float> v = exec::randomFloats(s.R * s.N, -tiny, tiny);
        if (layer && s.R > 1)  // an offset row: the mean is most of each element
          for (int64_t j = 0; j < s.N; ++j) v[s.N + j] = tiny * (4.0f + v[s.N + j] / tiny);
        char label[64];
        std::snprintf(label, sizeof label, "rows of %g, eps %g", tiny, eps);
        ok &= checkNorm(dt, s, v, layer, eps, label);
      }
  return ok;
}

bool checkNorms(DT dt, Rows s) {
  bool ok = true;
  for (bool layer : {false, true}) {
    ok &= checkNorm(dt, s, exec::randomFloats(s.R * s.N, -3.0f, 3.0f), layer, 1e-5f, "N=" + std::to_string(s.N));
    // Safe: the largest magnitudes of the dtype's range, constant rows and an all-zero row.
    float big = dt == DT::F32 ? 1e30f : dt == DT::F16 ? 6e4f : 1e30f;
    std::vector<float> v = exec::randomFloats(s.R * s.N, -big, big);
    for (int64_t j = 0; j < s.N; ++j) v[j] = big;  // constant huge row
    if (s.R > 1)
      for (int64_t j = 0; j < s.N; ++j) v[s.N + j] = 3.5f;
    if (s.R > 2)
      for (int64_t j = 0; j < s.N; ++j) v[2 * s.N + j] = 0.0f;
    ok &= checkNorm(dt, s, v, layer, 1e-5f, "rows of " + std::to_string(big) + ", constant and zero rows");
    // f32 rows near the top of the range, whose sums overflow (layernorm's scaled mean pass).
    if (dt == DT::F32) {
      std::vector<float> top = exec::randomFloats(s.R * s.N, -1.0f, 1.0f);
      for (float& x : top) x *= 3e38f;
      // A row whose x - mean overflows f32 (2.84e38 - (-5.9e37)): once a seed's, now always row 0.
      const float overflowing[] = {-2.82074366e38f, -3.61222388e37f, 2.83731683e38f,
                                   -7.03150006e36f, -2.7454513e38f,  -4.00352252e37f};
      for (int64_t j = 0; j < s.N; ++j) top[j] = overflowing[j % 6];
      ok &= checkNorm(dt, s, top, layer, 1e-5f, "rows of 3e38");
    }
  }
  ok &= checkTinyRows(dt, s);
  // eps = 0: a zero row gives zeros, not NaN.
  ok &= checkNorm(dt, {2, s.N}, std::vector<float>(2 * s.N, 0.0f), false, 0.0f, "zero rows, eps 0");
  ok &= checkNorm(dt, {2, s.N}, std::vector<float>(2 * s.N, 0.0f), true, 0.0f, "zero rows, eps 0");
  // eps = 0 and constant rows of a random value: variance exactly 0, so layernorm gives b (its
  // mean is the row's value exactly, not a rounded sum over N).
  std::vector<float> c(2 * s.N, exec::randomFloats(1, -100.0f, 100.0f)[0]);
  float small = exec::randomFloats(1, -1e-3f, 1e-3f)[0];
  for (int64_t j = 0; j < s.N; ++j) c[s.N + j] = small;
  ok &= checkNorm(dt, {2, s.N}, c, false, 0.0f, "constant rows, eps 0");
  ok &= checkNorm(dt, {2, s.N}, c, true, 0.0f, "constant rows, eps 0");
  return ok;
}

bool checkCrossEntropy(DT dt, Rows s) {
  std::vector<float> v = withMaskedRows(exec::randomFloats(s.R * s.N, -10.0f, 10.0f), s);
  std::vector<int64_t> target(s.R);
  for (int64_t r = 0; r < s.R; ++r) target[r] = randomIn(0, s.N - 1);
  if (s.R > 1) target[1] = -100;                    // ignored
  if (s.R > 3) v[2 * s.N + target[2]] = -INFINITY;  // a target of probability 0
  Host x(dt, v);
  Dev dx(x), dl(DT::F32, s.R);
  exec::DeviceArray<int64_t> dt64(target);
  tessera_tensor tx = dx.view({s.R, s.N}), tt = dt64.view(TESSERA_I64, {s.R}), tl = dl.view({s.R});
  auto k = dt == DT::F32    ? tessera_std_nn_cross_entropy_f32
           : dt == DT::BF16 ? tessera_std_nn_cross_entropy_bf16
                            : tessera_std_nn_cross_entropy_f16;
  exec::check(k(nullptr, &tx, &tt, &tl), "cross_entropy");
  exec::check(tessera_synchronize(), "synchronize");
  std::vector<float> got = dl.read();
  std::vector<double> want(s.R), bound(s.R);
  for (int64_t r = 0; r < s.R; ++r) {
    double m = -INFINITY, sum = 0;
    for (int64_t j = 0; j < s.N; ++j) m = std::max(m, static_cast<double>(x.v[r * s.N + j]));
    for (int64_t j = 0; j < s.N; ++j) sum += std::exp(x.v[r * s.N + j] - m);
    bool ok = target[r] >= 0 && target[r] < s.N;
    want[r] = ok ? std::log(sum) + m - x.v[r * s.N + target[r]] : 0.0;
    if (ok && (m == -INFINITY || x.v[r * s.N + target[r]] == -INFINITY)) want[r] = INFINITY;  // probability 0
    bound[r] = kF32 * (1 + std::fabs(want[r]) + std::fabs(m) + std::log(sum));
  }
  std::string what = std::string("cross_entropy_") + name(dt) + " N=" + std::to_string(s.N);
  bool ok = within(got, want, bound, what);
  exec::check(k(nullptr, &tx, &tt, &tl), "cross_entropy again");
  exec::check(tessera_synchronize(), "synchronize");
  return ok & same(dl.read(), got, what + " on a second launch");
}

// The f32 part of an activation's bound (act: 1 relu, 2 gelu, 4 silu): a few ulps of the result,
// and for gelu = 0.5 v (1 + erf(v / sqrt 2)) the error of erf itself, which 1 + erf does not
// shrink where erf is near -1: erff is within 2 ulps on the GPU (CUDA Math API; glibc's within
// 1), 2 ulps of a value in [0.5, 1) are 2^-23, so 0.5 |v| 2^-23 = |v| 2^-24.
double activationBound(int act, double v, double y) {
  return 4e-7 * std::fabs(y) + 1e-7 + (act == 2 ? std::fabs(v) * 0x1p-24 : 0.0);
}

double gelu(double v) { return 0.5 * v * (1 + std::erf(v / std::sqrt(2.0))); }
double silu(double v) { return v / (1 + std::exp(-v)); }

bool checkActivations(DT dt) {
  int64_t n = randomIn(1, 100000);
  Host x(dt, exec::randomFloats(n, -6.0f, 6.0f));
  Dev dx(x), dy(dt, n);
  tessera_tensor tx = dx.view({n}), ty = dy.view({n});
  bool ok = true;
  for (int act = 0; act < 2; ++act) {
    bool f32 = dt == DT::F32;
    RowKernel k = act == 0 ? (f32 ? tessera_std_nn_gelu_f32 : tessera_std_nn_gelu_bf16)
                           : (f32 ? tessera_std_nn_silu_f32 : tessera_std_nn_silu_bf16);
    exec::check(k(nullptr, &tx, &ty), "activation");
    exec::check(tessera_synchronize(), "synchronize");
    std::vector<double> want(n), bound(n);
    for (int64_t i = 0; i < n; ++i) {
      want[i] = act == 0 ? gelu(x.v[i]) : silu(x.v[i]);
      bound[i] = outBound(dt, want[i], activationBound(act == 0 ? 2 : 4, x.v[i], want[i]));
    }
    ok &= within(dy.read(), want, bound, std::string(act == 0 ? "gelu_" : "silu_") + name(dt));
  }
  // Bias epilogues over rows.
  int64_t R = randomIn(1, 20), N = randomIn(1, 3000);
  Host xr(dt, exec::randomFloats(R * N, -4.0f, 4.0f)), b(dt, exec::randomFloats(N, -1.0f, 1.0f));
  Dev dxr(xr), db(b), dyr(dt, R * N);
  tessera_tensor txr = dxr.view({R, N}), tb = db.view({N}), tyr = dyr.view({R, N});
  using BiasKernel = tessera_status (*)(const tessera_launch_options*, const tessera_tensor*, const tessera_tensor*,
                                        const tessera_tensor*);
  struct B {
    const char* name;
    BiasKernel k;
    int act;
  };
  std::vector<B> bias = dt == DT::F32 ? std::vector<B>{{"bias_relu_f32", tessera_std_nn_bias_relu_f32, 1},
                                                       {"bias_gelu_f32", tessera_std_nn_bias_gelu_f32, 2},
                                                       {"bias_silu_f32", tessera_std_nn_bias_silu_f32, 4}}
                                      : std::vector<B>{{"bias_gelu_bf16", tessera_std_nn_bias_gelu_bf16, 2},
                                                       {"bias_silu_bf16", tessera_std_nn_bias_silu_bf16, 4}};
  for (const B& e : bias) {
    exec::check(e.k(nullptr, &txr, &tb, &tyr), e.name);
    exec::check(tessera_synchronize(), "synchronize");
    std::vector<double> want(R * N), bound(R * N);
    for (int64_t i = 0; i < R * N; ++i) {
      double v = static_cast<double>(static_cast<float>(xr.v[i] + b.v[i % N]));
      want[i] = e.act == 1 ? std::max(v, 0.0) : e.act == 2 ? gelu(v) : silu(v);
      bound[i] = outBound(dt, want[i], activationBound(e.act, v, want[i]));
    }
    ok &= within(dyr.read(), want, bound, e.name);
  }
  return ok;
}

}  // namespace

int main() {
  exec::requireDevice();
  bool ok = true;
  for (DT dt : {DT::F32, DT::BF16, DT::F16}) {
    Rows shapes[] = {{randomIn(1, 12), randomIn(1, 3000)},
                     {randomIn(1, 6), randomIn(8193, 11000)},
                     {randomIn(2, 9), 1024 * randomIn(1, 8)}};
    for (Rows s : shapes) {
      std::printf("-- %s: R = %lld, N = %lld\n", name(dt), static_cast<long long>(s.R), static_cast<long long>(s.N));
      ok &= checkSoftmax(dt, s, false);
      ok &= checkSoftmax(dt, s, true);
      ok &= checkNorms(dt, s);
      ok &= checkCrossEntropy(dt, s);
    }
    if (dt != DT::F16) ok &= checkActivations(dt);
  }
  return exec::finish(ok);
}
