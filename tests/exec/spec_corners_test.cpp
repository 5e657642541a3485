// exec spec_corners: small kernels written from the spec's prose (docs/language.md "Integer
// semantics", "Conversions"), each checked on every element against a host reference on fresh
// random inputs with the edge values mixed in: Python's // and % with zero and MIN / -1
// divisors, i8 wrap-around and shifts past the width, u32 division and max, float to integer
// saturation and NaN, row sums and maxima over odd sizes (NaN lines, signed zeros), a
// transposed block copy, where with a broadcast bias, i64 wrap-around and shifts, and f64 and
// integer conversions to f16/bf16 with one rounding (values at and just off the ties).
// f64 -> bf16 did not link on the CPU executor before (LLVM calls __truncdfbf2, missing from
// libgcc 12): codegen defines it (codegen/lower/DeviceHooks.cpp).
#include "spec_corners.h"

#include <algorithm>
#include <climits>

#include "ExecTest.h"
using namespace exec;
template <class T>
std::vector<T> pick(size_t n, std::vector<T> special, T lo, T hi) {
  std::uniform_int_distribution<int64_t> d(lo, hi), s(0, 3), k(0, special.size() - 1);
  std::vector<T> v(n);
  for (auto& x : v) x = s(rng()) == 0 ? special[k(rng())] : T(d(rng()));
  return v;
}
#define RUN(call)     \
  check(call, #call); \
  check(tessera_synchronize(), "sync")
static bool int_div(int64_t n) {
  bool ok = true;
  auto a = pick<int32_t>(n, {INT_MIN, INT_MAX, -1, 0, 1, -7, 7}, -100, 100);
  auto b = pick<int32_t>(n, {0, -1, 1, INT_MIN, 2, -2}, -10, 10);
  DeviceArray<int32_t> da(a), db(b), q(std::vector<int32_t>(n, 0)), r(std::vector<int32_t>(n, 0));
  RUN(spec_corners::int_div(da.view(TESSERA_I32, {n}), db.view(TESSERA_I32, {n}), q.view(TESSERA_I32, {n}),
                            r.view(TESSERA_I32, {n})));
  std::vector<int32_t> wq(n), wr(n);
  for (int64_t i = 0; i < n; ++i) {
    int64_t x = a[i], y = b[i];
    if (y == 0) {
      wq[i] = -1;
      wr[i] = int32_t(x);
      continue;
    }
    if (x == INT_MIN && y == -1) {
      wq[i] = INT_MIN;
      wr[i] = 0;
      continue;
    }
    int64_t qq = x / y, rr = x % y;
    if (rr != 0 && ((rr < 0) != (y < 0))) {
      qq -= 1;
      rr += y;
    }
    wq[i] = int32_t(qq);
    wr[i] = int32_t(rr);
  }
  printf("int_div: ");
  ok &= allEqual(q.read(), wq, "q");
  ok &= allEqual(r.read(), wr, "r");
  return ok;
}

static bool narrow(int64_t n) {
  bool ok = true;
  auto a = pick<int8_t>(n, {-128, 127, -1, 0}, -128, 127), b = pick<int8_t>(n, {-128, 127, -1}, -128, 127);
  auto c = pick<int32_t>(n, {0, 7, 8, 31, 32, 33}, 0, 40);
  DeviceArray<int8_t> da(a), db(b), s(std::vector<int8_t>(n, 0)), p(std::vector<int8_t>(n, 0)),
      sh(std::vector<int8_t>(n, 0));
  DeviceArray<int32_t> dc(c);
  RUN(spec_corners::narrow(da.view(TESSERA_I8, {n}), db.view(TESSERA_I8, {n}), s.view(TESSERA_I8, {n}),
                           p.view(TESSERA_I8, {n}), sh.view(TESSERA_I8, {n}), dc.view(TESSERA_I32, {n})));
  std::vector<int8_t> ws(n), wp(n), wsh(n);
  for (int64_t i = 0; i < n; ++i) {
    ws[i] = int8_t(uint8_t(a[i]) + uint8_t(b[i]));
    wp[i] = int8_t(uint8_t(int(a[i]) * int(b[i])));
    wsh[i] = c[i] >= 32 ? (a[i] < 0 ? -1 : 0) : int8_t(int32_t(a[i]) >> c[i]);
  }
  printf("narrow: ");
  ok &= allEqual(s.read(), ws, "s");
  ok &= allEqual(p.read(), wp, "p");
  ok &= allEqual(sh.read(), wsh, "sh");
  return ok;
}

static bool unsigned_ops(int64_t n) {
  bool ok = true;
  auto a = pick<uint32_t>(n, {0u, 0xffffffffu, 0x80000000u, 1u}, 0, 1000000),
       b = pick<uint32_t>(n, {0u, 1u, 0xffffffffu, 3u}, 0, 1000);
  DeviceArray<uint32_t> da(a), db(b), q(std::vector<uint32_t>(n, 0)), r(std::vector<uint32_t>(n, 0)),
      m(std::vector<uint32_t>(n, 0)), d(std::vector<uint32_t>(n, 0));
  RUN(spec_corners::unsigned_ops(da.view(TESSERA_U32, {n}), db.view(TESSERA_U32, {n}), q.view(TESSERA_U32, {n}),
                                 r.view(TESSERA_U32, {n}), m.view(TESSERA_U32, {n}), d.view(TESSERA_U32, {n})));
  std::vector<uint32_t> wq(n), wr(n), wm(n), wd(n);
  for (int64_t i = 0; i < n; ++i) {
    wq[i] = b[i] ? a[i] / b[i] : 0xffffffffu;
    wr[i] = b[i] ? a[i] % b[i] : a[i];
    wm[i] = std::max(a[i], b[i]);
    wd[i] = a[i] - b[i];
  }
  printf("unsigned: ");
  ok &= allEqual(q.read(), wq, "q");
  ok &= allEqual(r.read(), wr, "r");
  ok &= allEqual(m.read(), wm, "m");
  ok &= allEqual(d.read(), wd, "d");
  return ok;
}

static bool f2i(int64_t n) {
  bool ok = true;
  std::vector<float> x = randomFloats(n, -1e10f, 1e10f);
  float sp[] = {NAN,    INFINITY, -INFINITY, 2147483648.0f, -2147483648.0f, 2147483520.0f, 255.9f,
                256.0f, -0.5f,    -1.0f,     0.99f,         9.3e18f,        -9.3e18f,      1e30f};
  for (int k = 0; k < 14; ++k) x[k * 7] = sp[k];
  for (int64_t i = 100; i < 300; ++i) x[i] = randomFloats(1, -300.f, 300.f)[0];
  DeviceArray<float> dx(x);
  DeviceArray<int32_t> y(std::vector<int32_t>(n, 0));
  DeviceArray<uint8_t> z(std::vector<uint8_t>(n, 0));
  DeviceArray<int64_t> w(std::vector<int64_t>(n, 0));
  RUN(spec_corners::f2i(dx.view(TESSERA_F32, {n}), y.view(TESSERA_I32, {n}), z.view(TESSERA_U8, {n}),
                        w.view(TESSERA_I64, {n})));
  std::vector<int32_t> wy(n);
  std::vector<uint8_t> wz(n);
  std::vector<int64_t> ww(n);
  for (int64_t i = 0; i < n; ++i) {
    double t = std::isnan(x[i]) ? 0.0 : std::trunc(double(x[i]));
    wy[i] = t >= 2147483647.0 ? INT_MAX : t <= -2147483648.0 ? INT_MIN : int32_t(t);
    wz[i] = t >= 255.0 ? 255 : t <= 0.0 ? 0 : uint8_t(t);
    ww[i] = t >= 9223372036854775807.0 ? LLONG_MAX : t <= -9223372036854775808.0 ? LLONG_MIN : int64_t(t);
  }
  printf("f2i: ");
  ok &= allEqual(y.read(), wy, "i32");
  ok &= allEqual(z.read(), wz, "u8");
  ok &= allEqual(w.read(), ww, "i64");
  return ok;
}

static bool row_sums_maxes() {
  bool ok = true;
  for (auto [R, C] : {std::pair<int64_t, int64_t>{37, 33}, {1, 1}, {16, 7}, {50, 129}}) {  // row sums/maxes
    std::vector<float> X = randomFloats(R * C, -5.f, 5.f);
    for (int64_t i = 0; i < R * C; i += 11) X[i] = (i / 11) % 3 == 0 ? NAN : (i / 11) % 3 == 1 ? -0.0f : 0.0f;
    if (C > 2)
      for (int64_t c = 0; c < C; ++c) X[c] = NAN;  // a line of NaN
    DeviceArray<float> dX(X), s(std::vector<float>(R, -9.f)), m(std::vector<float>(R, -9.f));
    RUN(spec_corners::row_sums(dX.view(TESSERA_F32, {R, C}), s.view(TESSERA_F32, {R})));
    RUN(spec_corners::row_maxes(dX.view(TESSERA_F32, {R, C}), m.view(TESSERA_F32, {R})));
    std::vector<float> ws(R), wm(R);
    for (int64_t r = 0; r < R; ++r) {
      float acc = 0.0f, mx = NAN;
      for (int64_t c = 0; c < C; ++c) {
        float v = X[r * C + c];
        acc += v;
        if (std::isnan(mx))
          mx = v;
        else if (!std::isnan(v)) {
          if (v > mx || (v == 0 && mx == 0 && !std::signbit(v))) mx = v;
        }
      }
      ws[r] = acc;
      wm[r] = mx;
    }
    printf("row_sums %lldx%lld: ", (long long)R, (long long)C);
    ok &= allEqual(s.read(), ws, "sums");
    printf("row_maxes: ");
    ok &= allEqual(m.read(), wm, "maxes");
    auto got = m.read();
    for (int64_t r = 0; r < R; ++r)
      if (!std::isnan(wm[r]) && wm[r] == 0 && std::signbit(got[r]) != std::signbit(wm[r])) {
        printf("  zero sign differs at %lld\n", (long long)r);
        ok = false;
      }
  }
  return ok;
}

static bool transpose_copy() {
  bool ok = true;
  for (auto [M, N] : {std::pair<int64_t, int64_t>{37, 33}, {5, 100}, {64, 17}}) {
    std::vector<float> A = randomFloats(M * N);
    DeviceArray<float> dA(A), B(std::vector<float>(N * M, -9.f));
    RUN(spec_corners::transpose_copy(dA.view(TESSERA_F32, {M, N}), B.view(TESSERA_F32, {N, M})));
    std::vector<float> wB(N * M);
    for (int64_t i = 0; i < M; ++i)
      for (int64_t j = 0; j < N; ++j) wB[j * M + i] = A[i * N + j];
    printf("transpose %lldx%lld: ", (long long)M, (long long)N);
    ok &= allEqual(B.read(), wB, "B");
  }
  return ok;
}

static bool f64_to_half(int64_t n) {  // f64 -> f16 / bf16, correctly rounded (no double rounding through f32)
  bool ok = true;
  std::vector<double> x(n);
  auto toOddFloat = [](double d) {
    float f = float(d);
    if (std::isfinite(f) && double(f) != d) {
      if (std::fabs(double(f)) > std::fabs(d)) f = std::nextafter(f, 0.0f);
      uint32_t u;
      memcpy(&u, &f, 4);
      u |= 1;
      memcpy(&f, &u, 4);
    }
    return f;
  };
  for (int64_t i = 0; i < n; ++i) {
    uint16_t h = uint16_t(randomInts(1, 0, 0x7bfe)[0]);
    double lo = fromHalf(h), hi = fromHalf(uint16_t(h + 1)), mid = (lo + hi) / 2;
    double eps = (hi - lo) * std::ldexp(1.0, -30);
    // bf16 ties too: halfway between two bf16 values, and just off it.
    uint16_t g = uint16_t(randomInts(1, 0, 0x7f7e)[0]);
    double glo = fromBF16(g), ghi = fromBF16(uint16_t(g + 1)), gmid = (glo + ghi) / 2,
           geps = (ghi - glo) * std::ldexp(1.0, -30);
    int kind = i % 7;
    x[i] = kind == 0   ? mid + eps
           : kind == 1 ? mid - eps
           : kind == 2 ? mid
           : kind == 3 ? gmid + geps
           : kind == 4 ? gmid - geps
           : kind == 5 ? gmid
                       : double(randomFloats(1, -70000.f, 70000.f)[0]) * 1.000000001;
    if (i % 8 == 5) x[i] = -x[i];
  }
  DeviceArray<double> dx(x);
  DeviceArray<uint16_t> y(std::vector<uint16_t>(n, 0)), z(std::vector<uint16_t>(n, 0));
  RUN(spec_corners::f64_to_f16(dx.view(TESSERA_F64, {n}), y.view(TESSERA_F16, {n}), z.view(TESSERA_BF16, {n})));
  std::vector<uint16_t> wy(n), wz(n);
  for (int64_t i = 0; i < n; ++i) {
    wy[i] = toHalf(toOddFloat(x[i]));
    wz[i] = toBF16(toOddFloat(x[i]));
  }
  printf("f64->f16: ");
  ok &= allEqual(y.read(), wy, "f16");
  printf("f64->bf16: ");
  ok &= allEqual(z.read(), wz, "bf16");
  return ok;
}

static bool where_bias() {  // where with a broadcast bias
  bool ok = true;
  int64_t R = 37, C = 19;
  std::vector<float> X = randomFloats(R * C), b = randomFloats(C);
  DeviceArray<float> dX(X), db(b), O(std::vector<float>(R * C, -9.f));
  RUN(spec_corners::where_bias(dX.view(TESSERA_F32, {R, C}), db.view(TESSERA_F32, {C}), O.view(TESSERA_F32, {R, C})));
  std::vector<float> w(R * C);
  for (int64_t i = 0; i < R * C; ++i) w[i] = X[i] > 0 ? X[i] : b[i % C] * 2.0f;
  printf("where_bias: ");
  ok &= allEqual(O.read(), w, "Out");
  return ok;
}

static bool wide_ints(int64_t n) {  // i64 wrap-around and shifts
  bool ok = true;
  auto a =
      pick<int64_t>(n, {LLONG_MIN, LLONG_MAX, -1, 0x80000000LL, 0x7fffffffLL + 1}, -1000000000000LL, 1000000000000LL);
  auto b = pick<int64_t>(n, {LLONG_MIN, -1, 3}, -10000000000LL, 10000000000LL);
  auto c = pick<int32_t>(n, {0, 63, 64, 65, 100}, 0, 70);
  DeviceArray<int64_t> da(a), db(b), p(std::vector<int64_t>(n, 0)), s(std::vector<int64_t>(n, 0));
  DeviceArray<int32_t> g(std::vector<int32_t>(n, 0)), dc(c);
  RUN(spec_corners::wide_ints(da.view(TESSERA_I64, {n}), db.view(TESSERA_I64, {n}), p.view(TESSERA_I64, {n}),
                              s.view(TESSERA_I64, {n}), g.view(TESSERA_I32, {n}), dc.view(TESSERA_I32, {n})));
  std::vector<int64_t> wp(n), ws(n);
  std::vector<int32_t> wg(n);
  for (int64_t i = 0; i < n; ++i) {
    wp[i] = int64_t(uint64_t(a[i]) * uint64_t(b[i]));
    ws[i] = c[i] >= 64 ? (a[i] < 0 ? -1 : 0) : (a[i] >> c[i]);
    wg[i] = int32_t(0u - uint32_t(uint64_t(a[i])));
  }
  printf("wide_ints: ");
  ok &= allEqual(p.read(), wp, "p");
  ok &= allEqual(s.read(), ws, "s");
  ok &= allEqual(g.read(), wg, "g");
  return ok;
}

static bool int_to_half(int64_t n) {  // integers to bf16 / f16 / f32: one rounding
  bool ok = true;
  auto a = pick<int32_t>(n, {INT_MAX, INT_MIN, 16777217, 16908289, 65519, 65520, -65536, 0x01008001}, -2000000000,
                         2000000000);
  auto b =
      pick<int64_t>(n, {LLONG_MAX, LLONG_MIN, (1LL << 53) + 1, 0x0100800000000001LL}, LLONG_MIN / 2, LLONG_MAX / 2);
  DeviceArray<int32_t> da(a);
  DeviceArray<int64_t> db(b);
  DeviceArray<uint16_t> y(std::vector<uint16_t>(n, 0)), z(std::vector<uint16_t>(n, 0)), w(std::vector<uint16_t>(n, 0));
  DeviceArray<float> v(std::vector<float>(n, 0.f));
  RUN(spec_corners::int_to_half(da.view(TESSERA_I32, {n}), db.view(TESSERA_I64, {n}), y.view(TESSERA_BF16, {n}),
                                z.view(TESSERA_F16, {n}), w.view(TESSERA_BF16, {n}), v.view(TESSERA_F32, {n})));
  auto odd = [](long double d) {
    float f = float(d);
    if (std::isfinite(f) && (long double)f != d) {
      if (std::fabs((long double)f) > std::fabs(d)) f = std::nextafter(f, 0.0f);
      uint32_t u;
      memcpy(&u, &f, 4);
      u |= 1;
      memcpy(&f, &u, 4);
    }
    return f;
  };
  std::vector<uint16_t> wy(n), wz(n), ww(n);
  std::vector<float> wv(n);
  for (int64_t i = 0; i < n; ++i) {
    wy[i] = toBF16(odd(a[i]));
    wz[i] = toHalf(odd(a[i]));
    ww[i] = toBF16(odd((long double)b[i]));
    wv[i] = float(b[i]);
  }
  printf("i32->bf16: ");
  ok &= allEqual(y.read(), wy, "y");
  printf("i32->f16: ");
  ok &= allEqual(z.read(), wz, "z");
  printf("i64->bf16: ");
  ok &= allEqual(w.read(), ww, "w");
  printf("i64->f32: ");
  ok &= allEqual(v.read(), wv, "v");
  return ok;
}

int main() {
  requireDevice();
  bool ok = true;
  const int64_t n = 1003;
  ok &= int_div(n);
  ok &= narrow(n);
  ok &= unsigned_ops(n);
  ok &= f2i(n);
  ok &= row_sums_maxes();
  ok &= transpose_copy();
  ok &= f64_to_half(n);
  ok &= where_bias();
  ok &= wide_ints(n);
  ok &= int_to_half(n);
  return finish(ok);
}
