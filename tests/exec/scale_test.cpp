// examples/scale: y = alpha*x; every element bit for bit.
#include "scale.h"

#include "ExecTest.h"

int main() {
  exec::requireDevice();
  std::uniform_int_distribution<int64_t> size(1, 300000);
  int64_t n = size(exec::rng());
  std::vector<float> x = exec::randomFloats(n), y = exec::randomFloats(n);
  float alpha = exec::randomFloats(1, -4, 4)[0];
  std::vector<float> want(n);
  for (int64_t i = 0; i < n; ++i) want[i] = alpha * x[i];
  exec::DeviceArray<float> dx(x), dy(y);
  exec::check(scale::scale(dx.view(TESSERA_F32, {n}), dy.view(TESSERA_F32, {n}), alpha), "scale");
  exec::check(tessera_synchronize(), "synchronize");
  return exec::finish(exec::allEqual(dy.read(), want, "y"));
}
