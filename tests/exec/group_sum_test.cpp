// examples/group_sum: grid-stride partial sums per tile, then tile 0 sums the group's shared
// array in a fixed tree order. The reference follows the same order, so results match bit for
// bit; the launch size comes from `out` (grid_groups), and a second run gives the same bits.
#include "group_sum.h"

#include "ExecTest.h"

int main() {
  exec::requireDevice();
  std::uniform_int_distribution<int64_t> size(1, 1000000), groups(1, 300);
  int64_t n = size(exec::rng()), G = groups(exec::rng());
  std::vector<float> x = exec::randomFloats(n);
  std::vector<float> want(G);
  for (int64_t g = 0; g < G; ++g) {
    float acc[128];
    for (int64_t i = 0; i < 128; ++i) {
      acc[i] = 0.0f;
      for (int64_t k = g * 128 + i; k < n; k += G * 128) acc[i] += x[k];
    }
    for (int s = 1; s < 128; s *= 2)
      for (int i = 0; i + s < 128; i += 2 * s) acc[i] += acc[i + s];
    want[g] = acc[0];
  }
  exec::DeviceArray<float> dx(x), dout(std::vector<float>(G, -1.0f));
  exec::check(group_sum::group_sum(dx.view(TESSERA_F32, {n}), dout.view(TESSERA_F32, {G})), "group_sum");
  exec::check(tessera_synchronize(), "synchronize");
  std::vector<float> first = dout.read();
  bool ok = exec::allEqual(first, want, "out");
  exec::check(group_sum::group_sum(dx.view(TESSERA_F32, {n}), dout.view(TESSERA_F32, {G})), "group_sum again");
  exec::check(tessera_synchronize(), "synchronize");
  ok &= exec::allEqual(dout.read(), first, "out on a second run");
  return exec::finish(ok);
}
