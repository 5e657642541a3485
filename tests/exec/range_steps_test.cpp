// range(start, stop, step) with the step's sign known only at run time, positive, negative,
// empty and zero-step cases: counts and sums of the visited values match Python's range.
#include "ExecTest.h"
#include "range_steps.h"

int main() {
  exec::requireDevice();
  int cases[][3] = {{0, 10, 1}, {0, 10, 3}, {10, 0, -1}, {10, 0, -3}, {0, 10, -1}, {10, 0, 2},
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
  return exec::finish(ok);
}
