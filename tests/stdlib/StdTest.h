// Helpers shared by the standard library's tests: typed host buffers in f32, bf16 or f16,
// strided views, the row order the library's row kernels use, and checks. Builds on
// tests/exec/ExecTest.h (fresh random inputs with a printed seed, device buffers, checks).
#pragma once

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <tessera/std.h>
#include <vector>

#include "ExecTest.h"

namespace stdtest {

enum class DT { F32, BF16, F16 };

inline const char* name(DT d) { return d == DT::F32 ? "f32" : d == DT::BF16 ? "bf16" : "f16"; }
inline tessera_dtype tdtype(DT d) { return d == DT::F32 ? TESSERA_F32 : d == DT::BF16 ? TESSERA_BF16 : TESSERA_F16; }
// Elements per 16 bytes: the chunk of the row kernels (stdlib/rows.tessera).
inline int64_t vec(DT d) { return d == DT::F32 ? 4 : 8; }
// Half an ulp, relative, at worst (just above a power of two): the rounding of a store.
inline double halfUlp(DT d) { return d == DT::F32 ? 0x1p-24 : d == DT::BF16 ? 0x1p-8 : 0x1p-11; }

// A value rounded to the dtype (nearest even), as a float.
inline float round(DT d, float v) {
  if (d == DT::BF16) return exec::fromBF16(exec::toBF16(v));
  if (d == DT::F16) return exec::fromHalf(exec::toHalf(v));
  return v;
}

// Host data of one dtype: the values (already rounded to the dtype) and their storage.
struct Host {
  DT dt;
  std::vector<float> v;
  std::vector<uint16_t> h;  // bf16/f16 bits
  Host(DT d, std::vector<float> vals) : dt(d), v(std::move(vals)) {
    for (float& x : v) x = round(dt, x);
    if (dt != DT::F32) {
      h.resize(v.size());
      for (size_t i = 0; i < v.size(); ++i) h[i] = dt == DT::BF16 ? exec::toBF16(v[i]) : exec::toHalf(v[i]);
    }
  }
};

// Device copy of a Host buffer; read() gives floats back.
class Dev {
 public:
  explicit Dev(const Host& x) : dt_(x.dt), n_(x.v.size()) {
    size_t bytes = n_ * (dt_ == DT::F32 ? 4 : 2);
    exec::check(tessera_malloc(&p_, bytes ? bytes : 4), "tessera_malloc");
    if (bytes)
      exec::check(tessera_memcpy(p_, dt_ == DT::F32 ? static_cast<const void*>(x.v.data()) : x.h.data(), bytes),
                  "copy in");
  }
  Dev(DT d, size_t n) : Dev(Host(d, std::vector<float>(n, -7.0f))) {}
  ~Dev() { tessera_free(p_); }
  Dev(const Dev&) = delete;
  Dev& operator=(const Dev&) = delete;
  std::vector<float> read() const {
    std::vector<float> out(n_);
    if (dt_ == DT::F32) {
      if (n_) exec::check(tessera_memcpy(out.data(), p_, n_ * 4), "copy out");
      return out;
    }
    std::vector<uint16_t> h(n_);
    if (n_) exec::check(tessera_memcpy(h.data(), p_, n_ * 2), "copy out");
    for (size_t i = 0; i < n_; ++i) out[i] = dt_ == DT::BF16 ? exec::fromBF16(h[i]) : exec::fromHalf(h[i]);
    return out;
  }
  tessera_tensor view(std::vector<int64_t> shape) const {
    tessera_tensor t;
    tessera_tensor_init(&t, p_, tdtype(dt_), static_cast<int32_t>(shape.size()), shape.data(), 0);
    return t;
  }
  void* data() const { return p_; }

 private:
  DT dt_;
  size_t n_;
  void* p_ = nullptr;
};

// The order of the row kernels: tile t of 256 visits its 16-byte chunks (V elements) at
// t*V + k*256*V below the last whole chunk, then its one element of the last N % V.
template <class F>
void forTileElements(int64_t N, int64_t V, int64_t t, F f) {
  int64_t full = N - N % V;
  for (int64_t j = t * V; j < full; j += 256 * V)
    for (int64_t u = 0; u < V; ++u) f(j + u);
  if (full + t < N) f(full + t);
}

// The pairwise tree over tile order (tile.group_sum and friends).
template <class T, class Op>
T tree(std::vector<T> a, Op op) {
  for (size_t s = 1; s < a.size(); s *= 2)
    for (size_t i = 0; i + s < a.size(); i += 2 * s) a[i] = op(a[i], a[i + s]);
  return a[0];
}

inline int64_t randomIn(int64_t lo, int64_t hi) { return std::uniform_int_distribution<int64_t>(lo, hi)(exec::rng()); }

// Checks |got - want| <= bound for every element (NaN only where want is NaN, an infinity only
// where want is that infinity).
inline bool within(const std::vector<float>& got, const std::vector<double>& want, const std::vector<double>& bound,
                   const std::string& what) {
  size_t bad = 0;
  double worst = 0;
  for (size_t i = 0; i < want.size(); ++i) {
    bool ok;
    if (std::isnan(want[i])) {
      ok = std::isnan(got[i]);
    } else if (std::isinf(want[i])) {
      ok = static_cast<double>(got[i]) == want[i];
    } else {
      double err = std::fabs(static_cast<double>(got[i]) - want[i]);
      ok = err <= bound[i];
      if (bound[i] > 0) worst = std::max(worst, err / bound[i]);
    }
    if (!ok && bad++ < 5)
      std::printf("  %s[%zu] = %.9g, expected %.9g (bound %.3g)\n", what.c_str(), i, got[i], want[i], bound[i]);
  }
  std::printf("%s: %zu elements, %zu outside their bounds, worst %.3g of the bound\n", what.c_str(), want.size(), bad,
              worst);
  return bad == 0 && got.size() == want.size();
}

inline bool same(const std::vector<float>& a, const std::vector<float>& b, const std::string& what) {
  return exec::allEqual(a, b, what.c_str());
}

}  // namespace stdtest
