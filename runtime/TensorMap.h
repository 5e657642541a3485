//===- TensorMap.h - Tensor maps for TMA copies of GPU variants -------------------*- C++ -*-===//
//
// A GPU variant (tessera_gpu_variant, the sm_90a form of a tile.mma loop) reads some tensor
// parameters through the Tensor Memory Accelerator, which needs a tensor map (CUtensorMap)
// encoded on the host for each view. tensorMapShape decides whether a view can have one (TMA's
// rules: rank 2, contiguous rows, 16-byte aligned data and row stride, extents below 2^31 so the
// kernel's 32-bit tile arithmetic holds) and computes what cuTensorMapEncodeTiled takes; with no
// driver involved it is unit-tested on the CPU. TensorMapCache (GPU builds) encodes and keeps the
// maps per (view, request), so repeated launches on the same tensors encode nothing.
//
//===----------------------------------------------------------------------------------------===//
#ifndef TESSERA_RUNTIME_TENSORMAP_H
#define TESSERA_RUNTIME_TENSORMAP_H

#include "tessera/runtime.h"

#include <cstdint>
#include <string>

namespace tessera::rt {

// What cuTensorMapEncodeTiled takes for a rank-2 view, innermost dimension first.
struct TensorMapShape {
  uint64_t dims[2] = {0, 0};  // {columns, rows}
  uint64_t rowStrideBytes = 0;
  uint32_t box[2] = {0, 0};
  uint32_t elemBytes = 0;
  uint32_t swizzle = 0;
};

// False with `why` when `t` (of `dtype`) cannot be read through a tensor map for `req`.
bool tensorMapShape(const tessera_kernel_tensor &t, int32_t dtype, const tessera_tensor_map_desc &req,
                    TensorMapShape &out, std::string &why);

} // namespace tessera::rt

#if TESSERA_RT_HAVE_CUDA
#include "runtime/CudaDriver.h"

#include <map>
#include <mutex>
#include <tuple>

namespace tessera::rt {

class TensorMapCache {
public:
  // The map of view `t` for `req`, encoded on first use. False with `why` when the view cannot
  // have one or the driver refuses it.
  bool get(const CudaDriver &d, const tessera_kernel_tensor &t, int32_t dtype,
           const tessera_tensor_map_desc &req, CUtensorMap &out, std::string &why);

private:
  using Key = std::tuple<uintptr_t, uint64_t, uint64_t, uint64_t, int32_t, uint32_t, uint32_t, uint32_t>;
  std::mutex mutex_;
  std::map<Key, CUtensorMap> maps_;
};

} // namespace tessera::rt
#endif

#endif
