//===- TensorView.h - Dtype facts and per-view checks ----------------------------*- C++ -*-===//
//
// Facts about one tensor view taken alone: its dtype, element count and the byte range it
// touches. Checks that relate a view to a kernel parameter live in LaunchChecks.
//
//===----------------------------------------------------------------------------------------===//
#ifndef TESSERA_RUNTIME_TENSORVIEW_H
#define TESSERA_RUNTIME_TENSORVIEW_H

#include <cstdint>
#include <string>

#include "tessera/runtime.h"

namespace tessera::rt {

bool isValidDtype(int32_t dtype);

// Half-open byte range [begin, end) that a view can touch, relative to address 0.
struct ByteSpan {
  uintptr_t begin = 0;
  uintptr_t end = 0;
  bool empty() const { return begin == end; }
  bool overlaps(const ByteSpan& o) const { return !empty() && !o.empty() && begin < o.end && o.begin < end; }
};

// Span of all elements the view addresses (empty when it has no elements). Strides may be
// negative; sub-byte dtypes round outward to whole bytes.
ByteSpan byteSpan(const tessera_tensor& t);

// True when two views whose byte spans overlap still address no common byte, by their rows:
// every element of a view lies at a byte address r + k P + i, 0 <= i < w (its innermost
// contiguous run, after merging axes contiguous with it, is w bytes; P is the gcd of its other
// strides in bytes), so two views whose runs fall in disjoint ranges modulo the gcd of their
// periods are disjoint (the column ranges of one matrix: the heads of dk and dv written into
// split_qkv's gradient). False when nothing is proven (zero or negative strides, sub-byte dtypes).
bool provablyDisjoint(const tessera_tensor& a, const tessera_tensor& b);

// False when the bytes the view spans (its extents times its strides times the element size,
// from its data pointer) do not fit in 64 bits: such a view cannot be addressed, and its span
// would wrap (byteSpan is meaningless for it).
bool byteSpanFits(const tessera_tensor& t);

// "[3, 4]" for messages.
std::string shapeString(const tessera_tensor& t);

}  // namespace tessera::rt

#endif
