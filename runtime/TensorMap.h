//===- TensorMap.h - Tensor maps for TMA copies of GPU variants -------------------*- C++ -*-===//
//
// A GPU variant (tessera_gpu_variant, the sm_90a forms of a tile.mma loop and of attention) reads
// some tensor parameters through the Tensor Memory Accelerator, which needs a tensor map
// (CUtensorMap) encoded on the host for each view. tensorMapShape decides whether a view can have
// one (TMA's rules: rank 2 to 5, contiguous rows, 16-byte aligned data and strides, extents below
// 2^31 so the kernel's 32-bit tile arithmetic holds; the request's innermost extent when it names
// one) and computes what cuTensorMapEncodeTiled takes; with no
// driver involved it is unit-tested on the CPU. TensorMapCache (GPU builds) encodes and keeps the
// maps per (view, request), so repeated launches on the same tensors encode nothing.
//
//===----------------------------------------------------------------------------------------===//
#ifndef TESSERA_RUNTIME_TENSORMAP_H
#define TESSERA_RUNTIME_TENSORMAP_H

#include <cstdint>
#include <string>

#include "tessera/runtime.h"

namespace tessera::rt {

// What cuTensorMapEncodeTiled takes for a view of rank 2 to 5, innermost dimension first; the
// box covers the two innermost dimensions (1 along the others).
struct TensorMapShape {
  uint32_t rank = 2;
  uint64_t dims[5] = {0, 0, 0, 0, 0};        // {columns, rows, ...}
  uint64_t rowStrideBytes = 0;               // of dims[1]
  uint64_t outerStrideBytes[3] = {0, 0, 0};  // of dims[2..4]
  uint32_t box[2] = {0, 0};
  uint32_t elemBytes = 0;
  uint32_t swizzle = 0;
};

// False with `why` when `t` (of `dtype`, a view of `rank` dimensions) cannot be read through a
// tensor map for `req`.
bool tensorMapShape(const tessera_kernel_tensor& t, int32_t dtype, const tessera_tensor_map_desc& req,
                    TensorMapShape& out, std::string& why, int32_t rank = 2);

}  // namespace tessera::rt

#if TESSERA_RT_HAVE_CUDA
#include <array>
#include <map>
#include <mutex>
#include <tuple>

#include "runtime/CudaDriver.h"

namespace tessera::rt {

class TensorMapCache {
 public:
  // The map of view `t` for `req`, encoded on first use. False with `why` when the view cannot
  // have one or the driver refuses it.
  bool get(const CudaDriver& d, const tessera_kernel_tensor& t, int32_t dtype, int32_t rank,
           const tessera_tensor_map_desc& req, CUtensorMap& out, std::string& why);

 private:
  // (data, dims, strides, dtype, box, swizzle): every field the encoding reads.
  using Key =
      std::tuple<uintptr_t, std::array<uint64_t, 5>, std::array<uint64_t, 4>, int32_t, uint32_t, uint32_t, uint32_t>;
  std::mutex mutex_;
  std::map<Key, CUtensorMap> maps_;
};

}  // namespace tessera::rt
#endif

#endif
