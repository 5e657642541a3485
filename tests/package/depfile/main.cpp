// Runs scaled (y = x * FACTOR) on 1000 elements and prints the factor it observed, so the test
// can tell which version of the imported module the build compiled in.
#include <cstdio>
#include <vector>

#include "scaled.h"

int main() {
  const int64_t n = 1000;
  std::vector<float> x(n), y(n, 0.0f);
  for (int64_t i = 0; i < n; ++i) x[i] = static_cast<float>(i + 1);
  void *dx = nullptr, *dy = nullptr;
  if (tessera_malloc(&dx, n * 4) || tessera_malloc(&dy, n * 4) || tessera_memcpy(dx, x.data(), n * 4)) return 1;
  tessera_tensor tx, ty;
  tessera_tensor_init(&tx, dx, TESSERA_F32, 1, &n, 0);
  tessera_tensor_init(&ty, dy, TESSERA_F32, 1, &n, 0);
  if (scaled::scaled(tx, ty) || tessera_synchronize() || tessera_memcpy(y.data(), dy, n * 4)) {
    std::printf("FAIL: %s\n", tessera_last_error_message());
    return 1;
  }
  float factor = y[0] / x[0];
  for (int64_t i = 0; i < n; ++i)
    if (y[i] != x[i] * factor) {
      std::printf("FAIL: y[%lld] = %g, expected %g\n", static_cast<long long>(i), y[i], x[i] * factor);
      return 1;
    }
  std::printf("factor %g\n", factor);
  return 0;
}
