//===- CallChecks.cpp - The checks every collective call starts with -------------------------===//
#include "runtime/dist/CallChecks.h"

#include "runtime/Status.h"
#include "runtime/TensorView.h"
#include "runtime/dist/DeviceOps.h"
#include "runtime/dist/World.h"

namespace tessera::dist {

using rt::concat;
using rt::fail;

std::string Call::what() const { return concat(opKindName(kind), " of '", name, "'"); }

tessera_status begin(Call& c, const tessera_collective_options* opts) {
  TESSERA_TRY(checkComm(c.fn, c.comm));
  TESSERA_TRY(c.comm->live());
  if (!opts) return TESSERA_SUCCESS;
  if (opts->name) c.name = opts->name;
  c.stream = opts->stream;
  if (opts->flags & ~TESSERA_COLLECTIVE_NONDETERMINISTIC)
    return fail(TESSERA_ERROR_INVALID_ARGUMENT, c.fn, ": unknown flags 0x", std::hex, opts->flags);
  c.deterministic = !(opts->flags & TESSERA_COLLECTIVE_NONDETERMINISTIC);
  if (opts->order != TESSERA_ORDER_TREE && opts->order != TESSERA_ORDER_SEQUENTIAL)
    return fail(TESSERA_ERROR_INVALID_ARGUMENT, c.fn, ": unknown reduction order ", opts->order,
                " (TESSERA_ORDER_TREE or TESSERA_ORDER_SEQUENTIAL)");
  c.order = opts->order;
  return TESSERA_SUCCESS;
}

// A dense view of memory the communicator's device can use.
tessera_status checkView(const Call& c, const char* role, const tessera_tensor* t, View& v) {
  auto err = [&](tessera_status st, const auto&... parts) {
    return fail(st, c.fn, ": ", c.what(), ": ", role, " ", parts...);
  };
  if (!t) return err(TESSERA_ERROR_NULL_POINTER, "is a null tensor view");
  if (!tessera_dtype_bits(t->dtype)) return err(TESSERA_ERROR_DTYPE_MISMATCH, "has the unknown dtype ", t->dtype);
  if (t->rank < 0 || t->rank > TESSERA_MAX_RANK)
    return err(TESSERA_ERROR_RANK_MISMATCH, "has rank ", t->rank, " (0..", TESSERA_MAX_RANK, ")");
  int64_t expect = 1;
  for (int32_t d = t->rank - 1; d >= 0; --d) {
    if (t->shape[d] < 0) return err(TESSERA_ERROR_SHAPE_MISMATCH, "dimension ", d, " has negative size ", t->shape[d]);
    if (t->shape[d] > 1 && t->strides[d] != expect)
      return err(TESSERA_ERROR_INVALID_ARGUMENT, "is not dense row-major (shape ", tessera::rt::shapeString(*t),
                 ", stride ", t->strides[d], " in dimension ", d, " where ", expect,
                 " was expected); collectives take dense views");
    expect *= t->shape[d];
  }
  v.t = t;
  v.numel = tessera_tensor_numel(t);
  uint64_t bits = uint64_t(v.numel) * tessera_dtype_bits(t->dtype);
  if (bits % 8)
    return err(TESSERA_ERROR_SHAPE_MISMATCH, "holds ", v.numel, " ", tessera_dtype_name(t->dtype),
               " values, which do not fill whole bytes");
  v.bytes = bits / 8;
  if (v.numel && !t->data) return err(TESSERA_ERROR_NULL_POINTER, "has a null data pointer");
  if (c.comm->gpu && v.numel) {
    std::string why;
    if (t->device == TESSERA_HOST || !c.comm->backend->pointerUsable(t->data, why))
      return err(TESSERA_ERROR_HOST_POINTER,
                 "is host memory, but this rank's collectives run on the GPU; use "
                 "memory from tessera_malloc");
  }
  return TESSERA_SUCCESS;
}

tessera_status sameDtype(const Call& c, const View& a, const View& b) {
  if (a.t->dtype != b.t->dtype)
    return fail(TESSERA_ERROR_DTYPE_MISMATCH, c.fn, ": ", c.what(), ": send is ", tessera_dtype_name(a.t->dtype),
                " but recv is ", tessera_dtype_name(b.t->dtype));
  return TESSERA_SUCCESS;
}

bool overlap(const View& a, const View& b) {
  return a.bytes && b.bytes && a.data() < b.data() + b.bytes && b.data() < a.data() + a.bytes;
}

tessera_status noOverlap(const Call& c, const View& a, const View& b) {
  if (overlap(a, b)) return fail(TESSERA_ERROR_ALIASED_MUT, c.fn, ": ", c.what(), ": send and recv overlap in memory");
  return TESSERA_SUCCESS;
}

tessera_status checkReducible(const Call& c, int32_t dtype, int32_t op) {
  std::string why;
  if (!reducible(dtype, op, why))
    return fail(op < 0 || op > 3 ? TESSERA_ERROR_INVALID_ARGUMENT : TESSERA_ERROR_NOT_SUPPORTED, c.fn, ": ", c.what(),
                ": ", why);
  return TESSERA_SUCCESS;
}

Signature signatureOf(const Call& c, const View& v, int32_t p0, int32_t p1) {
  Signature s =
      makeSignature(c.kind, c.name.c_str(), v.t ? v.t->dtype : 0, v.t ? v.t->rank : 0, v.t ? v.t->shape : nullptr);
  s.param[0] = p0;
  s.param[1] = p1;
  s.param[2] = c.order;
  s.param[3] = c.deterministic ? 0 : 1;
  return s;
}

std::string sizeMismatch(const Call& c, const char* rule, const View& send, const View& recv) {
  return concat(c.fn, ": ", c.what(), ": ", rule, " (send ", typeString(send.t->dtype, send.t->rank, send.t->shape),
                ", recv ", typeString(recv.t->dtype, recv.t->rank, recv.t->shape), ", ", c.comm->size(), " ranks)");
}

// The checks every collective with a send and a recv view starts with: the call's options, both
// views, one dtype.
tessera_status beginSendRecv(Call& c, const tessera_collective_options* opts, const tessera_tensor* send,
                             const tessera_tensor* recv, View& s, View& r) {
  TESSERA_TRY(begin(c, opts));
  TESSERA_TRY(checkView(c, "send", send, s));
  TESSERA_TRY(checkView(c, "recv", recv, r));
  return sameDtype(c, s, r);
}

// send and recv of as many elements, either the same memory (in place) or not overlapping.
tessera_status sameSizeInPlaceOrApart(const Call& c, const View& s, const View& r) {
  if (s.numel != r.numel)
    return fail(TESSERA_ERROR_SHAPE_MISMATCH, sizeMismatch(c, "send and recv must have as many elements", s, r));
  return s.data() == r.data() ? TESSERA_SUCCESS : noOverlap(c, s, r);
}

}  // namespace tessera::dist
