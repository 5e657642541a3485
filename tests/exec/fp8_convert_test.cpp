// kernels/fp8_convert: f32 -> fp8 codes -> f32 for e4m3 and e5m2, with and without @saturate, on
// random values over each format's range plus the hard cases (every exact tie between two codes,
// the overflow boundary, subnormals, zeros, infinities, NaN). The reference is independent of
// the compiler's bit tricks: it decodes all 256 codes and picks the nearest (ties to the even
// code), with one more code past the largest finite value standing for overflow. Every code and
// every decoded value must match exactly.
#include "fp8_convert.h"

#include <cmath>
#include <limits>

#include "ExecTest.h"

namespace {

struct Format {
  const char* name;
  int expBits, mantBits;
  bool hasInf;
  int bias() const { return (1 << (expBits - 1)) - 1; }
  int maxFinite() const { return hasInf ? 0x7B : 0x7E; }
  // The value of a positive code (NaN for NaN codes, infinity for e5m2's).
  double decode(int code) const {
    int e = (code >> mantBits) & ((1 << expBits) - 1), m = code & ((1 << mantBits) - 1);
    if (e == (1 << expBits) - 1 && (hasInf || m == (1 << mantBits) - 1)) return hasInf && m == 0 ? INFINITY : NAN;
    if (e == 0) return std::ldexp(m, 1 - bias() - mantBits);
    return std::ldexp(1.0 + m / double(1 << mantBits), e - bias());
  }
  // The code of the nearest value, ties to even; past the largest finite value: overflow.
  int encode(float x, bool saturate) const {
    int sign = std::signbit(x) ? 0x80 : 0;
    if (std::isnan(x)) return 0x7F | sign;
    double a = std::fabs(static_cast<double>(x));
    int overflow = saturate ? maxFinite() : hasInf ? 0x7C : 0x7F;
    double past = hasInf ? 65536.0 : 480.0;  // the next step past the largest finite value
    if (a >= past) return overflow | sign;   // (also keeps huge values out of the search below)
    int best = 0;
    double bestErr = INFINITY;
    for (int c = 0; c <= maxFinite() + 1; ++c) {
      // maxFinite() + 1 stands for the next step past the largest finite value.
      double v = c <= maxFinite() ? decode(c) : past;
      double err = std::fabs(v - a);
      if (err < bestErr || (err == bestErr && (c & 1) == 0)) best = c, bestErr = err;
    }
    if (best > maxFinite()) best = overflow;
    return best | sign;
  }
};

using Launch = tessera_status (*)(tessera_tensor, tessera_tensor, tessera_tensor, const tessera_launch_options*);

bool check(const Format& f, bool saturate, const char* name, Launch launch) {
  std::vector<float> x;
  for (int c = 0; c <= 0x7F; ++c)
    for (int s : {1, -1}) {
      double v = f.decode(c);
      if (std::isnan(v)) continue;
      x.push_back(static_cast<float>(s * v));
      double next = c + 1 <= f.maxFinite() ? f.decode(c + 1) : f.hasInf ? 65536.0 : 480.0;
      x.push_back(static_cast<float>(s * (v + next) / 2));  // the tie between c and c + 1
      x.push_back(std::nextafter(static_cast<float>(s * (v + next) / 2), 0.0f));
      x.push_back(std::nextafter(static_cast<float>(s * (v + next) / 2), s * INFINITY));
    }
  for (float v : {0.0f, -0.0f, INFINITY, -INFINITY, std::numeric_limits<float>::quiet_NaN(), 1e-30f, -1e-30f, 1e30f,
                  -1e30f, std::numeric_limits<float>::denorm_min()})
    x.push_back(v);
  double range = f.decode(f.maxFinite()) * 1.2;
  for (float v : exec::randomFloats(100000, static_cast<float>(-range), static_cast<float>(range))) x.push_back(v);
  for (float v : exec::randomFloats(20000, -1.0f, 1.0f)) x.push_back(v * 1e-3f);  // subnormals
  int64_t n = static_cast<int64_t>(x.size());
  exec::DeviceArray<float> dx(x), dback(std::vector<float>(n, -1.0f));
  exec::DeviceArray<uint8_t> dq(std::vector<uint8_t>(n, 0x55));
  tessera_dtype qt = f.hasInf ? TESSERA_F8_E5M2 : TESSERA_F8_E4M3;
  exec::check(launch(dx.view(TESSERA_F32, {n}), dq.view(qt, {n}), dback.view(TESSERA_F32, {n}), nullptr), name);
  exec::check(tessera_synchronize(), "synchronize");
  std::vector<uint8_t> q = dq.read(), want(n);
  std::vector<float> back = dback.read(), wantBack(n);
  for (int64_t i = 0; i < n; ++i) {
    want[i] = static_cast<uint8_t>(f.encode(x[i], saturate));
    double v = f.decode(want[i] & 0x7F);
    wantBack[i] = static_cast<float>((want[i] & 0x80) ? -v : v);
  }
  bool ok = exec::allEqual(q, want, name);
  // NaN codes decode to the canonical NaN on both sides; compare bits.
  for (int64_t i = 0; i < n; ++i)
    if (std::isnan(wantBack[i])) wantBack[i] = std::isnan(back[i]) ? back[i] : wantBack[i];
  ok &= exec::allEqual(back, wantBack, "decoded");
  return ok;
}

}  // namespace

int main() {
  exec::requireDevice();
  const Format e4m3{"e4m3", 4, 3, false}, e5m2{"e5m2", 5, 2, true};
  bool ok =
      check(e4m3, false, "to_e4m3", [](auto x, auto q, auto b, auto o) { return fp8_convert_to_e4m3(o, &x, &q, &b); });
  ok &= check(e4m3, true, "to_e4m3_sat",
              [](auto x, auto q, auto b, auto o) { return fp8_convert_to_e4m3_sat(o, &x, &q, &b); });
  ok &=
      check(e5m2, false, "to_e5m2", [](auto x, auto q, auto b, auto o) { return fp8_convert_to_e5m2(o, &x, &q, &b); });
  ok &= check(e5m2, true, "to_e5m2_sat",
              [](auto x, auto q, auto b, auto o) { return fp8_convert_to_e5m2_sat(o, &x, &q, &b); });
  return exec::finish(ok);
}
