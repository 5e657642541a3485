// kernels/float_minmax: max()/min() of every pair of special values (zeros of both signs,
// infinities, NaN, subnormals, ordinary values) in every float dtype and every form, each
// result's bits against IEEE 754-2019 maximumNumber/minimumNumber (NaN ignored, -0 < +0; any
// NaN equals any NaN). Built twice, at -O0 and -O2 (float_minmax_O0 / float_minmax_O2).
#include "float_minmax.h"

#include <cmath>
#include <cstring>
#include <iterator>

#include "ExecTest.h"

namespace {

double minMaxNumber(bool isMax, double a, double b) {
  if (std::isnan(b)) return a;
  if (std::isnan(a)) return b;
  if (a == b) return std::signbit(a) == isMax ? b : a;
  return (a > b) == isMax ? a : b;
}

const double kSpecials[] = {0.0,       -0.0, 1.0,   -1.0,   2.5,     -2.5,    INFINITY,
                            -INFINITY, NAN,  1e-40, -1e-40, 65504.0, -65504.0};
constexpr size_t kS = std::size(kSpecials);
constexpr int64_t kPairs = kS * kS;

// Element p is the pair (kSpecials[p / kS], kSpecials[p % kS]) rounded to the dtype.
template <class F>
void pairs(F&& put) {
  for (size_t i = 0; i < kS; ++i)
    for (size_t j = 0; j < kS; ++j) put(i * kS + j, kSpecials[i], kSpecials[j]);
}

// 16-bit dtypes: codes compared exactly, except that any NaN code equals any NaN code.
bool check16(const char* what, const std::vector<uint16_t>& got, const std::vector<uint16_t>& want, uint16_t expMask) {
  auto isNan = [&](uint16_t c) { return (c & expMask) == expMask && (c & ~expMask & 0x7fffu); };
  size_t bad = 0;
  for (size_t p = 0; p < want.size(); ++p)
    if (got[p] != want[p] && !(isNan(got[p]) && isNan(want[p])) && bad++ < 5)
      std::printf("  %s[%zu] (%g, %g) = 0x%04x, expected 0x%04x\n", what, p, kSpecials[p / kS], kSpecials[p % kS],
                  got[p], want[p]);
  std::printf("%s: %zu elements, %zu differ\n", what, want.size(), bad);
  return bad == 0;
}

template <class Kernel>
bool run16(const char* name, Kernel k, tessera_dtype dt, uint16_t (*to)(float), float (*from)(uint16_t),
           uint16_t expMask) {
  std::vector<uint16_t> a(kPairs), b(kPairs), wmx(kPairs), wmn(kPairs), zero(kPairs, 0);
  pairs([&](size_t p, double x, double y) {
    a[p] = to(static_cast<float>(x));
    b[p] = to(static_cast<float>(y));
    double xr = from(a[p]), yr = from(b[p]);
    wmx[p] = to(static_cast<float>(minMaxNumber(true, xr, yr)));
    wmn[p] = to(static_cast<float>(minMaxNumber(false, xr, yr)));
  });
  exec::DeviceArray<uint16_t> da(a), db(b), dmx(zero), dmn(zero);
  exec::check(k(da.view(dt, {kPairs}), db.view(dt, {kPairs}), dmx.view(dt, {kPairs}), dmn.view(dt, {kPairs}), nullptr),
              name);
  exec::check(tessera_synchronize(), "synchronize");
  std::string mx = std::string(name) + " max", mn = std::string(name) + " min";
  bool ok = check16(mx.c_str(), dmx.read(), wmx, expMask);
  return check16(mn.c_str(), dmn.read(), wmn, expMask) && ok;
}

template <class T, class Kernel>
bool runWide(const char* name, Kernel k, tessera_dtype dt) {
  std::vector<T> a(kPairs), b(kPairs), wmx(kPairs), wmn(kPairs), zero(kPairs, 0);
  pairs([&](size_t p, double x, double y) {
    a[p] = static_cast<T>(x);
    b[p] = static_cast<T>(y);
    wmx[p] = static_cast<T>(minMaxNumber(true, a[p], b[p]));
    wmn[p] = static_cast<T>(minMaxNumber(false, a[p], b[p]));
  });
  exec::DeviceArray<T> da(a), db(b), dmx(zero), dmn(zero);
  exec::check(k(da.view(dt, {kPairs}), db.view(dt, {kPairs}), dmx.view(dt, {kPairs}), dmn.view(dt, {kPairs}), nullptr),
              name);
  exec::check(tessera_synchronize(), "synchronize");
  std::string mx = std::string(name) + " max", mn = std::string(name) + " min";
  bool ok = exec::allEqual(dmx.read(), wmx, mx.c_str());
  return exec::allEqual(dmn.read(), wmn, mn.c_str()) && ok;
}

// The f32 pairs as rows of an [kPairs, 2] tensor: reduce_max/min and tile.max along axis 1.
bool runRows() {
  std::vector<float> x(2 * kPairs), wmx(kPairs), wmn(kPairs), zero(kPairs, 0.0f);
  pairs([&](size_t p, double a, double b) {
    x[2 * p] = static_cast<float>(a);
    x[2 * p + 1] = static_cast<float>(b);
    wmx[p] = static_cast<float>(minMaxNumber(true, x[2 * p], x[2 * p + 1]));
    wmn[p] = static_cast<float>(minMaxNumber(false, x[2 * p], x[2 * p + 1]));
  });
  exec::DeviceArray<float> dx(x), dmx(zero), dmn(zero), tmx(zero);
  exec::check(float_minmax::row_reduce(dx.view(TESSERA_F32, {kPairs, 2}), dmx.view(TESSERA_F32, {kPairs}),
                                       dmn.view(TESSERA_F32, {kPairs})),
              "row_reduce");
  exec::check(float_minmax::row_max(dx.view(TESSERA_F32, {kPairs, 2}), tmx.view(TESSERA_F32, {kPairs})), "row_max");
  exec::check(tessera_synchronize(), "synchronize");
  bool ok = exec::allEqual(dmx.read(), wmx, "reduce_max of rows");
  ok &= exec::allEqual(dmn.read(), wmn, "reduce_min of rows");
  return exec::allEqual(tmx.read(), wmx, "tile.max(axis=1)") && ok;
}

bool runReluAndConstants() {
  std::vector<float> x(kSpecials, kSpecials + kS), want(kS), zero(kS, 1.0f);
  for (size_t i = 0; i < kS; ++i) want[i] = static_cast<float>(minMaxNumber(true, x[i], 0.0));
  exec::DeviceArray<float> dx(x), dy(zero), dc(std::vector<float>(4, 1.0f));
  exec::check(float_minmax::relu_f32(dx.view(TESSERA_F32, {int64_t(kS)}), dy.view(TESSERA_F32, {int64_t(kS)})),
              "relu_f32");
  exec::check(float_minmax::constants(dc.view(TESSERA_F32, {4})), "constants");
  exec::check(tessera_synchronize(), "synchronize");
  bool ok = exec::allEqual(dy.read(), want, "tile.relu");
  return exec::allEqual(dc.read(), std::vector<float>{0.0f, 0.0f, -0.0f, -0.0f}, "folded constants") && ok;
}

}  // namespace

int main() {
  exec::requireDevice();
  bool ok = run16("f16", float_minmax::pair_f16, TESSERA_F16, exec::toHalf, exec::fromHalf, 0x7c00);
  ok &= run16("bf16", float_minmax::pair_bf16, TESSERA_BF16, exec::toBF16, exec::fromBF16, 0x7f80);
  ok &= runWide<float>("f32", float_minmax::pair_f32, TESSERA_F32);
  ok &= runWide<double>("f64", float_minmax::pair_f64, TESSERA_F64);
  ok &= runRows();
  ok &= runReluAndConstants();
  return exec::finish(ok);
}
