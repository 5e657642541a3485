// kernels/int_semantics: //, % and shifts on i8, i16, i32, i64 and u32, and float -> int
// conversions, against a reference that implements docs/language.md "Integer semantics" directly:
// every pair of special values (0, +-1, MIN, MAX, ...) plus random operands and shift amounts from
// -70 to 70. Before issue 11, division by zero and MIN // -1 killed the CPU executor with SIGFPE
// and shifts by the width or more differed between the CPU and the GPU.
#include "int_semantics.h"

#include <cmath>
#include <limits>
#include <random>
#include <type_traits>

#include "ExecTest.h"

namespace {

template <class T>
T floorDiv(T a, T b) {
  if (b == 0) return static_cast<T>(~T(0));
  if (std::is_signed_v<T> && a == std::numeric_limits<T>::min() && b == T(-1)) return a;
  T q = static_cast<T>(a / b), r = static_cast<T>(a % b);
  if (std::is_signed_v<T> && r != 0 && ((r < 0) != (b < 0))) q = static_cast<T>(q - 1);
  return q;
}

template <class T>
T floorMod(T a, T b) {
  if (b == 0) return a;
  if (std::is_signed_v<T> && a == std::numeric_limits<T>::min() && b == T(-1)) return 0;
  T r = static_cast<T>(a % b);
  if (std::is_signed_v<T> && r != 0 && ((r < 0) != (b < 0))) r = static_cast<T>(r + b);
  return r;
}

template <class T>
T shiftLeft(T a, T s) {
  using U = std::make_unsigned_t<T>;
  if (static_cast<U>(s) >= sizeof(T) * 8) return 0;
  return static_cast<T>(static_cast<U>(a) << static_cast<U>(s));
}

template <class T>
T shiftRight(T a, T s) {
  using U = std::make_unsigned_t<T>;
  if (static_cast<U>(s) >= sizeof(T) * 8) return std::is_signed_v<T> && a < 0 ? T(-1) : T(0);
  if (std::is_signed_v<T> && a < 0) return static_cast<T>(~(~a >> static_cast<U>(s)));  // sign fill
  return static_cast<T>(a >> static_cast<U>(s));
}

template <class T>
std::vector<T> specials() {
  using L = std::numeric_limits<T>;
  std::vector<T> v = {
      T(0), T(1), T(2), T(3), T(7), L::max(), static_cast<T>(L::max() - 1), L::min(), static_cast<T>(L::min() + 1)};
  if (std::is_signed_v<T>) v.insert(v.end(), {T(-1), T(-2), T(-3), T(-7)});
  return v;
}

template <class T>
T randomValue() {
  std::uniform_int_distribution<int64_t> small(-100, 100);
  std::uniform_int_distribution<uint64_t> any;
  return exec::rng()() % 2 ? static_cast<T>(small(exec::rng())) : static_cast<T>(any(exec::rng()));
}

using Launch = tessera_status (*)(const tessera_tensor&, const tessera_tensor&, const tessera_tensor&,
                                  const tessera_tensor&, const tessera_launch_options*);

template <class T>
bool checkPairs(tessera_dtype dt, const char* name, Launch launch, bool shifts) {
  std::vector<T> a, b;
  for (T x : specials<T>())
    for (T y : specials<T>()) a.push_back(x), b.push_back(y);
  for (int i = 0; i < 20000; ++i) {
    a.push_back(randomValue<T>());
    if (shifts) {
      std::uniform_int_distribution<int> amount(std::is_signed_v<T> ? -70 : 0, 70);
      b.push_back(static_cast<T>(amount(exec::rng())));
    } else {
      b.push_back(randomValue<T>());
    }
  }
  int64_t n = static_cast<int64_t>(a.size());
  std::vector<T> want0(n), want1(n), zero(n, T(0));
  for (int64_t i = 0; i < n; ++i) {
    want0[i] = shifts ? shiftLeft(a[i], b[i]) : floorDiv(a[i], b[i]);
    want1[i] = shifts ? shiftRight(a[i], b[i]) : floorMod(a[i], b[i]);
  }
  exec::DeviceArray<T> da(a), db(b), d0(zero), d1(zero);
  exec::check(launch(da.view(dt, {n}), db.view(dt, {n}), d0.view(dt, {n}), d1.view(dt, {n}), nullptr), name);
  exec::check(tessera_synchronize(), "synchronize");
  std::string w0 = std::string(name) + (shifts ? " <<" : " //"), w1 = std::string(name) + (shifts ? " >>" : " %");
  bool ok = exec::allEqual(d0.read(), want0, w0.c_str());
  ok &= exec::allEqual(d1.read(), want1, w1.c_str());
  return ok;
}

template <class I>
I saturate(float x) {
  if (std::isnan(x)) return 0;
  double t = std::trunc(static_cast<double>(x));
  if (t <= static_cast<double>(std::numeric_limits<I>::min())) return std::numeric_limits<I>::min();
  if (t >= static_cast<double>(std::numeric_limits<I>::max())) return std::numeric_limits<I>::max();
  return static_cast<I>(t);
}

bool checkToInt() {
  std::vector<float> x = {
      0.0f,  -0.0f,         0.5f,          -0.5f,          1.5f,           -1.5f, 255.0f, 255.9f,   256.0f,    300.0f,
      -1.0f, 2147483520.0f, 2147483648.0f, -2147483648.0f, -2147483904.0f, 1e20f, -1e20f, INFINITY, -INFINITY, NAN};
  for (float v : exec::randomFloats(20000, -3e9f, 3e9f)) x.push_back(v);
  for (float v : exec::randomFloats(20000, -300.0f, 300.0f)) x.push_back(v);
  int64_t n = static_cast<int64_t>(x.size());
  std::vector<int32_t> wantS(n), zs(n, 0);
  std::vector<uint8_t> wantU(n), zu(n, 0);
  for (int64_t i = 0; i < n; ++i) wantS[i] = saturate<int32_t>(x[i]), wantU[i] = saturate<uint8_t>(x[i]);
  exec::DeviceArray<float> dx(x);
  exec::DeviceArray<int32_t> ds(zs);
  exec::DeviceArray<uint8_t> du(zu);
  exec::check(int_semantics::to_int(dx.view(TESSERA_F32, {n}), ds.view(TESSERA_I32, {n}), du.view(TESSERA_U8, {n})),
              "to_int");
  exec::check(tessera_synchronize(), "synchronize");
  bool ok = exec::allEqual(ds.read(), wantS, "i32(x)");
  ok &= exec::allEqual(du.read(), wantU, "u8(x)");
  return ok;
}

// Every u8 and i8 code, and u32 values around the top bit, through abs.
bool checkAbs() {
  int64_t n = 256 + 1000;
  std::vector<uint8_t> a(n), wantA(n), za(n, 0);
  std::vector<uint32_t> b(n), zb(n, 0);
  std::vector<int8_t> c(n), wantC(n), zc(n, 0);
  std::mt19937 rng(std::random_device{}());
  for (int64_t i = 0; i < n; ++i) {
    a[i] = static_cast<uint8_t>(i < 256 ? i : rng());
    b[i] = i < 256 ? 0x7fffff80u + static_cast<uint32_t>(i) : static_cast<uint32_t>(rng());
    c[i] = static_cast<int8_t>(a[i]);
    wantA[i] = a[i];
    wantC[i] = static_cast<int8_t>(c[i] < 0 ? -static_cast<int32_t>(c[i]) : c[i]);  // -128 wraps to -128
  }
  exec::DeviceArray<uint8_t> da(a), ra(za);
  exec::DeviceArray<uint32_t> db(b), rb(zb);
  exec::DeviceArray<int8_t> dc(c), rc(zc);
  exec::check(int_semantics::abs_ints(da.view(TESSERA_U8, {n}), db.view(TESSERA_U32, {n}), dc.view(TESSERA_I8, {n}),
                                      ra.view(TESSERA_U8, {n}), rb.view(TESSERA_U32, {n}), rc.view(TESSERA_I8, {n})),
              "abs_ints");
  exec::check(tessera_synchronize(), "synchronize");
  bool ok = exec::allEqual(ra.read(), wantA, "abs(u8)");
  ok &= exec::allEqual(rb.read(), b, "abs(u32)");
  ok &= exec::allEqual(rc.read(), wantC, "abs(i8)");
  return ok;
}

}  // namespace

int main() {
  exec::requireDevice();
  bool ok = checkPairs<int32_t>(TESSERA_I32, "i32", int_semantics::divmod_i32, false);
  ok &= checkPairs<int64_t>(TESSERA_I64, "i64", int_semantics::divmod_i64, false);
  ok &= checkPairs<uint32_t>(TESSERA_U32, "u32", int_semantics::divmod_u32, false);
  ok &= checkPairs<int8_t>(TESSERA_I8, "i8", int_semantics::divmod_i8, false);
  ok &= checkPairs<int32_t>(TESSERA_I32, "i32", int_semantics::shifts_i32, true);
  ok &= checkPairs<uint32_t>(TESSERA_U32, "u32", int_semantics::shifts_u32, true);
  ok &= checkPairs<int16_t>(TESSERA_I16, "i16", int_semantics::shifts_i16, true);
  ok &= checkToInt();
  ok &= checkAbs();
  return exec::finish(ok);
}
