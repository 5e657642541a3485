//===- TensorView.cpp - Dtype names, sizes and view byte spans -------------------------------===//
#include "runtime/TensorView.h"

#include <algorithm>
#include <numeric>
#include <utility>
#include <vector>

#include "runtime/Status.h"

namespace tessera::rt {

bool isValidDtype(int32_t dtype) { return dtype > 0 && dtype < TESSERA_DTYPE_COUNT; }

ByteSpan byteSpan(const tessera_tensor& t) {
  int64_t lo = 0, hi = 0;  // element offsets of the extreme elements
  for (int32_t d = 0; d < t.rank; ++d) {
    if (t.shape[d] <= 0) return {};
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

namespace {

// The rows of a view (provablyDisjoint): start (its data address modulo period), period and
// width in bytes; ok false when no such claim can be made.
struct Rows {
  uint64_t start = 0, period = 0, width = 0;
  bool ok = false;
};

Rows rowsOf(const tessera_tensor& t) {
  Rows r;
  uint64_t bits = tessera_dtype_bits(t.dtype);
  if (bits == 0 || bits % 8) return r;
  std::vector<std::pair<int64_t, int64_t>> axes;  // (stride, extent) of axes of extent > 1
  for (int32_t d = 0; d < t.rank; ++d) {
    if (t.shape[d] <= 0 || t.shape[d] == 1) continue;
    if (t.strides[d] <= 0) return r;
    axes.push_back({t.strides[d], t.shape[d]});
  }
  std::sort(axes.begin(), axes.end());
  int64_t run = 1;
  size_t i = 0;
  while (i < axes.size() && axes[i].first == run && run <= INT64_MAX / axes[i].second) run *= axes[i++].second;
  int64_t period = 0;
  for (; i < axes.size(); ++i) period = std::gcd(period, axes[i].first);
  if (period == 0 || run > period) return r;
  r.period = static_cast<uint64_t>(period) * (bits / 8);
  r.width = static_cast<uint64_t>(run) * (bits / 8);
  r.start = reinterpret_cast<uintptr_t>(t.data) % r.period;
  r.ok = true;
  return r;
}

}  // namespace

bool provablyDisjoint(const tessera_tensor& a, const tessera_tensor& b) {
  Rows x = rowsOf(a), y = rowsOf(b);
  if (!x.ok || !y.ok) return false;
  uint64_t p = std::gcd(x.period, y.period);
  if (x.width > p || y.width > p) return false;
  uint64_t ra = x.start % p, rb = y.start % p;
  return (rb + p - ra) % p >= x.width && (ra + p - rb) % p >= y.width;
}

bool byteSpanFits(const tessera_tensor& t) {
  int64_t lo = 0, hi = 0, reach = 0;
  for (int32_t d = 0; d < t.rank; ++d) {
    if (t.shape[d] <= 0) return true;  // no elements: nothing is addressed
    if (__builtin_mul_overflow(t.shape[d] - 1, t.strides[d], &reach) ||
        __builtin_add_overflow(reach < 0 ? lo : hi, reach, reach < 0 ? &lo : &hi))
      return false;
  }
  int64_t bits = tessera_dtype_bits(t.dtype), loBit = 0, hiBit = 0;
  if (__builtin_mul_overflow(lo, bits, &loBit) || __builtin_add_overflow(hi, 1, &hi) ||
      __builtin_mul_overflow(hi, bits, &hiBit) || __builtin_add_overflow(hiBit, 7, &hiBit))
    return false;
  uintptr_t base = reinterpret_cast<uintptr_t>(t.data), end = 0;
  uint64_t below = loBit < 0 ? (0 - static_cast<uint64_t>(loBit) + 7) / 8 : 0;  // bytes before data
  return !__builtin_add_overflow(base, static_cast<uintptr_t>(hiBit / 8), &end) && base >= below;
}

std::string shapeString(const tessera_tensor& t) {
  std::string s = "[";
  for (int32_t d = 0; d < t.rank && d < TESSERA_MAX_RANK; ++d) s += (d ? ", " : "") + std::to_string(t.shape[d]);
  return s + "]";
}

}  // namespace tessera::rt

using namespace tessera::rt;

extern "C" {

// Every tessera_dtype is a row of basic/DTypes.def (numbers 1 .. COUNT - 1).
constexpr int kDTypeRows = 0
#define DTYPE(ID, NAME, SHORT, BITS, KIND, EXP, MANT, ABI, IR, IRNAME, LLVM, CTYPE, DOC) +1
#include "basic/DTypes.def"
    ;
static_assert(kDTypeRows + 1 == TESSERA_DTYPE_COUNT, "basic/DTypes.def and tessera_dtype disagree");

// Names and sizes are the short names and storage widths of basic/DTypes.def.
const char* tessera_dtype_name(int32_t dtype) {
  switch (dtype) {
#define DTYPE(ID, NAME, SHORT, BITS, KIND, EXP, MANT, ABI, IR, IRNAME, LLVM, CTYPE, DOC) \
  case ABI: return SHORT;
#include "basic/DTypes.def"
  }
  return "invalid";
}

uint32_t tessera_dtype_bits(int32_t dtype) {
  switch (dtype) {
#define DTYPE(ID, NAME, SHORT, BITS, KIND, EXP, MANT, ABI, IR, IRNAME, LLVM, CTYPE, DOC) \
  case ABI: return BITS;
#include "basic/DTypes.def"
  }
  return 0;
}

void tessera_tensor_init(tessera_tensor* t, void* data, int32_t dtype, int32_t rank, const int64_t* shape,
                         int32_t device) {
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

tessera_status tessera_tensor_view(const tessera_tensor* src, int64_t offset, int32_t rank, const int64_t* shape,
                                   const int64_t* strides, tessera_tensor* out) {
  if (!src || !out || (rank > 0 && !shape))
    return fail(TESSERA_ERROR_NULL_POINTER, "tessera_tensor_view: null argument");
  if (rank < 0 || rank > TESSERA_MAX_RANK)
    return fail(TESSERA_ERROR_INVALID_ARGUMENT, "tessera_tensor_view: rank ", rank, " is out of range");
  int64_t stride = 1;
  for (int32_t d = src->rank - 1; d >= 0; --d) {
    if (src->shape[d] != 1 && src->strides[d] != stride)
      return fail(TESSERA_ERROR_INVALID_ARGUMENT, "tessera_tensor_view: the ", shapeString(*src),
                  " tensor is not dense row-major, so it has no view of another shape (copy it first)");
    stride *= src->shape[d];
  }
  tessera_tensor t;
  tessera_tensor_init(&t, src->data, src->dtype, rank, shape, src->device);
  // The view's elements must be elements of src: offsets from `offset` to offset + sum of
  // (extent - 1) * stride, strides not negative.
  int64_t last = offset, count = 1;
  for (int32_t d = 0; d < rank; ++d) {
    if (strides) t.strides[d] = strides[d];
    if (t.strides[d] < 0 || t.shape[d] < 0)
      return fail(TESSERA_ERROR_INVALID_ARGUMENT, "tessera_tensor_view: negative extent or stride");
    count *= t.shape[d];
    last += t.shape[d] > 0 ? (t.shape[d] - 1) * t.strides[d] : 0;
  }
  if (count > 0 && (offset < 0 || last >= tessera_tensor_numel(src)))
    return fail(TESSERA_ERROR_SHAPE_MISMATCH, "tessera_tensor_view: a ", shapeString(t), " view at element ", offset,
                " reaches past the ", shapeString(*src), " tensor");
  if (!strides && count != tessera_tensor_numel(src))
    return fail(TESSERA_ERROR_SHAPE_MISMATCH, "tessera_tensor_view: ", shapeString(*src), " and ", shapeString(t),
                " have different element counts");
  uint64_t bits = tessera_dtype_bits(src->dtype);
  t.data = static_cast<char*>(src->data) + offset * static_cast<int64_t>(bits) / 8;
  *out = t;
  return TESSERA_SUCCESS;
}

int64_t tessera_tensor_numel(const tessera_tensor* t) {
  int64_t n = 1;
  for (int32_t d = 0; d < t->rank && d < TESSERA_MAX_RANK; ++d) n *= t->shape[d];
  return n;
}

}  // extern "C"
