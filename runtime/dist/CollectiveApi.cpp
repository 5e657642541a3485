//===- CollectiveApi.cpp - The C API of collectives: checks, agreement, then the algorithm --===//
//
// Each call checks its arguments locally (dense views of the right dtypes and sizes, memory the
// device can use, no partial overlaps), then the ranks agree on the call's signature, then the
// algorithm is issued on the stream. Nothing moves until all three passed.
//
//===----------------------------------------------------------------------------------------===//
#include "runtime/Status.h"
#include "runtime/TensorView.h"
#include "runtime/dist/Collectives.h"
#include "runtime/dist/Signature.h"
#include "runtime/dist/World.h"

using namespace tessera::dist;
using tessera::rt::concat;
using tessera::rt::fail;

namespace {

struct Call {
  const char* fn;  // "tessera_all_reduce"
  OpKind kind;
  tessera_comm comm;
  std::string name = "tensor";
  tessera_stream stream = nullptr;
  bool deterministic = true;
  int32_t order = TESSERA_ORDER_TREE;
  std::string what() const { return concat(opKindName(kind), " of '", name, "'"); }
};

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

struct View {
  const tessera_tensor* t = nullptr;
  int64_t numel = 0;
  size_t bytes = 0;
  char* data() const { return static_cast<char*>(t->data); }
};

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

Signature signatureOf(const Call& c, const View& v, int32_t p0 = 0, int32_t p1 = 0) {
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

}  // namespace

extern "C" {

tessera_status tessera_all_reduce(tessera_comm comm, const tessera_tensor* send, const tessera_tensor* recv, int32_t op,
                                  const tessera_collective_options* opts) {
  Call c{"tessera_all_reduce", OpKind::AllReduce, comm};
  View s, r;
  TESSERA_TRY(beginSendRecv(c, opts, send, recv, s, r));
  TESSERA_TRY(sameSizeInPlaceOrApart(c, s, r));
  TESSERA_TRY(checkReducible(c, s.t->dtype, op));
  TESSERA_TRY(agree(*comm, signatureOf(c, s, op), c.what()));
  ReduceSpec spec{s.t->dtype, op, c.order, c.deterministic};
  char *in = s.data(), *out = r.data();
  size_t n = static_cast<size_t>(s.numel);
  return issue(*comm, c.stream, c.what(), s.bytes, [comm, in, out, n, spec](void* stream, const Deadline& d) {
    return allReduce(*comm, in, out, n, spec, stream, d);
  });
}

tessera_status tessera_all_gather(tessera_comm comm, const tessera_tensor* send, const tessera_tensor* recv,
                                  const tessera_collective_options* opts) {
  Call c{"tessera_all_gather", OpKind::AllGather, comm};
  View s, r;
  TESSERA_TRY(beginSendRecv(c, opts, send, recv, s, r));
  if (r.numel != s.numel * comm->size())
    return fail(TESSERA_ERROR_SHAPE_MISMATCH, sizeMismatch(c, "recv must hold the send elements of every rank", s, r));
  bool inPlace = s.data() == r.data() + size_t(comm->rank()) * s.bytes;
  if (!inPlace) TESSERA_TRY(noOverlap(c, s, r));
  TESSERA_TRY(agree(*comm, signatureOf(c, s), c.what()));
  char *in = s.data(), *out = r.data();
  size_t bytes = s.bytes;
  return issue(*comm, c.stream, c.what(), r.bytes, [comm, in, out, bytes](void* stream, const Deadline& d) {
    return allGather(*comm, in, out, bytes, stream, d);
  });
}

tessera_status tessera_reduce_scatter(tessera_comm comm, const tessera_tensor* send, const tessera_tensor* recv,
                                      int32_t op, const tessera_collective_options* opts) {
  Call c{"tessera_reduce_scatter", OpKind::ReduceScatter, comm};
  View s, r;
  TESSERA_TRY(beginSendRecv(c, opts, send, recv, s, r));
  if (s.numel != r.numel * comm->size())
    return fail(TESSERA_ERROR_SHAPE_MISMATCH, sizeMismatch(c, "send must hold one recv-sized block per rank", s, r));
  TESSERA_TRY(noOverlap(c, s, r));
  TESSERA_TRY(checkReducible(c, s.t->dtype, op));
  TESSERA_TRY(agree(*comm, signatureOf(c, r, op), c.what()));
  ReduceSpec spec{s.t->dtype, op, c.order, c.deterministic};
  char *in = s.data(), *out = r.data();
  size_t n = static_cast<size_t>(r.numel);
  return issue(*comm, c.stream, c.what(), s.bytes, [comm, in, out, n, spec](void* stream, const Deadline& d) {
    return reduceScatter(*comm, in, out, n, spec, stream, d);
  });
}

tessera_status tessera_broadcast(tessera_comm comm, const tessera_tensor* send, const tessera_tensor* recv,
                                 int32_t root, const tessera_collective_options* opts) {
  Call c{"tessera_broadcast", OpKind::Broadcast, comm};
  TESSERA_TRY(begin(c, opts));
  if (root < 0 || root >= comm->size())
    return fail(TESSERA_ERROR_INVALID_ARGUMENT, c.fn, ": ", c.what(), ": root ", root, " is not a rank of ",
                comm->where());
  View s, r;
  TESSERA_TRY(checkView(c, "recv", recv, r));
  bool isRoot = comm->rank() == root;
  if (isRoot) {
    TESSERA_TRY(checkView(c, "send", send, s));
    TESSERA_TRY(sameDtype(c, s, r));
    TESSERA_TRY(sameSizeInPlaceOrApart(c, s, r));
  }
  TESSERA_TRY(agree(*comm, signatureOf(c, r, 0, root), c.what()));
  char *in = isRoot ? s.data() : nullptr, *out = r.data();
  size_t bytes = r.bytes;
  return issue(*comm, c.stream, c.what(), bytes, [comm, in, out, bytes, root](void* stream, const Deadline& d) {
    return broadcast(*comm, in, out, bytes, root, stream, d);
  });
}

tessera_status tessera_all_to_all(tessera_comm comm, const tessera_tensor* send, const tessera_tensor* recv,
                                  const tessera_collective_options* opts) {
  Call c{"tessera_all_to_all", OpKind::AllToAll, comm};
  View s, r;
  TESSERA_TRY(beginSendRecv(c, opts, send, recv, s, r));
  int p = comm->size();
  if (s.numel != r.numel || s.numel % p || (uint64_t(s.numel / p) * tessera_dtype_bits(s.t->dtype)) % 8)
    return fail(TESSERA_ERROR_SHAPE_MISMATCH,
                sizeMismatch(c, "send and recv must have as many elements, in one whole-byte block per rank", s, r));
  TESSERA_TRY(noOverlap(c, s, r));
  TESSERA_TRY(agree(*comm, signatureOf(c, s), c.what()));
  char *in = s.data(), *out = r.data();
  size_t bytes = s.bytes;
  return issue(*comm, c.stream, c.what(), bytes, [comm, in, out, bytes](void* stream, const Deadline& d) {
    return allToAll(*comm, in, out, bytes, stream, d);
  });
}

static tessera_status pointToPoint(const char* fn, tessera_comm comm, const tessera_tensor* t, int32_t peer,
                                   bool sending, const tessera_collective_options* opts) {
  Call c{fn, OpKind::SendRecv, comm};
  TESSERA_TRY(begin(c, opts));
  if (peer < 0 || peer >= comm->size() || peer == comm->rank())
    return fail(TESSERA_ERROR_INVALID_ARGUMENT, fn, ": ", c.what(), ": peer ", peer, " is not another rank of ",
                comm->where());
  View v;
  TESSERA_TRY(checkView(c, sending ? "send" : "recv", t, v));
  int sender = sending ? comm->rank() : peer;
  TESSERA_TRY(agreePair(*comm, peer, signatureOf(c, v, sender), c.what()));
  char* data = v.data();
  size_t bytes = v.bytes;
  std::string what = concat(sending ? "send" : "recv", " of '", c.name, "' ", sending ? "to" : "from", " rank ", peer);
  return issue(*comm, c.stream, what, bytes, [comm, data, bytes, peer, sending](void* stream, const Deadline& d) {
    return sending ? sendTo(*comm, data, bytes, peer, stream, d) : recvFrom(*comm, data, bytes, peer, stream, d);
  });
}

tessera_status tessera_send(tessera_comm comm, const tessera_tensor* send, int32_t peer,
                            const tessera_collective_options* opts) {
  return pointToPoint("tessera_send", comm, send, peer, true, opts);
}

tessera_status tessera_recv(tessera_comm comm, const tessera_tensor* recv, int32_t peer,
                            const tessera_collective_options* opts) {
  return pointToPoint("tessera_recv", comm, recv, peer, false, opts);
}

tessera_status tessera_barrier(tessera_comm comm, const tessera_collective_options* opts) {
  Call c{"tessera_barrier", OpKind::Barrier, comm};
  c.name = "";
  TESSERA_TRY(begin(c, opts));
  TESSERA_TRY(agree(*comm, signatureOf(c, View{}), "barrier"));
  return issue(*comm, c.stream, "barrier", 0, [comm](void* stream, const Deadline& d) {
    return comm->size() == 1 ? TESSERA_SUCCESS : comm->transport->barrier(stream, d);
  });
}

}  // extern "C"
