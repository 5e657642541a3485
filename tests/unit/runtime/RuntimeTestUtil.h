// Helpers for the runtime unit tests: kernel descriptors built at run time (what tesserac will
// emit as static data), a recording backend that counts launches, and a private CPU backend
// so the CPU executor is tested on every machine, GPU or not.
#ifndef TESSERA_TESTS_RUNTIME_UTIL_H
#define TESSERA_TESTS_RUNTIME_UTIL_H

#include <deque>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "runtime/Backend.h"
#include "runtime/CpuBackend.h"
#include "runtime/LaunchChecks.h"
#include "tessera/runtime.h"
#include "tessera/runtime.hpp"

namespace rttest {

inline tessera_extent sym(int32_t s) {
  tessera_extent e{};
  e.kind = TESSERA_EXTENT_SYMBOL;
  e.symbol = s;
  return e;
}
inline tessera_extent cst(int64_t v) {
  tessera_extent e{};
  e.kind = TESSERA_EXTENT_CONST;
  e.value = v;
  return e;
}
inline tessera_extent any() { return tessera_extent{}; }
// `expr` must outlive the module (tests keep it in a static or a local that outlives it).
inline tessera_extent expr(const std::vector<tessera_expr_op>& ops) {
  tessera_extent e{};
  e.kind = TESSERA_EXTENT_EXPR;
  e.expr = ops.data();
  e.expr_len = static_cast<uint32_t>(ops.size());
  return e;
}

struct ParamSpec {
  std::string name;
  int32_t kind = TESSERA_PARAM_TENSOR;
  int32_t dtype = TESSERA_F32;
  bool mut = false;
  std::vector<tessera_extent> extents;
};
inline ParamSpec tensorParam(std::string name, int32_t dtype, std::vector<tessera_extent> ext, bool mut = false) {
  return ParamSpec{std::move(name), TESSERA_PARAM_TENSOR, dtype, mut, std::move(ext)};
}
inline ParamSpec scalarParam(std::string name, int32_t dtype) {
  return ParamSpec{std::move(name), TESSERA_PARAM_SCALAR, dtype, false, {}};
}

struct KernelSpec {
  std::string name;
  std::vector<ParamSpec> params;
  std::vector<std::string> symbols;
  int32_t gridSymbol = -1;
  uint32_t flags = TESSERA_KERNEL_DETERMINISTIC;
  uint32_t group[3] = {1, 1, 1};
  uint64_t shared = 0;
  tessera_cpu_fn cpu = nullptr;
  std::string gpuEntry;
  std::vector<tessera_grid_block> gridBlocks;
};

// Owns descriptors laid out exactly as a compiled module's static data; registers on
// construction (status in .status) and unregisters on destruction.
class TestModule {
 public:
  TestModule(std::string name, std::vector<KernelSpec> specs, const void* fatbin = nullptr, size_t fatbinSize = 0,
             bool registerNow = true)
      : name_(std::move(name)), specs_(std::move(specs)) {
    params_.resize(specs_.size());
    symbolPtrs_.resize(specs_.size());
    kernels_.resize(specs_.size());
    for (size_t k = 0; k < specs_.size(); ++k) {
      KernelSpec& s = specs_[k];
      for (ParamSpec& p : s.params) {
        tessera_param_desc d{};
        d.name = p.name.c_str();
        d.kind = p.kind;
        d.dtype = p.dtype;
        d.rank = static_cast<int32_t>(p.extents.size());
        d.flags = p.mut ? TESSERA_PARAM_MUT : 0;
        d.extents = p.extents.data();
        params_[k].push_back(d);
      }
      for (std::string& sy : s.symbols) symbolPtrs_[k].push_back(sy.c_str());
      tessera_kernel_desc& d = kernels_[k];
      d = tessera_kernel_desc{};
      d.struct_size = sizeof(tessera_kernel_desc);
      d.flags = s.flags;
      d.name = s.name.c_str();
      d.params = params_[k].data();
      d.num_params = static_cast<uint32_t>(params_[k].size());
      d.symbols = symbolPtrs_[k].data();
      d.num_symbols = static_cast<uint32_t>(symbolPtrs_[k].size());
      d.grid_symbol = s.gridSymbol;
      for (int i = 0; i < 3; ++i) d.group_shape[i] = s.group[i];
      d.shared_bytes = s.shared;
      d.gpu_entry = s.gpuEntry.empty() ? nullptr : s.gpuEntry.c_str();
      d.cpu_entry = s.cpu;
      d.grid_blocks = s.gridBlocks.empty() ? nullptr : s.gridBlocks.data();
      d.num_grid_blocks = static_cast<uint32_t>(s.gridBlocks.size());
    }
    module_ = tessera_module_desc{};
    module_.abi_version = TESSERA_ABI_VERSION;
    module_.struct_size = sizeof(tessera_module_desc);
    module_.name = name_.c_str();
    module_.fatbin = fatbin;
    module_.fatbin_size = fatbinSize;
    module_.kernels = kernels_.data();
    module_.num_kernels = static_cast<uint32_t>(kernels_.size());
    if (registerNow) status = tessera_register_module(&module_);
  }
  ~TestModule() {
    if (status == TESSERA_SUCCESS) tessera_unregister_module(&module_);
  }
  TestModule(const TestModule&) = delete;
  TestModule& operator=(const TestModule&) = delete;

  const tessera_kernel_desc* kernel(size_t i = 0) const { return &kernels_[i]; }
  tessera_kernel_desc* mutableKernel(size_t i = 0) { return &kernels_[i]; }
  tessera_module_desc* desc() { return &module_; }
  tessera_status status = TESSERA_ERROR_INTERNAL;

 private:
  std::string name_;
  std::vector<KernelSpec> specs_;
  std::vector<std::vector<tessera_param_desc>> params_;
  std::vector<std::vector<const char*>> symbolPtrs_;
  std::vector<tessera_kernel_desc> kernels_;
  tessera_module_desc module_{};
};

// A backend that accepts every plan and counts launches; kind and pointer verdicts are set by
// the test (a GPU kind exercises the host-pointer checks without a GPU).
class RecordingBackend final : public tessera::rt::Backend {
 public:
  tessera_device_kind deviceKind = TESSERA_DEVICE_CPU;
  bool pointersUsable = true;
  int launches = 0;
  tessera::rt::LaunchPlan last;
  tessera::rt::DeviceLimits lim;

  tessera_device_kind kind() const override { return deviceKind; }
  std::string name() const override { return "recording"; }
  const tessera::rt::DeviceLimits& limits() const override { return lim; }
  bool pointerUsable(const void*, std::string& why) override {
    why = "test says so";
    return pointersUsable;
  }
  tessera_status launch(const tessera::rt::LaunchPlan& plan, tessera_stream) override {
    ++launches;
    last = plan;
    return TESSERA_SUCCESS;
  }
#define UNSUPPORTED                     \
  {                                     \
    return TESSERA_ERROR_NOT_SUPPORTED; \
  }
  tessera_status allocate(void**, size_t) override UNSUPPORTED tessera_status
      release(void*) override UNSUPPORTED tessera_status
      copy(void*, const void*, size_t, tessera_stream, bool) override UNSUPPORTED tessera_status
      fill(void*, int, size_t) override UNSUPPORTED tessera_status synchronize() override UNSUPPORTED tessera_status
      streamCreate(tessera_stream*) override UNSUPPORTED tessera_status
      streamDestroy(tessera_stream) override UNSUPPORTED tessera_status
      streamSynchronize(tessera_stream) override UNSUPPORTED tessera_status
      eventCreate(tessera_event*) override UNSUPPORTED tessera_status
      eventDestroy(tessera_event) override UNSUPPORTED tessera_status
      eventRecord(tessera_event, tessera_stream) override UNSUPPORTED tessera_status
      eventSynchronize(tessera_event) override UNSUPPORTED tessera_status
      streamWaitEvent(tessera_stream, tessera_event) override UNSUPPORTED tessera_status
      eventElapsed(float*, tessera_event, tessera_event) override UNSUPPORTED bool capturing(tessera_stream) override {
    return false;
  }
  tessera_status eventQuery(tessera_event) override { return TESSERA_SUCCESS; }
  tessera_status beginCapture(tessera_stream) override UNSUPPORTED tessera_status
      endCapture(tessera_stream, tessera_graph*) override UNSUPPORTED tessera_status
      graphLaunch(tessera_graph, tessera_stream) override UNSUPPORTED tessera_status
      graphDestroy(tessera_graph) override UNSUPPORTED tessera_status
      graphUpdate(tessera_graph, tessera_graph, bool&) override UNSUPPORTED
#undef UNSUPPORTED

      // The checks and dispatch of tessera_launch, against this backend.
      tessera_status
      run(const tessera_kernel_desc* k, const tessera_launch_options* opts, std::initializer_list<tessera_arg> args) {
    tessera::rt::LaunchPlan plan;
    tessera_status s = tessera::rt::planLaunch(k, opts, args.begin(), static_cast<uint32_t>(args.size()), *this, plan);
    return s == TESSERA_SUCCESS ? launch(plan, nullptr) : s;
  }
};

// Runs a launch on a CPU executor backend regardless of the process's active device.
inline tessera_status cpuLaunch(const tessera_kernel_desc* k, const tessera_launch_options* opts,
                                std::initializer_list<tessera_arg> args) {
  static std::unique_ptr<tessera::rt::Backend> cpu = tessera::rt::createCpuBackend();
  tessera::rt::LaunchPlan plan;
  tessera_status s = tessera::rt::planLaunch(k, opts, args.begin(), static_cast<uint32_t>(args.size()), *cpu, plan);
  return s == TESSERA_SUCCESS ? cpu->launch(plan, nullptr) : s;
}

inline std::vector<float> randomFloats(size_t n, uint64_t seed, float lo = -1.f, float hi = 1.f) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<float> dist(lo, hi);
  std::vector<float> v(n);
  for (float& x : v) x = dist(rng);
  return v;
}

// A fresh seed per run (inputs differ between runs); tests print it on failure.
inline uint64_t freshSeed() { return std::random_device{}() * 0x9E3779B97F4A7C15ull ^ std::random_device{}(); }

inline bool activeDeviceIsGpu() {
  tessera_device_kind k = TESSERA_DEVICE_CPU;
  return tessera_get_device_kind(&k) == TESSERA_SUCCESS && k == TESSERA_DEVICE_GPU;
}

inline tessera_launch_options gridOptions(uint32_t groups, uint32_t tiles = 0) {
  tessera_launch_options o{};
  o.grid[0] = groups;
  o.group[0] = tiles;
  return o;
}

}  // namespace rttest

#endif
