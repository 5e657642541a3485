// Host functions compiled into entry points (kernels/host_programs.tessera; docs/abi.md, "Host
// entry points"): each is called through its C function in the generated header with fresh
// random inputs at odd sizes, and every element of every result is checked in float64 against
// a reference with a bound derived from the kernel's arithmetic:
//  - f32 dot products and row sums of n terms: (n + 4) * 2^-24 of the sum of the terms' magnitudes
//    (each partial sum rounds once, the products once);
//  - attention: the scores' rounding (D + 4) * 2^-24 * scale * sum|q_d k_d| moves each exp by that
//    much relatively, the online rescaling adds (T + 8) * 2^-24; both scale sum_j p_j |v_j| / l;
//  - f64 (mlp): the same with 2^-53, plus tanh's and exp's few ulps.
// The same test runs on the module compiled with every graph rewrite off (host_programs_nopasses,
// HOST_GRAPH_PASSES_OFF): the rewrites must not change the results.
// Also: a second call returns the same bits; results belong to the caller (freed with
// tessera_free); a shape mismatch returns SHAPE_MISMATCH naming the kernel and parameter and
// leaves the result untouched; null arguments return NULL_POINTER.
#include "host_programs.h"

#include <cmath>

#include "AttentionReference.h"
#include "ExecTest.h"

namespace {

int failures = 0;

void expectClose(const char* what, size_t i, double got, double want, double bound) {
  if (std::fabs(got - want) <= bound && !std::isnan(got)) return;
  if (++failures <= 10) std::printf("FAIL: %s[%zu] = %.9g, reference %.9g, bound %.3g\n", what, i, got, want, bound);
}

template <class T>
std::vector<T> readResult(const tessera_tensor& t) {
  std::vector<T> out(tessera_tensor_numel(&t));
  exec::check(tessera_memcpy(out.data(), t.data, out.size() * sizeof(T)), "read result");
  return out;
}

const double kF32 = std::ldexp(1.0, -24), kF64 = std::ldexp(1.0, -53);

// O = softmax(Q K^T) V (no scale: the spec's module has none), S x D, T x D, T x E.
void attention(int64_t S, int64_t D, int64_t T, int64_t E) {
  std::printf("attention S=%lld D=%lld T=%lld E=%lld\n", (long long)S, (long long)D, (long long)T, (long long)E);
  auto q = exec::randomFloats(S * D, -1, 1), k = exec::randomFloats(T * D, -1, 1), v = exec::randomFloats(T * E);
  exec::DeviceArray<float> dq(q), dk(k), dv(v);
  tessera_tensor Q = dq.view(TESSERA_F32, {S, D}), K = dk.view(TESSERA_F32, {T, D}), V = dv.view(TESSERA_F32, {T, E});
  tessera_tensor O, O2;
  exec::check(host_programs_attention(nullptr, &Q, &K, &V, &O), "attention");
  exec::check(host_programs_attention(nullptr, &Q, &K, &V, &O2), "attention (again)");
  if (O.rank != 2 || O.shape[0] != S || O.shape[1] != E || O.dtype != TESSERA_F32) {
    std::printf("FAIL: attention result is rank %d [%lld, %lld]\n", O.rank, (long long)O.shape[0],
                (long long)O.shape[1]);
    ++failures;
    return;
  }
  std::vector<float> o = readResult<float>(O), o2 = readResult<float>(O2);
  for (size_t i = 0; i < o.size(); ++i)
    if (!exec::sameResultBits(o[i], o2[i]) && ++failures <= 10)
      std::printf("FAIL: attention not the same bits at %zu\n", i);
  for (int64_t i = 0; i < S; ++i) {
    std::vector<double> s(T), mag(T);
    double m = -INFINITY;
    for (int64_t j = 0; j < T; ++j) {
      double dot = 0, abs = 0;
      for (int64_t d = 0; d < D; ++d)
        dot += double(q[i * D + d]) * k[j * D + d], abs += std::fabs(double(q[i * D + d]) * k[j * D + d]);
      s[j] = dot, mag[j] = abs, m = std::max(m, dot);
    }
    double l = 0, smax = 0;
    for (int64_t j = 0; j < T; ++j) l += std::exp(s[j] - m), smax = std::max(smax, mag[j]);
    double rel = (D + 4) * kF32 * smax * 2 + (T + 8) * kF32;
    for (int64_t e = 0; e < E; ++e) {
      double acc = 0, absAcc = 0;
      for (int64_t j = 0; j < T; ++j) {
        double p = std::exp(s[j] - m) / l;
        acc += p * v[j * E + e], absAcc += p * std::fabs(double(v[j * E + e]));
      }
      expectClose("attention", i * E + e, o[i * E + e], acc, rel * absAcc + 1e-7 * kF32);
    }
  }
  tessera_free(O.data);
  tessera_free(O2.data);
}

// The unfused form returns the scores too: S = Q K^T exactly as a matrix product.
void attentionScores(int64_t S, int64_t D, int64_t T, int64_t E) {
  std::printf("attention_scores S=%lld D=%lld T=%lld E=%lld\n", (long long)S, (long long)D, (long long)T, (long long)E);
  auto q = exec::randomFloats(S * D, -1, 1), k = exec::randomFloats(T * D, -1, 1), v = exec::randomFloats(T * E);
  exec::DeviceArray<float> dq(q), dk(k), dv(v);
  tessera_tensor Q = dq.view(TESSERA_F32, {S, D}), K = dk.view(TESSERA_F32, {T, D}), V = dv.view(TESSERA_F32, {T, E});
  tessera_tensor O, Sc;
  exec::check(host_programs_attention_scores(nullptr, &Q, &K, &V, &O, &Sc), "attention_scores");
  std::vector<float> o = readResult<float>(O), sc = readResult<float>(Sc);
  for (int64_t i = 0; i < S; ++i) {
    std::vector<double> s(T), p(T);
    double m = -INFINITY, smax = 0;
    for (int64_t j = 0; j < T; ++j) {
      double dot = 0, abs = 0;
      for (int64_t d = 0; d < D; ++d)
        dot += double(q[i * D + d]) * k[j * D + d], abs += std::fabs(double(q[i * D + d]) * k[j * D + d]);
      expectClose("scores", i * T + j, sc[i * T + j], dot, (D + 4) * kF32 * abs);
      s[j] = dot, m = std::max(m, dot), smax = std::max(smax, abs);
    }
    double l = 0;
    for (int64_t j = 0; j < T; ++j) l += std::exp(s[j] - m);
    double rel = (D + 4) * kF32 * smax * 2 + (2 * T + 8) * kF32;
    for (int64_t e = 0; e < E; ++e) {
      double acc = 0, absAcc = 0;
      for (int64_t j = 0; j < T; ++j)
        acc += std::exp(s[j] - m) / l * v[j * E + e],
            absAcc += std::exp(s[j] - m) / l * std::fabs(double(v[j * E + e]));
      expectClose("attention_scores", i * E + e, o[i * E + e], acc, rel * absAcc + 1e-7 * kF32);
    }
  }
  tessera_free(O.data);
  tessera_free(Sc.data);
}

// Y = X / sqrt(mean(X^2) + 1e-6) per row, into the caller's Y; rows of zeros, huge and tiny values.
void normLayer(int64_t R, int64_t C) {
  std::printf("norm_layer R=%lld C=%lld\n", (long long)R, (long long)C);
  auto x = exec::randomFloats(R * C, -3, 3);
  for (int64_t c = 0; c < C; ++c) x[0 * C + c] = 0.0f;
  if (R > 2)
    for (int64_t c = 0; c < C; ++c) x[1 * C + c] *= 1e30f, x[2 * C + c] *= 1e-30f;
  exec::DeviceArray<float> dx(x), dy(std::vector<float>(R * C, NAN));
  tessera_tensor X = dx.view(TESSERA_F32, {R, C}), Y = dy.view(TESSERA_F32, {R, C});
  exec::check(host_programs_norm_layer(nullptr, &X, &Y), "norm_layer");
  std::vector<float> y = dy.read();
  for (int64_t r = 0; r < R; ++r) {
    double ms = 0;
    for (int64_t c = 0; c < C; ++c) ms += double(x[r * C + c]) * x[r * C + c];
    double inv = 1.0 / std::sqrt(ms / C + 1e-6);
    for (int64_t c = 0; c < C; ++c) {
      double want = x[r * C + c] * inv;
      expectClose("norm_layer", r * C + c, y[r * C + c], want, (2 * C + 16) * kF32 * std::fabs(want) + 1e-30);
    }
  }
}

void gemm(int64_t M, int64_t K, int64_t N) {
  std::printf("gemm M=%lld K=%lld N=%lld\n", (long long)M, (long long)K, (long long)N);
  auto a = exec::randomFloats(M * K), b = exec::randomFloats(K * N);
  exec::DeviceArray<float> da(a), db(b);
  tessera_tensor A = da.view(TESSERA_F32, {M, K}), B = db.view(TESSERA_F32, {K, N}), Y;
  exec::check(host_programs_gemm(nullptr, &A, &B, &Y), "gemm");
  std::vector<float> y = readResult<float>(Y);
  for (int64_t i = 0; i < M; ++i)
    for (int64_t j = 0; j < N; ++j) {
      double dot = 0, abs = 0;
      for (int64_t t = 0; t < K; ++t)
        dot += double(a[i * K + t]) * b[t * N + j], abs += std::fabs(double(a[i * K + t]) * b[t * N + j]);
      expectClose("gemm", i * N + j, y[i * N + j], dot, (K + 4) * kF32 * abs);
    }
  tessera_free(Y.data);
}

double geluTanh(double x) { return 0.5 * x * (1 + std::tanh(0.7978845608028654 * (x + 0.044715 * x * x * x))); }

void mlp(int64_t M, int64_t K, int64_t N) {
  std::printf("mlp (f64) M=%lld K=%lld N=%lld\n", (long long)M, (long long)K, (long long)N);
  std::vector<double> x(M * K), w(K * N), b(N);
  for (auto* v : {&x, &w, &b}) {
    auto f = exec::randomFloats(v->size(), -2, 2);
    for (size_t i = 0; i < v->size(); ++i) (*v)[i] = f[i] * (1 + f[(i + 1) % f.size()] / 3.0);  // more bits than f32
  }
  exec::DeviceArray<double> dx(x), dw(w), db(b);
  tessera_tensor X = dx.view(TESSERA_F64, {M, K}), W = dw.view(TESSERA_F64, {K, N}), B = db.view(TESSERA_F64, {N});
  tessera_tensor Y, Xout;
  exec::check(host_programs_mlp(nullptr, &X, &W, &B, &Y, &Xout), "mlp");
  std::vector<double> y = readResult<double>(Y), xo = readResult<double>(Xout);
  if (Xout.data == X.data && ++failures) std::printf("FAIL: mlp's second result aliases the parameter\n");
  for (size_t i = 0; i < x.size(); ++i)
    if (!exec::sameResultBits(xo[i], x[i]) && ++failures <= 10) std::printf("FAIL: mlp copy of X differs at %zu\n", i);
  for (int64_t i = 0; i < M; ++i)
    for (int64_t j = 0; j < N; ++j) {
      double h = b[j], abs = std::fabs(b[j]);
      for (int64_t t = 0; t < K; ++t) h += x[i * K + t] * w[t * N + j], abs += std::fabs(x[i * K + t] * w[t * N + j]);
      double want = 0.5 * geluTanh(h);
      // The pre-activation's error times gelu's slope (at most 1.13), plus tanh's and the products' ulps.
      double bound = (K + 8) * kF64 * abs * 1.2 + 16 * kF64 * (std::fabs(want) + std::fabs(h));
      expectClose("mlp", i * N + j, y[i * N + j], want, bound);
    }
  tessera_free(Y.data);
  tessera_free(Xout.data);
}

// The spec's step: Y += X W into the caller's Y.
void step(int64_t M, int64_t K, int64_t N) {
  std::printf("step M=%lld K=%lld N=%lld\n", (long long)M, (long long)K, (long long)N);
  auto w = exec::randomFloats(K * N), x = exec::randomFloats(M * K), y0 = exec::randomFloats(M * N);
  exec::DeviceArray<float> dw(w), dx(x), dy(y0);
  tessera_tensor W = dw.view(TESSERA_F32, {K, N}), X = dx.view(TESSERA_F32, {M, K}), Y = dy.view(TESSERA_F32, {M, N});
  exec::check(host_programs_step(nullptr, &W, &X, &Y), "step");
  std::vector<float> y = dy.read();
  for (int64_t i = 0; i < M; ++i)
    for (int64_t j = 0; j < N; ++j) {
      double dot = y0[i * N + j], abs = std::fabs(y0[i * N + j]);
      for (int64_t t = 0; t < K; ++t)
        dot += double(x[i * K + t]) * w[t * N + j], abs += std::fabs(double(x[i * K + t]) * w[t * N + j]);
      expectClose("step", i * N + j, y[i * N + j], dot, (K + 6) * kF32 * abs);
    }
}

// Acc += X * X twice: the caller's tensor is summed into, not replaced.
void accumulate(int64_t R, int64_t C) {
  std::printf("accumulate R=%lld C=%lld\n", (long long)R, (long long)C);
  auto x = exec::randomFloats(R * C), acc0 = exec::randomFloats(R * C);
  exec::DeviceArray<float> dx(x), dacc(acc0);
  tessera_tensor X = dx.view(TESSERA_F32, {R, C}), Acc = dacc.view(TESSERA_F32, {R, C});
  exec::check(host_programs_accumulate(nullptr, &X, &Acc), "accumulate");
  exec::check(host_programs_accumulate(nullptr, &X, &Acc), "accumulate (again)");
  std::vector<float> acc = dacc.read();
  for (size_t i = 0; i < acc.size(); ++i) {
    float sq = x[i] * x[i];  // exactly what the kernel adds, rounded once per step
    float want = (acc0[i] + sq) + sq;
    expectClose("accumulate", i, acc[i], want, 0);
  }
}

// Three layers (X W1, relu, W2, relu, W3): with plan-memory the four intermediates share two
// buffers. The bound follows each layer's error through the next: a product of n terms adds
// (n + 4) 2^-24 of its terms' magnitudes and passes its inputs' errors on times |W|; relu
// passes errors on unchanged.
void layers(int64_t M, int64_t D, int64_t H, int64_t E) {
  std::printf("layers M=%lld D=%lld H=%lld E=%lld\n", (long long)M, (long long)D, (long long)H, (long long)E);
  auto x = exec::randomFloats(M * D, -1, 1), w1 = exec::randomFloats(D * H, -1, 1),
       w2 = exec::randomFloats(H * H, -1, 1), w3 = exec::randomFloats(H * E, -1, 1);
  exec::DeviceArray<float> dx(x), d1(w1), d2(w2), d3(w3);
  tessera_tensor X = dx.view(TESSERA_F32, {M, D}), W1 = d1.view(TESSERA_F32, {D, H}), W2 = d2.view(TESSERA_F32, {H, H}),
                 W3 = d3.view(TESSERA_F32, {H, E});
  tessera_tensor Y;
  exec::check(host_programs_layers(nullptr, &X, &W1, &W2, &W3, &Y), "layers");
  std::vector<float> y = readResult<float>(Y);
  // value and error bound of each element, layer by layer
  std::vector<double> a(x.begin(), x.end()), err(x.size(), 0.0);
  int64_t n = D;
  for (const std::vector<float>* w : {&w1, &w2, &w3}) {
    int64_t cols = w == &w3 ? E : H;
    std::vector<double> b(M * cols), berr(M * cols);
    for (int64_t i = 0; i < M; ++i)
      for (int64_t j = 0; j < cols; ++j) {
        double dot = 0, mag = 0, prop = 0;
        for (int64_t t = 0; t < n; ++t) {
          double wt = (*w)[t * cols + j];
          dot += a[i * n + t] * wt, mag += std::fabs(a[i * n + t] * wt), prop += err[i * n + t] * std::fabs(wt);
        }
        bool relu = w != &w3;
        b[i * cols + j] = relu ? std::max(dot, 0.0) : dot;
        berr[i * cols + j] = (n + 4) * kF32 * mag * 1.01 + prop;
      }
    a = b, err = berr, n = cols;
  }
  for (size_t i = 0; i < y.size(); ++i) expectClose("layers", i, y[i], a[i], err[i] + 1e-30);
  tessera_free(Y.data);
}

// The spec's transformer block: h = rmsnorm_safe(x), qkv = h Wqkv, 4 heads of 64, attention,
// y Wo. The bound is the first-order propagation of each stage's rounding through the later
// ones, each term as for the single programs above: rmsnorm (statistics over C = 256 in f32:
// (C / 2 + 8) 2^-24 relative), the products ((K + 4) 2^-24 of their terms' magnitudes plus the
// inputs' errors times |W|), attention (a score error ds moves each probability by 2 ds
// relatively; the online rescaling adds (T + 8) 2^-24; exp2 6.5e-6), twice for safety.
void block(int64_t S) {
  const int64_t C = 256, H = 4, Dh = 64;
  std::printf("block S=%lld\n", (long long)S);
  auto x = exec::randomFloats(S * C, -2, 2), wqkv = exec::randomFloats(C * 3 * C, -0.1, 0.1),
       wo = exec::randomFloats(C * C, -0.1, 0.1);
  exec::DeviceArray<float> dx(x), dq(wqkv), dw(wo);
  tessera_tensor X = dx.view(TESSERA_F32, {S, C}), Wqkv = dq.view(TESSERA_F32, {C, 3 * C}),
                 Wo = dw.view(TESSERA_F32, {C, C});
  tessera_tensor Y, Y2;
  exec::check(host_programs_block(nullptr, &X, &Wqkv, &Wo, &Y), "block");
  exec::check(host_programs_block(nullptr, &X, &Wqkv, &Wo, &Y2), "block (again)");
  std::vector<float> y = readResult<float>(Y), y2 = readResult<float>(Y2);
  for (size_t i = 0; i < y.size(); ++i)
    if (!exec::sameResultBits(y[i], y2[i]) && ++failures <= 10)
      std::printf("FAIL: block not the same bits at %zu\n", i);
  // value and error bound of h, qkv, attention output and result
  std::vector<double> h(S * C), eh(S * C);
  for (int64_t i = 0; i < S; ++i) {
    double ms = 0;
    for (int64_t c = 0; c < C; ++c) ms += double(x[i * C + c]) * x[i * C + c];
    double inv = 1 / std::sqrt(ms / C + 1e-6);
    for (int64_t c = 0; c < C; ++c)
      h[i * C + c] = x[i * C + c] * inv, eh[i * C + c] = std::fabs(h[i * C + c]) * (C / 2 + 8) * kF32;
  }
  auto product = [](const std::vector<double>& a, const std::vector<double>& ea, const std::vector<float>& w, int64_t M,
                    int64_t K, int64_t N, std::vector<double>& out, std::vector<double>& eout) {
    out.assign(M * N, 0), eout.assign(M * N, 0);
    for (int64_t i = 0; i < M; ++i)
      for (int64_t j = 0; j < N; ++j) {
        double dot = 0, mag = 0, prop = 0;
        for (int64_t t = 0; t < K; ++t) {
          double wt = w[t * N + j];
          dot += a[i * K + t] * wt, mag += std::fabs(a[i * K + t] * wt), prop += ea[i * K + t] * std::fabs(wt);
        }
        out[i * N + j] = dot, eout[i * N + j] = (K + 4) * kF32 * mag + prop;
      }
  };
  std::vector<double> qkv, eqkv, o(S * C), eo(S * C), r, er;
  product(h, eh, wqkv, S, C, 3 * C, qkv, eqkv);
  const double scale = 1 / std::sqrt(double(Dh));
  for (int64_t hd = 0; hd < H; ++hd)
    attendHeadWithBound(qkv.data(), eqkv.data(), S, Dh, 3 * C, hd * Dh, C + hd * Dh, 2 * C + hd * Dh, scale, o.data(),
                        eo.data(), C, hd * Dh, 0.0);
  product(o, eo, wo, S, C, C, r, er);
  for (size_t i = 0; i < y.size(); ++i) expectClose("block", i, y[i], r[i], 2 * er[i] + 1e-30);
  tessera_free(Y.data);
  tessera_free(Y2.data);
}

// Errors: a mismatched extent is reported by the kernel that sees it, and the result is
// neither allocated nor written; null tensors are refused before anything runs.
void errors() {
  std::printf("errors\n");
  exec::DeviceArray<float> dq(exec::randomFloats(5 * 3)), dk(exec::randomFloats(7 * 4)), dv(exec::randomFloats(7 * 2));
  tessera_tensor Q = dq.view(TESSERA_F32, {5, 3}), K = dk.view(TESSERA_F32, {7, 4}), V = dv.view(TESSERA_F32, {7, 2});
  tessera_tensor O;
  O.data = &O;  // a sentinel the call must not overwrite
  tessera_status s = host_programs_attention(nullptr, &Q, &K, &V, &O);
  std::string msg = tessera_last_error_message();
#ifdef HOST_GRAPH_PASSES_OFF
  // Unfused: the first kernel transposes K into a result sized from Q's extents, which K's
  // do not match.
  const char *kernel = "attention__k0_transpose", *param = "parameter 'y'";
#else
  const char *kernel = "attention__k0_flash_attention", *param = "parameter 'k'";
#endif
  if (s != TESSERA_ERROR_SHAPE_MISMATCH || msg.find(kernel) == std::string::npos ||
      msg.find(param) == std::string::npos || O.data != &O) {
    std::printf("FAIL: mismatched K: %s: %s\n", tessera_status_name(s), msg.c_str());
    ++failures;
  }
  if (host_programs_attention(nullptr, &Q, nullptr, &V, &O) != TESSERA_ERROR_NULL_POINTER) {
    std::printf("FAIL: a null K is not NULL_POINTER\n");
    ++failures;
  }
}

}  // namespace

int main() {
  exec::requireDevice();
  attention(37, 19, 53, 23);
  attention(1, 1, 1, 1);
  attention(64, 16, 129, 8);
  attentionScores(21, 13, 33, 11);
  normLayer(13, 77);
  normLayer(3, 1);
  gemm(29, 41, 17);
  gemm(1, 300, 3);
  mlp(7, 11, 5);
  step(11, 23, 7);
  accumulate(9, 31);
  layers(37, 29, 70, 13);
  layers(1, 1, 1, 1);
  block(37);
  block(130);
  errors();
  if (failures) {
    std::printf("%d failure(s)\n", failures);
    return 1;
  }
  std::printf("PASS\n");
  return 0;
}
