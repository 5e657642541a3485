// exec masked_rows: tile.max and tile.softmax along rows of 64 where some rows are masked
// whole (every element -inf), some in part and the rest not, on fresh random inputs: the
// maximum is exact (-inf for a masked row), the softmax within a few ulps of float64's, 0 for a
// masked row (was NaN: 0 / 0, issue 33).
#include "masked_rows.h"

#include <cmath>

#include "ExecTest.h"

int main() {
  exec::requireDevice();
  bool ok = true;
  for (int round = 0; round < 3; ++round) {
    int64_t R = std::uniform_int_distribution<int64_t>(1, 70)(exec::rng());
    std::vector<float> x = exec::randomFloats(R * 64, -8.0f, 8.0f);
    for (int64_t r = 0; r < R; ++r) {
      int kind = std::uniform_int_distribution<int>(0, 2)(exec::rng());  // 0 whole, 1 in part, 2 not
      for (int64_t c = 0; c < 64; ++c)
        if (kind == 0 || (kind == 1 && std::uniform_int_distribution<int>(0, 1)(exec::rng())))
          x[r * 64 + c] = -INFINITY;
    }
    exec::DeviceArray<float> dx(x), dm(std::vector<float>(R, -7.0f)), dy(std::vector<float>(R * 64, -7.0f));
    exec::check(
        masked_rows::row_stats(dx.view(TESSERA_F32, {R, 64}), dm.view(TESSERA_F32, {R}), dy.view(TESSERA_F32, {R, 64})),
        "row_stats");
    exec::check(tessera_synchronize(), "synchronize");
    std::vector<float> m = dm.read(), y = dy.read(), wm(R);
    size_t bad = 0;
    for (int64_t r = 0; r < R; ++r) {
      double mx = -INFINITY, s = 0;
      for (int64_t c = 0; c < 64; ++c) mx = std::max(mx, double(x[r * 64 + c]));
      wm[r] = float(mx);
      for (int64_t c = 0; c < 64; ++c) s += std::exp(x[r * 64 + c] - mx);
      for (int64_t c = 0; c < 64; ++c) {
        double want = mx == -INFINITY ? 0.0 : std::exp(x[r * 64 + c] - mx) / s, got = y[r * 64 + c];
        // exp within 2 ulps (libdevice / libm), 64 additions and the division.
        if (!(std::fabs(got - want) <= 80 * 0x1p-24 * want) && bad++ < 5)
          std::printf("  softmax[%lld, %lld] = %.9g, expected %.9g\n", static_cast<long long>(r),
                      static_cast<long long>(c), got, want);
      }
    }
    std::printf("R = %lld: softmax %zu elements outside the bound\n", static_cast<long long>(R), bad);
    ok &= bad == 0;
    ok &= exec::allEqual(m, wm, "tile.max along rows");
  }
  return exec::finish(ok);
}
