// tile.group_sum/max/min/argmax/argmin (tests/exec/kernels/group_reduce.tessera) at group
// shapes of 256, 100, 32, 20 and 1024 tiles. The reference replays the kernel's order exactly
// (each tile folds its elements in order, then the pairwise tree over tiles), so every result
// is checked bit for bit; reduce_sum over a shared array must give the group_sum's bits, and a
// second launch the first one's. Some rows hold NaNs and repeated values (argmax/argmin: NaN
// wins, ties go to the smallest index).
#include "group_reduce.h"

#include <cmath>
#include <limits>

#include "ExecTest.h"

namespace {

struct Stats {
  float sum, hi, lo;
  int64_t argHi, argLo;
};

// (v, i) beats (w, j) for argmax (max = true) or argmin: NaN first, then the extreme value, then
// the smaller index.
bool beats(float v, int64_t i, float w, int64_t j, bool max) {
  bool vn = std::isnan(v), wn = std::isnan(w);
  if (vn != wn) return vn;
  if (!vn && v != w) return max ? v > w : v < w;
  return i < j;
}

template <class T, class F>
T tree(std::vector<T> a, F op) {
  for (size_t s = 1; s < a.size(); s *= 2)
    for (size_t i = 0; i + s < a.size(); i += 2 * s) a[i] = op(a[i], a[i + s]);
  return a[0];
}

Stats reference(const std::vector<float>& x, int64_t r, int64_t n, int64_t tiles) {
  std::vector<float> acc(tiles), hi(tiles), lo(tiles);
  std::vector<int64_t> ahi(tiles), alo(tiles);
  for (int64_t t = 0; t < tiles; ++t) {
    acc[t] = 0.0f, hi[t] = -3.0e38f, lo[t] = 3.0e38f, ahi[t] = alo[t] = -1;
    for (int64_t j = t; j < n; j += tiles) {
      float v = x[r * n + j];
      acc[t] += v;
      if (v > hi[t] || (std::isnan(v) && !std::isnan(hi[t]))) hi[t] = v, ahi[t] = j;
      if (v < lo[t] || (std::isnan(v) && !std::isnan(lo[t]))) lo[t] = v, alo[t] = j;
    }
  }
  using P = std::pair<float, int64_t>;
  auto pairs = [&](const std::vector<float>& v, const std::vector<int64_t>& i) {
    std::vector<P> p(tiles);
    for (int64_t t = 0; t < tiles; ++t) p[t] = {v[t], i[t]};
    return p;
  };
  Stats s;
  s.sum = tree(acc, [](float a, float b) { return a + b; });
  s.hi = tree(hi, [](float a, float b) { return std::fmax(a, b); });
  s.lo = tree(lo, [](float a, float b) { return std::fmin(a, b); });
  s.argHi =
      tree(pairs(hi, ahi), [](P a, P b) { return beats(b.first, b.second, a.first, a.second, true) ? b : a; }).second;
  s.argLo =
      tree(pairs(lo, alo), [](P a, P b) { return beats(b.first, b.second, a.first, a.second, false) ? b : a; }).second;
  return s;
}

using Kernel = tessera_status (*)(const tessera_launch_options*, const tessera_tensor*, const tessera_tensor*);

bool run(const char* name, Kernel k, int64_t tiles) {
  std::uniform_int_distribution<int64_t> rows(1, 40), cols(1, 3000);
  int64_t R = rows(exec::rng()), N = cols(exec::rng());
  std::printf("%s: R = %lld, N = %lld\n", name, static_cast<long long>(R), static_cast<long long>(N));
  std::vector<float> x = exec::randomFloats(R * N);
  // Row 0: repeated values (ties); row 1 (when there is one): NaNs at random places.
  for (int64_t j = 0; j < N; ++j) x[j] = static_cast<float>(j % 7) - 3.0f;
  if (R > 1)
    for (int64_t j = 0; j < N; j += 1 + static_cast<int64_t>(exec::rng()() % 97))
      x[N + j] = std::numeric_limits<float>::quiet_NaN();
  exec::DeviceArray<float> dx(x), dout(std::vector<float>(R * 6, -1.0f));
  tessera_tensor tx = dx.view(TESSERA_F32, {R, N}), tout = dout.view(TESSERA_F32, {R, 6});
  exec::check(k(nullptr, &tx, &tout), name);
  exec::check(tessera_synchronize(), "synchronize");
  std::vector<float> got = dout.read();
  std::vector<float> sums(R), want(R), maxes(R), wantMax(R), mins(R), wantMin(R), viaArray(R);
  std::vector<float> args(2 * R), wantArgs(2 * R);
  for (int64_t r = 0; r < R; ++r) {
    Stats s = reference(x, r, N, tiles);
    sums[r] = got[r * 6 + 0], want[r] = s.sum;
    maxes[r] = got[r * 6 + 1], wantMax[r] = s.hi;
    mins[r] = got[r * 6 + 2], wantMin[r] = s.lo;
    args[2 * r] = got[r * 6 + 3], wantArgs[2 * r] = static_cast<float>(s.argHi);
    args[2 * r + 1] = got[r * 6 + 4], wantArgs[2 * r + 1] = static_cast<float>(s.argLo);
    viaArray[r] = got[r * 6 + 5];
  }
  bool ok = exec::allEqual(sums, want, "group_sum");
  ok &= exec::allEqual(viaArray, sums, "reduce_sum of a shared array vs group_sum");
  ok &= exec::allEqual(maxes, wantMax, "group_max");
  ok &= exec::allEqual(mins, wantMin, "group_min");
  ok &= exec::allEqual(args, wantArgs, "group_argmax, group_argmin");
  exec::check(k(nullptr, &tx, &tout), name);
  exec::check(tessera_synchronize(), "synchronize");
  ok &= exec::allEqual(dout.read(), got, "second run");
  return ok;
}

}  // namespace

int main() {
  exec::requireDevice();
  bool ok = run("stats256", group_reduce_stats256, 256);
  ok &= run("stats100", group_reduce_stats100, 100);
  ok &= run("stats32", group_reduce_stats32, 32);
  ok &= run("stats20", group_reduce_stats20, 20);
  ok &= run("stats1024", group_reduce_stats1024, 1024);
  return exec::finish(ok);
}
