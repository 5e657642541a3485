//===- CudaDriver.h - The CUDA driver API, resolved at run time -------------------*- C++ -*-===//
//
// libcuda.so.1 is opened with dlopen on first use instead of being linked, so programs built
// against libtessera_rt start (and fall back to the CPU executor) on machines without a driver.
// Prototypes come from the toolkit's cuda.h; when the build has no CUDA headers,
// TESSERA_RT_HAVE_CUDA is 0 and the GPU path compiles out.
//
//===----------------------------------------------------------------------------------------===//
#ifndef TESSERA_RUNTIME_CUDADRIVER_H
#define TESSERA_RUNTIME_CUDADRIVER_H

#if TESSERA_RT_HAVE_CUDA
#include <cuda.h>
#include <string>

namespace tessera::rt {

// Each entry names the API function; cuda.h maps several to versioned symbols
// (cuMemAlloc -> cuMemAlloc_v2), and the loader resolves the versioned name.
#define TESSERA_CUDA_FUNCTIONS(X) \
  X(cuInit)                       \
  X(cuGetErrorName)               \
  X(cuGetErrorString)             \
  X(cuDeviceGetCount)             \
  X(cuDeviceGet)                  \
  X(cuDeviceGetName)              \
  X(cuDeviceGetAttribute)         \
  X(cuDevicePrimaryCtxRetain)     \
  X(cuDevicePrimaryCtxRelease)    \
  X(cuCtxSetCurrent)              \
  X(cuCtxSynchronize)             \
  X(cuModuleLoadData)             \
  X(cuModuleUnload)               \
  X(cuModuleGetFunction)          \
  X(cuFuncSetAttribute)           \
  X(cuLaunchKernel)               \
  X(cuMemAlloc)                   \
  X(cuMemFree)                    \
  X(cuMemcpy)                     \
  X(cuMemcpyAsync)                \
  X(cuMemsetD8)                   \
  X(cuPointerGetAttribute)        \
  X(cuStreamCreate)               \
  X(cuStreamDestroy)              \
  X(cuStreamSynchronize)          \
  X(cuStreamWaitEvent)            \
  X(cuEventCreate)                \
  X(cuEventDestroy)               \
  X(cuEventRecord)                \
  X(cuEventSynchronize)           \
  X(cuEventElapsedTime)           \
  X(cuStreamBeginCapture)         \
  X(cuStreamEndCapture)           \
  X(cuGraphInstantiate)           \
  X(cuGraphLaunch)                \
  X(cuGraphDestroy)               \
  X(cuGraphExecDestroy)           \
  X(cuMemAllocAsync)              \
  X(cuMemFreeAsync)               \
  X(cuStreamIsCapturing)          \
  X(cuEventQuery)                 \
  X(cuModuleGetGlobal)            \
  X(cuTensorMapEncodeTiled)       \
  X(cuLaunchKernelEx)             \
  X(cuOccupancyMaxActiveClusters) \
  X(cuDeviceGetDefaultMemPool)    \
  X(cuMemPoolSetAttribute)        \
  X(cuGraphExecUpdate)

// What the distributed runtime (runtime/dist: stream polling for timeouts, strided copies)
// needs besides; a list of its own so that the two grow without touching each other.
#define TESSERA_CUDA_DIST_FUNCTIONS(X) \
  X(cuStreamQuery)                     \
  X(cuMemcpy2DAsync)                   \
  X(cuMemsetD8Async)

struct CudaDriver {
#define TESSERA_CUDA_DECLARE(fn) decltype(&::fn) fn = nullptr;
  TESSERA_CUDA_FUNCTIONS(TESSERA_CUDA_DECLARE)
  TESSERA_CUDA_DIST_FUNCTIONS(TESSERA_CUDA_DECLARE)
#undef TESSERA_CUDA_DECLARE

  // The process-wide driver, or null with `why` set (no libcuda.so.1, missing symbol).
  static const CudaDriver* load(std::string& why);
  // "CUDA_ERROR_X: description" for messages.
  std::string describe(CUresult r) const;
};

}  // namespace tessera::rt

#endif  // TESSERA_RT_HAVE_CUDA
#endif
