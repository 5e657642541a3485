// Helpers for execution tests: fresh random inputs (the seed is printed so a failure can be
// replayed with TESSERA_TEST_SEED), device buffers, IEEE half/bfloat16 conversions that round
// to nearest even like the hardware, element-by-element checks, and the skip convention (exit
// status 77 when the test asks for a device this machine does not have).
#pragma once

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <tessera/runtime.h>
#include <type_traits>
#include <vector>

namespace exec {

constexpr int kSkip = 77;

inline uint64_t seed() {
  static uint64_t s = [] {
    const char* env = std::getenv("TESSERA_TEST_SEED");
    uint64_t v = env ? std::strtoull(env, nullptr, 10) : std::random_device{}();
    std::printf("seed %llu (TESSERA_TEST_SEED replays it)\n", static_cast<unsigned long long>(v));
    return v;
  }();
  return s;
}

inline std::mt19937_64& rng() {
  static std::mt19937_64 r(seed());
  return r;
}

inline std::vector<float> randomFloats(size_t n, float lo = -1.0f, float hi = 1.0f) {
  std::uniform_real_distribution<float> d(lo, hi);
  std::vector<float> v(n);
  for (float& x : v) x = d(rng());
  return v;
}

inline std::vector<int32_t> randomInts(size_t n, int32_t lo, int32_t hi) {
  std::uniform_int_distribution<int32_t> d(lo, hi);
  std::vector<int32_t> v(n);
  for (int32_t& x : v) x = d(rng());
  return v;
}

// Exits with a message when a runtime call fails.
inline void check(tessera_status s, const char* what) {
  if (s != TESSERA_SUCCESS) {
    std::printf("FAIL: %s: %s: %s\n", what, tessera_status_name(s), tessera_last_error_message());
    std::exit(1);
  }
}

// Runs the test on the device TESSERA_DEVICE names; a GPU test on a machine without one
// skips (exit 77) instead of passing.
inline void requireDevice() {
  tessera_status s = tessera_init();
  const char* want = std::getenv("TESSERA_DEVICE");
  if (s != TESSERA_SUCCESS) {
    if (want && std::string(want) == "gpu") {
      std::printf("SKIP: no usable GPU: %s\n", tessera_last_error_message());
      std::exit(kSkip);
    }
    check(s, "tessera_init");
  }
  std::printf("device: %s\n", tessera_device_name());
}

template <class T>
class DeviceArray {
 public:
  explicit DeviceArray(const std::vector<T>& host) : n_(host.size()) {
    check(tessera_malloc(&ptr_, bytes()), "tessera_malloc");
    check(tessera_memcpy(ptr_, host.data(), bytes()), "tessera_memcpy to device");
  }
  ~DeviceArray() { tessera_free(ptr_); }
  DeviceArray(const DeviceArray&) = delete;
  DeviceArray& operator=(const DeviceArray&) = delete;
  std::vector<T> read() const {
    std::vector<T> out(n_);
    check(tessera_memcpy(out.data(), ptr_, bytes()), "tessera_memcpy to host");
    return out;
  }
  void* data() const { return ptr_; }
  size_t bytes() const { return n_ * sizeof(T); }
  // A dense view with the given shape.
  tessera_tensor view(tessera_dtype dtype, std::vector<int64_t> shape) const {
    tessera_tensor t;
    tessera_tensor_init(&t, ptr_, dtype, static_cast<int32_t>(shape.size()), shape.data(), 0);
    return t;
  }

 private:
  void* ptr_ = nullptr;
  size_t n_;
};

// ---- half and bfloat16, round to nearest even (as cvt.rn on the GPU)

inline uint16_t toHalf(float f) {
  uint32_t x;
  std::memcpy(&x, &f, 4);
  uint32_t sign = (x >> 16) & 0x8000u;
  uint32_t exp = (x >> 23) & 0xffu;
  uint32_t mant = x & 0x7fffffu;
  if (exp == 0xff) return static_cast<uint16_t>(sign | 0x7c00u | (mant ? 0x200u : 0));
  int e = static_cast<int>(exp) - 127 + 15;
  if (e >= 31) return static_cast<uint16_t>(sign | 0x7c00u);
  if (e <= 0) {
    if (e < -10) return static_cast<uint16_t>(sign);
    mant |= 0x800000u;
    uint32_t shift = static_cast<uint32_t>(14 - e);
    uint32_t half = mant >> shift, rem = mant & ((1u << shift) - 1), mid = 1u << (shift - 1);
    if (rem > mid || (rem == mid && (half & 1))) ++half;
    return static_cast<uint16_t>(sign | half);
  }
  uint32_t half = (static_cast<uint32_t>(e) << 10) | (mant >> 13);
  uint32_t rem = mant & 0x1fffu;
  if (rem > 0x1000u || (rem == 0x1000u && (half & 1))) ++half;  // may carry into the exponent: correct
  return static_cast<uint16_t>(sign | half);
}

inline float fromHalf(uint16_t h) {
  uint32_t sign = (h & 0x8000u) << 16, exp = (h >> 10) & 0x1fu, mant = h & 0x3ffu, x;
  if (exp == 0) {
    if (mant == 0) {
      x = sign;
    } else {
      int e = -1;
      do {
        mant <<= 1;
        ++e;
      } while (!(mant & 0x400u));
      x = sign | (static_cast<uint32_t>(127 - 15 - e) << 23) | ((mant & 0x3ffu) << 13);
    }
  } else if (exp == 31) {
    x = sign | 0x7f800000u | (mant << 13);
  } else {
    x = sign | ((exp + 127 - 15) << 23) | (mant << 13);
  }
  float f;
  std::memcpy(&f, &x, 4);
  return f;
}

inline uint16_t toBF16(float f) {
  uint32_t x;
  std::memcpy(&x, &f, 4);
  if ((x & 0x7fffffffu) > 0x7f800000u) return static_cast<uint16_t>((x >> 16) | 0x40);  // quiet NaN
  x += 0x7fffu + ((x >> 16) & 1u);
  return static_cast<uint16_t>(x >> 16);
}

inline float fromBF16(uint16_t h) {
  uint32_t x = static_cast<uint32_t>(h) << 16;
  float f;
  std::memcpy(&f, &x, 4);
  return f;
}

// n random bf16 values (as bits) in [lo, hi).
inline std::vector<uint16_t> randomBF16(size_t n, float lo = -1.0f, float hi = 1.0f) {
  std::vector<float> f = randomFloats(n, lo, hi);
  std::vector<uint16_t> h(n);
  for (size_t i = 0; i < n; ++i) h[i] = toBF16(f[i]);
  return h;
}

// ---- checks

// "Same bits" for results: every bit equal, except that any NaN equals any NaN. IEEE 754 leaves
// a NaN result's payload and sign to the implementation: x86 propagates the operand's NaN, the
// GPU returns its canonical 0x7fffffff, so a NaN sum is NaN on both but not the same bits.
template <class T>
bool sameResultBits(const T& a, const T& b) {
  if constexpr (std::is_floating_point_v<T>)
    if (std::isnan(a) && std::isnan(b)) return true;
  return std::memcmp(&a, &b, sizeof(T)) == 0;
}

// FNV-1a over the bytes of a result (NaNs hashed as one canonical NaN, as sameResultBits
// compares them). Checks print it ("digest <what> <hex>") so that a differential run
// (scripts/differential-exec.sh: one seed, GPU then CPU) can compare the bits the two devices
// produced.
template <class T>
uint64_t digest(const std::vector<T>& v) {
  uint64_t h = 1469598103934665603ull;
  for (const T& x : v) {
    T canon = x;
    if constexpr (std::is_floating_point_v<T>)
      if (std::isnan(x)) canon = std::numeric_limits<T>::quiet_NaN();
    const auto* p = reinterpret_cast<const unsigned char*>(&canon);
    for (size_t i = 0; i < sizeof(T); ++i) h = (h ^ p[i]) * 1099511628211ull;
  }
  return h;
}

// Compares every element; |got - want| <= atol + rtol * |want|. Prints the first mismatches.
inline bool allClose(const std::vector<float>& got, const std::vector<float>& want, double rtol, double atol,
                     const char* what) {
  size_t bad = 0;
  double worst = 0;
  for (size_t i = 0; i < want.size(); ++i) {
    double err = std::fabs(static_cast<double>(got[i]) - want[i]);
    bool ok = err <= atol + rtol * std::fabs(static_cast<double>(want[i])) && !std::isnan(got[i]);
    if (!ok && bad++ < 5) std::printf("  %s[%zu] = %.9g, expected %.9g\n", what, i, got[i], want[i]);
    worst = std::max(worst, err);
  }
  std::printf("%s: %zu elements, %zu outside the bound, max abs error %.3g\n", what, want.size(), bad, worst);
  std::printf("digest %s %016llx (within a bound)\n", what, static_cast<unsigned long long>(digest(got)));
  return bad == 0 && got.size() == want.size();
}

// Compares every element against its own bound: |got[i] - want[i]| <= bound[i].
inline bool allWithin(const std::vector<float>& got, const std::vector<float>& want, const std::vector<double>& bound,
                      const char* what) {
  size_t bad = 0;
  double worst = 0;
  for (size_t i = 0; i < want.size(); ++i) {
    double err = std::fabs(static_cast<double>(got[i]) - want[i]);
    bool ok = err <= bound[i] && !std::isnan(got[i]);
    if (!ok && bad++ < 5)
      std::printf("  %s[%zu] = %.9g, expected %.9g (bound %.3g)\n", what, i, got[i], want[i], bound[i]);
    worst = std::max(worst, err / (bound[i] > 0 ? bound[i] : 1));
  }
  std::printf("%s: %zu elements, %zu outside their bounds, worst error %.3g of its bound\n", what, want.size(), bad,
              worst);
  std::printf("digest %s %016llx (within a bound)\n", what, static_cast<unsigned long long>(digest(got)));
  return bad == 0 && got.size() == want.size();
}

template <class T>
bool allEqual(const std::vector<T>& got, const std::vector<T>& want, const char* what) {
  size_t bad = 0;
  for (size_t i = 0; i < want.size(); ++i)
    if (!sameResultBits(got[i], want[i]) && bad++ < 5) {
      if constexpr (std::is_floating_point_v<T>)
        std::printf("  %s[%zu] = %.9g, expected %.9g\n", what, i, static_cast<double>(got[i]),
                    static_cast<double>(want[i]));
      else
        std::printf("  %s[%zu] differs\n", what, i);
    }
  std::printf("%s: %zu elements, %zu differ\n", what, want.size(), bad);
  std::printf("digest %s %016llx (exact)\n", what, static_cast<unsigned long long>(digest(got)));
  return bad == 0 && got.size() == want.size();
}

inline int finish(bool ok) {
  std::printf("%s\n", ok ? "PASS" : "FAIL");
  return ok ? 0 : 1;
}

}  // namespace exec
