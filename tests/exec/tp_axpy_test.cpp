// examples/tp_axpy (spec block 28 on one GPU): Y += alpha*X in f16 storage with f32 arithmetic,
// through double-buffered shared memory. The reference rounds the same way (f32 math, one round to f16): bit for bit.
#include "ExecTest.h"
#include "tp_axpy.h"

int main() {
  exec::requireDevice();
  std::uniform_int_distribution<int64_t> chunks(1, 2000);
  int64_t m = 128 * chunks(exec::rng());
  std::vector<float> xf = exec::randomFloats(m), yf = exec::randomFloats(m);
  std::vector<uint16_t> x(m), y(m), want(m);
  for (int64_t i = 0; i < m; ++i) {
    x[i] = exec::toHalf(xf[i]);
    y[i] = exec::toHalf(yf[i]);
  }
  uint16_t alpha = exec::toHalf(exec::randomFloats(1, -2, 2)[0]);
  for (int64_t i = 0; i < m; ++i)
    want[i] = exec::toHalf(exec::fromHalf(alpha) * exec::fromHalf(x[i]) + exec::fromHalf(y[i]));
  exec::DeviceArray<uint16_t> dx(x), dy(y);
  tessera_launch_options opts{};
  opts.grid[0] = opts.grid[1] = opts.grid[2] = 1;  // every group walks the whole of X
  exec::check(tp_axpy::tp_axpy(dx.view(TESSERA_F16, {m}), dy.view(TESSERA_F16, {m}), alpha, &opts),
              "tp_axpy");
  exec::check(tessera_synchronize(), "synchronize");
  return exec::finish(exec::allEqual(dy.read(), want, "Y"));
}
