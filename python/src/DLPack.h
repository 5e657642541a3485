// The DLPack exchange structs (https://dmlc.github.io/dlpack, version 0.8 "unversioned" ABI, which
// every producer exports: PyTorch since 1.10, NumPy since 1.22, CuPy, JAX). Written from the
// specification: the layout is a stable C ABI, so the package needs no third-party header.
#pragma once

#include <cstdint>

namespace tessera::py {

enum DLDeviceType : int32_t {
  kDLCPU = 1,
  kDLCUDA = 2,
  kDLCUDAHost = 3,  // pinned host memory: host memory for our purposes
  kDLCUDAManaged = 13,
};

enum DLDataTypeCode : uint8_t {
  kDLInt = 0,
  kDLUInt = 1,
  kDLFloat = 2,
  kDLBfloat = 4,
  kDLBool = 6,
  // DLPack 1.1 (2024): the narrow float formats, one code each.
  kDLFloat8_e4m3fn = 10,
  kDLFloat8_e5m2 = 12,
  kDLFloat6_e2m3fn = 15,
  kDLFloat6_e3m2fn = 16,
  kDLFloat4_e2m1fn = 17,
};

struct DLDevice {
  int32_t device_type;
  int32_t device_id;
};

struct DLDataType {
  uint8_t code;
  uint8_t bits;
  uint16_t lanes;
};

struct DLTensor {
  void* data;
  DLDevice device;
  int32_t ndim;
  DLDataType dtype;
  int64_t* shape;
  int64_t* strides;  // in elements; NULL: compact row-major
  uint64_t byte_offset;
};

struct DLManagedTensor {
  DLTensor dl_tensor;
  void* manager_ctx;
  void (*deleter)(DLManagedTensor* self);
};

// PyCapsule names of the protocol.
inline constexpr const char* kCapsuleName = "dltensor";
inline constexpr const char* kUsedCapsuleName = "used_dltensor";

}  // namespace tessera::py
