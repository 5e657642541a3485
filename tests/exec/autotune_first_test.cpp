// kernels/autotune_first: the group shape in the descriptor is the first candidate (32), and the
// body reverses blocks of exactly that many elements: every element checked.
#include "autotune_first.h"

#include "ExecTest.h"

int main() {
  exec::requireDevice();
  const tessera_kernel_desc* k = nullptr;
  exec::check(tessera_find_kernel("autotune_first", "reverse_blocks", &k), "find kernel");
  uint32_t B = k->group_shape[0];
  std::printf("group shape %u (candidates 32, 64: the first is compiled)\n", B);
  std::uniform_int_distribution<int64_t> blocks(1, 300);
  int64_t n = blocks(exec::rng()) * 32;  // whole blocks of the first candidate
  std::vector<float> x = exec::randomFloats(n), y(n, 0.0f), want(n);
  for (int64_t j = 0; j < n; ++j) want[j] = x[j / B * B + (B - 1 - j % B)];
  exec::DeviceArray<float> dx(x), dy(y);
  tessera_launch_options o{};
  o.grid[0] = static_cast<uint32_t>((n + B - 1) / B);
  exec::check(autotune_first::reverse_blocks(dx.view(TESSERA_F32, {n}), dy.view(TESSERA_F32, {n}), &o), "launch");
  exec::check(tessera_synchronize(), "synchronize");
  bool ok = B == 32;
  ok &= exec::allEqual(dy.read(), want, "y");
  return exec::finish(ok);
}
