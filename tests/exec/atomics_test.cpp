// kernels/atomics: atomic updates from many groups (odd sizes, partial last groups), every
// element checked against a CPU reference on fresh random inputs. Deterministic kernels compare
// exact bits; the kernels that opt out of determinism are checked by what holds in any order:
// the tickets a counter hands out are 0 .. n-1 each once, an exchange chain loses no value, a
// compare-and-swap loop finds the maximum, floating-point sums lie within the bound of any
// summation order.
#include "atomics.h"

#include <algorithm>
#include <numeric>

#include "ExecTest.h"

namespace {

tessera_launch_options gridFor(int64_t n, int64_t groupTiles) {
  tessera_launch_options o{};
  o.grid[0] = static_cast<uint32_t>(std::max<int64_t>(1, (n + groupTiles - 1) / groupTiles));
  o.grid[1] = o.grid[2] = 1;
  return o;
}

template <class T>
std::vector<T> randomOf(int64_t n, T lo, T hi) {
  std::uniform_int_distribution<T> d(lo, hi);
  std::vector<T> v(n);
  for (T& x : v) x = d(exec::rng());
  return v;
}

bool histograms(int64_t n) {
  int64_t b = std::uniform_int_distribution<int64_t>(1, 512)(exec::rng());
  std::vector<int32_t> x = exec::randomInts(n, 0, static_cast<int32_t>(b - 1));
  // Skewed inputs too: half the tiles hit bin 0, so one element takes many concurrent updates.
  for (int64_t i = 0; i < n; i += 2) x[i] = 0;
  std::vector<int32_t> bins(b, 0);
  std::vector<uint64_t> wide(b, 5);
  std::vector<int64_t> bins64(b, 0);
  for (int32_t v : x) ++bins[v], wide[v] += 3, ++bins64[v];
  exec::DeviceArray<int32_t> dx(x), dbins(std::vector<int32_t>(b, 0));
  exec::DeviceArray<uint64_t> dwide(std::vector<uint64_t>(b, 5));
  exec::DeviceArray<int64_t> dshared(std::vector<int64_t>(b, 0));
  tessera_launch_options o = gridFor(n, 96);
  exec::check(
      atomics::histogram(dx.view(TESSERA_I32, {n}), dbins.view(TESSERA_I32, {b}), dwide.view(TESSERA_U64, {b}), &o),
      "histogram");
  tessera_launch_options os = gridFor(n, 128);
  exec::check(atomics::histogram_shared(dx.view(TESSERA_I32, {n}), dshared.view(TESSERA_I64, {b}), &os),
              "histogram_shared");
  exec::check(tessera_synchronize(), "synchronize");
  std::printf("histograms: n=%lld, %lld bins\n", static_cast<long long>(n), static_cast<long long>(b));
  bool ok = exec::allEqual(dbins.read(), bins, "histogram i32");
  ok &= exec::allEqual(dwide.read(), wide, "histogram u64 (+3)");
  ok &= exec::allEqual(dshared.read(), bins64, "histogram through shared memory");
  return ok;
}

bool integerReductions(int64_t n) {
  using I32 = std::numeric_limits<int32_t>;
  using U32 = std::numeric_limits<uint32_t>;
  using I64 = std::numeric_limits<int64_t>;
  std::vector<int32_t> x = exec::randomInts(n, I32::min(), I32::max());
  std::vector<uint32_t> u = randomOf<uint32_t>(n, 0, U32::max());
  std::vector<int64_t> sums = {7, -7}, wmax = {I64::min()}, wmin = {I64::max()};
  std::vector<uint32_t> usum = {11, 11}, umax = {0}, umin = {U32::max()};
  std::vector<int32_t> imax = {I32::min(), I32::min()}, imin = {I32::max(), I32::max()};
  exec::DeviceArray<int32_t> dx(x), dimax(imax), dimin(imin);
  exec::DeviceArray<uint32_t> du(u), dusum(usum), dumax(umax), dumin(umin);
  exec::DeviceArray<int64_t> dsums(sums), dwmax(wmax), dwmin(wmin);
  for (int64_t i = 0; i < n; ++i) {
    int32_t v = x[i];
    sums[0] += v;
    sums[1] -= v;
    usum[0] += u[i];  // wraps modulo 2^32, in any order
    usum[1] -= u[i];
    int32_t q = v / 7, m = v % 1000;
    if (v % 7 != 0 && v < 0) --q;  // Python's //: toward minus infinity
    if (m < 0) m += 1000;          // Python's %: the sign of the divisor
    imax[0] = std::max(imax[0], v);
    imin[0] = std::min(imin[0], v);
    imax[1] = std::max(imax[1], q);
    imin[1] = std::min(imin[1], m);
    umax[0] = std::max(umax[0], u[i]);
    umin[0] = std::min(umin[0], u[i]);
    wmax[0] = std::max(wmax[0], int64_t(v) * 1000003);
    wmin[0] = std::min(wmin[0], int64_t(v) * 1000003);
  }
  tessera_launch_options o = gridFor(n, 64);
  exec::check(
      atomics::reduce_ints(dx.view(TESSERA_I32, {n}), du.view(TESSERA_U32, {n}), dsums.view(TESSERA_I64, {2}),
                           dusum.view(TESSERA_U32, {2}), dimax.view(TESSERA_I32, {2}), dimin.view(TESSERA_I32, {2}),
                           dumax.view(TESSERA_U32, {1}), dumin.view(TESSERA_U32, {1}), dwmax.view(TESSERA_I64, {1}),
                           dwmin.view(TESSERA_I64, {1}), &o),
      "reduce_ints");
  exec::check(tessera_synchronize(), "synchronize");
  bool ok = exec::allEqual(dsums.read(), sums, "i64 sum and difference of i32");
  ok &= exec::allEqual(dusum.read(), usum, "u32 sum and difference (wrapping)");
  ok &= exec::allEqual(dimax.read(), imax, "i32 max of v and of v // 7");
  ok &= exec::allEqual(dimin.read(), imin, "i32 min of v and of v % 1000");
  ok &= exec::allEqual(dumax.read(), umax, "u32 max (unsigned)");
  ok &= exec::allEqual(dumin.read(), umin, "u32 min (unsigned)");
  ok &= exec::allEqual(dwmax.read(), wmax, "i64 max");
  ok &= exec::allEqual(dwmin.read(), wmin, "i64 min");
  return ok;
}

bool ticketsAndExchanges(int64_t n) {
  exec::DeviceArray<int32_t> counter(std::vector<int32_t>{0}), got(std::vector<int32_t>(n, -1));
  exec::DeviceArray<uint64_t> down(std::vector<uint64_t>{uint64_t(n)}), gotDown(std::vector<uint64_t>(n, 0));
  tessera_launch_options o = gridFor(n, 80);
  exec::check(atomics::tickets(counter.view(TESSERA_I32, {1}), down.view(TESSERA_U64, {1}), got.view(TESSERA_I32, {n}),
                               gotDown.view(TESSERA_U64, {n}), &o),
              "tickets");
  exec::DeviceArray<int64_t> slot(std::vector<int64_t>{-5}), old(std::vector<int64_t>(n, 0));
  exec::check(atomics::exchange(slot.view(TESSERA_I64, {1}), old.view(TESSERA_I64, {n}), &o), "exchange");
  exec::check(tessera_synchronize(), "synchronize");
  // Sorted, the tickets are 0 .. n-1 (each once) and the down-counter's old values n .. 1.
  std::vector<int32_t> t = got.read(), wantT(n);
  std::sort(t.begin(), t.end());
  std::iota(wantT.begin(), wantT.end(), 0);
  bool ok = exec::allEqual(counter.read(), std::vector<int32_t>{int32_t(n)}, "counter");
  ok &= exec::allEqual(t, wantT, "tickets, sorted");
  std::vector<uint64_t> d = gotDown.read(), wantD(n);
  std::sort(d.begin(), d.end());
  std::iota(wantD.begin(), wantD.end(), uint64_t(1));
  ok &= exec::allEqual(down.read(), std::vector<uint64_t>{0}, "down-counter");
  ok &= exec::allEqual(d, wantD, "down-counter old values, sorted");
  // The exchange chain: old values plus the final one are -5 and 10 .. n+9, each once.
  std::vector<int64_t> chain = old.read(), wantC(n + 1);
  chain.push_back(slot.read()[0]);
  std::sort(chain.begin(), chain.end());
  wantC[0] = -5;
  std::iota(wantC.begin() + 1, wantC.end(), int64_t(10));
  ok &= exec::allEqual(chain, wantC, "exchange chain, sorted");
  return ok;
}

bool compareAndSwap(int64_t n) {
  std::vector<int32_t> x = exec::randomInts(n, -100000000, 100000000);
  int64_t k = std::uniform_int_distribution<int64_t>(1, 300)(exec::rng());
  exec::DeviceArray<int32_t> dx(x), m(std::vector<int32_t>{std::numeric_limits<int32_t>::min()});
  exec::DeviceArray<uint32_t> owner(std::vector<uint32_t>(k, 0xffffffffu));
  tessera_launch_options o = gridFor(n, 96);
  exec::check(atomics::cas_max(dx.view(TESSERA_I32, {n}), m.view(TESSERA_I32, {1}), owner.view(TESSERA_U32, {k}), &o),
              "cas_max");
  exec::check(tessera_synchronize(), "synchronize");
  bool ok = exec::allEqual(m.read(), std::vector<int32_t>{*std::max_element(x.begin(), x.end())}, "cas maximum");
  // Each slot s < min(k, n) is claimed by one tile t with t % k == s; the others stay free.
  std::vector<uint32_t> own = owner.read();
  size_t bad = 0;
  for (int64_t s = 0; s < k; ++s) {
    bool good =
        s < n ? own[s] != 0xffffffffu && int64_t(own[s]) < n && int64_t(own[s]) % k == s : own[s] == 0xffffffffu;
    if (!good && bad++ < 5) std::printf("  owner[%lld] = %u\n", static_cast<long long>(s), own[s]);
  }
  std::printf("cas claims: %lld slots, %zu wrong\n", static_cast<long long>(k), bad);
  return ok && bad == 0;
}

bool floatSums(int64_t n) {
  std::vector<float> x = exec::randomFloats(n, -4.0f, 4.0f);
  std::vector<double> y(n);
  for (int64_t i = 0; i < n; ++i) y[i] = static_cast<double>(x[i]) * 1.000001;
  exec::DeviceArray<float> dx(x), s(std::vector<float>{0.5f, 0.5f});
  exec::DeviceArray<double> dy(y), d(std::vector<double>{0.25});
  tessera_launch_options o = gridFor(n, 128);
  exec::check(atomics::float_sums(dx.view(TESSERA_F32, {n}), dy.view(TESSERA_F64, {n}), s.view(TESSERA_F32, {2}),
                                  d.view(TESSERA_F64, {1}), &o),
              "float_sums");
  exec::check(tessera_synchronize(), "synchronize");
  // Any order of n additions: |error| <= n * u * sum |x_i| (u the unit roundoff), plus the start.
  double sum = 0.5, abs = 0.5, sumD = 0.25, absD = 0.25;
  for (int64_t i = 0; i < n; ++i) sum += x[i], abs += std::fabs(x[i]), sumD += y[i], absD += std::fabs(y[i]);
  double bound = double(n + 1) * std::ldexp(1.0, -24) * abs;
  std::vector<float> got = s.read();
  std::vector<float> want = {static_cast<float>(sum), static_cast<float>(1.0 - sum)};
  bool ok = exec::allWithin(got, want, {bound, bound}, "f32 atomic sum and difference");
  double gotD = d.read()[0], boundD = double(n + 1) * std::ldexp(1.0, -53) * absD;
  bool okD = std::fabs(gotD - sumD) <= boundD;
  std::printf("f64 atomic sum: %.17g, expected %.17g (bound %.3g): %s\n", gotD, sumD, boundD, okD ? "ok" : "WRONG");
  return ok && okD;
}

}  // namespace

int main() {
  exec::requireDevice();
  bool ok = true;
  // Odd sizes: one tile, part of a group, many groups with a partial last one.
  std::uniform_int_distribution<int64_t> big(20000, 200000);
  for (int64_t n : {int64_t(1), int64_t(77), big(exec::rng()) | 1}) {
    std::printf("---- n = %lld\n", static_cast<long long>(n));
    ok &= histograms(n);
    ok &= integerReductions(n);
    ok &= ticketsAndExchanges(n);
    ok &= compareAndSwap(n);
    ok &= floatSums(n);
  }
  return exec::finish(ok);
}
