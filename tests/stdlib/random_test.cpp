// stdlib.random. Bits: a host replica of the library's generators (Philox4x32-10, checked
// against the Random123 known-answer vectors, and the same f32/f64 operations in the same order)
// must give every element of rand, randn and poisson exactly, at random sizes and offsets
// (offsets not a multiple of 4 too), on a second launch and on an explicit grid of 5 groups;
// drawing at offset o then o + n continues the stream. Statistics with fixed seeds (so the test
// is deterministic): mean, variance, skewness and kurtosis within 5 standard errors, and the
// Kolmogorov-Smirnov distance below its 1% critical value (1.63 / sqrt(n)); for Poisson, mean and
// variance per rate and the largest CDF difference at the integers (conservative for a discrete
// law).
#include <cmath>
#include <cstring>
#include <limits>
#include <random>

#include "StdTest.h"

using namespace stdtest;

namespace {

// ------------------------------------------------------------------ host replica (stdlib/random.tessera)

struct Words {
  uint32_t w[4];
};

Words philox(uint32_t c0, uint32_t c1, uint32_t c2, uint32_t c3, uint32_t k0, uint32_t k1) {
  for (int round = 0; round < 10; ++round) {
    uint64_t p0 = uint64_t(c0) * 0xD2511F53u, p1 = uint64_t(c2) * 0xCD9E8D57u;
    uint32_t n0 = uint32_t(p1 >> 32) ^ c1 ^ k0, n2 = uint32_t(p0 >> 32) ^ c3 ^ k1;
    c1 = uint32_t(p1), c3 = uint32_t(p0), c0 = n0, c2 = n2;
    k0 += 0x9E3779B9u, k1 += 0xBB67AE85u;
  }
  return {{c0, c1, c2, c3}};
}

Words block(uint64_t seed, uint64_t b) {
  return philox(uint32_t(b), uint32_t(b >> 32), 0, 0, uint32_t(seed), uint32_t(seed >> 32));
}

float uniform(uint32_t w) { return float(w >> 8) * 5.9604644775390625e-08f; }

uint32_t bitsOf(float f) {
  uint32_t u;
  std::memcpy(&u, &f, 4);
  return u;
}
float floatOf(uint32_t u) {
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}

// -2 ln(u) (stdlib/random.tessera neg2ln32).
float neg2ln32(float u) {
  int32_t bits = int32_t(bitsOf(u));
  int32_t e = (bits - 0x3F3504F3) >> 23;
  float t = floatOf(uint32_t(bits - int32_t(uint32_t(e) << 23))) - 1.0f;
  float h = std::fma(-0.17066626250743866f, t, 0.2853851616382599f);
  for (float c : {-0.29954802989959717f, 0.3315598666667938f, -0.39911866188049316f, 0.500027060508728f,
                  -0.6666838526725769f, 0.9999999403953552f})
    h = std::fma(h, t, c);
  return std::fma(float(e), -1.3862943649291992f, std::fma(t, t * h, -2.0f * t));
}

// (cos, sin) of the angle of word w (stdlib/random.tessera cos_sin_angle): x from the low 30 bits,
// bit 31 negates the cosine, bit 30 swaps the two.
void cosSinAngle(uint32_t w, float& cOut, float& sOut) {
  float x = float(int32_t(w * 4u + 2u)) * 3.65729529994141e-10f;
  float s = x * x;
  float sn = std::fma(
      x * s, std::fma(std::fma(-0.00019503904331941158f, s, 0.00833203550428152f), s, -0.16666650772094727f), x);
  float cs =
      std::fma(std::fma(std::fma(std::fma(2.437983130221255e-05f, s, -0.0013886617962270975f), s, 0.04166661575436592f),
                        s, -0.5f),
               s, 1.0f);
  cs = floatOf(bitsOf(cs) ^ (w & 0x80000000u));
  bool swap = (w & 0x40000000u) != 0;
  cOut = swap ? sn : cs;
  sOut = swap ? cs : sn;
}

float uniformOpen(uint32_t a) { return std::fma(float(a), 2.3283064365386963e-10f, 1.1641532182693481e-10f); }

// r = sqrt(-2 ln u) with -2 ln u clamped to [2^-100, 64] (stdlib/random.tessera normal_pair:
// only u = 1 changes, r = 2^-50 there).
float radius(float u) { return std::sqrt(std::fmin(std::fmax(neg2ln32(u), 0x1p-100f), 64.0f)); }

void normalPair(uint32_t a, uint32_t b, float& z0, float& z1) {
  float r = radius(uniformOpen(a));
  float c, s;
  cosSinAngle(b, c, s);
  z0 = r * c, z1 = r * s;
}

float randAt(uint64_t seed, uint64_t a) { return uniform(block(seed, a >> 2).w[a & 3]); }

float randnAt(uint64_t seed, uint64_t a) {
  Words w = block(seed, a >> 2);
  int k = int(a & 3);
  float z0, z1;
  normalPair(w.w[k < 2 ? 0 : 2], w.w[k < 2 ? 1 : 3], z0, z1);
  return (k & 1) ? z1 : z0;
}

constexpr double kLn2 = 0.6931471805599453;

uint64_t bits64(double d) {
  uint64_t u;
  std::memcpy(&u, &d, 8);
  return u;
}
double double64(uint64_t u) {
  double d;
  std::memcpy(&d, &u, 8);
  return d;
}

double ln64(double x) {
  uint64_t bits = bits64(x);
  int64_t e = int64_t(bits >> 52) - 1023;
  double m = double64((bits & 0x000FFFFFFFFFFFFFull) | 0x3FF0000000000000ull);
  bool big = m > 1.4142135623730951;
  if (big) m = m * 0.5, e += 1;
  double s = (m - 1.0) / (m + 1.0), s2 = s * s, p = 1.0 / 19.0;
  for (double k : {17.0, 15.0, 13.0, 11.0, 9.0, 7.0, 5.0, 3.0, 1.0}) p = std::fma(p, s2, 1.0 / k);
  return std::fma(double(e), kLn2, 2.0 * s * p);
}

double exp64(double x) {
  double k = std::floor(x / kLn2 + 0.5);
  double r = std::fma(-k, 0.6931471803691238, x);
  r = std::fma(-k, 1.9082149292705877e-10, r);
  double p = 1.0 / 6227020800.0;
  for (double d :
       {479001600.0, 39916800.0, 3628800.0, 362880.0, 40320.0, 5040.0, 720.0, 120.0, 24.0, 6.0, 2.0, 1.0, 1.0})
    p = std::fma(p, r, 1.0 / d);
  return p * double64(uint64_t(int64_t(k) + 1023) << 52);
}

double lngamma(double x) {
  if (x == 1.0 || x == 2.0) return 0.0;
  double x0 = x;
  int32_t n = 0;
  if (x <= 7.0) n = int32_t(7.0 - x), x0 = x + double(n);
  double x2 = 1.0 / (x0 * x0), g = -1.39243221690590;
  for (double c : {1.796443723688307e-01, -2.955065359477124e-02, 6.410256410256410e-03, -1.917526917526918e-03,
                   8.417508417508418e-04, -5.952380952380952e-04, 7.936507936507937e-04, -2.777777777777778e-03,
                   8.333333333333333e-02})
    g = g * x2 + c;
  double gl = g / x0 + 0.9189385332046727 + (x0 - 0.5) * ln64(x0) - x0;
  for (int32_t k = 0; k < n; ++k) x0 = x0 - 1.0, gl = gl - ln64(x0);
  return gl;
}

double poissonUniform(uint64_t seed, uint64_t a, int64_t i) {
  Words w = philox(uint32_t(a), uint32_t(a >> 32), uint32_t(i >> 2), 0x504F4953u, uint32_t(seed), uint32_t(seed >> 32));
  return (double(w.w[i & 3]) + 0.5) * 2.3283064365386963e-10;
}

double poissonAt(uint64_t seed, uint64_t a, double lam) {
  if (lam != lam) return lam;
  if (lam <= 0.0) return 0.0;
  int64_t i = 0;
  if (lam < 10.0) {
    double limit = exp64(-lam), k = 0.0, p = poissonUniform(seed, a, i++);
    while (p > limit) k += 1.0, p = p * poissonUniform(seed, a, i++);
    return k;
  }
  double slam = std::sqrt(lam), loglam = ln64(lam), b = 0.931 + 2.53 * slam, aa = -0.059 + 0.02483 * b;
  double invalpha = 1.1239 + 1.1328 / (b - 3.4), vr = 0.9277 - 3.6224 / (b - 2.0);
  for (;;) {
    double u = poissonUniform(seed, a, i) - 0.5, v = poissonUniform(seed, a, i + 1);
    i += 2;
    double us = 0.5 - std::fabs(u);
    double k = std::floor((2.0 * aa / us + b) * u + lam + 0.43);
    if (us >= 0.07 && v <= vr) return k;
    if (k >= 0.0 && !(us < 0.013 && v > us))
      if (ln64(v) + ln64(invalpha) - ln64(aa / (us * us) + b) <= -lam + k * loglam - lngamma(k + 1.0)) return k;
  }
}

// ------------------------------------------------------------------------------------ checks

using Gen = tessera_status (*)(const tessera_launch_options*, const tessera_tensor*, uint64_t, uint64_t);

std::vector<float> draw(Gen g, DT dt, int64_t n, uint64_t seed, uint64_t offset,
                        const tessera_launch_options* opts = nullptr) {
  Dev out(dt, n);
  tessera_tensor t = out.view({n});
  exec::check(g(opts, &t, seed, offset), "generator");
  exec::check(tessera_synchronize(), "synchronize");
  return out.read();
}

// Units in the last place of got against a float64 reference: |got - want| over the spacing of
// f32 at want (its ulp).
double ulps(float got, double want) {
  float w = std::fabs(float(want));
  double ulp = double(std::nextafter(w, INFINITY)) - double(w);
  if (w == 0.0f) ulp = double(std::numeric_limits<float>::denorm_min());
  return std::fabs(double(got) - want) / ulp;
}

// The accuracy of the generators' own elementary functions (docs/stdlib.md, "Generators"): ln of
// every uniform u = (w + 1/2) 2^-32 that randn uses, and cos and sin of every angle, at 2^24 words
// each (w = i 2^8 + random low bits, and the ends), against float64's log, cos and sin. The GPU
// computes them bit for bit as this replica (the bits checks below).
bool polynomialAccuracy() {
  double lnWorst = 0, rWorst = 0, cWorst = 0, sWorst = 0;
  uint32_t lnAt = 0, cAt = 0, sAt = 0;
  std::mt19937 rng(5);
  auto visit = [&](uint32_t w) {
    float u = uniformOpen(w);
    double e = ulps(-0.5f * neg2ln32(u), std::log(double(u)));
    if (e > lnWorst) lnWorst = e, lnAt = w;
    rWorst = std::max(rWorst, ulps(radius(u), std::sqrt(std::fmax(-2.0 * std::log(double(u)), 0x1p-100))));
    float c, s;
    cosSinAngle(w, c, s);
    // The angle in float64: x from the low 30 bits (exact integer arithmetic), then its arc: the
    // cosine negated by bit 31, the two swapped by bit 30.
    double x = 6.283185307179586 * double(int32_t(w * 4u + 2u)) * 0x1p-34;
    double cx = std::cos(x), sx = std::sin(x);
    if (w & 0x80000000u) cx = -cx;
    bool swap = (w & 0x40000000u) != 0;
    double wantC = swap ? sx : cx, wantS = swap ? cx : sx;
    double ec = ulps(c, wantC), es = ulps(s, wantS);
    if (ec > cWorst) cWorst = ec, cAt = w;
    if (es > sWorst) sWorst = es, sAt = w;
  };
  for (uint32_t i = 0; i < (1u << 24); ++i) visit((i << 8) | (rng() & 0xFFu));
  for (uint32_t w : {0u, 1u, 0x3FFFFFFFu, 0x40000000u, 0x7FFFFFFFu, 0x80000000u, 0xFFFFFFFEu, 0xFFFFFFFFu}) visit(w);
  // The bounds the docs state (measured: see the printout).
  bool ok = lnWorst <= 2.0 && rWorst <= 2.0 && cWorst <= 3.0 && sWorst <= 3.0;
  std::printf(
      "generator functions over 2^24 words against float64: ln %.3f ulps (at w = %u), sqrt(-2 ln u) %.3f, "
      "cos %.3f (w = %u), sin %.3f (w = %u)%s\n",
      lnWorst, lnAt, rWorst, cWorst, cAt, sWorst, sAt,
      ok ? "" : "  FAIL (bounds: 2 ulps for ln and r, 3 for cos and sin)");
  return ok;
}

bool knownAnswers() {
  // Random123's kat_vectors for philox4x32_10.
  Words a = philox(0, 0, 0, 0, 0, 0), b = philox(~0u, ~0u, ~0u, ~0u, ~0u, ~0u);
  Words c = philox(0x243f6a88, 0x85a308d3, 0x13198a2e, 0x03707344, 0xa4093822, 0x299f31d0);
  Words want[3] = {{{0x6627e8d5, 0xe169c58d, 0xbc57ac4c, 0x9b00dbd8}},
                   {{0x408f276d, 0x41c83b0e, 0xa20bc7c6, 0x6d5451fd}},
                   {{0xd16cfe09, 0x94fdcceb, 0x5001e420, 0x24126ea1}}};
  Words got[3] = {a, b, c};
  bool ok = std::memcmp(got, want, sizeof got) == 0;
  std::printf("Philox4x32-10 known answers (host replica): %s\n", ok ? "match" : "DIFFER");
  return ok;
}

bool bits(const char* what, Gen g, DT dt, float (*ref)(uint64_t, uint64_t)) {
  int64_t n = randomIn(1, 300000);
  uint64_t seed = exec::rng()(), offset = exec::rng()() % (uint64_t(1) << 40) + uint64_t(randomIn(0, 3));
  std::printf("-- %s: n = %lld, seed %llu, offset %llu\n", what, static_cast<long long>(n),
              static_cast<unsigned long long>(seed), static_cast<unsigned long long>(offset));
  std::vector<float> got = draw(g, dt, n, seed, offset), want(n);
  for (int64_t e = 0; e < n; ++e) want[e] = round(dt, ref(seed, offset + uint64_t(e)));
  bool ok = same(got, want, std::string(what) + " against the replica");
  ok &= same(draw(g, dt, n, seed, offset), got, std::string(what) + " on a second launch");
  tessera_launch_options five = {};
  five.grid[0] = 5, five.grid[1] = 1, five.grid[2] = 1;
  ok &= same(draw(g, dt, n, seed, offset, &five), got, std::string(what) + " on 5 groups");
  int64_t cut = randomIn(0, n);
  std::vector<float> first = draw(g, dt, cut, seed, offset), rest = draw(g, dt, n - cut, seed, offset + uint64_t(cut));
  first.insert(first.end(), rest.begin(), rest.end());
  ok &= same(first, got, std::string(what) + " drawn in two parts");
  return ok;
}

double normalCdf(double x) { return 0.5 * std::erfc(-x / std::sqrt(2.0)); }

bool near(const char* what, double got, double want, double se) {
  bool ok = std::fabs(got - want) <= 5 * se;
  std::printf("  %s = %.6g (expected %.6g, 5 standard errors %.3g)%s\n", what, got, want, 5 * se, ok ? "" : "  FAIL");
  return ok;
}

bool ks(const char* what, std::vector<double> v, double (*cdf)(double)) {
  std::sort(v.begin(), v.end());
  double n = double(v.size()), d = 0;
  for (size_t i = 0; i < v.size(); ++i) {
    double f = cdf(v[i]);
    d = std::max(d, std::max(f - double(i) / n, double(i + 1) / n - f));
  }
  double crit = 1.63 / std::sqrt(n);
  std::printf("  %s: Kolmogorov-Smirnov distance %.3g (1%% critical value %.3g)%s\n", what, d, crit,
              d < crit ? "" : "  FAIL");
  return d < crit;
}

bool statistics() {
  const int64_t n = 1 << 20;
  bool ok = true;
  std::vector<float> u = draw(tessera_std_random_rand_f32, DT::F32, n, 1234, 0);
  std::vector<double> ud(u.begin(), u.end());
  double mean = 0, var = 0;
  for (double x : ud) mean += x;
  mean /= n;
  for (double x : ud) var += (x - mean) * (x - mean);
  var /= n - 1;
  std::printf("rand_f32, seed 1234, %lld values:\n", static_cast<long long>(n));
  ok &= near("mean", mean, 0.5, std::sqrt(1.0 / 12 / n));
  ok &= near("variance", var, 1.0 / 12, std::sqrt(1.0 / 180 / n));
  ok &= ks("uniform", ud, [](double x) { return std::min(1.0, std::max(0.0, x)); });

  std::vector<float> z = draw(tessera_std_random_randn_f32, DT::F32, n, 42, 0);
  std::vector<double> zd(z.begin(), z.end());
  double m1 = 0, m2 = 0, m3 = 0, m4 = 0;
  for (double x : zd) m1 += x;
  m1 /= n;
  for (double x : zd) {
    double d = x - m1;
    m2 += d * d, m3 += d * d * d, m4 += d * d * d * d;
  }
  m2 /= n, m3 /= n, m4 /= n;
  std::printf("randn_f32, seed 42, %lld values:\n", static_cast<long long>(n));
  ok &= near("mean", m1, 0, std::sqrt(1.0 / n));
  ok &= near("variance", m2, 1, std::sqrt(2.0 / n));
  ok &= near("skewness", m3 / std::pow(m2, 1.5), 0, std::sqrt(6.0 / n));
  ok &= near("excess kurtosis", m4 / (m2 * m2) - 3, 0, std::sqrt(24.0 / n));
  ok &= ks("normal", zd, normalCdf);
  return ok;
}

bool poisson() {
  bool ok = true;
  const int64_t n = 1 << 16;
  for (double lam : {0.3, 3.7, 9.99, 10.0, 25.5, 1000.0, 1e5}) {
    std::vector<float> rate(n, float(lam));
    exec::DeviceArray<float> dr(rate), dout(std::vector<float>(n, -1.0f));
    tessera_tensor tr = dr.view(TESSERA_F32, {n}), to = dout.view(TESSERA_F32, {n});
    uint64_t seed = 77, offset = uint64_t(lam * 1000);
    exec::check(tessera_std_random_poisson_f32(nullptr, &tr, &to, seed, offset), "poisson");
    exec::check(tessera_synchronize(), "synchronize");
    std::vector<float> got = dout.read();
    std::printf("poisson_f32, rate %g, seed 77, %lld values:\n", lam, static_cast<long long>(n));
    std::vector<float> want(n);
    for (int64_t e = 0; e < n; ++e) want[e] = float(poissonAt(seed, offset + uint64_t(e), double(float(lam))));
    ok &= same(got, want, "  poisson against the replica");
    double mean = 0, var = 0;
    for (float k : got) mean += k;
    mean /= n;
    for (float k : got) var += (k - mean) * (k - mean);
    var /= n - 1;
    double l = double(float(lam));
    ok &= near("mean", mean, l, std::sqrt(l / n));
    ok &= near("variance", var, l, l * std::sqrt(2.0 / n) + std::sqrt(l / n));
    // Largest CDF difference over the integers near the mean.
    std::vector<float> sorted = got;
    std::sort(sorted.begin(), sorted.end());
    double d = 0;
    int64_t lo = int64_t(std::max(0.0, l - 8 * std::sqrt(l) - 2)), hi = int64_t(l + 8 * std::sqrt(l) + 2);
    for (int64_t k = lo; k <= hi; ++k) {
      double cdf = 0;  // P(X <= k) by summing the pmf in log space from lo
      for (int64_t j = std::max<int64_t>(0, int64_t(l - 40 * std::sqrt(l) - 40)); j <= k; ++j)
        cdf += std::exp(j * std::log(l) - l - std::lgamma(j + 1.0));
      double emp = double(std::upper_bound(sorted.begin(), sorted.end(), float(k)) - sorted.begin()) / n;
      d = std::max(d, std::fabs(emp - cdf));
    }
    double crit = 1.63 / std::sqrt(double(n));
    std::printf("  largest CDF difference over the integers %.3g (1%% critical value %.3g)%s\n", d, crit,
                d < crit ? "" : "  FAIL");
    ok &= d < crit;
  }
  // Rates <= 0 give 0, NaN gives NaN.
  std::vector<float> edge = {0.0f, -1.0f, std::numeric_limits<float>::quiet_NaN()};
  exec::DeviceArray<float> dr(edge), dout(std::vector<float>(3, -1.0f));
  tessera_tensor tr = dr.view(TESSERA_F32, {3}), to = dout.view(TESSERA_F32, {3});
  exec::check(tessera_std_random_poisson_f32(nullptr, &tr, &to, 1, 0), "poisson edge rates");
  exec::check(tessera_synchronize(), "synchronize");
  std::vector<float> e = dout.read();
  bool edgeOk = e[0] == 0.0f && e[1] == 0.0f && std::isnan(e[2]);
  std::printf("poisson of rates 0, -1, NaN: %g %g %g%s\n", e[0], e[1], e[2], edgeOk ? "" : "  FAIL");
  return ok && edgeOk;
}

}  // namespace

int main() {
  exec::requireDevice();
  bool ok = knownAnswers();
  ok &= polynomialAccuracy();
  ok &= bits("rand_f32", tessera_std_random_rand_f32, DT::F32, randAt);
  ok &= bits("randn_f32", tessera_std_random_randn_f32, DT::F32, randnAt);
  ok &= bits("randn_bf16", tessera_std_random_randn_bf16, DT::BF16, randnAt);
  ok &= statistics();
  ok &= poisson();
  return exec::finish(ok);
}
