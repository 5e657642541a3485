// The reference for deterministic reductions in the mpirun tests, written independently of
// runtime/dist/ReduceOps.h from the contract in docs/abi.md: decode each value (the compiler's
// _Float16, shifts for bf16, ldexp for fp8), combine in the documented order with native float
// or double arithmetic (the tree: the first largest power of two below n, recursively), divide
// for avg, round to the nearest stored value with ties to even (fp8 by searching every code).
#pragma once

#include <cmath>
#include <cstdint>
#include <cstring>
#include <functional>
#include <limits>
#include <tessera/runtime.h>
#include <vector>

namespace disttest {

inline bool isFloat(int32_t dt) { return dt >= TESSERA_F64 && dt <= TESSERA_F8_E5M2; }
inline bool isSigned(int32_t dt) { return dt >= TESSERA_I8 && dt <= TESSERA_I64; }
inline size_t elemBytes(int32_t dt) { return tessera_dtype_bits(dt) / 8; }

inline double fp8Value(int32_t dt, uint32_t c) {
  bool e4 = dt == TESSERA_F8_E4M3;
  int mbits = e4 ? 3 : 2, bias = e4 ? 7 : 15;
  uint32_t e = (c & 0x7f) >> mbits, m = c & ((1u << mbits) - 1);
  double v = e ? std::ldexp(1.0 + m / double(1 << mbits), int(e) - bias) : std::ldexp(m / double(1 << mbits), 1 - bias);
  if (e4 ? (c & 0x7f) == 0x7f : e == 31) v = (!e4 && m == 0) ? INFINITY : NAN;
  return (c & 0x80) ? -v : v;
}

inline double decodeFloat(int32_t dt, const uint8_t* p) {
  switch (dt) {
    case TESSERA_F64: {
      double v;
      std::memcpy(&v, p, 8);
      return v;
    }
    case TESSERA_F32: {
      float v;
      std::memcpy(&v, p, 4);
      return v;
    }
    case TESSERA_F16: {
      _Float16 v;
      std::memcpy(&v, p, 2);
      return static_cast<float>(v);
    }
    case TESSERA_BF16: {
      uint32_t x = uint32_t(p[0] | (p[1] << 8)) << 16;
      float v;
      std::memcpy(&v, &x, 4);
      return v;
    }
    default: return fp8Value(dt, p[0]);
  }
}

inline void encodeFloat(int32_t dt, double value, uint8_t* out) {
  switch (dt) {
    case TESSERA_F64: std::memcpy(out, &value, 8); return;
    case TESSERA_F32: {
      float v = static_cast<float>(value);
      std::memcpy(out, &v, 4);
      return;
    }
    case TESSERA_F16: {
      _Float16 v = static_cast<_Float16>(static_cast<float>(value));
      std::memcpy(out, &v, 2);
      return;
    }
    case TESSERA_BF16: {
      float f = static_cast<float>(value);
      uint32_t x;
      std::memcpy(&x, &f, 4);
      uint16_t h = std::isnan(f) ? uint16_t((x >> 16) | 0x40) : uint16_t((x + 0x7fffu + ((x >> 16) & 1u)) >> 16);
      std::memcpy(out, &h, 2);
      return;
    }
    default: break;
  }
  // fp8: the nearest finite code (ties to the even code), the overflow code past half a step
  // beyond the largest one, NaN for NaN.
  bool e4 = dt == TESSERA_F8_E4M3;
  uint32_t maxCode = e4 ? 0x7e : 0x7b, over = e4 ? 0x7f : 0x7c;
  double next = e4 ? 480.0 : 65536.0, x = std::fabs(value);
  uint32_t sign = std::signbit(value) ? 0x80 : 0, best = 0;
  if (std::isnan(value)) {
    out[0] = uint8_t(sign | (e4 ? 0x7f : 0x7e));
    return;
  }
  double maxVal = fp8Value(dt, maxCode), half = (next - maxVal) / 2;
  if (x >= maxVal) {
    best = x > maxVal + half || (x == maxVal + half && (maxCode & 1)) ? over : maxCode;
  } else {
    double bestErr = INFINITY;
    for (uint32_t c = 0; c <= maxCode; ++c) {
      double err = std::fabs(fp8Value(dt, c) - x);
      if (err < bestErr || (err == bestErr && !(c & 1))) {
        best = c;
        bestErr = err;
      }
    }
  }
  out[0] = uint8_t(sign | best);
}

// The documented orders over n values: tree splits at the largest power of two below n.
template <class T>
T combine(const std::vector<T>& v, size_t lo, size_t hi, bool tree, const std::function<T(T, T)>& op) {
  size_t n = hi - lo;
  if (n == 1) return v[lo];
  if (!tree) {
    T acc = v[lo];
    for (size_t i = lo + 1; i < hi; ++i) acc = op(acc, v[i]);
    return acc;
  }
  size_t k = 1;
  while (k * 2 < n) k *= 2;
  return op(combine(v, lo, lo + k, tree, op), combine(v, lo + k, hi, tree, op));
}

template <class T>
T extreme(T a, T b, bool isMax) {
  if (a != a) return a;
  if (b != b) return b;
  if (a != b) return (a > b) == isMax ? a : b;
  return std::signbit(a) == isMax ? b : a;
}

// The expected bytes of one element of op over the ranks' bytes `in[r]`.
inline void referenceElement(int32_t dt, int op, bool tree, const std::vector<const uint8_t*>& in, uint8_t* out) {
  size_t p = in.size();
  if (isFloat(dt)) {
    auto run = [&](auto zero) {
      using T = decltype(zero);
      std::vector<T> v(p);
      for (size_t r = 0; r < p; ++r) v[r] = static_cast<T>(decodeFloat(dt, in[r]));
      std::function<T(T, T)> f = op == 1   ? std::function<T(T, T)>([](T a, T b) { return extreme(a, b, true); })
                                 : op == 2 ? std::function<T(T, T)>([](T a, T b) { return extreme(a, b, false); })
                                           : std::function<T(T, T)>([](T a, T b) {
                                               T s = a + b;  // a NaN sum is the canonical quiet NaN
                                               return s != s ? std::numeric_limits<T>::quiet_NaN() : s;
                                             });
      T acc = combine(v, 0, p, tree, f);
      if (op == 3) {
        acc = acc / static_cast<T>(p);
        acc = acc != acc ? std::numeric_limits<T>::quiet_NaN() : acc;
      }
      encodeFloat(dt, acc, out);
    };
    if (dt == TESSERA_F64)
      run(0.0);
    else
      run(0.0f);
    return;
  }
  size_t es = elemBytes(dt);
  auto load = [&](const uint8_t* b) {
    uint64_t u = 0;
    std::memcpy(&u, b, es);
    if (dt == TESSERA_BOOL) return uint64_t(u != 0);
    if (isSigned(dt) && es < 8 && (u >> (8 * es - 1)) & 1) u |= ~uint64_t(0) << (8 * es);  // sign-extend
    return u;
  };
  uint64_t acc = load(in[0]);
  for (size_t r = 1; r < p; ++r) {
    uint64_t b = load(in[r]);
    if (op == 0)
      acc += b;
    else if (isSigned(dt))
      acc = (op == 1) == (int64_t(b) > int64_t(acc)) ? b : acc;
    else
      acc = (op == 1) == (b > acc) ? b : acc;
  }
  std::memcpy(out, &acc, es);
}

}  // namespace disttest
