//===- ReduceOps.h - The element arithmetic of deterministic reductions ------------*- C++ -*-===//
//
// One definition, compiled for the host (CPU ranks, runtime/dist/CpuDeviceOps.cpp) and by nvcc
// for the GPU (runtime/dist/kernels/Reduce.cu), of how a deterministic reduction combines the
// ranks' values of one element: the decoding of each dtype into its accumulator, the operation,
// the fixed order (pairwise tree or sequential over ranks in rank order) and the rounding back.
// Conversions are done in integer arithmetic, never by hardware conversion instructions, and
// float sums use only IEEE additions and divisions, so both devices produce the same bits.
//
// Accumulators: fp64 in fp64; fp32, fp16, bf16 and fp8 in fp32 (rounded once at the end, to
// nearest even, out-of-range values becoming inf, or NaN for fp8_e4m3 which has no inf; a sum or
// avg that is NaN is the canonical quiet NaN, since GPUs do not propagate NaN payloads);
// integers wrap modulo 2^bits (order-independent); bool: max is or, min is and.
//
//===----------------------------------------------------------------------------------------===//
#ifndef TESSERA_RUNTIME_DIST_REDUCEOPS_H
#define TESSERA_RUNTIME_DIST_REDUCEOPS_H

#include <stdint.h>

#ifdef __CUDACC__
#define TESSERA_HD __host__ __device__ __forceinline__
#else
#include <cstring>
#define TESSERA_HD inline
#endif

namespace tessera::dist::reduce {

// Ranks a deterministic reduction combines at most in one step (the GPU kernel takes one
// pointer per rank by value).
constexpr int kMaxInputs = 256;

enum Op : int32_t { kSum = 0, kMax = 1, kMin = 2, kAvg = 3 };
enum Order : int32_t { kTree = 0, kSequential = 1 };

TESSERA_HD float bitsToFloat(uint32_t x) {
#ifdef __CUDA_ARCH__
  return __uint_as_float(x);
#else
  float f;
  std::memcpy(&f, &x, 4);
  return f;
#endif
}
TESSERA_HD uint32_t floatToBits(float f) {
#ifdef __CUDA_ARCH__
  return __float_as_uint(f);
#else
  uint32_t x;
  std::memcpy(&x, &f, 4);
  return x;
#endif
}

// ---- small floats <-> fp32 (fp16, fp8) -----------------------------------------------------

// A binary float of E exponent bits and M mantissa bits with IEEE bias; HasInf: an all-ones
// exponent is inf/NaN (fp16, e5m2), else only S.1111.111 is NaN (OCP e4m3).
template <int E, int M, bool HasInf>
struct SmallFloat {
  static constexpr int kBias = (1 << (E - 1)) - 1;
  static constexpr uint32_t kExpMask = (1u << E) - 1;
  static constexpr uint32_t kMaxFinite =
      HasInf ? ((kExpMask - 1) << M) | ((1u << M) - 1) : (kExpMask << M) | ((1u << M) - 2);
  static constexpr uint32_t kInf = kExpMask << M;
  static constexpr uint32_t kNaN = HasInf ? (kExpMask << M) | (1u << (M - 1)) : (kExpMask << M) | ((1u << M) - 1);
  static constexpr uint32_t kSign = 1u << (E + M);

  TESSERA_HD static float decode(uint32_t b) {
    uint32_t sign = (b & kSign) ? 0x80000000u : 0u;
    uint32_t exp = (b >> M) & kExpMask, man = b & ((1u << M) - 1);
    if (HasInf ? exp == kExpMask : (exp == kExpMask && man == (1u << M) - 1)) {
      if (HasInf && man == 0) return bitsToFloat(sign | 0x7f800000u);
      return bitsToFloat(sign | 0x7fc00000u | (man << (23 - M)));
    }
    if (exp == 0) {  // subnormal: man * 2^(1 - bias - M), exact in fp32
      float scale = bitsToFloat(static_cast<uint32_t>(127 + 1 - kBias - M) << 23);
      float v = static_cast<float>(man) * scale;
      return sign ? -v : v;
    }
    return bitsToFloat(sign | ((exp - kBias + 127) << 23) | (man << (23 - M)));
  }

  // Round to nearest, ties to even; beyond the largest finite value: inf (or NaN without inf).
  TESSERA_HD static uint32_t encode(float f) {
    uint32_t x = floatToBits(f);
    uint32_t sign = (x & 0x80000000u) ? kSign : 0u;
    uint32_t fexp = (x >> 23) & 0xffu, frac = x & 0x7fffffu;
    if (fexp == 0xffu) return frac ? (sign | kNaN) : (sign | (HasInf ? kInf : kNaN));
    if (fexp == 0 && frac == 0) return sign;
    // value = m24 * 2^(e - 23)
    int32_t e = fexp ? static_cast<int32_t>(fexp) - 127 : -126;
    uint32_t m24 = fexp ? (frac | 0x800000u) : frac;
    int32_t shift = 23 - M;
    bool normal = e >= 1 - kBias;
    if (!normal) shift += (1 - kBias) - e;
    if (shift > 25) return sign;  // below half the smallest subnormal
    uint32_t q = m24 >> shift, rem = m24 & ((1u << shift) - 1), half = 1u << (shift - 1);
    if (rem > half || (rem == half && (q & 1u))) ++q;
    // Subnormal: q is the code (a carry into 2^M is the smallest normal). Normal: q carries
    // into the exponent field on its own.
    uint32_t code = normal ? (static_cast<uint32_t>(e + kBias) << M) + (q - (1u << M)) : q;
    if (code > kMaxFinite) return sign | (HasInf ? kInf : kNaN);
    return sign | code;
  }
};
using F16Format = SmallFloat<5, 10, true>;
using E4M3Format = SmallFloat<4, 3, false>;
using E5M2Format = SmallFloat<5, 2, true>;

TESSERA_HD float bf16Decode(uint16_t b) { return bitsToFloat(static_cast<uint32_t>(b) << 16); }
TESSERA_HD uint16_t bf16Encode(float f) {
  uint32_t x = floatToBits(f);
  if ((x & 0x7fffffffu) > 0x7f800000u)
    return static_cast<uint16_t>((x >> 16) | 0x40u);  // quiet NaN, sign and payload kept
  x += 0x7fffu + ((x >> 16) & 1u);
  return static_cast<uint16_t>(x >> 16);
}

// ---- codecs: storage <-> accumulator, one per reducible dtype ------------------------------

enum class Kind { Float, Signed, Unsigned, Bool };

template <class S, class A, Kind K>
struct CodecBase {
  using Storage = S;
  using Acc = A;
  static constexpr Kind kind = K;
};
struct CodecF64 : CodecBase<double, double, Kind::Float> {
  TESSERA_HD static double load(double v) { return v; }
  TESSERA_HD static double store(double a) { return a; }
};
struct CodecF32 : CodecBase<float, float, Kind::Float> {
  TESSERA_HD static float load(float v) { return v; }
  TESSERA_HD static float store(float a) { return a; }
};
struct CodecF16 : CodecBase<uint16_t, float, Kind::Float> {
  TESSERA_HD static float load(uint16_t v) { return F16Format::decode(v); }
  TESSERA_HD static uint16_t store(float a) { return static_cast<uint16_t>(F16Format::encode(a)); }
};
struct CodecBF16 : CodecBase<uint16_t, float, Kind::Float> {
  TESSERA_HD static float load(uint16_t v) { return bf16Decode(v); }
  TESSERA_HD static uint16_t store(float a) { return bf16Encode(a); }
};
struct CodecE4M3 : CodecBase<uint8_t, float, Kind::Float> {
  TESSERA_HD static float load(uint8_t v) { return E4M3Format::decode(v); }
  TESSERA_HD static uint8_t store(float a) { return static_cast<uint8_t>(E4M3Format::encode(a)); }
};
struct CodecE5M2 : CodecBase<uint8_t, float, Kind::Float> {
  TESSERA_HD static float load(uint8_t v) { return E5M2Format::decode(v); }
  TESSERA_HD static uint8_t store(float a) { return static_cast<uint8_t>(E5M2Format::encode(a)); }
};
template <class T, Kind K>
struct CodecInt : CodecBase<T, T, K> {
  TESSERA_HD static T load(T v) { return v; }
  TESSERA_HD static T store(T a) { return a; }
};
using CodecI8 = CodecInt<int8_t, Kind::Signed>;
using CodecI16 = CodecInt<int16_t, Kind::Signed>;
using CodecI32 = CodecInt<int32_t, Kind::Signed>;
using CodecI64 = CodecInt<int64_t, Kind::Signed>;
using CodecU8 = CodecInt<uint8_t, Kind::Unsigned>;
using CodecU16 = CodecInt<uint16_t, Kind::Unsigned>;
using CodecU32 = CodecInt<uint32_t, Kind::Unsigned>;
using CodecU64 = CodecInt<uint64_t, Kind::Unsigned>;
struct CodecBool : CodecBase<uint8_t, uint8_t, Kind::Bool> {
  TESSERA_HD static uint8_t load(uint8_t v) { return v ? 1 : 0; }
  TESSERA_HD static uint8_t store(uint8_t a) { return a; }
};

template <class T>
struct UnsignedOf {
  using type = T;
};
template <>
struct UnsignedOf<int8_t> {
  using type = uint8_t;
};
template <>
struct UnsignedOf<int16_t> {
  using type = uint16_t;
};
template <>
struct UnsignedOf<int32_t> {
  using type = uint32_t;
};
template <>
struct UnsignedOf<int64_t> {
  using type = uint64_t;
};

// ---- operations on accumulators --------------------------------------------------------------

// The quiet NaN every NaN a float sum or division produces: GPUs return their canonical NaN where
// x86 propagates an operand's payload, so results are made to agree.
template <class A>
TESSERA_HD A canonicalNaN() {
  if constexpr (sizeof(A) == 8) {
#ifdef __CUDA_ARCH__
    return __longlong_as_double(0x7ff8000000000000ll);
#else
    uint64_t x = 0x7ff8000000000000ull;
    double d;
    std::memcpy(&d, &x, 8);
    return d;
#endif
  } else {
    return bitsToFloat(0x7fc00000u);
  }
}
template <class A>
TESSERA_HD A canonical(A v) {
  return v != v ? canonicalNaN<A>() : v;
}

template <class C>
struct OpSum {
  using A = typename C::Acc;
  TESSERA_HD static A apply(A a, A b) {
    if constexpr (C::kind == Kind::Float) {
      return canonical(a + b);
    } else {
      using U = typename UnsignedOf<A>::type;  // integers wrap
      return static_cast<A>(static_cast<U>(static_cast<U>(a) + static_cast<U>(b)));
    }
  }
};

// max/min: a NaN wins (the first in the fixed order), and +0 counts as larger than -0, so the
// result never depends on how equal values are ordered.
template <class C, bool IsMax>
struct OpExtreme {
  using A = typename C::Acc;
  TESSERA_HD static A apply(A a, A b) {
    if constexpr (C::kind == Kind::Bool) {
      return IsMax ? (a | b) : (a & b);
    } else if constexpr (C::kind == Kind::Float) {
      if (a != a) return a;
      if (b != b) return b;
      if (a != b) return ((a > b) == IsMax) ? a : b;
      bool aNeg = signBit(a);
      return (aNeg != IsMax) ? a : b;  // equal values: +0 is the max, -0 the min
    } else {
      return IsMax ? (a > b ? a : b) : (a < b ? a : b);
    }
  }
  TESSERA_HD static bool signBit(A v) {
    if constexpr (sizeof(A) == 8) {
#ifdef __CUDA_ARCH__
      return __double_as_longlong(v) < 0;
#else
      int64_t x;
      std::memcpy(&x, &v, 8);
      return x < 0;
#endif
    } else {
      return (floatToBits(static_cast<float>(v)) >> 31) != 0;
    }
  }
};
template <class C>
using OpMax = OpExtreme<C, true>;
template <class C>
using OpMin = OpExtreme<C, false>;

// ---- the fixed orders --------------------------------------------------------------------------

// ((x0 + x1) + x2) + ... in rank order.
template <class Operation, class A, class Load>
TESSERA_HD A combineSequential(int p, Load load) {
  A acc = load(0);
  for (int r = 1; r < p; ++r) acc = Operation::apply(acc, load(r));
  return acc;
}

// Pairwise ("binary_tree"): ranks are combined like a binary counter: (x0+x1), (x2+x3), then
// ((x0+x1)+(x2+x3)), ...; the partial sums left at the end (one per set bit of p, largest
// first) are combined from the smallest up: S8 + (S4 + (S2 + x_{p-1})). For p <= 3 this is the
// sequential order.
template <class Operation, class A, class Load>
TESSERA_HD A combineTree(int p, Load load) {
  A stack[12];
  int level[12];
  int n = 0;
  for (int r = 0; r < p; ++r) {
    stack[n] = load(r);
    level[n] = 0;
    ++n;
    while (n >= 2 && level[n - 1] == level[n - 2]) {
      stack[n - 2] = Operation::apply(stack[n - 2], stack[n - 1]);
      ++level[n - 2];
      --n;
    }
  }
  A acc = stack[n - 1];
  for (int i = n - 2; i >= 0; --i) acc = Operation::apply(stack[i], acc);
  return acc;
}

// V consecutive elements ("lanes") reduced together, so the GPU loads 16 bytes per rank at a
// time; every lane goes through exactly the scalar sequence of operations (V = 1 is the scalar
// form), so the vector width never changes a bit.
template <class C, int V>
struct Lanes {
  typename C::Acc v[V];
};
template <class Operation, int V>
struct LaneWise {
  template <class L>
  TESSERA_HD static L apply(L x, const L& y) {
    for (int j = 0; j < V; ++j) x.v[j] = Operation::apply(x.v[j], y.v[j]);
    return x;
  }
};

// Output lanes: combine the p inputs' lanes (load(r) gives rank r's Lanes<C, V>) in `order`,
// divide by p for avg, round to storage.
template <class C, int OpKind, int V, class Load>
TESSERA_HD void reduceLanes(int p, int order, Load load, typename C::Storage* out) {
  using A = typename C::Acc;
  using L = Lanes<C, V>;
  L acc;
  if constexpr (OpKind == kMax) {
    using W = LaneWise<OpMax<C>, V>;
    acc = order == kTree ? combineTree<W, L>(p, load) : combineSequential<W, L>(p, load);
  } else if constexpr (OpKind == kMin) {
    using W = LaneWise<OpMin<C>, V>;
    acc = order == kTree ? combineTree<W, L>(p, load) : combineSequential<W, L>(p, load);
  } else {
    using W = LaneWise<OpSum<C>, V>;
    acc = order == kTree ? combineTree<W, L>(p, load) : combineSequential<W, L>(p, load);
  }
  for (int j = 0; j < V; ++j) {
    A a = acc.v[j];
    if constexpr (OpKind == kAvg && C::kind == Kind::Float) a = canonical(a / static_cast<A>(p));
    out[j] = C::store(a);
  }
}

// The GPU kernels' only parameter (by value, so graph capture keeps it): rank r's input
// elements at in[r], n outputs at out (which may be one of the inputs: each element is read
// before it is written, by the same thread). vectorized: every pointer is 16-byte aligned.
struct ReduceParams {
  const void* in[kMaxInputs];
  void* out;
  uint64_t n;
  int32_t p;
  int32_t order;
  int32_t vectorized;
  int32_t reserved;
};

}  // namespace tessera::dist::reduce

#endif
