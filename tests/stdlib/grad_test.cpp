// stdlib.nn's backward kernels. rmsnorm_safe_grad_<dt>: dx = inv (g w - n mean(g w n)), n = x inv,
// against float64, every element, bound: inv's f32 statistics ((N + 8) 2^-24 relative, as the
// forward's), the f32 sum of g w n ((N + 4) 2^-24 of its terms' magnitudes), a few f32 roundings
// per element and the store (half an ulp of the dtype; f16 adds 3e-8 absolute for subnormals).
//
// FlashAttention backward: flash_attention_grad_kv_<dt> (dK, dV) and
// flash_attention_grad_q_<dt> (dQ), causal or not, bf16, f16 and f32, against a float64
// reference of the same function (the given O and LSE define P = exp(scale q.k - LSE) and
// D_i = sum dO_i O_i), every element, at odd sequence lengths; a second launch gives the same bits.
//
// Bound, first order, per element (e = 2^-24, r = the rounding of P and dS to the operands' type
// for their products: 2^-8 bf16, 2^-11 f16, 0 f32; u = the rounding of the stored result):
//   scores s: scale (D + 4) e sum_d |q k|; p: p (ds + 2e (|s| + |LSE|) + 6.5e-6) (exp2-based exp);
//   dV_j = sum_i p g: sum_i (dp_ij + r p) |g| + (S + 4) e sum_i p |g|;
//   dP and D: (D + 4) e of their magnitudes; dS = p (dP - D): dp |dP - D| + p (ddP + dD) + 2e |dS|;
//   dK_j = scale sum_i dS q (dQ_i: over j with k): scale (sum (ddS + r |dS|) |q| + (S + 4) e sum |dS q|);
//   then + 2e and u of the result (the scale's multiply, the store); f16 adds 2^-25 absolute to
//   each rounding (its subnormals below 2^-14 are 2^-24 apart).
#include "StdTest.h"

using namespace stdtest;

namespace {

struct Problem {
  int64_t B, H, S, D;
  int64_t n() const { return B * H * S * D; }
};

using GradKV = tessera_status (*)(const tessera_launch_options*, const tessera_tensor*, const tessera_tensor*,
                                  const tessera_tensor*, const tessera_tensor*, const tessera_tensor*,
                                  const tessera_tensor*, const tessera_tensor*, const tessera_tensor*, float);
using GradQ = tessera_status (*)(const tessera_launch_options*, const tessera_tensor*, const tessera_tensor*,
                                 const tessera_tensor*, const tessera_tensor*, const tessera_tensor*,
                                 const tessera_tensor*, const tessera_tensor*, float);

GradKV kvEntry(DT dt, bool causal) {
  if (dt == DT::BF16)
    return causal ? tessera_std_nn_flash_attention_grad_kv_causal_bf16 : tessera_std_nn_flash_attention_grad_kv_bf16;
  if (dt == DT::F16)
    return causal ? tessera_std_nn_flash_attention_grad_kv_causal_f16 : tessera_std_nn_flash_attention_grad_kv_f16;
  return causal ? tessera_std_nn_flash_attention_grad_kv_causal_f32 : tessera_std_nn_flash_attention_grad_kv_f32;
}
GradQ qEntry(DT dt, bool causal) {
  if (dt == DT::BF16)
    return causal ? tessera_std_nn_flash_attention_grad_q_causal_bf16 : tessera_std_nn_flash_attention_grad_q_bf16;
  if (dt == DT::F16)
    return causal ? tessera_std_nn_flash_attention_grad_q_causal_f16 : tessera_std_nn_flash_attention_grad_q_f16;
  return causal ? tessera_std_nn_flash_attention_grad_q_causal_f32 : tessera_std_nn_flash_attention_grad_q_f32;
}

struct Reference {
  std::vector<double> dq, dk, dv, eq, ek, ev;
};

// The forward in float64: O (rounded to the dtype by the caller) and LSE (rounded to f32).
void forward(const Problem& P, const Host& q, const Host& k, const Host& v, double scale, bool causal,
             std::vector<float>& o, std::vector<float>& lse) {
  const int64_t S = P.S, D = P.D;
  o.assign(P.n(), 0), lse.assign(P.B * P.H * S, 0);
  for (int64_t bh = 0; bh < P.B * P.H; ++bh)
    for (int64_t i = 0; i < S; ++i) {
      const int64_t base = bh * S * D, keys = causal ? i + 1 : S;
      std::vector<double> p(keys);
      double m = -INFINITY, l = 0;
      for (int64_t j = 0; j < keys; ++j) {
        double acc = 0;
        for (int64_t d = 0; d < D; ++d) acc += double(q.v[base + i * D + d]) * k.v[base + j * D + d];
        p[j] = scale * acc, m = std::max(m, p[j]);
      }
      for (double& x : p) x = std::exp(x - m), l += x;
      lse[bh * S + i] = float(m + std::log(l));
      for (int64_t d = 0; d < D; ++d) {
        double acc = 0;
        for (int64_t j = 0; j < keys; ++j) acc += p[j] * v.v[base + j * D + d];
        o[base + i * D + d] = float(acc / l);
      }
    }
}

Reference backward(const Problem& P, DT dt, const Host& q, const Host& k, const Host& v, const Host& o, const Host& g,
                   const std::vector<float>& lse, double scale, bool causal) {
  const int64_t S = P.S, D = P.D;
  const double e = 0x1p-24, r = dt == DT::F32 ? 0 : halfUlp(dt), u = halfUlp(dt);
  // f16's subnormals (below 2^-14) are 2^-24 apart: a rounding there is off by up to 2^-25.
  const double a = dt == DT::F16 ? 0x1p-25 : 0;
  Reference R;
  for (auto* x : {&R.dq, &R.dk, &R.dv, &R.eq, &R.ek, &R.ev}) x->assign(P.n(), 0.0);
  std::vector<double> magQ(P.n()), magK(P.n());  // sum |dS q| and sum |dS k| per element
  for (int64_t bh = 0; bh < P.B * P.H; ++bh) {
    const int64_t base = bh * S * D;
    auto at = [&](const Host& x, int64_t row, int64_t d) { return double(x.v[base + row * D + d]); };
    for (int64_t i = 0; i < S; ++i) {
      double di = 0, dimag = 0;
      for (int64_t d = 0; d < D; ++d) di += at(g, i, d) * at(o, i, d), dimag += std::fabs(at(g, i, d) * at(o, i, d));
      const double L = lse[bh * S + i], eDi = (D + 4) * e * dimag;
      for (int64_t j = 0; j < (causal ? i + 1 : S); ++j) {
        double s = 0, smag = 0, dp = 0, dpmag = 0;
        for (int64_t d = 0; d < D; ++d) {
          s += at(q, i, d) * at(k, j, d), smag += std::fabs(at(q, i, d) * at(k, j, d));
          dp += at(g, i, d) * at(v, j, d), dpmag += std::fabs(at(g, i, d) * at(v, j, d));
        }
        s *= scale;
        const double p = std::exp(s - L);
        const double ep = p * (scale * (D + 4) * e * smag + 2 * e * (std::fabs(s) + std::fabs(L)) + 6.5e-6);
        const double ds = p * (dp - di);
        const double eds = ep * std::fabs(dp - di) + p * ((D + 4) * e * dpmag + eDi) + 2 * e * std::fabs(ds);
        for (int64_t d = 0; d < D; ++d) {
          const int64_t I = base + i * D + d, J = base + j * D + d;
          R.dv[J] += p * at(g, i, d);
          R.ev[J] += (ep + r * p + a) * std::fabs(at(g, i, d)) + (S + 4) * e * p * std::fabs(at(g, i, d));
          R.dk[J] += scale * ds * at(q, i, d);
          R.ek[J] += scale * (eds + r * std::fabs(ds) + a) * std::fabs(at(q, i, d));
          magK[J] += std::fabs(ds * at(q, i, d));
          R.dq[I] += scale * ds * at(k, j, d);
          R.eq[I] += scale * (eds + r * std::fabs(ds) + a) * std::fabs(at(k, j, d));
          magQ[I] += std::fabs(ds * at(k, j, d));
        }
      }
    }
  }
  for (int64_t t = 0; t < P.n(); ++t) {
    R.ek[t] += scale * (S + 4) * e * magK[t] + (2 * e + u) * std::fabs(R.dk[t]) + a + 1e-30;
    R.eq[t] += scale * (S + 4) * e * magQ[t] + (2 * e + u) * std::fabs(R.dq[t]) + a + 1e-30;
    R.ev[t] += u * std::fabs(R.dv[t]) + a + 1e-30;
  }
  return R;
}

bool gradients(DT dt, bool causal, Problem P) {
  const int64_t n = P.n();
  Host q(dt, exec::randomFloats(n)), k(dt, exec::randomFloats(n)), v(dt, exec::randomFloats(n)),
      g(dt, exec::randomFloats(n));
  const float scale = 1.0f / std::sqrt(float(P.D));
  std::vector<float> ov, lse;
  forward(P, q, k, v, scale, causal, ov, lse);
  Host o(dt, ov), l(DT::F32, lse);
  Dev dq(q), dk(k), dv(v), dO(o), dg(g), dl(l);
  std::vector<int64_t> shape{P.B, P.H, P.S, P.D};
  tessera_tensor tq = dq.view(shape), tk = dk.view(shape), tv = dv.view(shape), to = dO.view(shape),
                 tg = dg.view(shape), tl = dl.view({P.B, P.H, P.S});
  std::vector<float> first[3];
  for (int run = 0; run < 2; ++run) {
    Dev gq(dt, n), gk(dt, n), gv(dt, n);
    tessera_tensor tgq = gq.view(shape), tgk = gk.view(shape), tgv = gv.view(shape);
    exec::check(kvEntry(dt, causal)(nullptr, &tq, &tk, &tv, &to, &tg, &tl, &tgk, &tgv, scale),
                "flash_attention_grad_kv");
    exec::check(qEntry(dt, causal)(nullptr, &tq, &tk, &tv, &to, &tg, &tl, &tgq, scale), "flash_attention_grad_q");
    exec::check(tessera_synchronize(), "synchronize");
    std::vector<float> got[3] = {gq.read(), gk.read(), gv.read()};
    if (run == 0) {
      for (int i = 0; i < 3; ++i) first[i] = got[i];
    } else if (!(same(first[0], got[0], "dQ (again)") && same(first[1], got[1], "dK (again)") &&
                 same(first[2], got[2], "dV (again)"))) {
      return false;
    }
  }
  Reference R = backward(P, dt, q, k, v, o, g, lse, scale, causal);
  std::string what = std::string("flash_attention_grad") + (causal ? "_causal_" : "_") + name(dt) +
                     " B=" + std::to_string(P.B) + " H=" + std::to_string(P.H) + " S=" + std::to_string(P.S) +
                     " D=" + std::to_string(P.D);
  bool ok = within(first[0], R.dq, R.eq, what + " dQ");
  ok &= within(first[1], R.dk, R.ek, what + " dK");
  return within(first[2], R.dv, R.ev, what + " dV") && ok;
}

using NormGrad = tessera_status (*)(const tessera_launch_options*, const tessera_tensor*, const tessera_tensor*,
                                    const tessera_tensor*, const tessera_tensor*, float);

bool rmsnormGrad(DT dt, int64_t R, int64_t N, float scaleOfRows, float eps = 1e-6f) {
  Host x(dt, exec::randomFloats(R * N, -scaleOfRows, scaleOfRows)), w(dt, exec::randomFloats(N, 0.5f, 1.5f)),
      g(dt, exec::randomFloats(R * N));
  Dev dx(x), dw(w), dg(g);
  tessera_tensor tx = dx.view({R, N}), tw = dw.view({N}), tg = dg.view({R, N});
  NormGrad k = dt == DT::F32    ? tessera_std_nn_rmsnorm_safe_grad_f32
               : dt == DT::BF16 ? tessera_std_nn_rmsnorm_safe_grad_bf16
                                : tessera_std_nn_rmsnorm_safe_grad_f16;
  std::vector<float> got[2];
  for (auto& out : got) {
    Dev dd(dt, R * N);
    tessera_tensor td = dd.view({R, N});
    exec::check(k(nullptr, &tx, &tw, &tg, &td, eps), "rmsnorm_safe_grad");
    exec::check(tessera_synchronize(), "synchronize");
    out = dd.read();
  }
  std::vector<double> want(R * N), bound(R * N);
  const double e = 0x1p-24;
  for (int64_t r = 0; r < R; ++r) {
    double ss = 0;
    for (int64_t j = 0; j < N; ++j) ss += double(x.v[r * N + j]) * x.v[r * N + j];
    const double inv = 1 / std::sqrt(ss / N + eps), ei = (N + 8) * e;
    double m = 0, mm = 0;
    for (int64_t j = 0; j < N; ++j) {
      double t = double(g.v[r * N + j]) * w.v[j] * (x.v[r * N + j] * inv);
      m += t, mm += std::fabs(t);
    }
    m /= N, mm /= N;
    const double em = mm * (2 * ei + (N + 8) * e);
    for (int64_t j = 0; j < N; ++j) {
      const double u = double(g.v[r * N + j]) * w.v[j], n = x.v[r * N + j] * inv, v = inv * (u - n * m);
      want[r * N + j] = v;
      bound[r * N + j] = inv * (std::fabs(n) * em + (std::fabs(u) + std::fabs(n * m)) * (2 * ei + 6 * e)) +
                         halfUlp(dt) * std::fabs(v) + (dt == DT::F16 ? 3e-8 : 0);
    }
  }
  char scale[48];
  std::snprintf(scale, sizeof scale, " rows of %g, eps %g", scaleOfRows, eps);
  std::string what =
      std::string("rmsnorm_safe_grad_") + name(dt) + " " + std::to_string(R) + "x" + std::to_string(N) + scale;
  return same(got[0], got[1], what + " (again)") && within(got[0], want, bound, what);
}

}  // namespace

int main() {
  exec::requireDevice();
  bool ok = true;
  for (DT dt : {DT::BF16, DT::F16, DT::F32}) {
    ok &= rmsnormGrad(dt, randomIn(1, 40), 2 * randomIn(0, 700) + 1, 2.0f);
    ok &= rmsnormGrad(dt, 3, 1024, dt == DT::F32 ? 1e30f : dt == DT::F16 ? 6e4f : 1e30f);  // huge rows stay finite
    // Rows of subnormals (1 / max|x| overflows: NaN before) and tiny rows with eps = 0 (the
    // squares underflow: 0 before); f16's subnormals with eps 1e-5 (with eps 0 its dx overflows).
    int64_t N = 2 * randomIn(0, 700) + 1;
    if (dt == DT::F16) {
      ok &= rmsnormGrad(dt, 3, N, 6e-7f, 1e-5f);
    } else {
      ok &= rmsnormGrad(dt, 3, N, 1e-40f, 1e-5f);
      ok &= rmsnormGrad(dt, 3, N, 1e-25f, 0.0f);
      ok &= rmsnormGrad(dt, 3, N, 1e-19f, 0.0f);
    }
  }
  for (DT dt : {DT::BF16, DT::F16, DT::F32})
    for (bool causal : {false, true})
      ok &= gradients(dt, causal, {randomIn(1, 2), randomIn(1, 2), 2 * randomIn(0, 100) + 1, 64 * randomIn(1, 2)});
  // The sm_90a form (docs/codegen.md, "Hopper form of the attention backward") at both head
  // dimensions, causal and not, with sequences that are not a multiple of its blocks (128 fixed
  // rows; 128 or 64 streamed) and more than one unit per head; the CPU runs the portable form.
  ok &= gradients(DT::BF16, true, {1, 2, 260, 64});
  ok &= gradients(DT::F16, false, {2, 1, 257, 128});
  ok &= gradients(DT::BF16, true, {1, 1, 200, 128});
  ok &= gradients(DT::F16, true, {1, 1, 129, 64});
  // Other head dimensions and a sequence of exactly one block, then of one row.
  ok &= gradients(DT::BF16, false, {1, 1, 64, 40});
  ok &= gradients(DT::F32, true, {1, 1, 1, 24});
  return exec::finish(ok);
}
