// The element arithmetic of deterministic reductions (runtime/dist/ReduceOps.h) against
// independent references: the compiler's _Float16 for fp16, nearest-value searches for bf16
// and fp8, and the documented combination orders rendered as text.
#include <cmath>
#include <cstring>
#include <doctest/doctest.h>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "runtime/dist/DeviceOps.h"
#include "runtime/dist/ReduceOps.h"

using namespace tessera::dist;
using namespace tessera::dist::reduce;

namespace {

uint32_t bitsOf(float f) {
  uint32_t x;
  std::memcpy(&x, &f, 4);
  return x;
}
float floatOf(uint32_t x) {
  float f;
  std::memcpy(&f, &x, 4);
  return f;
}

// Floats that exercise rounding: random bit patterns, values near every fp16/fp8 boundary,
// exact halfway points, subnormals, infinities.
std::vector<float> probeFloats() {
  std::vector<float> v = {0.f,
                          -0.f,
                          1.f,
                          -1.f,
                          65504.f,
                          65519.f,
                          65520.f,
                          1e-8f,
                          5.96e-8f,
                          2.98e-8f,
                          448.f,
                          464.f,
                          465.f,
                          57344.f,
                          61440.f,
                          61441.f,
                          1e30f,
                          -1e30f,
                          std::numeric_limits<float>::infinity(),
                          -std::numeric_limits<float>::infinity(),
                          1.4e-45f,
                          1.1754942e-38f};
  std::mt19937 rng(1234);
  for (int i = 0; i < 200000; ++i) v.push_back(floatOf(rng()));
  std::uniform_real_distribution<float> small(-600.f, 600.f);
  for (int i = 0; i < 200000; ++i) v.push_back(small(rng));
  for (uint32_t h = 0; h < 0x7c00; h += 7) {  // halfway points between neighbouring fp16 values
    uint16_t h0 = static_cast<uint16_t>(h), h1 = static_cast<uint16_t>(h + 1);
    _Float16 x0, x1;
    std::memcpy(&x0, &h0, 2);
    std::memcpy(&x1, &h1, 2);
    float a = static_cast<float>(x0), b = static_cast<float>(x1);
    v.push_back((a + b) / 2);
    v.push_back(-(a + b) / 2);
  }
  return v;
}

// The nearest of a format's finite values (ties to the even code); beyond the largest finite
// value by half a step or more (ties to even), the overflow code.
template <class Decode>
uint32_t nearestCode(float f, const std::vector<uint32_t>& finite, Decode decode, uint32_t overflow,
                     double nextAboveMax) {
  double x = std::fabs(static_cast<double>(f));
  uint32_t maxCode = finite.back();
  double maxVal = decode(maxCode), half = (nextAboveMax - maxVal) / 2;
  if (x >= maxVal)  // past the largest finite value: it, or the overflow code past half a step
    return x > maxVal + half || (x == maxVal + half && (maxCode & 1u)) ? overflow : maxCode;
  uint32_t best = 0;
  double bestErr = INFINITY;
  for (uint32_t c : finite) {
    double err = std::fabs(decode(c) - x);
    if (err < bestErr || (err == bestErr && (c & 1u) == 0)) {
      best = c;
      bestErr = err;
    }
  }
  return best;
}

}  // namespace

TEST_CASE("reduce ops: fp16 decoding and rounding agree with the compiler's _Float16") {
  for (uint32_t h = 0; h < 0x10000; ++h) {
    _Float16 ref;
    uint16_t bits = static_cast<uint16_t>(h);
    std::memcpy(&ref, &bits, 2);
    float want = static_cast<float>(ref), got = F16Format::decode(h);
    if (std::isnan(want))
      CHECK(std::isnan(got));
    else
      CHECK_MESSAGE(bitsOf(got) == bitsOf(want), "fp16 bits ", h);
  }
  int bad = 0;
  for (float f : probeFloats()) {
    _Float16 ref = static_cast<_Float16>(f);
    uint16_t want;
    std::memcpy(&want, &ref, 2);
    uint32_t got = F16Format::encode(f);
    bool ok = std::isnan(f) ? ((got & 0x7c00) == 0x7c00 && (got & 0x3ff)) : got == want;
    if (!ok && bad++ < 5) FAIL_CHECK("fp16 encode of ", f, " (bits ", bitsOf(f), "): got ", got, ", want ", want);
  }
  CHECK(bad == 0);
}

TEST_CASE("reduce ops: bf16 rounds to the nearest value, ties to even") {
  int bad = 0;
  for (float f : probeFloats()) {
    uint16_t got = bf16Encode(f);
    if (std::isnan(f)) {
      CHECK(std::isnan(bf16Decode(got)));
      continue;
    }
    uint32_t x = bitsOf(f), lo = x & 0xffff0000u, hi = lo + 0x10000u;
    if (std::isinf(f)) hi = lo;
    // The value above the largest finite bf16 is inf, reached from 2^128 (IEEE rounding).
    auto value = [](uint32_t b) {
      return std::isinf(floatOf(b)) ? std::copysign(std::ldexp(1.0, 128), floatOf(b)) : double(floatOf(b));
    };
    double dlo = std::fabs(value(lo) - f), dhi = std::fabs(value(hi) - f);
    uint32_t want = dlo < dhi || (dlo == dhi && !((lo >> 16) & 1u)) ? lo : hi;
    if (got != (want >> 16) && bad++ < 5) FAIL_CHECK("bf16 encode of ", f, ": got ", got, ", want ", (want >> 16));
  }
  CHECK(bad == 0);
}

TEST_CASE("reduce ops: fp8 e4m3 and e5m2 round to the nearest value, overflow to NaN / inf") {
  auto e4m3 = [](uint32_t c) {  // OCP E4M3: bias 7, subnormals 2^-6 * m/8
    uint32_t e = (c >> 3) & 15, m = c & 7;
    return e ? std::ldexp(1.0 + m / 8.0, static_cast<int>(e) - 7) : std::ldexp(m / 8.0, -6);
  };
  auto e5m2 = [](uint32_t c) {
    uint32_t e = (c >> 2) & 31, m = c & 3;
    return e ? std::ldexp(1.0 + m / 4.0, static_cast<int>(e) - 15) : std::ldexp(m / 4.0, -14);
  };
  std::vector<uint32_t> f4, f5;
  for (uint32_t c = 0; c < 0x7f; ++c)  // 0x7f is NaN
    f4.push_back(c);
  for (uint32_t c = 0; c < 0x7c; ++c)  // 0x7c is inf
    f5.push_back(c);
  CHECK(e4m3(0x7e) == 448.0);
  CHECK(e5m2(0x7b) == 57344.0);
  std::vector<float> probes = probeFloats();
  probes.resize(60000);
  int bad = 0;
  for (float f : probes) {
    if (std::isnan(f)) continue;
    uint32_t sign4 = std::signbit(f) ? 0x80u : 0u;
    uint32_t want4 = sign4 | nearestCode(f, f4, e4m3, 0x7f, 480.0);
    uint32_t want5 = sign4 | nearestCode(f, f5, e5m2, 0x7c, 65536.0);
    if (std::isinf(f)) {
      want4 = sign4 | 0x7f;
      want5 = sign4 | 0x7c;
    }
    uint32_t got4 = E4M3Format::encode(f), got5 = E5M2Format::encode(f);
    if ((got4 != want4 || got5 != want5) && bad++ < 5)
      FAIL_CHECK("fp8 encode of ", f, ": e4m3 ", got4, " want ", want4, ", e5m2 ", got5, " want ", want5);
  }
  CHECK(bad == 0);
  for (uint32_t c = 0; c < 256; ++c) {
    double v4 = (c & 0x80 ? -1 : 1) * e4m3(c & 0x7f), v5 = (c & 0x80 ? -1 : 1) * e5m2(c & 0x7f);
    if ((c & 0x7f) != 0x7f)
      CHECK(E4M3Format::decode(c) == static_cast<float>(v4));
    else
      CHECK(std::isnan(E4M3Format::decode(c)));
    if ((c & 0x7f) < 0x7c)
      CHECK(E5M2Format::decode(c) == static_cast<float>(v5));
    else if ((c & 0x7f) == 0x7c)
      CHECK(std::isinf(E5M2Format::decode(c)));
    else
      CHECK(std::isnan(E5M2Format::decode(c)));
  }
}

namespace {
// Renders the combination order: apply(a, b) = "(a+b)".
struct Render {
  static std::string apply(const std::string& a, const std::string& b) { return "(" + a + "+" + b + ")"; }
};
std::string tree(int p) {
  return combineTree<Render, std::string>(p, [](int r) { return std::to_string(r); });
}
std::string sequential(int p) {
  return combineSequential<Render, std::string>(p, [](int r) { return std::to_string(r); });
}
}  // namespace

TEST_CASE("reduce ops: the pairwise (binary_tree) and sequential orders") {
  CHECK(tree(1) == "0");
  CHECK(tree(2) == "(0+1)");
  CHECK(tree(3) == "((0+1)+2)");
  CHECK(tree(4) == "((0+1)+(2+3))");
  CHECK(tree(5) == "(((0+1)+(2+3))+4)");
  CHECK(tree(6) == "(((0+1)+(2+3))+(4+5))");
  CHECK(tree(7) == "(((0+1)+(2+3))+((4+5)+6))");
  CHECK(tree(8) == "(((0+1)+(2+3))+((4+5)+(6+7)))");
  CHECK(tree(9) == "((((0+1)+(2+3))+((4+5)+(6+7)))+8)");
  CHECK(sequential(4) == "(((0+1)+2)+3)");
  for (int p = 1; p <= 3; ++p)  // the collectives rely on this to use the cheaper loop
    CHECK(tree(p) == sequential(p));
  // Up to kMaxInputs ranks fit the fixed stack.
  std::string big = tree(kMaxInputs);
  CHECK(big.size() > 1000);
}

TEST_CASE("reduce ops: max and min never depend on the order of equal values") {
  using M = OpMax<CodecF32>;
  using N = OpMin<CodecF32>;
  CHECK(std::signbit(M::apply(-0.f, 0.f)) == false);
  CHECK(std::signbit(M::apply(0.f, -0.f)) == false);
  CHECK(std::signbit(N::apply(-0.f, 0.f)) == true);
  CHECK(std::signbit(N::apply(0.f, -0.f)) == true);
  CHECK(std::isnan(M::apply(NAN, 1.f)));
  CHECK(std::isnan(M::apply(1.f, NAN)));
  CHECK(M::apply(1.f, 2.f) == 2.f);
  CHECK(N::apply(1.f, 2.f) == 1.f);
  CHECK(OpMax<CodecI32>::apply(-3, 2) == 2);
  CHECK(OpMin<CodecU8>::apply(200, 3) == 3);
  CHECK(OpMax<CodecBool>::apply(0, 1) == 1);
  CHECK(OpMin<CodecBool>::apply(0, 1) == 0);
}

TEST_CASE("reduce ops: a NaN sum or average is the canonical quiet NaN") {
  // GPUs return their canonical NaN from arithmetic; x86 keeps an operand's payload.
  float payload = floatOf(0xffa12345u);  // a negative quiet NaN with a payload
  CHECK(bitsOf(OpSum<CodecF32>::apply(payload, 1.f)) == 0x7fc00000u);
  CHECK(bitsOf(OpSum<CodecF32>::apply(INFINITY, -INFINITY)) == 0x7fc00000u);
  double dnan = OpSum<CodecF64>::apply(std::numeric_limits<double>::quiet_NaN(), 2.0);
  uint64_t dbits;
  std::memcpy(&dbits, &dnan, 8);
  CHECK(dbits == 0x7ff8000000000000ull);
  float out = 0;
  reduceLanes<CodecF32, kAvg, 1>(
      1, kTree,
      [&](int) {
        Lanes<CodecF32, 1> l;
        l.v[0] = payload;
        return l;
      },
      &out);
  CHECK(bitsOf(out) == 0x7fc00000u);
  // max/min return the NaN operand itself: no arithmetic, the same bits everywhere.
  CHECK(bitsOf(OpMax<CodecF32>::apply(payload, 1.f)) == 0xffa12345u);
}

TEST_CASE("reduce ops: integer sums wrap like two's complement") {
  CHECK(OpSum<CodecI8>::apply(127, 1) == -128);
  CHECK(OpSum<CodecU16>::apply(65535, 2) == 1);
  CHECK(OpSum<CodecI64>::apply(std::numeric_limits<int64_t>::max(), 1) == std::numeric_limits<int64_t>::min());
}

TEST_CASE("reduce ops: avg divides the fp32 sum once and rounds once") {
  uint16_t vals[3] = {bf16Encode(1.f), bf16Encode(2.f), bf16Encode(4.f)};
  uint16_t out = 0;
  reduceLanes<CodecBF16, kAvg, 1>(
      3, kTree,
      [&](int r) {
        Lanes<CodecBF16, 1> l;
        l.v[0] = CodecBF16::load(vals[r]);
        return l;
      },
      &out);
  CHECK(bf16Decode(out) == bf16Decode(bf16Encode(7.f / 3.f)));
}

TEST_CASE("reduce ops: which dtypes and operations reduce") {
  std::string why;
  CHECK(reducible(TESSERA_BF16, kSum, why));
  CHECK(reducible(TESSERA_F8_E5M2, kAvg, why));
  CHECK(reducible(TESSERA_U64, kMax, why));
  CHECK(reducible(TESSERA_BOOL, kMin, why));
  CHECK_FALSE(reducible(TESSERA_I32, kAvg, why));
  CHECK(why == std::string("avg of the integer dtype ") + tessera_dtype_name(TESSERA_I32) +
                   " would have to round; reduce with sum and divide");
  CHECK_FALSE(reducible(TESSERA_BOOL, kSum, why));
  CHECK(why == "sum of bool is not defined; use max (any) or min (all)");
  CHECK_FALSE(reducible(TESSERA_F4_E2M1, kSum, why));
  CHECK(why.find("fp4_e2m1 cannot be reduced") != std::string::npos);
  CHECK_FALSE(reducible(TESSERA_F32, 7, why));
  CHECK(why.find("unknown reduction operation 7") != std::string::npos);
}

TEST_CASE("reduce ops: the CPU reduction of every reducible dtype and operation") {
  // Three ranks of five elements; the CPU DeviceOps must match the scalar formula per element.
  std::vector<int32_t> dtypes;
#define TESSERA_REDUCE_TYPE(dt, suffix, codec) dtypes.push_back(dt);
#include "runtime/dist/ReduceTypes.def"
  CHECK(dtypes.size() == 15);
  std::vector<float> ranks[3] = {{1, -2, 3, 0, 5}, {4, 5, -6, 0, 1}, {7, 8, 9, -0.f, 1}};
  std::vector<uint8_t> out(5 * 8);
  std::vector<float> in32[3];
  for (int r = 0; r < 3; ++r) in32[r] = ranks[r];
  ReduceParams P{};
  for (int r = 0; r < 3; ++r) P.in[r] = in32[r].data();
  P.out = out.data();
  P.n = 5;
  P.p = 3;
  REQUIRE(cpuDeviceOps().reduce(P, TESSERA_F32, kSum, nullptr) == TESSERA_SUCCESS);
  const float* o = reinterpret_cast<const float*>(out.data());
  CHECK(o[0] == 12.f);
  CHECK(o[1] == 11.f);
  CHECK(o[2] == 6.f);
  CHECK(o[4] == 7.f);
  REQUIRE(cpuDeviceOps().reduce(P, TESSERA_F32, kMax, nullptr) == TESSERA_SUCCESS);
  CHECK(o[2] == 9.f);
  CHECK_FALSE(std::signbit(o[3]));
  REQUIRE(cpuDeviceOps().reduce(P, TESSERA_F32, kMin, nullptr) == TESSERA_SUCCESS);
  CHECK(o[2] == -6.f);
  CHECK(std::signbit(o[3]));
}
