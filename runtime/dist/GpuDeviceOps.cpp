//===- GpuDeviceOps.cpp - Copies and the fixed-order reduction on GPU ranks ------------------===//
//
// The reduction kernels come from the fatbin embedded at build time (kernels/Reduce.cu), loaded
// into the runtime's context on first use. Everything is enqueued on the caller's CUstream, so
// it orders with NCCL's work on the same stream and is recorded by graph capture.
//
//===----------------------------------------------------------------------------------------===//
#include "runtime/dist/DeviceOps.h"

#if !TESSERA_RT_HAVE_CUDA
namespace tessera::dist {
DeviceOps* gpuDeviceOps(std::string& why) {
  why = "libtessera_dist was built without CUDA headers";
  return nullptr;
}
}  // namespace tessera::dist
#else

#include <algorithm>
#include <mutex>
#include <unordered_map>

#include "runtime/CudaDriver.h"
#include "runtime/Status.h"

extern "C" const unsigned char tessera_dist_reduce_fatbin[];
extern "C" const std::size_t tessera_dist_reduce_fatbin_size;

namespace tessera::dist {

using namespace reduce;
using rt::concat;
using rt::CudaDriver;
using rt::fail;

namespace {

const char* dtypeSuffix(int32_t dtype) {
  switch (dtype) {
#define TESSERA_REDUCE_TYPE(dt, suffix, codec) \
  case dt: return #suffix;
#include "runtime/dist/ReduceTypes.def"
  }
  return nullptr;
}

CUstream raw(void* s) { return static_cast<CUstream>(s); }

class GpuDeviceOps final : public DeviceOps {
 public:
  explicit GpuDeviceOps(const CudaDriver& d) : d_(d) {}

  tessera_status check(CUresult r, const char* call) {
    if (r == CUDA_SUCCESS) return TESSERA_SUCCESS;
    return fail(r == CUDA_ERROR_OUT_OF_MEMORY ? TESSERA_ERROR_OUT_OF_MEMORY : TESSERA_ERROR_DRIVER,
                "collective: ", call, " failed: ", d_.describe(r));
  }

  tessera_status copy(void* dst, const void* src, size_t bytes, void* stream) override {
    if (!bytes || dst == src) return TESSERA_SUCCESS;
    return check(
        d_.cuMemcpyAsync(reinterpret_cast<CUdeviceptr>(dst), reinterpret_cast<CUdeviceptr>(src), bytes, raw(stream)),
        "cuMemcpyAsync");
  }

  tessera_status copy2D(void* dst, size_t dpitch, const void* src, size_t spitch, size_t width, size_t height,
                        void* stream) override {
    if (!width || !height) return TESSERA_SUCCESS;
    constexpr size_t kMaxPitch = (size_t(1) << 31) - 1;
    if (dpitch > kMaxPitch || spitch > kMaxPitch || height == 1) {
      for (size_t row = 0; row < height; ++row)
        TESSERA_TRY(
            copy(static_cast<char*>(dst) + row * dpitch, static_cast<const char*>(src) + row * spitch, width, stream));
      return TESSERA_SUCCESS;
    }
    CUDA_MEMCPY2D c{};
    c.srcMemoryType = CU_MEMORYTYPE_UNIFIED;
    c.srcDevice = reinterpret_cast<CUdeviceptr>(src);
    c.srcPitch = spitch;
    c.dstMemoryType = CU_MEMORYTYPE_UNIFIED;
    c.dstDevice = reinterpret_cast<CUdeviceptr>(dst);
    c.dstPitch = dpitch;
    c.WidthInBytes = width;
    c.Height = height;
    return check(d_.cuMemcpy2DAsync(&c, raw(stream)), "cuMemcpy2DAsync");
  }

  tessera_status function(int32_t dtype, int32_t op, CUfunction& out) {
    std::lock_guard<std::mutex> lock(mutex_);
    CUfunction& slot = functions_[dtype][op];  // looked up once per (dtype, op)
    if (slot) {
      out = slot;
      return TESSERA_SUCCESS;
    }
    if (!module_) {
      CUresult r = d_.cuModuleLoadData(&module_, tessera_dist_reduce_fatbin);
      if (r != CUDA_SUCCESS) {
        module_ = nullptr;
        return fail(TESSERA_ERROR_NOT_SUPPORTED, "collective: cannot load the reduction kernels: ", d_.describe(r));
      }
    }
    std::string name = concat("tessera_reduce_", dtypeSuffix(dtype), "_", reduceOpName(op));
    CUresult r = d_.cuModuleGetFunction(&slot, module_, name.c_str());
    if (r != CUDA_SUCCESS)
      return fail(TESSERA_ERROR_INTERNAL, "collective: reduction kernel ", name, " missing: ", d_.describe(r));
    out = slot;
    return TESSERA_SUCCESS;
  }

  tessera_status reduce(const ReduceParams& params, int32_t dtype, int32_t op, void* stream) override {
    if (!params.n) return TESSERA_SUCCESS;
    CUfunction f = nullptr;
    TESSERA_TRY(function(dtype, op, f));
    ReduceParams P = params;
    auto aligned = [](const void* p) { return (reinterpret_cast<uintptr_t>(p) & 15u) == 0; };
    bool vec = aligned(P.out);
    for (int r = 0; r < P.p; ++r) vec = vec && aligned(P.in[r]);
    P.vectorized = vec ? 1 : 0;
    uint64_t elemBytes = tessera_dtype_bits(dtype) / 8;
    uint64_t perThread = vec ? std::max<uint64_t>(1, 16 / elemBytes) : 1;
    uint64_t threads = (P.n + perThread - 1) / perThread;
    constexpr uint32_t kBlock = 256;
    uint32_t blocks = static_cast<uint32_t>(std::min<uint64_t>((threads + kBlock - 1) / kBlock, 16384));
    void* args[] = {&P};
    return check(d_.cuLaunchKernel(f, blocks, 1, 1, kBlock, 1, 1, 0, raw(stream), args, nullptr),
                 "cuLaunchKernel (deterministic reduction)");
  }

  tessera_status allocTemp(void** ptr, size_t bytes, void* stream) override {
    CUdeviceptr p = 0;
    TESSERA_TRY(check(d_.cuMemAllocAsync(&p, bytes ? bytes : 1, raw(stream)), "cuMemAllocAsync"));
    *ptr = reinterpret_cast<void*>(p);
    return TESSERA_SUCCESS;
  }
  tessera_status freeTemp(void* ptr, void* stream) override {
    return check(d_.cuMemFreeAsync(reinterpret_cast<CUdeviceptr>(ptr), raw(stream)), "cuMemFreeAsync");
  }

  tessera_status createStream(void** out) override {
    CUstream s = nullptr;
    TESSERA_TRY(check(d_.cuStreamCreate(&s, CU_STREAM_NON_BLOCKING), "cuStreamCreate"));
    *out = s;
    return TESSERA_SUCCESS;
  }
  void destroyStream(void* stream) override {
    if (stream) d_.cuStreamDestroy(raw(stream));
  }
  // One event serves every ordering: a wait uses the event's state when it is enqueued, so the
  // event can be recorded again at once (also while streams are captured into a graph).
  tessera_status order(void* waiter, void* after) override {
    std::lock_guard<std::mutex> lock(mutex_);
    if (!orderEvent_) TESSERA_TRY(check(d_.cuEventCreate(&orderEvent_, CU_EVENT_DISABLE_TIMING), "cuEventCreate"));
    TESSERA_TRY(check(d_.cuEventRecord(orderEvent_, raw(after)), "cuEventRecord"));
    return check(d_.cuStreamWaitEvent(raw(waiter), orderEvent_, 0), "cuStreamWaitEvent");
  }

 private:
  const CudaDriver& d_;
  std::mutex mutex_;
  CUmodule module_ = nullptr;
  CUevent orderEvent_ = nullptr;
  CUfunction functions_[TESSERA_DTYPE_COUNT][4] = {};
};

}  // namespace

DeviceOps* gpuDeviceOps(std::string& why) {
  if (!tessera_dist_reduce_fatbin_size) {
    why = "libtessera_dist was built without nvcc, so it has no GPU reduction kernels";
    return nullptr;
  }
  const CudaDriver* d = CudaDriver::load(why);
  if (!d) return nullptr;
  static GpuDeviceOps* ops = new GpuDeviceOps(*d);  // never destroyed: used during exit
  return ops;
}

}  // namespace tessera::dist
#endif
