// The references of a chain of two products, Out = act(X W1 [+ b1]) W2 [+ b2] (examples/fused_mlp,
// tests/exec/kernels/mlp_hopper): the portable form keeps Hid in f32 and matches the sequential
// f32 reference bit for bit; the sm_90a steps (ir/passes/ProductPlan.h) round Hid to bf16
// and is checked within a bound (mlp_hopper_test.cpp says which).
//
// The inputs are multiples of 1/8 in [-1, 1) (gridBF16), the biases multiples of 1/64: then every
// partial sum of the first product is a multiple of 1/64 below 2^17 in magnitude (for D up to
// 2^14), exact in f32 whatever the order of the additions, so both forms see the same Hid before
// its rounding, and the bound of the second product is the rigorous one of any f32 order.
#pragma once

#include <cmath>

#include "ExecTest.h"

namespace mlp {

using exec::fromBF16;

struct Shape {
  int64_t M, D, H, E;
};

// n values k/8 (k in [-8, 8)), or k/64 with `fine`, as bf16 bits.
inline std::vector<uint16_t> gridBF16(size_t n, bool fine = false) {
  std::uniform_int_distribution<int> k(fine ? -64 : -8, fine ? 63 : 7);
  std::vector<uint16_t> v(n);
  for (auto& x : v) x = exec::toBF16(static_cast<float>(k(exec::rng())) / (fine ? 64.0f : 8.0f));
  return v;
}

inline double ulpBF16(double v) {
  int e;
  std::frexp(v == 0 ? 1e-38 : v, &e);
  return std::ldexp(1.0, e - 8);
}

// Both references of one chain: `exact` (Hid in f32, sequential order, as the portable form) and
// `want` with `bound` (Hid rounded to bf16, as the chain form).
struct Reference {
  std::vector<float> exact, want;
  std::vector<double> bound;
};

inline Reference reference(const Shape& s, const std::vector<uint16_t>& x, const std::vector<uint16_t>& w1,
                           const std::vector<uint16_t>* b1, const std::vector<uint16_t>& w2,
                           const std::vector<uint16_t>* b2, bool relu, bool bf16Out) {
  const int64_t M = s.M, D = s.D, H = s.H, E = s.E;
  Reference r;
  r.exact.resize(M * E), r.want.resize(M * E), r.bound.resize(M * E);
  std::vector<float> hid32(H);
  std::vector<double> hid16(H), flip(H);
  for (int64_t m = 0; m < M; ++m) {
    for (int64_t h = 0; h < H; ++h) {
      float acc = 0.0f;
      double exact = 0, mag = 0;
      for (int64_t k = 0; k < D; ++k) {
        volatile float p = fromBF16(x[m * D + k]) * fromBF16(w1[k * H + h]);
        acc = acc + p;
        exact += p, mag += std::fabs(p);
      }
      float v = b1 ? acc + fromBF16((*b1)[h]) : acc;
      hid32[h] = relu ? (v > 0.0f ? v : 0.0f) : v;
      // Exact when the partial sums stay on the 1/64 grid below 2^17 (see above); otherwise the
      // bound of any f32 order.
      bool exactSums = mag < 131072.0;
      double err = exactSums ? 0.0 : 2.0 * D * std::ldexp(mag, -24) + (b1 ? std::ldexp(mag + 1, -24) : 0);
      double e = b1 ? exact + fromBF16((*b1)[h]) : exact;
      auto round16 = [&](double y) {
        return static_cast<double>(fromBF16(exec::toBF16(relu && y < 0 ? 0.0f : static_cast<float>(y))));
      };
      hid16[h] = round16(e);
      flip[h] = round16(e - err) != round16(e + err) ? ulpBF16(e) * 2 : 0.0;
    }
    for (int64_t n = 0; n < E; ++n) {
      float acc = 0.0f;
      double want = 0, mag = 0, flips = 0;
      for (int64_t h = 0; h < H; ++h) {
        volatile float p = hid32[h] * fromBF16(w2[h * E + n]);
        acc = acc + p;
        double w = fromBF16(w2[h * E + n]);
        want += hid16[h] * w, mag += std::fabs(hid16[h] * w), flips += flip[h] * std::fabs(w);
      }
      float out = b2 ? acc + fromBF16((*b2)[n]) : acc;
      r.exact[m * E + n] = bf16Out ? fromBF16(exec::toBF16(out)) : out;
      if (b2) want += fromBF16((*b2)[n]), mag += std::fabs(fromBF16((*b2)[n]));
      double b = 2.0 * H * std::ldexp(mag, -24) + flips + std::ldexp(mag, -40);
      if (bf16Out) b += 0.5 * ulpBF16(std::fabs(want) + b) * 1.01;
      r.want[m * E + n] = static_cast<float>(want);
      r.bound[m * E + n] = b;
    }
  }
  return r;
}

// Either form's result, checked element by element: the f32-Hid reference exactly, or the
// bf16-Hid reference within its bound.
inline bool checkEither(const Reference& r, const std::vector<float>& got, const char* what) {
  bool exact = true;
  for (size_t i = 0; i < got.size() && exact; ++i) exact = exec::sameResultBits(got[i], r.exact[i]);
  if (exact) {
    std::printf("%s: the portable form (Hid in f32)\n", what);
    return exec::allEqual(got, r.exact, what);
  }
  std::printf("%s: the chain form (Hid rounded to bf16)\n", what);
  return exec::allWithin(got, r.want, r.bound, what);
}

inline std::vector<float> widen(const std::vector<uint16_t>& v) {
  std::vector<float> f(v.size());
  for (size_t i = 0; i < v.size(); ++i) f[i] = fromBF16(v[i]);
  return f;
}

}  // namespace mlp
