//===- Overlap.cpp - all_gather and reduce_scatter block by block, beside compute -----------===//
#include "runtime/dist/Overlap.h"

#include <algorithm>

#include "runtime/Status.h"

namespace tessera::dist {

namespace {

// The communicator's side stream (made on first use); null on CPU ranks.
tessera_status sideStream(tessera_comm_t& c, void*& out) {
  if (!c.side && c.gpu) TESSERA_TRY(c.ops->createStream(&c.side));
  out = c.side;
  return TESSERA_SUCCESS;
}

size_t roundUp(size_t v, size_t m) { return (v + m - 1) / m * m; }

}  // namespace

tessera_status allGatherOverlap(tessera_comm_t& c, const void* send, void* recv, size_t bytes, const BlockFn& onBlock,
                                void* stream, const Deadline& d) {
  int p = c.size(), me = c.rank();
  char* out = static_cast<char*>(recv);
  auto block = [&](int k) { return out + size_t(k) * bytes; };
  TESSERA_TRY(c.ops->copy(block(me), send, bytes, stream));
  void* side = nullptr;
  // The transfers start once the own block is in place, not after its compute.
  if (p > 1) TESSERA_TRY(sideStream(c, side));
  if (p > 1) TESSERA_TRY(c.ops->order(side, stream));
  TESSERA_TRY(onBlock(me, block(me), stream));
  int next = (me + 1) % p, prev = (me + p - 1) % p;
  for (int s = 0; s < p - 1; ++s) {
    int out_ = (me - s + p) % p, in = (me - s - 1 + p) % p;
    std::vector<PeerTransfer> t{{next, block(out_), bytes, nullptr, 0}, {prev, nullptr, 0, block(in), bytes}};
    if (next == prev) t = {{next, block(out_), bytes, block(in), bytes}};  // two ranks: one peer
    TESSERA_TRY(c.transport->exchange(t, side, d));
    TESSERA_TRY(c.ops->order(stream, side));  // block `in` is there; earlier compute keeps running
    TESSERA_TRY(onBlock(in, block(in), stream));
  }
  return TESSERA_SUCCESS;
}

tessera_status reduceScatterOverlap(tessera_comm_t& c, void* recv, size_t n, const ReduceSpec& r,
                                    const BlockFn& produce, void* stream, const Deadline& d) {
  int p = c.size(), me = c.rank();
  size_t es = tessera_dtype_bits(r.dtype) / 8, stride = roundUp(n, std::max<size_t>(1, 16 / es));
  // mine[k]: this rank's partial of block k; theirs[j]: rank j's partial of this rank's block.
  void* scratch = nullptr;
  TESSERA_TRY(c.ops->allocTemp(&scratch, std::max<size_t>(1, 2 * size_t(p) * stride * es), stream));
  char* mine = static_cast<char*>(scratch);
  char* theirs = mine + size_t(p) * stride * es;
  auto slot = [&](char* base, int k) { return base + size_t(k) * stride * es; };
  void* side = nullptr;
  tessera_status st = p > 1 ? sideStream(c, side) : TESSERA_SUCCESS;
  for (int s = 1; s < p && st == TESSERA_SUCCESS; ++s) {
    int to = (me + s) % p, from = (me - s + p) % p;
    st = produce(to, slot(mine, to), stream);
    if (st == TESSERA_SUCCESS) st = c.ops->order(side, stream);
    std::vector<PeerTransfer> t{{to, slot(mine, to), n * es, nullptr, 0},
                                {from, nullptr, 0, slot(theirs, from), n * es}};
    if (to == from) t = {{to, slot(mine, to), n * es, slot(theirs, from), n * es}};
    if (st == TESSERA_SUCCESS) st = c.transport->exchange(t, side, d);
  }
  if (st == TESSERA_SUCCESS) st = produce(me, slot(mine, me), stream);
  if (p > 1) {  // also after a failure: the scratch is freed only after the side stream's use
    tessera_status joined = c.ops->order(stream, side);
    if (st == TESSERA_SUCCESS) st = joined;
  }
  if (st == TESSERA_SUCCESS) st = reduceBlocks(c, slot(mine, me), theirs, stride, n, recv, r, stream);
  c.ops->freeTemp(scratch, stream);
  return st;
}

}  // namespace tessera::dist
