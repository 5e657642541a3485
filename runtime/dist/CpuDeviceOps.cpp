//===- CpuDeviceOps.cpp - Copies and the fixed-order reduction on CPU ranks ------------------===//
#include <cstdlib>
#include <cstring>

#include "runtime/Status.h"
#include "runtime/dist/DeviceOps.h"

namespace tessera::dist {

using namespace reduce;
using rt::concat;
using rt::fail;

namespace {

template <class C, int OpKind>
void reduceOnHost(const ReduceParams& P) {
  using S = typename C::Storage;
  auto* out = static_cast<S*>(P.out);
  for (uint64_t i = 0; i < P.n; ++i) {
    auto load = [&](int r) {
      Lanes<C, 1> l;
      l.v[0] = C::load(static_cast<const S*>(P.in[r])[i]);
      return l;
    };
    reduceLanes<C, OpKind, 1>(P.p, P.order, load, out + i);
  }
}

template <class C>
void dispatchOp(const ReduceParams& P, int32_t op) {
  switch (op) {
    case kMax: reduceOnHost<C, kMax>(P); break;
    case kMin: reduceOnHost<C, kMin>(P); break;
    case kSum:
      if constexpr (C::kind != Kind::Bool) reduceOnHost<C, kSum>(P);
      break;
    case kAvg:
      if constexpr (C::kind == Kind::Float) reduceOnHost<C, kAvg>(P);
      break;
  }
}

class CpuDeviceOps final : public DeviceOps {
 public:
  tessera_status copy(void* dst, const void* src, size_t bytes, void*) override {
    if (bytes && dst != src) std::memmove(dst, src, bytes);
    return TESSERA_SUCCESS;
  }
  tessera_status copy2D(void* dst, size_t dpitch, const void* src, size_t spitch, size_t width, size_t height,
                        void*) override {
    for (size_t row = 0; row < height; ++row)
      std::memmove(static_cast<char*>(dst) + row * dpitch, static_cast<const char*>(src) + row * spitch, width);
    return TESSERA_SUCCESS;
  }
  tessera_status reduce(const ReduceParams& P, int32_t dtype, int32_t op, void*) override {
    switch (dtype) {
#define TESSERA_REDUCE_TYPE(dt, suffix, codec) \
  case dt: dispatchOp<codec>(P, op); return TESSERA_SUCCESS;
#include "runtime/dist/ReduceTypes.def"
      default: return fail(TESSERA_ERROR_INTERNAL, "reduction of ", tessera_dtype_name(dtype), " reached the CPU");
    }
  }
  tessera_status allocTemp(void** ptr, size_t bytes, void*) override {
    *ptr = std::aligned_alloc(64, (bytes + 63) / 64 * 64 + 64);
    if (!*ptr)
      return fail(TESSERA_ERROR_OUT_OF_MEMORY, "collective: cannot allocate ", bytes, " bytes of scratch memory");
    return TESSERA_SUCCESS;
  }
  tessera_status freeTemp(void* ptr, void*) override {
    std::free(ptr);
    return TESSERA_SUCCESS;
  }
  tessera_status createStream(void** out) override {
    *out = nullptr;
    return TESSERA_SUCCESS;
  }
  void destroyStream(void*) override {}
  tessera_status order(void*, void*) override { return TESSERA_SUCCESS; }
};

}  // namespace

DeviceOps& cpuDeviceOps() {
  static CpuDeviceOps ops;
  return ops;
}

std::string reduceOpName(int32_t op) {
  switch (op) {
    case kSum: return "sum";
    case kMax: return "max";
    case kMin: return "min";
    case kAvg: return "avg";
  }
  return concat("op ", op);
}

bool reducible(int32_t dtype, int32_t op, std::string& why) {
  if (op < kSum || op > kAvg) {
    why = concat("unknown reduction operation ", op, " (TESSERA_REDUCE_SUM, MAX, MIN or AVG)");
    return false;
  }
  Kind kind;
  switch (dtype) {
#define TESSERA_REDUCE_TYPE(dt, suffix, codec) \
  case dt: kind = codec::kind; break;
#include "runtime/dist/ReduceTypes.def"
    default:
      why = concat("dtype ", tessera_dtype_name(dtype),
                   " cannot be reduced (sub-byte dtypes are stored packed; convert to a wider dtype first)");
      return false;
  }
  if (kind == Kind::Bool && (op == kSum || op == kAvg)) {
    why = concat(reduceOpName(op), " of bool is not defined; use max (any) or min (all)");
    return false;
  }
  if (kind != Kind::Float && kind != Kind::Bool && op == kAvg) {
    why = concat("avg of the integer dtype ", tessera_dtype_name(dtype),
                 " would have to round; reduce with sum and divide");
    return false;
  }
  return true;
}

}  // namespace tessera::dist
