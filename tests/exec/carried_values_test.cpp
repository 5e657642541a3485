// kernels/carried_values: a tensor view carried through a loop (0, 1 and 5 trips) or an if that
// assigns it a computed tile, and an unsized shared buffer copied into on one path, every
// element against the reference on fresh random inputs.
#include "carried_values.h"

#include "ExecTest.h"

int main() {
  exec::requireDevice();
  const int64_t n = 128;
  std::vector<float> x = exec::randomFloats(n, -4.0f, 4.0f);
  bool ok = true;
  exec::DeviceArray<float> dx(x);
  tessera_launch_options one{};  // one group: the kernels address the first 128 elements
  one.grid[0] = one.grid[1] = one.grid[2] = 1;
  for (int trips : {0, 1, 5}) {
    exec::DeviceArray<float> dy(std::vector<float>(n, 0.0f));
    exec::check(carried_values::loop_view(dx.view(TESSERA_F32, {n}), dy.view(TESSERA_F32, {n}), trips, &one),
                "loop_view");
    exec::check(tessera_synchronize(), "synchronize");
    std::vector<float> want(n);
    for (int64_t i = 0; i < n; ++i) {
      float v = x[i];
      for (int j = 0; j < trips; ++j) v = v + 1.0f;
      want[i] = v;
    }
    std::printf("loop_view, %d trips: ", trips);
    ok &= exec::allEqual(dy.read(), want, "loop_view");
  }
  for (float s : {-1.0f, 0.75f}) {
    exec::DeviceArray<float> dy(std::vector<float>(n, 0.0f));
    exec::check(carried_values::if_view(dx.view(TESSERA_F32, {n}), dy.view(TESSERA_F32, {n}), s, &one), "if_view");
    exec::check(tessera_synchronize(), "synchronize");
    std::vector<float> want(n);
    for (int64_t i = 0; i < n; ++i) want[i] = s > 0.0f ? x[i] * s : x[i];
    std::printf("if_view, s = %g: ", s);
    ok &= exec::allEqual(dy.read(), want, "if_view");
  }
  for (int flag : {0, 1}) {
    exec::DeviceArray<float> dy(std::vector<float>(n, 0.0f));
    exec::check(carried_values::one_path_copy(dx.view(TESSERA_F32, {n}), dy.view(TESSERA_F32, {n}), flag, &one),
                "one_path_copy");
    exec::check(tessera_synchronize(), "synchronize");
    std::vector<float> want(n);
    for (int64_t i = 0; i < n; ++i) want[i] = flag > 0 ? x[i] * 2.0f : -1.0f;
    std::printf("one_path_copy, flag = %d: ", flag);
    ok &= exec::allEqual(dy.read(), want, "one_path_copy");
  }
  return exec::finish(ok);
}
