//===- GpuBackend.cpp - Primary context, modules, launches, memory, streams, graphs ----------===//
#include "runtime/GpuBackend.h"

#if !TESSERA_RT_HAVE_CUDA
namespace tessera::rt {
std::unique_ptr<Backend> createGpuBackend(std::string &why) {
  why = "libtessera_rt was built without CUDA headers (set CUDA_HOME and rebuild)";
  return nullptr;
}
} // namespace tessera::rt
#else

#include "runtime/CudaDriver.h"
#include "runtime/Registry.h"
#include "runtime/Status.h"

#include <mutex>
#include <unordered_map>

namespace tessera::rt {

namespace {

constexpr uint64_t kDefaultSharedLimit = 48 * 1024; // above this a kernel must opt in

struct GpuStream : tessera_stream_t {
  CUstream s = nullptr;
};
struct GpuEvent : tessera_event_t {
  CUevent e = nullptr;
};
struct GpuGraph : tessera_graph_t {
  CUgraph graph = nullptr;
  CUgraphExec exec = nullptr;
};

CUstream raw(tessera_stream s) { return s ? static_cast<GpuStream *>(s)->s : nullptr; }

bool isFault(CUresult r) {
  switch (r) {
  case CUDA_ERROR_ILLEGAL_ADDRESS:
  case CUDA_ERROR_LAUNCH_FAILED:
  case CUDA_ERROR_ILLEGAL_INSTRUCTION:
  case CUDA_ERROR_MISALIGNED_ADDRESS:
  case CUDA_ERROR_INVALID_ADDRESS_SPACE:
  case CUDA_ERROR_INVALID_PC:
  case CUDA_ERROR_HARDWARE_STACK_ERROR:
  case CUDA_ERROR_ASSERT:
  case CUDA_ERROR_LAUNCH_TIMEOUT:
  case CUDA_ERROR_ECC_UNCORRECTABLE:
    return true;
  default:
    return false;
  }
}

class GpuBackend final : public Backend {
public:
  GpuBackend(const CudaDriver &d, CUdevice dev, CUcontext ctx) : d_(d), dev_(dev), ctx_(ctx) {
    char buf[256] = {};
    d_.cuDeviceGetName(buf, sizeof buf, dev_);
    int major = 0, minor = 0;
    d_.cuDeviceGetAttribute(&major, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, dev_);
    d_.cuDeviceGetAttribute(&minor, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, dev_);
    name_ = std::string(buf) + " (sm_" + std::to_string(major * 10 + minor) + ")";
    auto attr = [&](CUdevice_attribute a, uint32_t fallback) {
      int v = 0;
      return d_.cuDeviceGetAttribute(&v, a, dev_) == CUDA_SUCCESS && v > 0 ? uint32_t(v) : fallback;
    };
    limits_.maxGroupTiles = attr(CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK, 1024);
    limits_.maxGroupDim[0] = attr(CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_X, 1024);
    limits_.maxGroupDim[1] = attr(CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Y, 1024);
    limits_.maxGroupDim[2] = attr(CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Z, 64);
    limits_.maxGrid[0] = attr(CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_X, 2147483647u);
    limits_.maxGrid[1] = attr(CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Y, 65535);
    limits_.maxGrid[2] = attr(CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Z, 65535);
    limits_.maxSharedBytes = attr(CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN, 48 * 1024);
    Registry::instance().setUnloadHook([this](const tessera_module_desc *m) { unload(m); });
  }

  tessera_device_kind kind() const override { return TESSERA_DEVICE_GPU; }
  std::string name() const override { return name_; }
  const DeviceLimits &limits() const override { return limits_; }

  // Makes the primary context current on this thread and reports an earlier fault.
  tessera_status enter() {
    if (!faultMessage_.empty())
      return fail(TESSERA_ERROR_KERNEL_FAULT, faultMessage_);
    return check(d_.cuCtxSetCurrent(ctx_), "cuCtxSetCurrent");
  }

  // Turns a driver result into a status; faults poison every later call (the CUDA context is
  // unusable after one), so the fault is what the next runtime call reports.
  tessera_status check(CUresult r, const char *call) {
    if (r == CUDA_SUCCESS)
      return TESSERA_SUCCESS;
    if (isFault(r)) {
      std::lock_guard<std::mutex> lock(mutex_);
      if (faultMessage_.empty())
        faultMessage_ = concat("a kernel faulted on the GPU (", d_.describe(r), "), reported by ",
                               call, "; the GPU context is unusable for the rest of the process");
      return fail(TESSERA_ERROR_KERNEL_FAULT, faultMessage_);
    }
    if (r == CUDA_ERROR_OUT_OF_MEMORY)
      return fail(TESSERA_ERROR_OUT_OF_MEMORY, call, " failed: ", d_.describe(r));
    return fail(TESSERA_ERROR_DRIVER, call, " failed: ", d_.describe(r));
  }

  bool pointerUsable(const void *ptr, std::string &why) override {
    unsigned int type = 0;
    CUresult r = d_.cuPointerGetAttribute(&type, CU_POINTER_ATTRIBUTE_MEMORY_TYPE,
                                          reinterpret_cast<CUdeviceptr>(ptr));
    if (r == CUDA_SUCCESS)
      return true;
    why = r == CUDA_ERROR_INVALID_VALUE ? "the CUDA driver does not know it: pageable host memory"
                                        : d_.describe(r);
    return false;
  }

  tessera_status function(const LaunchPlan &plan, CUfunction &out) {
    const tessera_kernel_desc &k = *plan.kernel;
    if (!plan.module->fatbin || !k.gpu_entry)
      return fail(TESSERA_ERROR_NOT_SUPPORTED, "kernel '", k.name, "' has no GPU code (module '",
                  plan.module->name, "' was built without a fatbin)");
    std::lock_guard<std::mutex> lock(mutex_);
    if (auto it = functions_.find(&k); it != functions_.end()) {
      out = it->second;
      return TESSERA_SUCCESS;
    }
    CUmodule &mod = modules_[plan.module];
    if (!mod) {
      CUresult r = d_.cuModuleLoadData(&mod, plan.module->fatbin);
      if (r != CUDA_SUCCESS) {
        modules_.erase(plan.module);
        return fail(r == CUDA_ERROR_NO_BINARY_FOR_GPU ? TESSERA_ERROR_NOT_SUPPORTED : TESSERA_ERROR_DRIVER,
                    "module '", plan.module->name, "': cuModuleLoadData failed for ", name_, ": ",
                    d_.describe(r));
      }
    }
    CUresult r = d_.cuModuleGetFunction(&out, mod, k.gpu_entry);
    if (r != CUDA_SUCCESS)
      return fail(TESSERA_ERROR_DRIVER, "kernel '", k.name, "': function '", k.gpu_entry,
                  "' not found in module '", plan.module->name, "': ", d_.describe(r));
    functions_[&k] = out;
    return TESSERA_SUCCESS;
  }

  tessera_status launch(const LaunchPlan &plan, tessera_stream stream) override {
    TESSERA_TRY(enter());
    CUfunction f = nullptr;
    TESSERA_TRY(function(plan, f));
    if (plan.groups == 0 || plan.launchTiles == 0)
      return TESSERA_SUCCESS;
    if (plan.sharedBytes > kDefaultSharedLimit) {
      std::lock_guard<std::mutex> lock(mutex_);
      uint64_t &optedIn = sharedOptIn_[f];
      if (plan.sharedBytes > optedIn) {
        CUresult r = d_.cuFuncSetAttribute(f, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
                                           static_cast<int>(plan.sharedBytes));
        if (r != CUDA_SUCCESS)
          return fail(TESSERA_ERROR_INVALID_GRID, "kernel '", plan.kernel->name, "': cannot use ",
                      plan.sharedBytes, " bytes of shared memory: ", d_.describe(r));
        optedIn = plan.sharedBytes;
      }
    }
    // Tile values kept in memory get a workspace for this launch, stream-ordered: allocated
    // before the kernel and freed after it on the same stream (graph capture records both).
    std::vector<void *> args = plan.argPtrs;
    CUdeviceptr workspace = 0;
    if (plan.workspaceGroupBytes) {
      uint64_t bytes = plan.workspaceGroupBytes * plan.groups;
      CUresult r = d_.cuMemAllocAsync(&workspace, bytes, raw(stream));
      if (r != CUDA_SUCCESS)
        return fail(r == CUDA_ERROR_OUT_OF_MEMORY ? TESSERA_ERROR_OUT_OF_MEMORY : TESSERA_ERROR_DRIVER,
                    "kernel '", plan.kernel->name, "': cannot allocate ", bytes,
                    " bytes of workspace for its tile values: ", d_.describe(r));
      args[plan.kernel->num_params + 1] = &workspace;
    }
    GpuLaunchDims dims = gpuLaunchDims(plan);
    tessera_status s = check(d_.cuLaunchKernel(f, dims.grid[0], dims.grid[1], dims.grid[2], dims.block[0],
                                               dims.block[1], dims.block[2],
                                               static_cast<unsigned>(plan.sharedBytes), raw(stream),
                                               args.data(), nullptr),
                             "cuLaunchKernel");
    if (workspace) {
      tessera_status f2 = check(d_.cuMemFreeAsync(workspace, raw(stream)), "cuMemFreeAsync");
      if (s == TESSERA_SUCCESS)
        s = f2;
    }
    return s;
  }

  tessera_status allocate(void **ptr, size_t bytes) override {
    TESSERA_TRY(enter());
    CUdeviceptr p = 0;
    CUresult r = d_.cuMemAlloc(&p, bytes ? bytes : 1);
    if (r == CUDA_ERROR_OUT_OF_MEMORY)
      return fail(TESSERA_ERROR_OUT_OF_MEMORY, "tessera_malloc: cannot allocate ", bytes,
                  " bytes on ", name_);
    TESSERA_TRY(check(r, "cuMemAlloc"));
    *ptr = reinterpret_cast<void *>(p);
    return TESSERA_SUCCESS;
  }
  tessera_status release(void *ptr) override {
    TESSERA_TRY(enter());
    return check(d_.cuMemFree(reinterpret_cast<CUdeviceptr>(ptr)), "cuMemFree");
  }
  tessera_status copy(void *dst, const void *src, size_t bytes, tessera_stream stream,
                      bool async) override {
    TESSERA_TRY(enter());
    auto d = reinterpret_cast<CUdeviceptr>(dst);
    auto s = reinterpret_cast<CUdeviceptr>(src);
    return async ? check(d_.cuMemcpyAsync(d, s, bytes, raw(stream)), "cuMemcpyAsync")
                 : check(d_.cuMemcpy(d, s, bytes), "cuMemcpy");
  }
  tessera_status fill(void *dst, int value, size_t bytes) override {
    TESSERA_TRY(enter());
    return check(d_.cuMemsetD8(reinterpret_cast<CUdeviceptr>(dst), static_cast<unsigned char>(value), bytes),
                 "cuMemsetD8");
  }
  tessera_status synchronize() override {
    TESSERA_TRY(enter());
    return check(d_.cuCtxSynchronize(), "cuCtxSynchronize");
  }

  tessera_status streamCreate(tessera_stream *out) override {
    TESSERA_TRY(enter());
    auto s = std::make_unique<GpuStream>();
    TESSERA_TRY(check(d_.cuStreamCreate(&s->s, CU_STREAM_DEFAULT), "cuStreamCreate"));
    *out = s.release();
    return TESSERA_SUCCESS;
  }
  tessera_status streamDestroy(tessera_stream stream) override {
    d_.cuCtxSetCurrent(ctx_); // destroys work even after a fault
    auto *s = static_cast<GpuStream *>(stream);
    CUresult r = d_.cuStreamDestroy(s->s);
    delete s;
    return check(r, "cuStreamDestroy");
  }
  tessera_status streamSynchronize(tessera_stream stream) override {
    TESSERA_TRY(enter());
    return check(d_.cuStreamSynchronize(raw(stream)), "cuStreamSynchronize");
  }
  tessera_status eventCreate(tessera_event *out) override {
    TESSERA_TRY(enter());
    auto e = std::make_unique<GpuEvent>();
    TESSERA_TRY(check(d_.cuEventCreate(&e->e, CU_EVENT_DEFAULT), "cuEventCreate"));
    *out = e.release();
    return TESSERA_SUCCESS;
  }
  tessera_status eventDestroy(tessera_event event) override {
    d_.cuCtxSetCurrent(ctx_); // destroys work even after a fault
    auto *e = static_cast<GpuEvent *>(event);
    CUresult r = d_.cuEventDestroy(e->e);
    delete e;
    return check(r, "cuEventDestroy");
  }
  tessera_status eventRecord(tessera_event event, tessera_stream stream) override {
    TESSERA_TRY(enter());
    return check(d_.cuEventRecord(static_cast<GpuEvent *>(event)->e, raw(stream)), "cuEventRecord");
  }
  tessera_status eventSynchronize(tessera_event event) override {
    TESSERA_TRY(enter());
    return check(d_.cuEventSynchronize(static_cast<GpuEvent *>(event)->e), "cuEventSynchronize");
  }
  tessera_status streamWaitEvent(tessera_stream stream, tessera_event event) override {
    TESSERA_TRY(enter());
    return check(d_.cuStreamWaitEvent(raw(stream), static_cast<GpuEvent *>(event)->e, 0),
                 "cuStreamWaitEvent");
  }
  tessera_status eventElapsed(float *ms, tessera_event start, tessera_event end) override {
    TESSERA_TRY(enter());
    CUresult r = d_.cuEventElapsedTime(ms, static_cast<GpuEvent *>(start)->e,
                                       static_cast<GpuEvent *>(end)->e);
    if (r == CUDA_ERROR_NOT_READY)
      return fail(TESSERA_ERROR_NOT_READY, "tessera_event_elapsed_ms: an event has not completed");
    return check(r, "cuEventElapsedTime");
  }
  bool capturing(tessera_stream stream) override {
    CUstreamCaptureStatus status = CU_STREAM_CAPTURE_STATUS_NONE;
    return d_.cuStreamIsCapturing(raw(stream), &status) == CUDA_SUCCESS && status != CU_STREAM_CAPTURE_STATUS_NONE;
  }
  tessera_status beginCapture(tessera_stream stream) override {
    TESSERA_TRY(enter());
    // Relaxed: lazily loading a module during capture must stay legal.
    return check(d_.cuStreamBeginCapture(raw(stream), CU_STREAM_CAPTURE_MODE_RELAXED),
                 "cuStreamBeginCapture");
  }
  tessera_status endCapture(tessera_stream stream, tessera_graph *out) override {
    TESSERA_TRY(enter());
    auto g = std::make_unique<GpuGraph>();
    TESSERA_TRY(check(d_.cuStreamEndCapture(raw(stream), &g->graph), "cuStreamEndCapture"));
    CUresult r = d_.cuGraphInstantiate(&g->exec, g->graph, 0);
    if (r != CUDA_SUCCESS) {
      d_.cuGraphDestroy(g->graph);
      return check(r, "cuGraphInstantiate");
    }
    *out = g.release();
    return TESSERA_SUCCESS;
  }
  tessera_status graphLaunch(tessera_graph graph, tessera_stream stream) override {
    TESSERA_TRY(enter());
    return check(d_.cuGraphLaunch(static_cast<GpuGraph *>(graph)->exec, raw(stream)), "cuGraphLaunch");
  }
  tessera_status graphDestroy(tessera_graph graph) override {
    d_.cuCtxSetCurrent(ctx_); // destroys work even after a fault
    auto *g = static_cast<GpuGraph *>(graph);
    CUresult r1 = d_.cuGraphExecDestroy(g->exec), r2 = d_.cuGraphDestroy(g->graph);
    delete g;
    TESSERA_TRY(check(r1, "cuGraphExecDestroy"));
    return check(r2, "cuGraphDestroy");
  }

private:
  void unload(const tessera_module_desc *m) {
    std::lock_guard<std::mutex> lock(mutex_);
    auto it = modules_.find(m);
    if (it == modules_.end())
      return;
    for (uint32_t i = 0; i < m->num_kernels; ++i) {
      auto f = functions_.find(tessera_module_kernel(m, i));
      if (f != functions_.end()) {
        sharedOptIn_.erase(f->second);
        functions_.erase(f);
      }
    }
    d_.cuModuleUnload(it->second);
    modules_.erase(it);
  }

  const CudaDriver &d_;
  CUdevice dev_;
  CUcontext ctx_;
  std::string name_;
  DeviceLimits limits_;
  std::mutex mutex_;
  std::string faultMessage_;
  std::unordered_map<const tessera_module_desc *, CUmodule> modules_;
  std::unordered_map<const tessera_kernel_desc *, CUfunction> functions_;
  std::unordered_map<CUfunction, uint64_t> sharedOptIn_;
};

} // namespace

std::unique_ptr<Backend> createGpuBackend(std::string &why) {
  const CudaDriver *d = CudaDriver::load(why);
  if (!d)
    return nullptr;
  CUresult r = d->cuInit(0);
  if (r != CUDA_SUCCESS) {
    why = "cuInit failed: " + d->describe(r);
    return nullptr;
  }
  int count = 0;
  if ((r = d->cuDeviceGetCount(&count)) != CUDA_SUCCESS || count == 0) {
    why = r != CUDA_SUCCESS ? "cuDeviceGetCount failed: " + d->describe(r) : "no CUDA device";
    return nullptr;
  }
  CUdevice dev = 0;
  CUcontext ctx = nullptr;
  if ((r = d->cuDeviceGet(&dev, 0)) != CUDA_SUCCESS ||
      (r = d->cuDevicePrimaryCtxRetain(&ctx, dev)) != CUDA_SUCCESS ||
      (r = d->cuCtxSetCurrent(ctx)) != CUDA_SUCCESS) {
    why = "cannot set up the primary context of device 0: " + d->describe(r);
    return nullptr;
  }
  return std::make_unique<GpuBackend>(*d, dev, ctx);
}

} // namespace tessera::rt
#endif
