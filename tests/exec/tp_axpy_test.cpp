// examples/tp_axpy: spec block 28 (the tensor-parallel axpy) on one GPU, checked bit for bit
// (HalfAxpyTest.h).
#include "tp_axpy.h"

#include "HalfAxpyTest.h"

int main() {
  return exec::runHalfAxpy("tp_axpy", [](auto x, auto y, uint16_t alpha, const tessera_launch_options* opts) {
    return tp_axpy::tp_axpy(x, y, alpha, opts);
  });
}
