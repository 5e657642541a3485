// examples/warp_reduce_sum: each warp's 32 elements summed by shuffles (offsets 16, 8, 4, 2, 1),
// elements past n counting as zero. The reference adds in the same tree order: bit for bit.
#include "warp_reduce_sum.h"

#include "ExecTest.h"

int main() {
  exec::requireDevice();
  std::uniform_int_distribution<int64_t> size(1, 500000);
  int64_t n = size(exec::rng());
  int64_t groups = (n + 255) / 256, warps = groups * 8;
  std::vector<float> x = exec::randomFloats(n);
  std::vector<float> want(warps);
  for (int64_t w = 0; w < warps; ++w) {
    float v[32];
    for (int l = 0; l < 32; ++l) v[l] = w * 32 + l < n ? x[w * 32 + l] : 0.0f;
    for (int off = 16; off >= 1; off /= 2)
      for (int l = 0; l < 32; ++l) v[l] = v[l] + (l + off < 32 ? v[l + off] : v[l]);
    want[w] = v[0];
  }
  exec::DeviceArray<float> dx(x), dout(std::vector<float>(warps, -1.0f));
  tessera_launch_options opts{};
  opts.grid[0] = static_cast<uint32_t>(groups);
  opts.grid[1] = opts.grid[2] = 1;
  exec::check(warp_reduce_sum::warp_reduce_sum(dx.view(TESSERA_F32, {n}), dout.view(TESSERA_F32, {warps}), &opts),
              "warp_reduce_sum");
  exec::check(tessera_synchronize(), "synchronize");
  return exec::finish(exec::allEqual(dout.read(), want, "Out"));
}
