// The CPU executor against a plain C++ loop (-O3) over the same data: saxpy on 2^24 f32
// elements. Reports the median of 15 runs after 2 warm-ups for the loop (one thread) and for the
// executor with 1 thread and with every core; issue 6's bar is the executor within 3x of the loop.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <tessera/runtime.h>
#include <thread>
#include <vector>

#include "BenchUtil.h"
#include "saxpy.h"

namespace {
using bench::check;
double medianMs(const std::function<void()>& run) { return bench::medianWallMs(run, 2, 15); }

__attribute__((noinline)) void plainSaxpy(const float* x, float* y, float a, int64_t n) {
  for (int64_t i = 0; i < n; ++i) y[i] = a * x[i] + y[i];
}
}  // namespace

int main(int argc, char** argv) {
  setenv("TESSERA_DEVICE", "cpu", 1);
  int64_t n = argc > 1 ? std::atoll(argv[1]) : (int64_t(1) << 24);
  check(tessera_init(), "init");
  std::vector<float> x(n), y(n);
  for (int64_t i = 0; i < n; ++i) {
    x[i] = static_cast<float>(i % 1000) / 1000.0f;
    y[i] = static_cast<float>(i % 777) / 777.0f;
  }
  tessera_tensor tx, ty;
  tessera_tensor_init(&tx, x.data(), TESSERA_F32, 1, &n, 0);
  tessera_tensor_init(&ty, y.data(), TESSERA_F32, 1, &n, 0);
  double loop = medianMs([&] { plainSaxpy(x.data(), y.data(), 1.0001f, n); });
  check(tessera_cpu_set_threads(1), "threads");
  double one = medianMs([&] { check(saxpy::saxpy(tx, ty, 1.0001f), "saxpy"); });
  check(tessera_cpu_set_threads(0), "threads");
  unsigned all = tessera_cpu_threads();
  double many = medianMs([&] { check(saxpy::saxpy(tx, ty, 1.0001f), "saxpy"); });
  std::printf("saxpy, %lld f32 elements (%u hardware threads)\n", (long long)n, std::thread::hardware_concurrency());
  std::printf("%-34s %9s %9s\n", "version", "ms", "vs loop");
  std::printf("%-34s %9.3f %9.2f\n", "plain C++ loop, -O3, 1 thread", loop, 1.0);
  std::printf("%-34s %9.3f %9.2f\n", "CPU executor, 1 thread", one, one / loop);
  std::printf("%-34s %9.3f %9.2f\n", ("CPU executor, " + std::to_string(all) + " threads").c_str(), many, many / loop);
  return 0;
}
