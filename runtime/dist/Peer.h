//===- Peer.h - The transport library's own collectives, for benchmarks ------------*- C++ -*-===//
//
// bench/collectives measures the deterministic collectives next to NCCL's own (MPI's on CPU
// ranks) in the same run, on the same communicator and stream. This calls the library directly
// (ncclAllReduce, ncclAllGather, ncclReduceScatter), with no signature check and no watchdog.
//
//===----------------------------------------------------------------------------------------===//
#ifndef TESSERA_RUNTIME_DIST_PEER_H
#define TESSERA_RUNTIME_DIST_PEER_H

#include <cstddef>

#include "tessera/dist.h"

namespace tessera::dist {

enum class PeerOp { AllReduce, AllGather, ReduceScatter };

// count: elements of send (all_reduce, all_gather) or of recv (reduce_scatter); sum only.
tessera_status peerCollective(tessera_comm comm, PeerOp op, const void* send, void* recv, size_t count, int32_t dtype,
                              tessera_stream stream);
// "NCCL 2.28.9", "MPI", "none".
const char* peerName(tessera_comm comm);

}  // namespace tessera::dist

#endif
