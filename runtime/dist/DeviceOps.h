//===- DeviceOps.h - The local work of collectives on one device ------------------*- C++ -*-===//
//
// Copies, strided copies and the deterministic local reduction, on the GPU (enqueued on a
// CUstream: cuMemcpyAsync, cuMemcpy2DAsync, the kernels of kernels/Reduce.cu) or on the CPU
// (done before returning). Both reduce with ReduceOps.h, so their bits agree.
//
//===----------------------------------------------------------------------------------------===//
#ifndef TESSERA_RUNTIME_DIST_DEVICEOPS_H
#define TESSERA_RUNTIME_DIST_DEVICEOPS_H

#include <cstddef>
#include <string>

#include "runtime/dist/ReduceOps.h"
#include "tessera/runtime.h"

namespace tessera::dist {

class DeviceOps {
 public:
  virtual ~DeviceOps() = default;
  virtual tessera_status copy(void* dst, const void* src, size_t bytes, void* stream) = 0;
  // `height` rows of `width` bytes, rows `spitch` / `dpitch` bytes apart.
  virtual tessera_status copy2D(void* dst, size_t dpitch, const void* src, size_t spitch, size_t width, size_t height,
                                void* stream) = 0;
  // params.out[i] = op over params.in[0..p) of element i (dtype and op checked by reducible()).
  virtual tessera_status reduce(const reduce::ReduceParams& params, int32_t dtype, int32_t op, void* stream) = 0;
  // Scratch memory ordered on the stream (cuMemAllocAsync / host memory).
  virtual tessera_status allocTemp(void** ptr, size_t bytes, void* stream) = 0;
  virtual tessera_status freeTemp(void* ptr, void* stream) = 0;
  // A second stream, for transfers that overlap the caller's work (GPU: a non-blocking
  // CUstream; CPU: null, everything runs in call order anyway).
  virtual tessera_status createStream(void** out) = 0;
  virtual void destroyStream(void* stream) = 0;
  // Work enqueued on `waiter` from now on starts after the work enqueued on `after` so far
  // (an event recorded on one and waited for by the other; nothing on the CPU).
  virtual tessera_status order(void* waiter, void* after) = 0;
};

DeviceOps& cpuDeviceOps();
// The GPU's, or null with `why` (built without CUDA or without the reduction kernels).
DeviceOps* gpuDeviceOps(std::string& why);

// Whether a deterministic reduction takes `dtype` with `op`; if not, `why` says why.
bool reducible(int32_t dtype, int32_t op, std::string& why);
// "sum", "max", "min", "avg" (or "op N").
std::string reduceOpName(int32_t op);

}  // namespace tessera::dist

#endif
