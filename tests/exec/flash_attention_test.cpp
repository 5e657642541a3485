// examples/flash_attention: O = softmax(scale * Q K^T) V per batch and head (causal: key j <= query
// i only), online softmax over key blocks. Fresh random bf16 inputs, sequence lengths 1, 77, 200
// and 1000 (blocks of 128 queries and of keys are clipped at the end), head dims 64 and 128,
// causal and not. Every element is checked twice, in float64:
//  - against the kernel's algorithm (running maximum per key block, p rounded to bf16 for the
//    P V product, the row sum over the unrounded p), with key blocks of 64 (the portable form) or
//    128 (the sm_90a form, which the runtime picks on an H100/H200): each element must be within
//    the bound of one of the two. The bound is the bf16 rounding of the output (2^-9 relative,
//    doubled) plus, for p values whose bf16 rounding may flip between f32 and f64 arithmetic,
//    2^-7 of the largest term p_j |v_j| / l of the row;
//  - against exact attention: the bound adds 2^-8 of sum_j p_j |v_j| / l (p's rounding to bf16,
//    2^-9 relative, in the numerator and the row sum).
// A second launch must give the same bits.
#include "flash_attention.h"

#include <cmath>

#include "ExecTest.h"

namespace {

struct Problem {
  int64_t B, H, S, D;
  bool causal;
  std::vector<uint16_t> q, k, v;
};

// One row of attention in float64; `emulate` follows the kernel's blocks and roundings.
// `block`: the key block of the emulated algorithm (0: exact attention).
void referenceRow(const Problem& p, int64_t bh, int64_t i, double scale, int64_t block, double* out, double* bound) {
  const bool emulate = block > 0;
  auto f = exec::fromBF16;
  const int64_t S = p.S, D = p.D, base = bh * S * D;
  int64_t keys = p.causal ? i + 1 : S;
  std::vector<double> s(keys);
  for (int64_t j = 0; j < keys; ++j) {
    double dot = 0;
    for (int64_t d = 0; d < D; ++d) dot += double(f(p.q[base + i * D + d])) * f(p.k[base + j * D + d]);
    s[j] = scale * dot;
  }
  std::vector<double> acc(D, 0.0), absAcc(D, 0.0), maxTerm(D, 0.0);
  double m = -INFINITY, l = 0;
  int64_t step = emulate ? block : keys;
  for (int64_t j0 = 0; j0 < keys; j0 += step) {
    int64_t j1 = std::min(keys, j0 + step);
    double mNew = m;
    for (int64_t j = j0; j < j1; ++j) mNew = std::max(mNew, s[j]);
    double alpha = std::exp(m - mNew);
    l *= alpha;
    for (int64_t d = 0; d < D; ++d) acc[d] *= alpha, absAcc[d] *= alpha, maxTerm[d] *= alpha;
    for (int64_t j = j0; j < j1; ++j) {
      double e = std::exp(s[j] - mNew);
      l += e;
      double pv = emulate ? exec::fromBF16(exec::toBF16(float(e))) : e;
      for (int64_t d = 0; d < D; ++d) {
        double vd = f(p.v[base + j * D + d]);
        acc[d] += pv * vd;
        absAcc[d] += e * std::fabs(vd);
        maxTerm[d] = std::max(maxTerm[d], e * std::fabs(vd));
      }
    }
    m = mNew;
  }
  for (int64_t d = 0; d < D; ++d) {
    out[d] = acc[d] / l;
    double rounding = std::ldexp(std::fabs(out[d]), -8) + 1e-6;
    bound[d] = rounding + (emulate ? std::ldexp(maxTerm[d] / l, -7) : std::ldexp(absAcc[d] / l, -8));
  }
}

bool run(int64_t B, int64_t H, int64_t S, int64_t D, bool causal) {
  Problem p{B,
            H,
            S,
            D,
            causal,
            exec::randomBF16(B * H * S * D, -2, 2),
            exec::randomBF16(B * H * S * D, -2, 2),
            exec::randomBF16(B * H * S * D)};
  float scale = 1.0f / std::sqrt(float(D));
  std::printf("B=%lld H=%lld S=%lld D=%lld %s\n", (long long)B, (long long)H, (long long)S, (long long)D,
              causal ? "causal" : "non-causal");
  exec::DeviceArray<uint16_t> dq(p.q), dk(p.k), dv(p.v), dout(std::vector<uint16_t>(p.q.size(), 0xFFFF));
  auto launch = [&] {
    tessera_tensor Q = dq.view(TESSERA_BF16, {B, H, S, D}), K = dk.view(TESSERA_BF16, {B, H, S, D}),
                   V = dv.view(TESSERA_BF16, {B, H, S, D}), O = dout.view(TESSERA_BF16, {B, H, S, D});
    exec::check(causal ? flash_attention::flash_attention_causal(Q, K, V, O, scale)
                       : flash_attention::flash_attention(Q, K, V, O, scale),
                "flash_attention");
    exec::check(tessera_synchronize(), "synchronize");
    return dout.read();
  };
  std::vector<uint16_t> got = launch();
  std::vector<float> gotf(got.size());
  for (size_t i = 0; i < got.size(); ++i) gotf[i] = exec::fromBF16(got[i]);
  std::vector<float> emulated(got.size()), exact(got.size());
  std::vector<double> emulatedBound(got.size()), exactBound(got.size()), out(D), bound(D), out2(D), bound2(D);
  for (int64_t bh = 0; bh < B * H; ++bh)
    for (int64_t i = 0; i < S; ++i) {
      size_t at = (bh * S + i) * D;
      referenceRow(p, bh, i, scale, 64, out.data(), bound.data());
      referenceRow(p, bh, i, scale, 128, out2.data(), bound2.data());
      for (int64_t d = 0; d < D; ++d) {
        // The blocking this element is closer to, relative to its bound.
        bool second = std::fabs(gotf[at + d] - out2[d]) * bound[d] < std::fabs(gotf[at + d] - out[d]) * bound2[d];
        emulated[at + d] = float(second ? out2[d] : out[d]);
        emulatedBound[at + d] = second ? bound2[d] : bound[d];
      }
      referenceRow(p, bh, i, scale, 0, out.data(), bound.data());
      for (int64_t d = 0; d < D; ++d) exact[at + d] = float(out[d]), exactBound[at + d] = bound[d];
    }
  bool ok = exec::allWithin(gotf, emulated, emulatedBound, "O (kernel's algorithm)");
  ok &= exec::allWithin(gotf, exact, exactBound, "O (exact attention)");
  ok &= exec::allEqual(launch(), got, "O (second launch)");
  return ok;
}

}  // namespace

int main() {
  exec::requireDevice();
  std::uniform_int_distribution<int64_t> heads(1, 2);
  bool ok = true;
  for (int64_t D : {64, 128})
    for (bool causal : {false, true})
      for (int64_t S : {1, 77, 200, 1000})
        ok &= S == 1000 ? run(1, heads(exec::rng()), S, D, causal)
                        : run(heads(exec::rng()), heads(exec::rng()), S, D, causal);
  return exec::finish(ok);
}
