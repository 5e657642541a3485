//===- TensorMap.cpp - Tensor maps for TMA copies of GPU variants ---------------------------===//
#include "runtime/TensorMap.h"

#include "runtime/Status.h"

namespace tessera::rt {

bool tensorMapShape(const tessera_kernel_tensor& t, int32_t dtype, const tessera_tensor_map_desc& req,
                    TensorMapShape& out, std::string& why, int32_t rank) {
  uint32_t bits = tessera_dtype_bits(dtype);
  if (bits != 8 && bits != 16 && bits != 32) {
    why = concat("elements of ", tessera_dtype_name(dtype), " cannot be copied by TMA here");
    return false;
  }
  if (rank < 2 || rank > 5) {
    why = concat("a view of rank ", rank, " has no tensor map (2 to 5)");
    return false;
  }
  out.rank = static_cast<uint32_t>(rank);
  out.elemBytes = bits / 8;
  // Dimensions innermost first: c = rank - 1 (columns), r = rank - 2 (rows), then the outer ones.
  const int c = rank - 1, r = rank - 2;
  const int64_t rows = t.shape[r], cols = t.shape[c];
  const int64_t limit = int64_t(1) << 31;
  for (int i = 0; i < rank; ++i)
    if (t.shape[i] <= 0 || t.shape[i] >= limit) {
      why = concat("extents ", rows, " x ", cols, rank > 2 ? " (and outer ones)" : "", " are empty or not below 2^31");
      return false;
    }
  const uint32_t required = req.swizzle >> 16, swizzle = req.swizzle & TESSERA_TENSOR_MAP_SWIZZLE_MASK;
  if (required != 0 && cols != int64_t(required)) {
    why = concat("its innermost extent is ", cols, ", and this form is specialised for ", required);
    return false;
  }
  if (t.strides[c] != 1) {
    why = concat("its rows are not contiguous (stride ", t.strides[c], " along dimension ", c, ")");
    return false;
  }
  const int64_t rowBytes = t.strides[r] * int64_t(out.elemBytes);
  if (rows > 1 && (t.strides[r] < cols || rowBytes % 16 != 0 || rowBytes >= (int64_t(1) << 40))) {
    why = concat("its row stride of ", t.strides[r], " elements is not a multiple of 16 bytes at least one row long");
    return false;
  }
  for (int i = 0; i < r; ++i) {
    const int64_t bytes = t.strides[i] * int64_t(out.elemBytes);
    if (t.shape[i] > 1 && (t.strides[i] <= 0 || bytes % 16 != 0 || bytes >= (int64_t(1) << 40))) {
      why = concat("its stride of ", t.strides[i], " elements along dimension ", i,
                   " is not a positive multiple of 16 bytes");
      return false;
    }
  }
  if (reinterpret_cast<uintptr_t>(t.data) % 16 != 0) {
    why = "its data is not 16-byte aligned";
    return false;
  }
  if (req.box[0] == 0 || req.box[1] == 0 || req.box[0] > 256 || req.box[1] > 256 ||
      req.box[0] * out.elemBytes > swizzle || (swizzle != 32 && swizzle != 64 && swizzle != 128)) {
    why = concat("box ", req.box[0], " x ", req.box[1], " with a ", swizzle, "-byte swizzle is not a TMA box");
    return false;
  }
  out.dims[0] = static_cast<uint64_t>(cols);
  out.dims[1] = static_cast<uint64_t>(rows);
  out.rowStrideBytes = static_cast<uint64_t>(rows > 1 ? rowBytes : cols * int64_t(out.elemBytes) + 15) / 16 * 16;
  for (int i = 0; i < r; ++i) {
    out.dims[2 + i] = static_cast<uint64_t>(t.shape[r - 1 - i]);
    // An extent of 1 may carry any stride; TMA wants one at least as large as the inner span.
    const uint64_t inner = i == 0 ? out.rowStrideBytes * out.dims[1] : out.outerStrideBytes[i - 1] * out.dims[1 + i];
    out.outerStrideBytes[i] =
        t.shape[r - 1 - i] > 1 ? static_cast<uint64_t>(t.strides[r - 1 - i] * int64_t(out.elemBytes)) : inner;
  }
  out.box[0] = req.box[0];
  out.box[1] = req.box[1];
  out.swizzle = swizzle;
  return true;
}

#if TESSERA_RT_HAVE_CUDA

namespace {

bool dataType(int32_t dtype, CUtensorMapDataType& out) {
  switch (dtype) {
    case TESSERA_BF16: out = CU_TENSOR_MAP_DATA_TYPE_BFLOAT16; return true;
    case TESSERA_F16: out = CU_TENSOR_MAP_DATA_TYPE_FLOAT16; return true;
    case TESSERA_F32: out = CU_TENSOR_MAP_DATA_TYPE_FLOAT32; return true;
    case TESSERA_F8_E4M3:
    case TESSERA_F8_E5M2:
    case TESSERA_I8:
    case TESSERA_U8: out = CU_TENSOR_MAP_DATA_TYPE_UINT8; return true;
    default: return false;
  }
}

}  // namespace

bool TensorMapCache::get(const CudaDriver& d, const tessera_kernel_tensor& t, int32_t dtype, int32_t rank,
                         const tessera_tensor_map_desc& req, CUtensorMap& out, std::string& why) {
  TensorMapShape s;
  CUtensorMapDataType type;
  if (!tensorMapShape(t, dtype, req, s, why, rank)) return false;
  if (!dataType(dtype, type)) {
    why = concat("no tensor-map data type for ", tessera_dtype_name(dtype));
    return false;
  }
  Key key{reinterpret_cast<uintptr_t>(t.data),
          {s.dims[0], s.dims[1], s.dims[2], s.dims[3], s.dims[4]},
          {s.rowStrideBytes, s.outerStrideBytes[0], s.outerStrideBytes[1], s.outerStrideBytes[2]},
          dtype,
          s.box[0],
          s.box[1],
          s.swizzle};
  std::lock_guard<std::mutex> lock(mutex_);
  if (auto it = maps_.find(key); it != maps_.end()) {
    out = it->second;
    return true;
  }
  cuuint64_t dims[5] = {s.dims[0], s.dims[1], s.dims[2], s.dims[3], s.dims[4]};
  cuuint64_t strides[4] = {s.rowStrideBytes, s.outerStrideBytes[0], s.outerStrideBytes[1], s.outerStrideBytes[2]};
  cuuint32_t box[5] = {s.box[0], s.box[1], 1, 1, 1};
  cuuint32_t elementStrides[5] = {1, 1, 1, 1, 1};
  CUtensorMapSwizzle swizzle = s.swizzle == 128  ? CU_TENSOR_MAP_SWIZZLE_128B
                               : s.swizzle == 64 ? CU_TENSOR_MAP_SWIZZLE_64B
                                                 : CU_TENSOR_MAP_SWIZZLE_32B;
  // Out-of-bounds boxes read zeros: the kernel relies on that at the edges of M, N and K.
  CUresult r = d.cuTensorMapEncodeTiled(&out, type, s.rank, t.data, dims, strides, box, elementStrides,
                                        CU_TENSOR_MAP_INTERLEAVE_NONE, swizzle, CU_TENSOR_MAP_L2_PROMOTION_L2_256B,
                                        CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
  if (r != CUDA_SUCCESS) {
    why = concat("cuTensorMapEncodeTiled failed: ", d.describe(r));
    return false;
  }
  if (maps_.size() >= 1024)  // views come and go; keep the cache bounded
    maps_.clear();
  maps_[key] = out;
  return true;
}

#endif

}  // namespace tessera::rt
