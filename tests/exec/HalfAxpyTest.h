// The check shared by the two double-buffered f16 axpy examples (axpy_tiled, tp_axpy): Y +=
// alpha*X in f16 storage with f32 arithmetic over m = 128 * k elements, launched as one group
// that walks the whole of X. The reference rounds the same way (f32 math, one round to f16), so
// the results match bit for bit.
#pragma once

#include "ExecTest.h"

namespace exec {

// launch(x, y, alpha, opts) runs the kernel and returns its status.
template <class Launch>
int runHalfAxpy(const char* name, Launch launch) {
  requireDevice();
  std::uniform_int_distribution<int64_t> chunks(1, 2000);
  int64_t m = 128 * chunks(rng());
  std::vector<float> xf = randomFloats(m), yf = randomFloats(m);
  std::vector<uint16_t> x(m), y(m), want(m);
  for (int64_t i = 0; i < m; ++i) {
    x[i] = toHalf(xf[i]);
    y[i] = toHalf(yf[i]);
  }
  uint16_t alpha = toHalf(randomFloats(1, -2, 2)[0]);
  for (int64_t i = 0; i < m; ++i) want[i] = toHalf(fromHalf(alpha) * fromHalf(x[i]) + fromHalf(y[i]));
  DeviceArray<uint16_t> dx(x), dy(y);
  tessera_launch_options opts{};
  opts.grid[0] = opts.grid[1] = opts.grid[2] = 1;
  check(launch(dx.view(TESSERA_F16, {m}), dy.view(TESSERA_F16, {m}), alpha, &opts), name);
  check(tessera_synchronize(), "synchronize");
  return finish(allEqual(dy.read(), want, "Y"));
}

}  // namespace exec
