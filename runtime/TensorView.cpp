//===- TensorView.cpp - Dtype names, sizes and view byte spans -------------------------------===//
#include "runtime/TensorView.h"

namespace tessera::rt {

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

bool byteSpanFits(const tessera_tensor &t) {
  int64_t lo = 0, hi = 0, reach = 0;
  for (int32_t d = 0; d < t.rank; ++d) {
    if (t.shape[d] <= 0)
      return true; // no elements: nothing is addressed
    if (__builtin_mul_overflow(t.shape[d] - 1, t.strides[d], &reach) ||
        __builtin_add_overflow(reach < 0 ? lo : hi, reach, reach < 0 ? &lo : &hi))
      return false;
  }
  int64_t bits = tessera_dtype_bits(t.dtype), loBit = 0, hiBit = 0;
  if (__builtin_mul_overflow(lo, bits, &loBit) || __builtin_add_overflow(hi, 1, &hi) ||
      __builtin_mul_overflow(hi, bits, &hiBit) || __builtin_add_overflow(hiBit, 7, &hiBit))
    return false;
  uintptr_t base = reinterpret_cast<uintptr_t>(t.data), end = 0;
  uint64_t below = loBit < 0 ? (0 - static_cast<uint64_t>(loBit) + 7) / 8 : 0; // bytes before data
  return !__builtin_add_overflow(base, static_cast<uintptr_t>(hiBit / 8), &end) && base >= below;
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

// Every tessera_dtype is a row of basic/DTypes.def (numbers 1 .. COUNT - 1).
constexpr int kDTypeRows = 0
#define DTYPE(ID, NAME, SHORT, BITS, KIND, EXP, MANT, ABI, IR, IRNAME, LLVM, CTYPE, DOC) +1
#include "basic/DTypes.def"
    ;
static_assert(kDTypeRows + 1 == TESSERA_DTYPE_COUNT, "basic/DTypes.def and tessera_dtype disagree");

// Names and sizes are the short names and storage widths of basic/DTypes.def.
const char *tessera_dtype_name(int32_t dtype) {
  switch (dtype) {
#define DTYPE(ID, NAME, SHORT, BITS, KIND, EXP, MANT, ABI, IR, IRNAME, LLVM, CTYPE, DOC) case ABI: return SHORT;
#include "basic/DTypes.def"
  }
  return "invalid";
}

uint32_t tessera_dtype_bits(int32_t dtype) {
  switch (dtype) {
#define DTYPE(ID, NAME, SHORT, BITS, KIND, EXP, MANT, ABI, IR, IRNAME, LLVM, CTYPE, DOC) case ABI: return BITS;
#include "basic/DTypes.def"
  }
  return 0;
}

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
