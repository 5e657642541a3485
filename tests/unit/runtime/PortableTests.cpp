// One host program, unchanged, on whichever device is active: a module with both a GPU entry
// (from the test fatbin) and a CPU entry, driven only through the public API. It runs on the
// CPU executor here and under TESSERA_DEVICE=cpu, and on the GPU where there is one.
#include <cmath>
#include <doctest/doctest.h>

#include "GpuTestUtil.h"

using namespace rttest;

namespace {
void saxpyCpu(void** args, const tessera_cpu_ctx* ctx) {
  float alpha = *static_cast<float*>(args[0]);
  auto *x = static_cast<tessera_kernel_tensor*>(args[1]), *y = static_cast<tessera_kernel_tensor*>(args[2]);
  uint64_t i = ctx->global_linear;
  float* yp = static_cast<float*>(y->data);
  yp[i * y->strides[0]] = alpha * static_cast<float*>(x->data)[i * x->strides[0]] + yp[i * y->strides[0]];
}

bool cannotRunHere() { return activeDeviceIsGpu() && testFatbin().empty(); }
}  // namespace

TEST_CASE("portable: the same host code runs on the active device" * doctest::skip(cannotRunHere())) {
  KernelSpec k = gpuSpec("saxpy",
                         {scalarParam("alpha", TESSERA_F32), tensorParam("x", TESSERA_F32, {sym(0)}),
                          tensorParam("y", TESSERA_F32, {sym(0)}, true)},
                         {"n"});
  k.cpu = saxpyCpu;
  TestModule m("portable", {k}, testFatbin().empty() ? nullptr : testFatbin().data(), testFatbin().size());
  REQUIRE(m.status == TESSERA_SUCCESS);
  MESSAGE("running on ", std::string(tessera_device_name()));

  // --- the host program ---
  uint64_t seed = freshSeed();
  INFO("seed ", seed);
  const int64_t n = 33333;
  std::vector<float> x = randomFloats(n, seed), y = randomFloats(n, seed + 1), out(n);
  tessera::Buffer dx, dy;
  REQUIRE(dx.allocate(n * 4).ok());
  REQUIRE(dy.allocate(n * 4).ok());
  REQUIRE(dx.upload(x.data(), n * 4).ok());
  REQUIRE(dy.upload(y.data(), n * 4).ok());
  const tessera_kernel_desc* saxpy = nullptr;
  REQUIRE(tessera_find_kernel("portable", "saxpy", &saxpy) == TESSERA_SUCCESS);
  tessera_tensor xt = tessera::tensor(dx.as<float>(), {n}), yt = tessera::tensor(dy.as<float>(), {n});
  tessera::Stream s;
  REQUIRE(tessera_stream_create(s.out()) == TESSERA_SUCCESS);
  tessera_launch_options o{};
  o.stream = s.get();
  tessera::Status st = tessera::launch(saxpy, &o, {tessera::scalar(3.f), tessera::arg(xt), tessera::arg(yt)});
  REQUIRE_MESSAGE(st.ok(), st.toString());
  REQUIRE(tessera_stream_synchronize(s.get()) == TESSERA_SUCCESS);
  REQUIRE(dy.download(out.data(), n * 4).ok());
  // --- end ---

  int bad = 0;
  for (int64_t i = 0; i < n; ++i)
    bad += std::fabs(out[i] - (3.f * x[i] + y[i])) > 1e-6f * (std::fabs(3.f * x[i]) + std::fabs(y[i]));
  CHECK(bad == 0);
}
