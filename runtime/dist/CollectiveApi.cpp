//===- CollectiveApi.cpp - The C API of collectives: checks, agreement, then the algorithm --===//
//
// Each call checks its arguments (CallChecks.h), then the ranks agree on the call's signature,
// then the algorithm is issued on the stream. Nothing moves until all three passed.
//
//===----------------------------------------------------------------------------------------===//
#include "runtime/Status.h"
#include "runtime/dist/CallChecks.h"
#include "runtime/dist/Collectives.h"
#include "runtime/dist/Signature.h"
#include "runtime/dist/World.h"

using namespace tessera::dist;
using tessera::rt::concat;
using tessera::rt::fail;

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
