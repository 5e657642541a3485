//===- OverlapApi.cpp - The C API of the overlapped collectives -----------------------------===//
#include "runtime/Status.h"
#include "runtime/dist/CallChecks.h"
#include "runtime/dist/Overlap.h"
#include "runtime/dist/World.h"

using namespace tessera::dist;
using tessera::rt::concat;
using tessera::rt::fail;

namespace {

// The user's callback as a BlockFn: block k's view (of `shape`, the dtype's bytes at data), the
// caller's stream handle. A failure aborts the communicator: the other ranks' transfers of this
// collective can no longer complete.
BlockFn callback(tessera_comm comm, const std::string& what, tessera_block_fn fn, void* user, int32_t dtype,
                 int32_t rank, const int64_t* shape, tessera_stream stream) {
  std::vector<int64_t> dims(shape, shape + rank);
  return [=](int block, char* data, void*) -> tessera_status {
    tessera_tensor view;
    tessera_tensor_init(&view, data, dtype, rank, dims.data(), 0);
    tessera_clear_error();
    tessera_status st = fn(user, block, &view, stream);
    if (st == TESSERA_SUCCESS) return st;
    std::string detail = tessera_last_error_message();
    std::string msg = concat(what, " on ", comm->where(), ": the callback for block ", block, " failed (",
                             tessera_status_name(st), detail.empty() ? "" : ": ", detail,
                             "); the communicator is aborted, since the other ranks' transfers cannot complete");
    comm->abort(TESSERA_ERROR_COMM_ABORTED, msg);
    return fail(st, msg);
  };
}

}  // namespace

extern "C" {

tessera_status tessera_all_gather_overlap(tessera_comm comm, const tessera_tensor* send, const tessera_tensor* recv,
                                          tessera_block_fn on_block, void* user,
                                          const tessera_collective_options* opts) {
  Call c{"tessera_all_gather_overlap", OpKind::AllGatherOverlap, comm};
  View s, r;
  TESSERA_TRY(beginSendRecv(c, opts, send, recv, s, r));
  if (!on_block) return fail(TESSERA_ERROR_NULL_POINTER, c.fn, ": ", c.what(), ": null block callback");
  if (r.numel != s.numel * comm->size())
    return fail(TESSERA_ERROR_SHAPE_MISMATCH, sizeMismatch(c, "recv must hold the send elements of every rank", s, r));
  TESSERA_TRY(noOverlap(c, s, r));
  TESSERA_TRY(agree(*comm, signatureOf(c, s), c.what()));
  BlockFn fn = callback(comm, c.what(), on_block, user, s.t->dtype, s.t->rank, s.t->shape, c.stream);
  char *in = s.data(), *out = r.data();
  size_t bytes = s.bytes;
  return issue(*comm, c.stream, c.what(), r.bytes, [comm, in, out, bytes, fn](void* stream, const Deadline& d) {
    return allGatherOverlap(*comm, in, out, bytes, fn, stream, d);
  });
}

tessera_status tessera_reduce_scatter_overlap(tessera_comm comm, const tessera_tensor* recv, int32_t op,
                                              tessera_block_fn produce, void* user,
                                              const tessera_collective_options* opts) {
  Call c{"tessera_reduce_scatter_overlap", OpKind::ReduceScatterOverlap, comm};
  TESSERA_TRY(begin(c, opts));
  View r;
  TESSERA_TRY(checkView(c, "recv", recv, r));
  if (!produce) return fail(TESSERA_ERROR_NULL_POINTER, c.fn, ": ", c.what(), ": null produce callback");
  TESSERA_TRY(checkReducible(c, r.t->dtype, op));
  TESSERA_TRY(agree(*comm, signatureOf(c, r, op), c.what()));
  ReduceSpec spec{r.t->dtype, op, c.order, true};
  BlockFn fn = callback(comm, c.what(), produce, user, r.t->dtype, r.t->rank, r.t->shape, c.stream);
  char* out = r.data();
  size_t n = static_cast<size_t>(r.numel);
  return issue(*comm, c.stream, c.what(), r.bytes * comm->size(),
               [comm, out, n, spec, fn](void* stream, const Deadline& d) {
                 return reduceScatterOverlap(*comm, out, n, spec, fn, stream, d);
               });
}

}  // extern "C"
