// examples/coop_example: groups of 64 tiles synchronise as a cooperative group, then each tile
// increments its element: every element goes up by exactly one.
#include "coop_example.h"

#include "ExecTest.h"

int main() {
  exec::requireDevice();
  std::uniform_int_distribution<int64_t> size(1, 200000);
  int64_t n = size(exec::rng());
  std::vector<int32_t> x = exec::randomInts(n, -1000000, 1000000), want(n);
  for (int64_t i = 0; i < n; ++i) want[i] = x[i] + 1;
  exec::DeviceArray<int32_t> dx(x);
  tessera_launch_options opts{};
  opts.grid[0] = static_cast<uint32_t>((n + 63) / 64);
  opts.grid[1] = opts.grid[2] = 1;
  exec::check(coop_example::coop_example(dx.view(TESSERA_I32, {n}), &opts), "coop_example");
  exec::check(tessera_synchronize(), "synchronize");
  return exec::finish(exec::allEqual(dx.read(), want, "X"));
}
