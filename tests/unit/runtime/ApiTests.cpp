// The public C API on the active device: device selection, memory, streams, events, graph
// capture and replay, handle checks. Launch tests here use CPU kernels, so they run when the
// active device is the CPU executor (no GPU, or TESSERA_DEVICE=cpu) and are skipped otherwise.
#include <cstdlib>
#include <cstring>
#include <doctest/doctest.h>
#include <thread>

#include "RuntimeTestUtil.h"

using namespace rttest;

namespace {

bool gpuActive() {
  static bool gpu = activeDeviceIsGpu();
  return gpu;
}

void addOne(void** args, const tessera_cpu_ctx* ctx) {
  static_cast<float*>(static_cast<tessera_kernel_tensor*>(args[0])->data)[ctx->global_linear] += 1.f;
}

KernelSpec addOneSpec() {
  KernelSpec k;
  k.name = "add_one";
  k.params = {tensorParam("y", TESSERA_F32, {sym(0)}, true)};
  k.symbols = {"n"};
  k.cpu = addOne;
  return k;
}

}  // namespace

TEST_CASE("api: the device is chosen once, from TESSERA_DEVICE or what is usable") {
  const char* env = std::getenv("TESSERA_DEVICE");
  tessera_status init = tessera_init();
  if (env && std::string(env) == "gpu" && init != TESSERA_SUCCESS) {
    // Asked for a GPU that is not there: every call says so (no silent fallback).
    CHECK(init == TESSERA_ERROR_NO_DEVICE);
    CHECK(std::string(tessera_last_error_message()).find("TESSERA_DEVICE=gpu but no GPU is usable: ") == 0);
    tessera_device_kind kind;
    CHECK(tessera_get_device_kind(&kind) == TESSERA_ERROR_NO_DEVICE);
    return;
  }
  REQUIRE(init == TESSERA_SUCCESS);
  tessera_device_kind kind;
  REQUIRE(tessera_get_device_kind(&kind) == TESSERA_SUCCESS);
  std::string reason = tessera_gpu_unavailable_reason();
  MESSAGE("device: ", std::string(tessera_device_name()), (reason.empty() ? "" : "; GPU unused: " + reason));
  if (env && std::string(env) == "cpu") {
    CHECK(kind == TESSERA_DEVICE_CPU);
    CHECK(reason == "TESSERA_DEVICE=cpu");
  }
  if (kind == TESSERA_DEVICE_CPU)
    CHECK_FALSE(reason.empty());  // the CPU is only chosen for a stated reason
  else
    CHECK(reason.empty());
}

TEST_CASE("api: memory round trip, memset, and freeing unknown pointers") {
  tessera::Buffer buf;
  REQUIRE(buf.allocate(1024 * sizeof(float)).ok());
  std::vector<float> in = randomFloats(1024, freshSeed()), out(1024, 0.f);
  REQUIRE(buf.upload(in.data(), 4096).ok());
  REQUIRE(buf.download(out.data(), 4096).ok());
  CHECK(std::memcmp(in.data(), out.data(), 4096) == 0);
  REQUIRE(tessera_memset(buf.data(), 0, 4096) == TESSERA_SUCCESS);
  REQUIRE(buf.download(out.data(), 4096).ok());
  CHECK(out[0] == 0.f);
  CHECK(out[1023] == 0.f);
  CHECK(tessera_memcpy(nullptr, in.data(), 4) == TESSERA_ERROR_NULL_POINTER);
  CHECK(std::string(tessera_last_error_message()) == "tessera_memcpy: null destination");
  if (!gpuActive()) {  // the driver's verdict on foreign pointers is its own
    int local = 0;
    CHECK(tessera_free(&local) == TESSERA_ERROR_INVALID_ARGUMENT);
    CHECK(std::string(tessera_last_error_message()).find("was not returned by tessera_malloc") != std::string::npos);
  }
}

TEST_CASE("api: invalid and destroyed handles are errors, not crashes") {
  tessera_stream s = nullptr;
  REQUIRE(tessera_stream_create(&s) == TESSERA_SUCCESS);
  REQUIRE(tessera_stream_destroy(s) == TESSERA_SUCCESS);
  CHECK(tessera_stream_synchronize(s) == TESSERA_ERROR_INVALID_HANDLE);
  CHECK(std::string(tessera_last_error_message()) == "tessera_stream_synchronize: unknown or destroyed stream");
  CHECK(tessera_stream_destroy(s) == TESSERA_ERROR_INVALID_HANDLE);
  CHECK(tessera_event_record(nullptr, nullptr) == TESSERA_ERROR_INVALID_HANDLE);
  CHECK(tessera_graph_launch(nullptr, nullptr) == TESSERA_ERROR_INVALID_HANDLE);
  CHECK(tessera_stream_begin_capture(nullptr) == TESSERA_ERROR_INVALID_ARGUMENT);
  CHECK(std::string(tessera_last_error_message()) ==
        "tessera_stream_begin_capture: the default stream cannot capture; create a stream");
}

TEST_CASE("api: tessera_stream_wrap wraps another library's stream, without owning it") {
  CHECK(tessera_stream_wrap(nullptr, nullptr) == TESSERA_ERROR_INVALID_ARGUMENT);
  tessera_stream s = nullptr;
  if (!gpuActive()) {
    CHECK(tessera_stream_wrap(nullptr, &s) == TESSERA_ERROR_NOT_SUPPORTED);
    CHECK(std::string(tessera_last_error_message()).find("has no native streams") != std::string::npos);
    CHECK(s == nullptr);
    return;
  }
  REQUIRE(tessera_stream_wrap(nullptr, &s) == TESSERA_SUCCESS);  // the legacy default stream
  CHECK(tessera_stream_synchronize(s) == TESSERA_SUCCESS);
  CHECK(tessera_stream_destroy(s) == TESSERA_SUCCESS);  // releases the handle, not the stream
  CHECK(tessera_stream_destroy(s) == TESSERA_ERROR_INVALID_HANDLE);
}

TEST_CASE("api: events measure time between records") {
  tessera::Event a, b;
  REQUIRE(tessera_event_create(a.out()) == TESSERA_SUCCESS);
  REQUIRE(tessera_event_create(b.out()) == TESSERA_SUCCESS);
  REQUIRE(tessera_event_record(a.get(), nullptr) == TESSERA_SUCCESS);
  REQUIRE(tessera_event_record(b.get(), nullptr) == TESSERA_SUCCESS);
  REQUIRE(tessera_event_synchronize(b.get()) == TESSERA_SUCCESS);
  float ms = -1.f;
  REQUIRE(tessera_event_elapsed_ms(&ms, a.get(), b.get()) == TESSERA_SUCCESS);
  CHECK(ms >= 0.f);
}

TEST_CASE("api: launches through tessera_launch on the CPU executor" * doctest::skip(gpuActive())) {
  TestModule m("api_cpu", {addOneSpec()});
  REQUIRE(m.status == TESSERA_SUCCESS);
  const tessera_kernel_desc* k = nullptr;
  REQUIRE(tessera_find_kernel("api_cpu", "add_one", &k) == TESSERA_SUCCESS);
  tessera::Buffer buf;
  REQUIRE(buf.allocate(100 * sizeof(float)).ok());
  REQUIRE(tessera_memset(buf.data(), 0, 400) == TESSERA_SUCCESS);
  tessera_tensor y = tessera::tensor(buf.as<float>(), {100});
  CHECK(tessera::launch(k, nullptr, {tessera::arg(y)}).ok());
  CHECK(buf.as<float>()[99] == 1.f);
  // Checks run on this path too, and nothing runs when they fail.
  tessera_tensor y2 = tessera::tensor(buf.as<float>(), {10, 10});
  tessera::Status s = tessera::launch(k, nullptr, {tessera::arg(y2)});
  CHECK(s.code() == TESSERA_ERROR_RANK_MISMATCH);
  CHECK(s.message() == "kernel 'add_one': parameter 'y': expected rank 1, got rank 2 (shape [10, 10])");
  CHECK(buf.as<float>()[0] == 1.f);
}

TEST_CASE("api: graph capture records launches and copies; replay runs them in order" * doctest::skip(gpuActive())) {
  TestModule m("api_graph", {addOneSpec()});
  REQUIRE(m.status == TESSERA_SUCCESS);
  tessera::Buffer buf;
  REQUIRE(buf.allocate(64 * sizeof(float)).ok());
  REQUIRE(tessera_memset(buf.data(), 0, 256) == TESSERA_SUCCESS);
  std::vector<float> host(64, 0.f);
  tessera_tensor y = tessera::tensor(buf.as<float>(), {64});
  tessera::Stream s;
  REQUIRE(tessera_stream_create(s.out()) == TESSERA_SUCCESS);
  tessera_launch_options o{};
  o.stream = s.get();

  REQUIRE(tessera_stream_begin_capture(s.get()) == TESSERA_SUCCESS);
  REQUIRE(tessera::launch(m.kernel(), &o, {tessera::arg(y)}).ok());
  REQUIRE(tessera::launch(m.kernel(), &o, {tessera::arg(y)}).ok());
  REQUIRE(tessera_memcpy_async(host.data(), buf.data(), 256, s.get()) == TESSERA_SUCCESS);
  tessera::Graph g;
  REQUIRE(tessera_stream_end_capture(s.get(), g.out()) == TESSERA_SUCCESS);
  CHECK(buf.as<float>()[5] == 0.f);  // captured work did not run
  CHECK(host[5] == 0.f);

  REQUIRE(tessera_graph_launch(g.get(), s.get()) == TESSERA_SUCCESS);
  REQUIRE(tessera_stream_synchronize(s.get()) == TESSERA_SUCCESS);
  CHECK(host[5] == 2.f);
  REQUIRE(tessera_graph_launch(g.get(), s.get()) == TESSERA_SUCCESS);
  REQUIRE(tessera_stream_synchronize(s.get()) == TESSERA_SUCCESS);
  CHECK(host[63] == 4.f);
  CHECK(tessera_stream_end_capture(s.get(), g.out()) == TESSERA_ERROR_INVALID_ARGUMENT);
}

TEST_CASE("api: a keyed graph cache launches its graph for equal keys only" * doctest::skip(gpuActive())) {
  TestModule m("api_graph_key", {addOneSpec()});
  REQUIRE(m.status == TESSERA_SUCCESS);
  tessera::Buffer a, b;
  REQUIRE(a.allocate(64 * sizeof(float)).ok());
  REQUIRE(b.allocate(64 * sizeof(float)).ok());
  REQUIRE(tessera_memset(a.data(), 0, 256) == TESSERA_SUCCESS);
  REQUIRE(tessera_memset(b.data(), 0, 256) == TESSERA_SUCCESS);
  tessera::Stream s, other;
  REQUIRE(tessera_stream_create(s.out()) == TESSERA_SUCCESS);
  REQUIRE(tessera_stream_create(other.out()) == TESSERA_SUCCESS);
  tessera_launch_options o{};
  o.stream = s.get();
  tessera_tensor ya = tessera::tensor(a.as<float>(), {64}), yb = tessera::tensor(b.as<float>(), {64});
  const tessera_tensor* tensors[1] = {&ya};
  int64_t scalar = 7;
  tessera_graph_key key{tensors, 1, &scalar, 1};
  tessera_graph cache = nullptr;
  int32_t hit = -1;
  // An empty cache: nothing launched.
  REQUIRE(tessera_graph_launch_cached(&cache, &key, s.get(), &hit) == TESSERA_SUCCESS);
  CHECK(hit == 0);
  REQUIRE(tessera_stream_begin_capture(s.get()) == TESSERA_SUCCESS);
  REQUIRE(tessera::launch(m.kernel(), &o, {tessera::arg(ya)}).ok());
  tessera_graph g = nullptr;
  REQUIRE(tessera_stream_end_capture(s.get(), &g) == TESSERA_SUCCESS);
  REQUIRE(tessera_graph_replay_keyed(&cache, g, &key, s.get()) == TESSERA_SUCCESS);
  REQUIRE(tessera_stream_synchronize(s.get()) == TESSERA_SUCCESS);
  CHECK(a.as<float>()[3] == 1.f);
  // The same key: the cached graph runs again.
  REQUIRE(tessera_graph_launch_cached(&cache, &key, s.get(), &hit) == TESSERA_SUCCESS);
  REQUIRE(tessera_stream_synchronize(s.get()) == TESSERA_SUCCESS);
  CHECK(hit == 1);
  CHECK(a.as<float>()[3] == 2.f);
  // Another address, extent, scalar or stream: a miss, nothing runs.
  tessera_tensor ya32 = tessera::tensor(a.as<float>(), {32});
  int64_t scalar2 = 8;
  tessera_graph_key keys[3] = {{tensors, 1, &scalar, 1}, {tensors, 1, &scalar2, 1}, {tensors, 1, &scalar, 1}};
  const tessera_tensor *tb[1] = {&yb}, *t32[1] = {&ya32};
  keys[0].tensors = tb;
  keys[2].tensors = t32;
  for (const tessera_graph_key& k : keys) {
    REQUIRE(tessera_graph_launch_cached(&cache, &k, s.get(), &hit) == TESSERA_SUCCESS);
    CHECK(hit == 0);
  }
  REQUIRE(tessera_graph_launch_cached(&cache, &key, other.get(), &hit) == TESSERA_SUCCESS);
  CHECK(hit == 0);
  REQUIRE(tessera_stream_synchronize(s.get()) == TESSERA_SUCCESS);
  CHECK(a.as<float>()[3] == 2.f);
  CHECK(b.as<float>()[3] == 0.f);
  // A replay without a key (tessera_graph_replay) forgets the old one: no later call hits.
  REQUIRE(tessera_stream_begin_capture(s.get()) == TESSERA_SUCCESS);
  REQUIRE(tessera::launch(m.kernel(), &o, {tessera::arg(ya)}).ok());
  REQUIRE(tessera_stream_end_capture(s.get(), &g) == TESSERA_SUCCESS);
  REQUIRE(tessera_graph_replay(&cache, g, s.get()) == TESSERA_SUCCESS);
  REQUIRE(tessera_graph_launch_cached(&cache, &key, s.get(), &hit) == TESSERA_SUCCESS);
  CHECK(hit == 0);
  REQUIRE(tessera_stream_synchronize(s.get()) == TESSERA_SUCCESS);
  CHECK(a.as<float>()[3] == 3.f);
  CHECK(tessera_graph_launch_cached(&cache, nullptr, s.get(), &hit) == TESSERA_ERROR_INVALID_ARGUMENT);
  CHECK(tessera_graph_destroy(cache) == TESSERA_SUCCESS);
}

TEST_CASE("api: error messages are per thread") {
  CHECK(tessera_find_kernel("no_such_module", "k", nullptr) == TESSERA_ERROR_INVALID_ARGUMENT);
  std::string other = "unset";
  std::thread([&] {
    other = tessera_last_error_message();
    const tessera_kernel_desc* k;
    tessera_find_kernel("no_such_module", "k", &k);
  }).join();
  CHECK(other.empty());
  CHECK(std::string(tessera_last_error_message()) == "tessera_find_kernel: null argument");
  tessera_clear_error();
  CHECK(std::string(tessera_last_error_message()).empty());
}

TEST_CASE("api: the C++ layer: typed views, scalars, buffers, Status") {
  std::vector<int16_t> v(6);
  tessera_tensor t = tessera::tensor(v.data(), {2, 3}, TESSERA_HOST);
  CHECK(t.dtype == TESSERA_I16);
  CHECK(t.rank == 2);
  CHECK(t.strides[0] == 3);
  CHECK(t.device == TESSERA_HOST);
  tessera_arg a = tessera::scalar(uint16_t(0x3C00), TESSERA_F16);  // 1.0 in f16 bits
  CHECK(a.kind == TESSERA_PARAM_SCALAR);
  CHECK(a.dtype == TESSERA_F16);
  CHECK(a.value.bytes[0] == 0x00);
  CHECK(a.value.bytes[1] == 0x3C);
  tessera::Buffer b1;
  REQUIRE(b1.allocate(64).ok());
  void* p = b1.data();
  tessera::Buffer b2 = std::move(b1);
  CHECK(b1.data() == nullptr);
  CHECK(b2.data() == p);
  CHECK(b2.size() == 64);
  // The C builders agree with the C++ ones.
  float alpha = 2.5f;
  tessera_arg c = tessera_arg_scalar(TESSERA_F32, &alpha, sizeof alpha);
  tessera_arg cpp = tessera::scalar(2.5f);
  CHECK(c.kind == cpp.kind);
  CHECK(c.dtype == cpp.dtype);
  CHECK(std::memcmp(c.value.bytes, cpp.value.bytes, 8) == 0);
  CHECK(tessera_arg_tensor(&t).value.tensor == &t);
  CHECK(tessera_arg_tensor(&t).kind == TESSERA_PARAM_TENSOR);
  tessera::Status ok = tessera::Status::from(TESSERA_SUCCESS);
  CHECK(ok.ok());
  CHECK(ok.toString() == "ok");
}
