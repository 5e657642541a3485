// examples/saxpy_launch: Out = a*X + Y with an explicit grid of ceil(N/256) groups of 256
// tiles, as the spec's launch.grid(blocks=..., threads=...) does.
#include "saxpy_launch.h"

#include "ExecTest.h"

int main() {
  exec::requireDevice();
  std::uniform_int_distribution<int64_t> size(1, 300000);
  int64_t n = size(exec::rng());
  std::vector<float> x = exec::randomFloats(n), y = exec::randomFloats(n), out(n, -7.0f);
  float a = exec::randomFloats(1, -4, 4)[0];
  std::vector<float> want(n);
  for (int64_t i = 0; i < n; ++i) want[i] = a * x[i] + y[i];
  exec::DeviceArray<float> dx(x), dy(y), dout(out);
  tessera_launch_options opts{};
  opts.grid[0] = static_cast<uint32_t>((n + 255) / 256);
  opts.grid[1] = opts.grid[2] = 1;
  opts.group[0] = 256;
  opts.group[1] = opts.group[2] = 1;
  exec::check(
      saxpy_launch::saxpy(a, dx.view(TESSERA_F32, {n}), dy.view(TESSERA_F32, {n}), dout.view(TESSERA_F32, {n}), &opts),
      "saxpy");
  exec::check(tessera_synchronize(), "synchronize");
  return exec::finish(exec::allEqual(dout.read(), want, "Out"));
}
