//===- Collectives.h - Collectives built from transport primitives -----------------*- C++ -*-===//
//
// The algorithms, the same on GPU and CPU ranks (Transport moves bytes, DeviceOps does the
// local work). The deterministic all_reduce of larger buffers (oneShotAllReduce) is a reduce-scatter by
// point-to-point exchange (rank r receives every rank's block r), a local reduction of those
// blocks in the fixed order of ReduceOps.h, then an all-gather of the reduced blocks; smaller
// ones all-gather every rank's buffer and reduce all of it locally. Each element's result
// depends only on the ranks' values and the order, never on the block decomposition or on
// NCCL's algorithm, protocol, channels or timing, and GPU and CPU ranks reduce with the same
// code. The data each rank sends in the two-phase form, 2(p-1)/p of the buffer, is what a ring
// all-reduce sends.
//
//===----------------------------------------------------------------------------------------===//
#ifndef TESSERA_RUNTIME_DIST_COLLECTIVES_H
#define TESSERA_RUNTIME_DIST_COLLECTIVES_H

#include "runtime/dist/Comm.h"

namespace tessera::dist {

struct ReduceSpec {
  int32_t dtype = TESSERA_F32;
  int32_t op = 0;
  int32_t order = 0;          // tessera_reduce_order
  bool deterministic = true;  // false: the transport's own reduction when it has one
};

// The fixed-order reduction of `n` elements over the ranks: rank k's values at slots + k * stride
// elements, this rank's at `own` (read in place); the result to `out`.
tessera_status reduceBlocks(tessera_comm_t& c, const char* own, const char* slots, size_t stride, size_t n, void* out,
                            const ReduceSpec& r, void* stream);

// all_reduce is one all-gather and a local reduction of everything while each rank receives at
// most this many bytes in it ((p - 1) x the buffer; for two ranks that is what the two-phase form
// moves too), else a reduce-scatter by exchange, the reduction of one block and an all-gather.
constexpr size_t kOneShotBytes = size_t(8) << 20;
inline bool oneShotAllReduce(size_t bytes, int ranks) { return bytes * size_t(ranks - 1) <= kOneShotBytes; }

// n elements; send may equal recv.
tessera_status allReduce(tessera_comm_t& c, const void* send, void* recv, size_t n, const ReduceSpec& r, void* stream,
                         const Deadline& d);
// send holds size() * n elements, recv n.
tessera_status reduceScatter(tessera_comm_t& c, const void* send, void* recv, size_t n, const ReduceSpec& r,
                             void* stream, const Deadline& d);
// Byte movers: all_gather (recv = size() * bytes), broadcast, all_to_all (blocks of
// bytes / size()), and the two halves of send/recv.
tessera_status allGather(tessera_comm_t& c, const void* send, void* recv, size_t bytes, void* stream,
                         const Deadline& d);
tessera_status broadcast(tessera_comm_t& c, const void* send, void* recv, size_t bytes, int root, void* stream,
                         const Deadline& d);
tessera_status allToAll(tessera_comm_t& c, const void* send, void* recv, size_t bytes, void* stream, const Deadline& d);
tessera_status sendTo(tessera_comm_t& c, const void* send, size_t bytes, int peer, void* stream, const Deadline& d);
tessera_status recvFrom(tessera_comm_t& c, void* recv, size_t bytes, int peer, void* stream, const Deadline& d);

}  // namespace tessera::dist

#endif
