// examples/axpy_tiled: the double-buffered f16 axpy of spec ch. 4 (updated), checked bit for bit
// (HalfAxpyTest.h).
#include "axpy_tiled.h"

#include "HalfAxpyTest.h"

int main() {
  return exec::runHalfAxpy("axpy_tiled", [](auto x, auto y, uint16_t alpha, const tessera_launch_options* opts) {
    return axpy_tiled::axpy_tiled(x, y, alpha, opts);
  });
}
