// range(start, stop, step) with the step's sign known only at run time, positive, negative,
// empty and zero-step cases: counts and sums of the visited values match Python's range. Then
// constant negative steps, and a loop that never runs whose invariant load is out of range.
#include "range_steps.h"

#include "ExecTest.h"

int main() {
  exec::requireDevice();
  int cases[][3] = {{0, 10, 1}, {0, 10, 3}, {10, 0, -1}, {10, 0, -3}, {0, 10, -1},  {10, 0, 2},
                    {5, 5, 1},  {-7, 7, 4}, {7, -7, -4}, {0, 10, 0},  {3, 1000, 7}, {1000, 3, -7}};
  bool ok = true;
  for (auto& c : cases) {
    std::vector<int32_t> init(64, -1);
    exec::DeviceArray<int32_t> out(init);
    exec::check(range_steps::count_steps(out.view(TESSERA_I32, {64}), c[0], c[1], c[2]), "count_steps");
    exec::check(tessera_synchronize(), "synchronize");
    int cnt = 0, sum = 0;
    if (c[2] > 0)
      for (int k = c[0]; k < c[1]; k += c[2]) cnt++, sum += k;
    if (c[2] < 0)
      for (int k = c[0]; k > c[1]; k += c[2]) cnt++, sum += k;
    std::vector<int32_t> want(64, cnt * 1000000 + sum);
    std::printf("range(%d, %d, %d): ", c[0], c[1], c[2]);
    ok &= exec::allEqual(out.read(), want, "out");
  }
  {
    exec::DeviceArray<int32_t> out(std::vector<int32_t>(4, -1));
    exec::check(range_steps::count_down(out.view(TESSERA_I32, {4})), "count_down");
    exec::check(tessera_synchronize(), "synchronize");
    // range(7, -1, -2): 7 5 3 1; range(-1, 3, -2): none; range(10, 0, -3): 10 7 4 1; range(3, 3, -1): none.
    std::printf("constant negative steps: ");
    ok &= exec::allEqual(out.read(), std::vector<int32_t>{4 * 1000000 + 16, 0, 4 * 1000000 + 22, 0}, "count_down");
  }
  {
    exec::DeviceArray<float> x(std::vector<float>{1.0f, 2.0f}), out(std::vector<float>{-1.0f});
    exec::check(range_steps::never_runs(x.view(TESSERA_F32, {2}), out.view(TESSERA_F32, {1}), -1), "never_runs");
    exec::check(tessera_synchronize(), "synchronize");
    std::printf("a loop that never runs: ");
    ok &= exec::allEqual(out.read(), std::vector<float>{0.0f}, "never_runs");
  }
  return exec::finish(ok);
}
