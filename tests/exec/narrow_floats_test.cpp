// kernels/narrow_floats: fp4/fp6/fp8/f16/bf16 stores under every rounding policy, @scale, and
// int4, against a brute-force reference that decodes every code of a format and searches them:
//   nearest_even: the closest code, ties to the even one; past the largest finite value by half a
//     step or more: infinity (e5m2, f16, bf16), NaN (e4m3), or the largest finite value
//     (@saturate; always for fp6/fp4, which have neither);
//   toward_zero: the largest magnitude not above |x| (never overflowing from a finite x);
//   stochastic: one of the two neighbours of x, up with probability (|x| - lo) / (hi - lo),
//     checked per element (a neighbour), in aggregate (the frequency of rounding up within a
//     binomial bound over 2000 stores of each value) and for repeatability (a second launch gives
//     the same bits: the random bits hash the element, docs/codegen.md).
// The packed layouts (fp4/int4: two per byte, low nibble first; fp6: four in three bytes) are
// checked byte for byte, including bytes shared by tiles of different groups.
#include "narrow_floats.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <string>

#include "ExecTest.h"

namespace {

struct Format {
  const char* name;
  int expBits, mantBits;
  bool hasInf, hasNan;
  uint32_t nanCode;
  int bits() const { return 1 + expBits + mantBits; }
  int bias() const { return (1 << (expBits - 1)) - 1; }
  uint32_t signBit() const { return 1u << (expBits + mantBits); }
  uint32_t infCode() const { return ((1u << expBits) - 1) << mantBits; }
  uint32_t maxFinite() const {
    if (hasInf) return infCode() - 1;
    if (hasNan) return nanCode - 1;
    return signBit() - 1;
  }
  double decode(uint32_t code) const {
    double s = code & signBit() ? -1 : 1;
    uint32_t mag = code & (signBit() - 1);
    int e = static_cast<int>(mag >> mantBits);
    uint32_t m = mag & ((1u << mantBits) - 1);
    if (hasInf && e == (1 << expBits) - 1) return m == 0 ? s * INFINITY : NAN;
    if (!hasInf && hasNan && mag == nanCode) return NAN;
    if (e == 0) return s * std::ldexp(m, 1 - bias() - mantBits);
    return s * std::ldexp(1.0 + m / double(1u << mantBits), e - bias());
  }
  // The magnitude one step past the largest finite value, as if the exponent went on.
  double past() const {
    uint32_t mf = maxFinite();
    int e = static_cast<int>(mf >> mantBits);
    return decode(mf) + std::ldexp(1.0, e - bias() - mantBits);
  }
  // Codes below `a`'s magnitude: the largest magnitude code with value <= a (a finite, >= 0).
  uint32_t floorCode(double a) const {
    uint32_t lo = 0, hi = maxFinite();
    if (decode(hi) <= a) return hi;
    while (hi - lo > 1) {
      uint32_t mid = (lo + hi) / 2;
      (decode(mid) <= a ? lo : hi) = mid;
    }
    return lo;
  }
  uint32_t overflowCode(bool saturate) const {
    if (saturate || (!hasInf && !hasNan)) return maxFinite();
    return hasInf ? infCode() : nanCode;
  }
  uint32_t encode(float x, bool towardZero, bool saturate) const {
    uint32_t sign = std::signbit(x) ? signBit() : 0;
    if (std::isnan(x)) return hasNan ? nanCode | sign : 0;
    double a = std::fabs(static_cast<double>(x));
    if (std::isinf(a)) return (towardZero && !hasInf && hasNan && !saturate ? nanCode : overflowCode(saturate)) | sign;
    uint32_t lo = floorCode(a);
    if (towardZero) return lo | sign;
    double vlo = decode(lo), vhi = lo < maxFinite() ? decode(lo + 1) : past();
    uint32_t code = a - vlo < vhi - a ? lo : a - vlo > vhi - a ? lo + 1 : (lo & 1) ? lo + 1 : lo;
    return (code > maxFinite() ? overflowCode(saturate) : code) | sign;
  }
};

const Format kE2M1{"e2m1", 2, 1, false, false, 0};
const Format kE2M3{"e2m3", 2, 3, false, false, 0};
const Format kE3M2{"e3m2", 3, 2, false, false, 0};
const Format kE4M3{"e4m3", 4, 3, false, true, 0x7F};
const Format kE5M2{"e5m2", 5, 2, true, true, 0x7F};
const Format kF16{"f16", 5, 10, true, true, 0x7E00};
const Format kBF16{"bf16", 8, 7, true, true, 0x7FC0};

using Launch = tessera_status (*)(const tessera_tensor&, const tessera_tensor&, const tessera_tensor&,
                                  const tessera_launch_options*);

int32_t dtypeOf(const Format& f) {
  if (&f == &kE2M1) return TESSERA_F4_E2M1;
  if (&f == &kE2M3) return TESSERA_F6_E2M3;
  if (&f == &kE3M2) return TESSERA_F6_E3M2;
  if (&f == &kE4M3) return TESSERA_F8_E4M3;
  if (&f == &kE5M2) return TESSERA_F8_E5M2;
  if (&f == &kF16) return TESSERA_F16;
  return TESSERA_BF16;
}

// Bytes of n packed codes, as docs/abi.md lays them out (element e at bit e * bits).
std::vector<uint8_t> pack(const std::vector<uint32_t>& codes, int bits) {
  std::vector<uint8_t> out((codes.size() * bits + 7) / 8, 0);
  for (size_t e = 0; e < codes.size(); ++e)
    for (int b = 0; b < bits; ++b)
      if (codes[e] >> b & 1) out[(e * bits + b) / 8] |= static_cast<uint8_t>(1u << ((e * bits + b) % 8));
  return out;
}

size_t storageBytes(const Format& f, size_t n) { return f.bits() <= 8 ? (n * f.bits() + 7) / 8 : n * 2; }

struct Run {
  std::vector<float> back;
  std::vector<uint8_t> raw;
};

Run launch(const Format& f, Launch k, const std::vector<float>& x) {
  int64_t n = static_cast<int64_t>(x.size());
  exec::DeviceArray<float> dx(x), dback(std::vector<float>(n, 0.0f));
  exec::DeviceArray<uint8_t> dq(std::vector<uint8_t>(storageBytes(f, x.size()) + 8, 0xA5));
  tessera_tensor q = dq.view(static_cast<tessera_dtype>(dtypeOf(f)), {n});
  exec::check(k(dx.view(TESSERA_F32, {n}), q, dback.view(TESSERA_F32, {n}), nullptr), f.name);
  exec::check(tessera_synchronize(), "synchronize");
  Run r{dback.read(), dq.read()};
  // The bytes past the tensor stay as they were (packed stores touch only their own bits).
  for (size_t i = storageBytes(f, x.size()); i < r.raw.size(); ++i)
    if (r.raw[i] != 0xA5) std::printf("  %s: byte %zu past the tensor changed\n", f.name, i);
  return r;
}

// Inputs: every code's value, each tie, values past the range, specials, random values.
std::vector<float> inputs(const Format& f) {
  std::vector<float> x;
  uint32_t mf = f.maxFinite();
  uint32_t step = f.bits() > 8 ? 7 : 1;  // f16/bf16: a sample of the codes
  for (uint32_t c = 0; c <= mf; c += step)
    for (float s : {1.0f, -1.0f}) {
      double v = f.decode(c), next = c < mf ? f.decode(c + 1) : f.past();
      x.push_back(static_cast<float>(s * v));
      x.push_back(static_cast<float>(s * (v + next) / 2));
      x.push_back(static_cast<float>(s * (v + (next - v) * 0.3)));
    }
  for (float v : {0.0f, -0.0f, INFINITY, -INFINITY, NAN, 1e30f, -1e30f, 1e-30f, -1e-30f}) x.push_back(v);
  x.push_back(static_cast<float>(f.past()));
  x.push_back(static_cast<float>(-f.past() * 1.5));
  double top = f.past();
  for (float v : exec::randomFloats(3000, static_cast<float>(-top), static_cast<float>(top))) x.push_back(v);
  return x;
}

bool sameValue(float got, double want) {
  if (std::isnan(want)) return std::isnan(got);
  return got == static_cast<float>(want) && std::signbit(got) == std::signbit(want);
}

// Digest with NaNs made canonical (their payloads are not part of the contract).
void digest(std::vector<float> v, const std::string& what) {
  for (float& x : v)
    if (std::isnan(x)) x = NAN;
  std::printf("digest %s %016llx (exact)\n", what.c_str(), static_cast<unsigned long long>(exec::digest(v)));
}

bool checkDeterministic(const Format& f, Launch k, bool towardZero, bool saturate, double scale, const char* what) {
  std::vector<float> x = inputs(f);
  if (scale != 1.0)
    for (float& v : x) v = static_cast<float>(v * scale);
  Run r = launch(f, k, x);
  size_t bad = 0;
  std::vector<uint32_t> codes(x.size());
  for (size_t i = 0; i < x.size(); ++i) {
    codes[i] = f.encode(static_cast<float>(x[i] / scale), towardZero, saturate);
    double want = f.decode(codes[i]) * scale;
    if (!sameValue(r.back[i], want) && bad++ < 5)
      std::printf("  %s: x=%.9g back=%.9g expected %.9g (code 0x%x)\n", what, x[i], r.back[i], want, codes[i]);
  }
  bool ok = bad == 0;
  if (f.bits() < 8) {  // the packed bytes themselves (the bits past the last element: untouched)
    std::vector<uint8_t> want = pack(codes, f.bits());
    size_t badBytes = 0, usedBits = x.size() * f.bits();
    for (size_t i = 0; i < want.size(); ++i) {
      uint8_t mask = i * 8 + 8 <= usedBits ? 0xFF : static_cast<uint8_t>((1u << (usedBits - i * 8)) - 1);
      badBytes += (r.raw[i] & mask) != want[i] || (r.raw[i] & ~mask) != (0xA5 & ~mask);
    }
    if (badBytes) std::printf("  %s: %zu packed bytes differ from the layout of docs/abi.md\n", what, badBytes);
    ok &= badBytes == 0;
  }
  std::printf("%s: %zu values, %zu differ from the reference\n", what, x.size(), bad);
  digest(r.back, what);
  return ok;
}

bool checkStochastic(const Format& f, Launch k, double scale, const char* what) {
  // 16 values strictly inside the finite range, not representable, each stored 2000 times.
  std::vector<double> values;
  std::uniform_real_distribution<double> pick(0.0, 1.0);
  double top = f.decode(f.maxFinite());
  while (values.size() < 16) {
    double a = std::ldexp(pick(exec::rng()), -static_cast<int>(values.size() % 4)) * top * 0.999;
    float v = static_cast<float>(values.size() % 2 ? -a : a);
    uint32_t lo = f.floorCode(std::fabs(v));
    if (f.decode(lo) != std::fabs(v)) values.push_back(v);
  }
  const int copies = 2000;
  std::vector<float> x;
  for (double v : values)
    for (int c = 0; c < copies; ++c) x.push_back(static_cast<float>(v * scale));
  for (uint32_t c = 0; c <= f.maxFinite(); c += f.bits() > 8 ? 997 : 1)  // exact values stay
    x.push_back(static_cast<float>(f.decode(c) * scale));
  Run r = launch(f, k, x), again = launch(f, k, x);
  bool ok = r.raw == again.raw;
  if (!ok) std::printf("  %s: a second launch gave other bits\n", what);
  size_t bad = 0, rows = 0;
  for (size_t vi = 0; vi < values.size(); ++vi) {
    double a = std::fabs(values[vi]);
    uint32_t lo = f.floorCode(a);
    double vlo = f.decode(lo), vhi = f.decode(lo + 1), p = (a - vlo) / (vhi - vlo);
    int ups = 0;
    for (int c = 0; c < copies; ++c) {
      float got = std::fabs(r.back[vi * copies + c]);
      if (got == static_cast<float>(vhi * scale))
        ++ups;
      else if (got != static_cast<float>(vlo * scale) && bad++ < 5)
        std::printf("  %s: %.9g rounded to %.9g, not a neighbour\n", what, values[vi], got / scale);
    }
    double sigma = std::sqrt(p * (1 - p) / copies), freq = ups / double(copies);
    if (std::fabs(freq - p) > 5 * sigma + 1.0 / copies) {
      std::printf("  %s: %.9g rounded up %.4f of the time, expected %.4f +- %.4f\n", what, values[vi], freq, p,
                  5 * sigma);
      ++rows;
    }
  }
  for (size_t i = values.size() * copies; i < x.size(); ++i)
    if (!sameValue(r.back[i], x[i]) && bad++ < 5) std::printf("  %s: exact %.9g became %.9g\n", what, x[i], r.back[i]);
  std::printf("%s: %zu values x %d stores, %zu not a neighbour, %zu frequencies outside 5 sigma\n", what, values.size(),
              copies, bad, rows);
  digest(r.back, what);
  return ok && bad == 0 && rows == 0;
}

bool checkInt4() {
  std::vector<float> x = {0.0f,  -0.0f,  7.0f,    -8.0f,    7.9f,      -8.9f, 8.0f,
                          -9.0f, 100.0f, -100.0f, INFINITY, -INFINITY, NAN};
  for (float v : exec::randomFloats(5001, -20.0f, 20.0f)) x.push_back(v);
  int64_t n = static_cast<int64_t>(x.size());
  std::vector<int32_t> wantBack(n), wantTwice(n);
  std::vector<uint32_t> codes(n);
  for (int64_t i = 0; i < n; ++i) {
    double t = std::isnan(x[i]) ? 0 : std::clamp(std::trunc(static_cast<double>(x[i])), -8.0, 7.0);
    int v = static_cast<int>(t);
    wantBack[i] = v;
    wantTwice[i] = ((2 * v + 8) & 15) - 8;
    codes[i] = static_cast<uint32_t>(v) & 15;
  }
  exec::DeviceArray<float> dx(x);
  exec::DeviceArray<uint8_t> dk(std::vector<uint8_t>((n + 1) / 2, 0));
  exec::DeviceArray<int32_t> db(std::vector<int32_t>(n, 0)), dt(std::vector<int32_t>(n, 0));
  exec::check(narrow_floats::int4_ops(dx.view(TESSERA_F32, {n}), dk.view(TESSERA_I4, {n}), db.view(TESSERA_I32, {n}),
                                      dt.view(TESSERA_I32, {n})),
              "int4_ops");
  exec::check(tessera_synchronize(), "synchronize");
  bool ok = exec::allEqual(db.read(), wantBack, "i4(x)");
  ok &= exec::allEqual(dt.read(), wantTwice, "i4 x + x (wraps)");
  ok &= exec::allEqual(dk.read(), pack(codes, 4), "int4 packed bytes");
  return ok;
}

bool checkGroups() {
  // Groups of 33 tiles: element 33g and 33g - 1 share a byte for odd g.
  std::vector<float> x = exec::randomFloats(33 * 61 + 5, -6.5f, 6.5f);
  int64_t n = static_cast<int64_t>(x.size());
  std::vector<uint32_t> codes(n);
  for (int64_t i = 0; i < n; ++i) codes[i] = kE2M1.encode(x[i], false, false);
  exec::DeviceArray<float> dx(x);
  exec::DeviceArray<uint8_t> dq(std::vector<uint8_t>((n + 1) / 2, 0xFF));
  tessera_launch_options o{};
  o.grid[0] = static_cast<uint32_t>((n + 32) / 33);
  exec::check(narrow_floats::fp4_groups(dx.view(TESSERA_F32, {n}), dq.view(TESSERA_F4_E2M1, {n}), &o), "fp4_groups");
  exec::check(tessera_synchronize(), "synchronize");
  return exec::allEqual(dq.read(), pack(codes, 4), "fp4 bytes stored by several groups");
}

}  // namespace

int main() {
  exec::requireDevice();
  namespace nf = narrow_floats;
  bool ok = true;
  ok &= checkDeterministic(kE2M1, nf::e2m1_rn, false, false, 1, "fp4_e2m1 nearest_even");
  ok &= checkDeterministic(kE2M1, nf::e2m1_rz, true, false, 1, "fp4_e2m1 toward_zero");
  ok &= checkStochastic(kE2M1, nf::e2m1_rs, 1, "fp4_e2m1 stochastic");
  ok &= checkDeterministic(kE2M3, nf::e2m3_rn, false, false, 1, "fp6_e2m3 nearest_even");
  ok &= checkDeterministic(kE2M3, nf::e2m3_rz, true, false, 1, "fp6_e2m3 toward_zero");
  ok &= checkStochastic(kE2M3, nf::e2m3_rs, 1, "fp6_e2m3 stochastic");
  ok &= checkDeterministic(kE3M2, nf::e3m2_rn, false, false, 1, "fp6_e3m2 nearest_even");
  ok &= checkDeterministic(kE3M2, nf::e3m2_rz, true, false, 1, "fp6_e3m2 toward_zero");
  ok &= checkStochastic(kE3M2, nf::e3m2_rs, 1, "fp6_e3m2 stochastic");
  ok &= checkDeterministic(kE4M3, nf::e4m3_rn, false, false, 1, "fp8_e4m3 nearest_even");
  ok &= checkDeterministic(kE4M3, nf::e4m3_rz, true, false, 1, "fp8_e4m3 toward_zero");
  ok &= checkDeterministic(kE4M3, nf::e4m3_rz_sat, true, true, 1, "fp8_e4m3 toward_zero saturate");
  ok &= checkStochastic(kE4M3, nf::e4m3_rs, 1, "fp8_e4m3 stochastic");
  ok &= checkDeterministic(kE5M2, nf::e5m2_rn, false, false, 1, "fp8_e5m2 nearest_even");
  ok &= checkDeterministic(kE5M2, nf::e5m2_rz, true, false, 1, "fp8_e5m2 toward_zero");
  ok &= checkStochastic(kE5M2, nf::e5m2_rs, 1, "fp8_e5m2 stochastic");
  ok &= checkDeterministic(kF16, nf::f16_rz, true, false, 1, "f16 toward_zero");
  ok &= checkStochastic(kF16, nf::f16_rs, 1, "f16 stochastic");
  ok &= checkDeterministic(kBF16, nf::bf16_rz, true, false, 1, "bf16 toward_zero");
  ok &= checkStochastic(kBF16, nf::bf16_rs, 1, "bf16 stochastic");
  ok &= checkDeterministic(kE5M2, nf::e5m2_scaled, false, false, 4.0, "fp8_e5m2 @scale(4.0)");
  ok &= checkDeterministic(kE2M1, nf::e2m1_scaled, false, false, 0.5, "fp4_e2m1 @scale(0.5)");
  ok &= checkStochastic(kE4M3, nf::e4m3_rs_scaled, 8.0, "fp8_e4m3 @scale(8.0) stochastic");
  ok &= checkInt4();
  ok &= checkGroups();
  return exec::finish(ok);
}
