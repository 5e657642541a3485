//===- TensorView.cpp - Dtype names, sizes and view byte spans -------------------------------===//
#include "runtime/TensorView.h"

namespace tessera::rt {

namespace {
struct DtypeInfo {
  const char *name;
  uint32_t bits;
};
// Indexed by tessera_dtype; names follow DESIGN.md's canonical spellings.
constexpr DtypeInfo dtypeTable[TESSERA_DTYPE_COUNT] = {
    {"invalid", 0}, {"f64", 64},     {"f32", 32},      {"f16", 16},      {"bf16", 16},
    {"fp8_e4m3", 8}, {"fp8_e5m2", 8}, {"fp6_e2m3", 6}, {"fp6_e3m2", 6}, {"fp4_e2m1", 4},
    {"int4", 4},    {"int8", 8},     {"int16", 16},    {"int32", 32},    {"int64", 64},
    {"uint8", 8},   {"uint16", 16},  {"uint32", 32},   {"uint64", 64},   {"bool", 8},
};
} // namespace

bool isValidDtype(int32_t dtype) { return dtype > 0 && dtype < TESSERA_DTYPE_COUNT; }

ByteSpan byteSpan(const tessera_tensor &t) {
  int64_t lo = 0, hi = 0; // element offsets of the extreme elements
  for (int32_t d = 0; d < t.rank; ++d) {
    if (t.shape[d] <= 0)
      return {};
    int64_t reach = (t.shape[d] - 1) * t.strides[d];
    (reach < 0 ? lo : hi) += reach;
  }
  uint64_t bits = tessera_dtype_bits(t.dtype);
  auto base = reinterpret_cast<uintptr_t>(t.data);
  // Bit offsets of the first and one-past-last element, rounded out to bytes.
  int64_t loBit = lo * static_cast<int64_t>(bits), hiBit = (hi + 1) * static_cast<int64_t>(bits);
  int64_t loByte = loBit >= 0 ? loBit / 8 : -((-loBit + 7) / 8);
  int64_t hiByte = (hiBit + 7) / 8;
  return {base + static_cast<uintptr_t>(loByte), base + static_cast<uintptr_t>(hiByte)};
}

std::string shapeString(const tessera_tensor &t) {
  std::string s = "[";
  for (int32_t d = 0; d < t.rank && d < TESSERA_MAX_RANK; ++d)
    s += (d ? ", " : "") + std::to_string(t.shape[d]);
  return s + "]";
}

} // namespace tessera::rt

using namespace tessera::rt;

extern "C" {

const char *tessera_dtype_name(int32_t dtype) {
  return isValidDtype(dtype) ? dtypeTable[dtype].name : "invalid";
}

uint32_t tessera_dtype_bits(int32_t dtype) { return isValidDtype(dtype) ? dtypeTable[dtype].bits : 0; }

void tessera_tensor_init(tessera_tensor *t, void *data, int32_t dtype, int32_t rank,
                         const int64_t *shape, int32_t device) {
  *t = tessera_tensor{};
  t->data = data;
  t->dtype = dtype;
  t->rank = rank < 0 ? 0 : (rank > TESSERA_MAX_RANK ? TESSERA_MAX_RANK : rank);
  t->device = device;
  int64_t stride = 1;
  for (int32_t d = t->rank - 1; d >= 0; --d) {
    t->shape[d] = shape[d];
    t->strides[d] = stride;
    stride *= shape[d];
  }
}

int64_t tessera_tensor_numel(const tessera_tensor *t) {
  int64_t n = 1;
  for (int32_t d = 0; d < t->rank && d < TESSERA_MAX_RANK; ++d)
    n *= t->shape[d];
  return n;
}

} // extern "C"
