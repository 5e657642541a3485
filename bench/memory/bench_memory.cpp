// Memory-bound kernels against the device's own copy bandwidth, measured in the same run:
// device-to-device copy (bytes read + written), saxpy (read x, read y, write y) and group_sum
// (read x). Each figure is the median of 20 timed runs after 3 warm-ups, timed with events.
// Prints a table with the ratio of each kernel to the copy.
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <string>
#include <tessera/runtime.h>
#include <vector>

#include "BenchUtil.h"
#include "group_sum.h"
#include "saxpy.h"

namespace {

using bench::check;
double medianMs(const std::function<void()>& run) { return bench::medianEventMs(run, 3, 20); }

}  // namespace

int main(int argc, char** argv) {
  int64_t n = argc > 1 ? std::atoll(argv[1]) : (int64_t(1) << 28);  // 1 GiB of f32 per array
  check(tessera_init(), "init");
  std::printf("device: %s\nelements: %lld (%.2f GiB per array)\n", tessera_device_name(), (long long)n,
              n * 4.0 / (1 << 30));
  void *x, *y, *z, *out;
  size_t bytes = static_cast<size_t>(n) * 4;
  check(tessera_malloc(&x, bytes), "malloc");
  check(tessera_malloc(&y, bytes), "malloc");
  check(tessera_malloc(&z, bytes), "malloc");
  // Random-ish contents, not zeros (zeros can be faster than real data).
  std::vector<float> host(1 << 20);
  for (size_t i = 0; i < host.size(); ++i) host[i] = static_cast<float>((i * 2654435761u) % 1000) / 1000.0f;
  for (size_t off = 0; off < bytes; off += host.size() * 4) {
    size_t chunk = std::min(host.size() * 4, bytes - off);
    check(tessera_memcpy(static_cast<char*>(x) + off, host.data(), chunk), "fill x");
    check(tessera_memcpy(static_cast<char*>(y) + off, host.data(), chunk), "fill y");
  }
  int64_t groups = 132 * 64;
  check(tessera_malloc(&out, groups * 4), "malloc");
  tessera_tensor tx, ty;
  tessera_tensor_init(&tx, x, TESSERA_F32, 1, &n, 0);
  tessera_tensor_init(&ty, y, TESSERA_F32, 1, &n, 0);

  double copyMs = medianMs([&] { check(tessera_memcpy_async(z, x, bytes, nullptr), "copy"); });
  double copyGBs = 2.0 * bytes / copyMs / 1e6;
  std::printf("\n%-40s %10s %10s %8s\n", "kernel", "ms", "GB/s", "vs copy");
  std::printf("%-40s %10.3f %10.1f %8s\n", "device copy (read+write)", copyMs, copyGBs, "1.00");
  auto row = [&](const std::string& name, double ms, double moved) {
    double gbs = moved / ms / 1e6;
    std::printf("%-40s %10.3f %10.1f %8.2f\n", name.c_str(), ms, gbs, gbs / copyGBs);
  };
  // saxpy with the runtime's default launch, then with explicit hardware group sizes.
  row("saxpy, default launch", medianMs([&] { check(saxpy::saxpy(tx, ty, 1.0001f), "saxpy"); }), 3.0 * bytes);
  // Views one element past 16-byte alignment: the GPU code takes its scalar form (tiles under
  // guards, coalesced) instead of 16-byte vector accesses.
  {
    int64_t m = n - 4;
    tessera_tensor ux, uy;
    tessera_tensor_init(&ux, static_cast<float*>(x) + 1, TESSERA_F32, 1, &m, 0);
    tessera_tensor_init(&uy, static_cast<float*>(y) + 1, TESSERA_F32, 1, &m, 0);
    row("saxpy, views not 16-byte aligned", medianMs([&] { check(saxpy::saxpy(ux, uy, 1.0001f), "saxpy"); }),
        3.0 * 4 * m);
  }
  for (uint32_t g : {128u, 512u, 1024u}) {
    tessera_launch_options o{};
    o.group[0] = g;
    o.group[1] = o.group[2] = 1;
    o.grid[0] = static_cast<uint32_t>((n + g - 1) / g);
    o.grid[1] = o.grid[2] = 1;
    row("saxpy, groups of " + std::to_string(g), medianMs([&] { check(saxpy::saxpy(tx, ty, 1.0001f, &o), "saxpy"); }),
        3.0 * bytes);
  }
  // group_sum: the number of groups is the length of `out`.
  for (int64_t perSM : {16, 32, 64}) {
    int64_t g = 132 * perSM;
    tessera_tensor t;
    tessera_tensor_init(&t, out, TESSERA_F32, 1, &g, 0);
    row("group_sum, " + std::to_string(g) + " groups",
        medianMs([&] { check(group_sum::group_sum(tx, t), "group_sum"); }), 1.0 * bytes);
  }
  return 0;
}
