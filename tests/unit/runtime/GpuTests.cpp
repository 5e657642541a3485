// The GPU backend on a real device: fatbin loading, launches with the default grid rules,
// the host-pointer check through the driver, >48 KiB dynamic shared memory, determinism,
// streams, events and graph capture/replay. Skipped, with the reason printed, without a GPU.
#include <cmath>
#include <cstring>
#include <doctest/doctest.h>

#include "GpuTestUtil.h"

using namespace rttest;

#define GPU_TEST(name) TEST_CASE(name* doctest::skip(gpuTestsSkipped()))

TEST_CASE("gpu: say whether the GPU tests run") {
  if (gpuTestsSkipped())
    MESSAGE("GPU tests skipped: ", gpuSkipReason());
  else
    MESSAGE("GPU tests run on ", std::string(tessera_device_name()));
  CHECK(gpuTestsSkipped() == !gpuSkipReason().empty());
}

GPU_TEST("gpu: saxpy with one tile per element, every element") {
  GpuKernels k;
  REQUIRE(k.m.status == TESSERA_SUCCESS);
  uint64_t seed = freshSeed();
  INFO("seed ", seed);
  const int64_t n = 100003;
  std::vector<float> x = randomFloats(n, seed), y = randomFloats(n, seed + 1), out(n);
  float alpha = 1.5f;
  tessera::Buffer dx, dy;
  REQUIRE(dx.allocate(n * 4).ok());
  REQUIRE(dy.allocate(n * 4).ok());
  REQUIRE(dx.upload(x.data(), n * 4).ok());
  REQUIRE(dy.upload(y.data(), n * 4).ok());
  tessera_tensor xt = tessera::tensor(dx.as<float>(), {n}), yt = tessera::tensor(dy.as<float>(), {n});
  tessera::Status s = tessera::launch(k.saxpy, nullptr, {tessera::scalar(alpha), tessera::arg(xt), tessera::arg(yt)});
  REQUIRE_MESSAGE(s.ok(), s.toString());
  REQUIRE(dy.download(out.data(), n * 4).ok());
  int bad = 0;
  for (int64_t i = 0; i < n; ++i)  // the GPU may contract to an fma: one rounding less
    bad += std::fabs(out[i] - (alpha * x[i] + y[i])) > 1e-6f * (std::fabs(alpha * x[i]) + std::fabs(y[i]));
  CHECK(bad == 0);
}

GPU_TEST("gpu: host memory is rejected by the driver's pointer check, nothing runs") {
  GpuKernels k;
  REQUIRE(k.m.status == TESSERA_SUCCESS);
  std::vector<float> x(16, 1.f), y(16, 2.f);
  tessera_tensor xt = tessera::tensor(x.data(), {16}), yt = tessera::tensor(y.data(), {16});  // device 0: a lie
  tessera::Status s = tessera::launch(k.saxpy, nullptr, {tessera::scalar(1.f), tessera::arg(xt), tessera::arg(yt)});
  CHECK(s.code() == TESSERA_ERROR_HOST_POINTER);
  CHECK(s.message().find("kernel 'saxpy': parameter 'x': pointer ") == 0);
  CHECK(s.message().find("is not device memory (the CUDA driver does not know it: pageable host memory)") !=
        std::string::npos);
  CHECK(tessera_synchronize() == TESSERA_SUCCESS);
  CHECK(y[0] == 2.f);
}

GPU_TEST("gpu: group_sum is accurate and bitwise reproducible") {
  GpuKernels k;
  REQUIRE(k.m.status == TESSERA_SUCCESS);
  uint64_t seed = freshSeed();
  INFO("seed ", seed);
  const int64_t n = 1 << 20;
  const uint32_t groups = 97;
  std::vector<float> x = randomFloats(n, seed);
  tessera::Buffer dx, dout;
  REQUIRE(dx.allocate(n * 4).ok());
  REQUIRE(dout.allocate(groups * 4).ok());
  REQUIRE(dx.upload(x.data(), n * 4).ok());
  tessera_tensor xt = tessera::tensor(dx.as<float>(), {n}), ot = tessera::tensor(dout.as<float>(), {groups});
  std::vector<float> first;
  for (int run = 0; run < 3; ++run) {
    tessera::Status s = tessera::launch(k.groupSum, nullptr, {tessera::arg(xt), tessera::arg(ot)});
    REQUIRE_MESSAGE(s.ok(), s.toString());
    std::vector<float> out(groups);
    REQUIRE(dout.download(out.data(), groups * 4).ok());
    if (first.empty()) first = out;
    CHECK(std::memcmp(first.data(), out.data(), groups * 4) == 0);
  }
  int64_t chunk = (n + groups - 1) / groups;
  for (uint32_t g = 0; g < groups; ++g) {
    double ref = 0, mag = 0;
    for (int64_t i = g * chunk; i < std::min<int64_t>(n, (g + 1) * chunk); ++i) {
      ref += x[i];
      mag += std::fabs(x[i]);
    }
    CHECK(std::fabs(first[g] - ref) <= 1e-5 * mag);
  }
}

GPU_TEST("gpu: more than 48 KiB of dynamic shared memory") {
  GpuKernels k;
  REQUIRE(k.m.status == TESSERA_SUCCESS);
  tessera::Buffer dout;
  REQUIRE(dout.allocate(4 * 8).ok());
  tessera_tensor ot = tessera::tensor(dout.as<double>(), {4});
  tessera::Status s = tessera::launch(k.bigShared, nullptr, {tessera::arg(ot)});
  REQUIRE_MESSAGE(s.ok(), s.toString());
  std::vector<double> out(4);
  REQUIRE(dout.download(out.data(), 32).ok());
  for (double v : out) CHECK(v == 16383.0 * 16384.0 / 2);
}

GPU_TEST("gpu: graph capture and replay, streams and events") {
  GpuKernels k;
  REQUIRE(k.m.status == TESSERA_SUCCESS);
  const int64_t n = 4096;
  std::vector<float> x(n, 1.f), y(n, 0.f), out(n);
  tessera::Buffer dx, dy;
  REQUIRE(dx.allocate(n * 4).ok());
  REQUIRE(dy.allocate(n * 4).ok());
  REQUIRE(dx.upload(x.data(), n * 4).ok());
  REQUIRE(dy.upload(y.data(), n * 4).ok());
  tessera_tensor xt = tessera::tensor(dx.as<float>(), {n}), yt = tessera::tensor(dy.as<float>(), {n});
  tessera::Stream stream;
  REQUIRE(tessera_stream_create(stream.out()) == TESSERA_SUCCESS);
  tessera_launch_options o{};
  o.stream = stream.get();
  REQUIRE(tessera_stream_begin_capture(stream.get()) == TESSERA_SUCCESS);
  REQUIRE(tessera::launch(k.saxpy, &o, {tessera::scalar(1.f), tessera::arg(xt), tessera::arg(yt)}).ok());
  REQUIRE(tessera::launch(k.saxpy, &o, {tessera::scalar(2.f), tessera::arg(xt), tessera::arg(yt)}).ok());
  tessera::Graph g;
  REQUIRE(tessera_stream_end_capture(stream.get(), g.out()) == TESSERA_SUCCESS);
  REQUIRE(tessera_synchronize() == TESSERA_SUCCESS);
  REQUIRE(dy.download(out.data(), n * 4).ok());
  CHECK(out[0] == 0.f);  // captured, not run

  tessera::Event a, b;
  REQUIRE(tessera_event_create(a.out()) == TESSERA_SUCCESS);
  REQUIRE(tessera_event_create(b.out()) == TESSERA_SUCCESS);
  REQUIRE(tessera_event_record(a.get(), stream.get()) == TESSERA_SUCCESS);
  for (int i = 0; i < 2; ++i) REQUIRE(tessera_graph_launch(g.get(), stream.get()) == TESSERA_SUCCESS);
  REQUIRE(tessera_event_record(b.get(), stream.get()) == TESSERA_SUCCESS);
  REQUIRE(tessera_stream_synchronize(stream.get()) == TESSERA_SUCCESS);
  float ms = -1;
  REQUIRE(tessera_event_elapsed_ms(&ms, a.get(), b.get()) == TESSERA_SUCCESS);
  CHECK(ms >= 0.f);
  REQUIRE(dy.download(out.data(), n * 4).ok());
  CHECK(out[0] == 6.f);
  CHECK(out[n - 1] == 6.f);
}
