// A kernel fault on the GPU comes back from the next runtime call, and from every call after
// it (the CUDA context is lost). Runs last (doctest orders by file): nothing can use the GPU after.
#include <doctest/doctest.h>

#include "GpuTestUtil.h"

using namespace rttest;

TEST_CASE("gpu: a kernel fault is reported by the next runtime call, not a hang" * doctest::skip(gpuTestsSkipped())) {
  GpuKernels k;
  REQUIRE(k.m.status == TESSERA_SUCCESS);
  tessera::Buffer dy;
  REQUIRE(dy.allocate(32 * 4).ok());
  tessera_tensor yt = tessera::tensor(dy.as<float>(), {32});
  tessera_launch_options o{};
  o.grid[0] = 1;
  tessera_arg args[] = {tessera::arg(yt)};
  tessera_status launched = tessera_launch(k.fault, &o, args, 1);
  CHECK(launched == TESSERA_SUCCESS);  // asynchronous: the fault is not known yet
  tessera_status next = tessera_synchronize();
  CHECK(tessera_status_name(next) == std::string("TESSERA_ERROR_KERNEL_FAULT"));
  std::string msg = tessera_last_error_message();
  CHECK(msg.find("a kernel faulted on the GPU (CUDA_ERROR_ILLEGAL_ADDRESS") == 0);
  void* p = nullptr;
  CHECK(tessera_malloc(&p, 16) == TESSERA_ERROR_KERNEL_FAULT);
  CHECK(std::string(tessera_last_error_message()) == msg);
}
