//===- Overlap.h - Collectives that overlap their transfers with compute ----------*- C++ -*-===//
//
// The "collective matmul" of tensor parallelism: the transfers of an all_gather (or of a
// reduce_scatter) run block by block on the communicator's side stream while the caller's
// compute on the blocks already present runs on its own stream.
//
// all_gather: a ring. Rank r computes on its own block first; at step s it forwards block
// (r - s) mod p to rank r + 1 and receives block (r - s - 1) mod p from rank r - 1, and the
// compute on that block waits only for that step's transfer. Every block is computed once, on the
// same data as after a plain all_gather, so the results are those of all_gather + compute.
//
// reduce_scatter: rank r produces its partial value of block (r + s) mod p at step s and sends it
// to that rank at once, receiving rank (r - s)'s partial of its own block; its own partial comes
// last. The received partials are reduced in the fixed order of ReduceOps.h, exactly as
// tessera_reduce_scatter reduces them: the same bits as producing every partial, then
// reduce_scatter.
//
//===----------------------------------------------------------------------------------------===//
#ifndef TESSERA_RUNTIME_DIST_OVERLAP_H
#define TESSERA_RUNTIME_DIST_OVERLAP_H

#include <functional>

#include "runtime/dist/Collectives.h"

namespace tessera::dist {

// Called with a block's index (the rank it belongs to), its memory and the caller's stream.
using BlockFn = std::function<tessera_status(int block, char* data, void* stream)>;

// recv (size() * bytes) = every rank's `bytes` of send; onBlock(k, recv + k * bytes, stream) as
// each block arrives (this rank's first).
tessera_status allGatherOverlap(tessera_comm_t& c, const void* send, void* recv, size_t bytes, const BlockFn& onBlock,
                                void* stream, const Deadline& d);
// recv (n elements) = op over ranks of their partial of block rank(); produce(k, slot, stream)
// writes this rank's partial of block k (n elements) into slot.
tessera_status reduceScatterOverlap(tessera_comm_t& c, void* recv, size_t n, const ReduceSpec& r,
                                    const BlockFn& produce, void* stream, const Deadline& d);

}  // namespace tessera::dist

#endif
