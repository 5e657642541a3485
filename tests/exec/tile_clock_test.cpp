// tile.clock() (docs/language.md, "Timing inside a kernel"): for every tile of a launch of odd
// size, the 9 readings taken around 8 rounds of work never decrease, and the last is above the
// first (the rounds take time on both devices: SM cycles of %clock64 on the GPU, steady-clock
// nanoseconds on the CPU executor). The work's result is checked too, so that it is not dropped.
#include "tile_clock.h"

#include "ExecTest.h"

int main() {
  exec::requireDevice();
  std::uniform_int_distribution<int64_t> sizeD(1, 3000);
  int64_t n = sizeD(exec::rng());
  int32_t reps = 200;
  std::vector<float> x = exec::randomFloats(n, -4.0f, 4.0f);
  tessera_launch_options opts{};
  opts.grid[0] = static_cast<uint32_t>((n + 63) / 64);
  opts.grid[1] = opts.grid[2] = 1;
  exec::DeviceArray<float> dx(x);
  exec::DeviceArray<float> dy(std::vector<float>(n, -7.0f));
  exec::DeviceArray<int64_t> dt(std::vector<int64_t>(n * 9, -1));
  exec::check(tile_clock::clocks(dx.view(TESSERA_F32, {n}), dy.view(TESSERA_F32, {n}), dt.view(TESSERA_I64, {n, 9}),
                                 reps, &opts),
              "clocks");
  exec::check(tessera_synchronize(), "synchronize");
  std::vector<float> y = dy.read();
  std::vector<int64_t> t = dt.read();
  // acc -> acc / 2 + 1 is exact in f32 for these inputs at every step (halving and adding 1 to
  // a value in (-4, 4) with few bits), with or without a fused multiply-add.
  std::vector<float> want(n);
  for (int64_t i = 0; i < n; ++i) {
    float acc = x[i];
    for (int r = 0; r < 8 * reps; ++r) acc = acc * 0.5f + 1.0f;
    want[i] = acc;
  }
  bool ok = exec::allClose(y, want, 1e-6, 1e-6, "y");
  int64_t bad = 0, flat = 0;
  for (int64_t i = 0; i < n; ++i) {
    for (int k = 0; k < 8; ++k)
      if (t[i * 9 + k + 1] < t[i * 9 + k]) {
        if (bad++ < 5)
          std::printf("tile %lld: reading %d (%lld) is below reading %d (%lld)\n", static_cast<long long>(i), k + 1,
                      static_cast<long long>(t[i * 9 + k + 1]), k, static_cast<long long>(t[i * 9 + k]));
      }
    if (t[i * 9 + 8] <= t[i * 9]) {
      if (flat++ < 5)
        std::printf("tile %lld: no time passed over the work (%lld to %lld)\n", static_cast<long long>(i),
                    static_cast<long long>(t[i * 9]), static_cast<long long>(t[i * 9 + 8]));
    }
  }
  std::printf("clock readings of %lld tiles: %lld decreasing, %lld without time passing\n", static_cast<long long>(n),
              static_cast<long long>(bad), static_cast<long long>(flat));
  ok &= bad == 0 && flat == 0;
  return exec::finish(ok);
}
