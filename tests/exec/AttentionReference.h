// Reference attention of one head in float64 with a first-order error bound, shared by the host
// tests: rows i of q (columns qc.., Dh wide, row stride ld) against k and v of the same layout,
// values v with error bounds e; o/eo written at (i, oc + e) with row stride ldo. outRound is the
// relative rounding of the stored output (2^-8 for bf16, 0 where the caller adds its own).
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

// The scaled scores s[j] of query row i against every key row j (q at columns qc.., k at kc..,
// Dh wide, row stride ld, values v with error bounds e), their maximum m, and ds, the largest
// first-order bound on a score: the part the forward and the gradient references share.
inline void scoreRowWithBound(const double* v, const double* e, int64_t S, int64_t Dh, int64_t ld, int64_t qc,
                              int64_t kc, double scale, int64_t i, std::vector<double>& s, double& m, double& ds) {
  const double kF32 = std::ldexp(1.0, -24);
  s.assign(S, 0.0), m = -INFINITY, ds = 0;
  for (int64_t j = 0; j < S; ++j) {
    double dot = 0, mag = 0, prop = 0;
    for (int64_t d = 0; d < Dh; ++d) {
      int64_t qi = i * ld + qc + d, ki = j * ld + kc + d;
      dot += v[qi] * v[ki], mag += std::fabs(v[qi] * v[ki]);
      prop += e[qi] * std::fabs(v[ki]) + std::fabs(v[qi]) * e[ki];
    }
    s[j] = dot * scale, m = std::max(m, s[j]), ds = std::max(ds, scale * ((Dh + 4) * kF32 * mag + prop));
  }
}

inline void attendHeadWithBound(const double* v, const double* e, int64_t S, int64_t Dh, int64_t ld, int64_t qc,
                                int64_t kc, int64_t vc, double scale, double* o, double* eo, int64_t ldo, int64_t oc,
                                double outRound) {
  const double kF32 = std::ldexp(1.0, -24);
  for (int64_t i = 0; i < S; ++i) {
    std::vector<double> s;
    double m, ds;
    scoreRowWithBound(v, e, S, Dh, ld, qc, kc, scale, i, s, m, ds);
    double l = 0;
    for (int64_t j = 0; j < S; ++j) l += std::exp(s[j] - m);
    double rel = 2 * ds + (S + 8) * kF32 + 6.5e-6;
    for (int64_t c = 0; c < Dh; ++c) {
      double acc = 0, mag = 0, prop = 0;
      for (int64_t j = 0; j < S; ++j) {
        int64_t vi = j * ld + vc + c;
        double p = std::exp(s[j] - m) / l;
        acc += p * v[vi], mag += p * std::fabs(v[vi]), prop += p * e[vi];
      }
      o[i * ldo + oc + c] = acc;
      eo[i * ldo + oc + c] = (rel + outRound) * mag + prop + outRound * (std::fabs(acc) + prop);
    }
  }
}
