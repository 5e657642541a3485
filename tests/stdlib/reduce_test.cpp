// stdlib.reduce: sum, max, min, argmax, argmin along the last axis, f32 and bf16, random odd
// sizes (rows of 1 to 5000 elements, so every chunk/tail case), one row of repeated values, one
// with NaNs, one of extremes (infinities, -3e38, signed zeros), and rows of only -inf (a masked
// row), only +inf and only NaN, whose max and min are -inf, +inf and NaN (issue 33: the fold's
// start, -3.4e38, came out as the maximum of a row of -inf). The reference replays the documented order (each
// tile's elements in order, then the pairwise tree over the 256 tiles), so every result is checked bit for bit; sums
// are also checked against float64. The same bits come back from a second launch, from an explicit grid of 3 groups
// (grid-stride rows), and (on the CPU executor) at 1 and 3 threads. A transposed view sums along the other axis.
#include "StdTest.h"

using namespace stdtest;

namespace {

struct Reference {
  std::vector<float> sum, hi, lo;
  std::vector<int64_t> argHi, argLo;
};

bool beats(float v, int64_t i, float w, int64_t j, bool greatest) {
  bool vn = std::isnan(v), wn = std::isnan(w);
  if (vn != wn) return vn;
  if (!vn && v != w) return greatest ? v > w : v < w;
  return i < j;
}

// x[r * rs + j * cs] for r < R, j < N: the row kernels' order, replayed.
Reference replay(const std::vector<float>& x, int64_t R, int64_t N, int64_t rs, int64_t cs, int64_t V) {
  Reference ref;
  using P = std::pair<float, int64_t>;
  for (int64_t r = 0; r < R; ++r) {
    std::vector<float> acc(256), hi(256), lo(256);
    std::vector<P> ah(256), al(256);
    for (int64_t t = 0; t < 256; ++t) {
      // max()/min() fold from NaN, which they ignore: NaN only where there is no other element.
      float s = 0.0f, h = NAN, l = NAN;
      P bh{-3.4028234663852886e38f, -1}, bl{3.4028234663852886e38f, -1};
      forTileElements(N, V, t, [&](int64_t j) {
        float v = x[r * rs + j * cs];
        s += v;
        h = std::fmax(h, v);
        l = std::fmin(l, v);
        bool nanWins;
        // row_arg: NaN over numbers, strictly better, or the first element seen.
        nanWins = std::isnan(v) ? !std::isnan(bh.first) : v > bh.first;
        if (nanWins || bh.second < 0) bh = {v, j};
        nanWins = std::isnan(v) ? !std::isnan(bl.first) : v < bl.first;
        if (nanWins || bl.second < 0) bl = {v, j};
      });
      acc[t] = s, hi[t] = h, lo[t] = l;
      // A tile without an element offers (the worst value, N), as row_arg does: any element beats
      // it or ties with it at a smaller index (-inf in a masked row included).
      ah[t] = bh.second < 0 ? P{-INFINITY, N} : P{bh.first, bh.second};
      al[t] = bl.second < 0 ? P{INFINITY, N} : P{bl.first, bl.second};
    }
    ref.sum.push_back(tree(acc, [](float a, float b) { return a + b; }));
    ref.hi.push_back(tree(hi, [](float a, float b) { return std::fmax(a, b); }));
    ref.lo.push_back(tree(lo, [](float a, float b) { return std::fmin(a, b); }));
    int64_t k = tree(ah, [](P a, P b) { return beats(b.first, b.second, a.first, a.second, true) ? b : a; }).second;
    ref.argHi.push_back(k >= N ? -1 : k);
    k = tree(al, [](P a, P b) { return beats(b.first, b.second, a.first, a.second, false) ? b : a; }).second;
    ref.argLo.push_back(k >= N ? -1 : k);
  }
  return ref;
}

std::vector<float> asFloats(const std::vector<int64_t>& v) { return std::vector<float>(v.begin(), v.end()); }

std::vector<float> readIndices(const exec::DeviceArray<int64_t>& d) { return asFloats(d.read()); }

using Kernel = tessera_status (*)(const tessera_launch_options*, const tessera_tensor*, const tessera_tensor*);

struct Entry {
  const char* name;
  Kernel k;
  int what;  // 0 sum, 1 max, 2 min, 3 argmax, 4 argmin
};

bool runDtype(DT dt) {
  int64_t R = randomIn(6, 40), N = randomIn(1, 5000);
  if (randomIn(0, 1)) N = (N / 8 + 1) * 8;  // whole chunks, aligned rows: the vector form
  std::printf("-- %s: R = %lld, N = %lld\n", name(dt), static_cast<long long>(R), static_cast<long long>(N));
  std::vector<float> v = exec::randomFloats(R * N, -2.0f, 2.0f);
  for (int64_t j = 0; j < N; ++j) v[j] = static_cast<float>(j % 7) - 3.0f;  // ties
  for (int64_t j = 0; j < N; j += randomIn(1, 40)) v[N + j] = std::numeric_limits<float>::quiet_NaN();
  // Extremes (argmax's one-pass form compares chunks' maxima and sums the elements to see NaN):
  // -inf, -3e38, signed zeros and, in half the runs, +inf (with -inf, a sum of NaN).
  const float inf = std::numeric_limits<float>::infinity(), extremes[] = {-inf, -inf, -3e38f, -0.0f, 0.0f, inf};
  int kinds = randomIn(0, 1) ? 6 : 5;
  for (int64_t j = 0; j < N; ++j) v[2 * N + j] = extremes[randomIn(0, kinds - 1)];
  for (int64_t j = 0; j < N; ++j) {
    v[3 * N + j] = -inf;
    v[4 * N + j] = inf;
    v[5 * N + j] = std::numeric_limits<float>::quiet_NaN();
  }
  Host x(dt, v);
  Dev dx(x);
  tessera_tensor tx = dx.view({R, N});
  Reference ref = replay(x.v, R, N, N, 1, vec(dt));

  bool f32 = dt == DT::F32;
  std::vector<Entry> entries = {{"sum", f32 ? tessera_std_reduce_sum_f32 : tessera_std_reduce_sum_bf16, 0},
                                {"max", f32 ? tessera_std_reduce_max_f32 : tessera_std_reduce_max_bf16, 1},
                                {"min", f32 ? tessera_std_reduce_min_f32 : tessera_std_reduce_min_bf16, 2},
                                {"argmax", f32 ? tessera_std_reduce_argmax_f32 : tessera_std_reduce_argmax_bf16, 3},
                                {"argmin", f32 ? tessera_std_reduce_argmin_f32 : tessera_std_reduce_argmin_bf16, 4}};
  bool ok = true;
  for (const Entry& e : entries) {
    std::string what = std::string(e.name) + "_" + name(dt);
    bool isArg = e.what >= 3;
    DT outDt = e.what == 0 ? DT::F32 : dt;
    Dev out(outDt, R);
    exec::DeviceArray<int64_t> idx(std::vector<int64_t>(R, -7));
    tessera_tensor to = isArg ? idx.view(TESSERA_I64, {R}) : out.view({R});
    auto launch = [&](const tessera_launch_options* opts) {
      exec::check(e.k(opts, &tx, &to), what.c_str());
      exec::check(tessera_synchronize(), "synchronize");
      return isArg ? readIndices(idx) : out.read();
    };
    std::vector<float> got = launch(nullptr);
    std::vector<float> want = e.what == 0   ? ref.sum
                              : e.what == 1 ? ref.hi
                              : e.what == 2 ? ref.lo
                              : e.what == 3 ? asFloats(ref.argHi)
                                            : asFloats(ref.argLo);
    for (float& w : want) w = isArg ? w : round(outDt, w + 0.0f);  // max/min: a zero is +0
    ok &= same(got, want, what + " (replayed order)");
    if (e.what == 0) {
      std::vector<double> exact(R), bound(R);
      for (int64_t r = 6; r < R; ++r) {  // rows 0-5: ties, NaN, extremes (the replay checks them)
        double s = 0, a = 0;
        for (int64_t j = 0; j < N; ++j) s += x.v[r * N + j], a += std::fabs(x.v[r * N + j]);
        exact[r] = s, bound[r] = 300 * 0x1p-24 * a;  // |error| <= (elements per tile + 8 levels) eps sum|x|
      }
      std::vector<float> rows(got.begin() + 6, got.end());
      ok &= within(rows, std::vector<double>(exact.begin() + 6, exact.end()),
                   std::vector<double>(bound.begin() + 6, bound.end()), what + " against float64");
    }
    ok &= same(launch(nullptr), got, what + " on a second launch");
    tessera_launch_options grid = {};
    grid.grid[0] = 3, grid.grid[1] = 1, grid.grid[2] = 1;
    ok &= same(launch(&grid), got, what + " on 3 groups");
    tessera_device_kind kind;
    if (tessera_get_device_kind(&kind) == TESSERA_SUCCESS && kind == TESSERA_DEVICE_CPU) {
      tessera_cpu_set_threads(1);
      ok &= same(launch(nullptr), got, what + " on 1 CPU thread");
      tessera_cpu_set_threads(3);
      ok &= same(launch(nullptr), got, what + " on 3 CPU threads");
      tessera_cpu_set_threads(0);
    }
  }
  // Along the other axis: the transposed view [N, R] with strides (1, N).
  Dev out(DT::F32, N);
  tessera_tensor tt = tx;
  tt.shape[0] = N, tt.shape[1] = R, tt.strides[0] = 1, tt.strides[1] = N;
  tessera_tensor to = out.view({N});
  exec::check((f32 ? tessera_std_reduce_sum_f32 : tessera_std_reduce_sum_bf16)(nullptr, &tt, &to), "sum of columns");
  exec::check(tessera_synchronize(), "synchronize");
  ok &= same(out.read(), replay(x.v, N, R, 1, N, vec(dt)).sum,
             std::string("sum_") + name(dt) + " along axis 0 (strided view)");
  return ok;
}

}  // namespace

int main() {
  exec::requireDevice();
  bool ok = runDtype(DT::F32);
  ok &= runDtype(DT::BF16);
  return exec::finish(ok);
}
