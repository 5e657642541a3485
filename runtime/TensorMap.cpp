//===- TensorMap.cpp - Tensor maps for TMA copies of GPU variants ---------------------------===//
#include "runtime/TensorMap.h"

#include "runtime/Status.h"

namespace tessera::rt {

bool tensorMapShape(const tessera_kernel_tensor &t, int32_t dtype, const tessera_tensor_map_desc &req,
                    TensorMapShape &out, std::string &why) {
  uint32_t bits = tessera_dtype_bits(dtype);
  if (bits != 8 && bits != 16 && bits != 32) {
    why = concat("elements of ", tessera_dtype_name(dtype), " cannot be copied by TMA here");
    return false;
  }
  out.elemBytes = bits / 8;
  const int64_t rows = t.shape[0], cols = t.shape[1];
  const int64_t limit = int64_t(1) << 31;
  if (rows <= 0 || cols <= 0 || rows >= limit || cols >= limit) {
    why = concat("extents ", rows, " x ", cols, " are empty or not below 2^31");
    return false;
  }
  if (t.strides[1] != 1) {
    why = concat("its rows are not contiguous (stride ", t.strides[1], " along dimension 1)");
    return false;
  }
  const int64_t rowBytes = t.strides[0] * int64_t(out.elemBytes);
  if (rows > 1 && (t.strides[0] < cols || rowBytes % 16 != 0 || rowBytes >= (int64_t(1) << 40))) {
    why = concat("its row stride of ", t.strides[0], " elements is not a multiple of 16 bytes at least one row long");
    return false;
  }
  if (reinterpret_cast<uintptr_t>(t.data) % 16 != 0) {
    why = "its data is not 16-byte aligned";
    return false;
  }
  if (req.box[0] == 0 || req.box[1] == 0 || req.box[0] > 256 || req.box[1] > 256 ||
      req.box[0] * out.elemBytes > req.swizzle || (req.swizzle != 32 && req.swizzle != 64 && req.swizzle != 128)) {
    why = concat("box ", req.box[0], " x ", req.box[1], " with a ", req.swizzle, "-byte swizzle is not a TMA box");
    return false;
  }
  out.dims[0] = static_cast<uint64_t>(cols);
  out.dims[1] = static_cast<uint64_t>(rows);
  out.rowStrideBytes = static_cast<uint64_t>(rows > 1 ? rowBytes : cols * int64_t(out.elemBytes) + 15) / 16 * 16;
  out.box[0] = req.box[0];
  out.box[1] = req.box[1];
  out.swizzle = req.swizzle;
  return true;
}

#if TESSERA_RT_HAVE_CUDA

namespace {

bool dataType(int32_t dtype, CUtensorMapDataType &out) {
  switch (dtype) {
  case TESSERA_BF16: out = CU_TENSOR_MAP_DATA_TYPE_BFLOAT16; return true;
  case TESSERA_F16: out = CU_TENSOR_MAP_DATA_TYPE_FLOAT16; return true;
  case TESSERA_F32: out = CU_TENSOR_MAP_DATA_TYPE_FLOAT32; return true;
  case TESSERA_F8_E4M3: case TESSERA_F8_E5M2: case TESSERA_I8: case TESSERA_U8:
    out = CU_TENSOR_MAP_DATA_TYPE_UINT8; return true;
  default: return false;
  }
}

} // namespace

bool TensorMapCache::get(const CudaDriver &d, const tessera_kernel_tensor &t, int32_t dtype,
                         const tessera_tensor_map_desc &req, CUtensorMap &out, std::string &why) {
  TensorMapShape s;
  CUtensorMapDataType type;
  if (!tensorMapShape(t, dtype, req, s, why))
    return false;
  if (!dataType(dtype, type)) {
    why = concat("no tensor-map data type for ", tessera_dtype_name(dtype));
    return false;
  }
  Key key{reinterpret_cast<uintptr_t>(t.data), s.dims[0], s.dims[1], s.rowStrideBytes, dtype,
          s.box[0], s.box[1], s.swizzle};
  std::lock_guard<std::mutex> lock(mutex_);
  if (auto it = maps_.find(key); it != maps_.end()) {
    out = it->second;
    return true;
  }
  cuuint64_t dims[2] = {s.dims[0], s.dims[1]};
  cuuint64_t strides[1] = {s.rowStrideBytes};
  cuuint32_t box[2] = {s.box[0], s.box[1]};
  cuuint32_t elementStrides[2] = {1, 1};
  CUtensorMapSwizzle swizzle = s.swizzle == 128  ? CU_TENSOR_MAP_SWIZZLE_128B
                               : s.swizzle == 64 ? CU_TENSOR_MAP_SWIZZLE_64B
                                                 : CU_TENSOR_MAP_SWIZZLE_32B;
  // Out-of-bounds boxes read zeros: the kernel relies on that at the edges of M, N and K.
  CUresult r = d.cuTensorMapEncodeTiled(&out, type, 2, t.data, dims, strides, box, elementStrides,
                                        CU_TENSOR_MAP_INTERLEAVE_NONE, swizzle,
                                        CU_TENSOR_MAP_L2_PROMOTION_L2_256B,
                                        CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
  if (r != CUDA_SUCCESS) {
    why = concat("cuTensorMapEncodeTiled failed: ", d.describe(r));
    return false;
  }
  if (maps_.size() >= 1024) // views come and go; keep the cache bounded
    maps_.clear();
  maps_[key] = out;
  return true;
}

#endif

} // namespace tessera::rt
