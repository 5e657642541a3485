//===- Peer.cpp - The library's own collectives, called directly ----------------------------===//
#include "runtime/dist/Peer.h"

#include <string>

#include "runtime/Status.h"
#include "runtime/dist/Comm.h"
#include "runtime/dist/Nccl.h"

namespace tessera::dist {

tessera_status peerCollective(tessera_comm c, PeerOp op, const void* send, void* recv, size_t count, int32_t dtype,
                              tessera_stream stream) {
  TESSERA_TRY(c->live());
  TESSERA_TRY(c->backend->enterDevice());
  void* s = c->backend->nativeStream(stream);
  Deadline d = Deadline::after(c->timeout);
  size_t es = tessera_dtype_bits(dtype) / 8;
  tessera_status st = TESSERA_ERROR_NOT_SUPPORTED;
  tessera_clear_error();
  switch (op) {
    case PeerOp::AllReduce:
      st = c->transport->nativeAllReduce(send, recv, count, dtype, TESSERA_REDUCE_SUM, s, d);
      break;
    case PeerOp::ReduceScatter:
      st = c->transport->nativeReduceScatter(send, recv, count, dtype, TESSERA_REDUCE_SUM, s, d);
      break;
    case PeerOp::AllGather: st = c->transport->allGather(send, recv, count * es, s, d); break;
  }
  if (st == TESSERA_ERROR_NOT_SUPPORTED && tessera_last_error_message()[0] == '\0')
    return rt::fail(st, "the transport has no ", tessera_dtype_name(dtype), " reduction of its own");
  return st;
}

const char* peerName(tessera_comm c) {
  static thread_local std::string name;
  switch (c->transport->kind()) {
    case TESSERA_TRANSPORT_NCCL: {
#if TESSERA_DIST_HAVE_NCCL
      std::string why;
      const NcclLib* n = NcclLib::load(why);
      int v = n ? n->version : 0;
      name = rt::concat("NCCL ", v / 10000, ".", (v / 100) % 100, ".", v % 100);
#else
      name = "NCCL";
#endif
      return name.c_str();
    }
    case TESSERA_TRANSPORT_MPI: return "MPI";
    default: return "none (one rank)";
  }
}

}  // namespace tessera::dist
