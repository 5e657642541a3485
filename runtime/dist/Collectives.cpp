//===- Collectives.cpp - The algorithms -----------------------------------------------------===//
#include "runtime/dist/Collectives.h"

#include <algorithm>
#include <optional>

#include "runtime/Status.h"

namespace tessera::dist {

using rt::fail;

namespace {

// Scratch memory for one collective, released (stream-ordered) when it goes out of scope.
class Scratch {
 public:
  Scratch(DeviceOps& ops, void* stream) : ops_(ops), stream_(stream) {}
  ~Scratch() {
    if (ptr_) ops_.freeTemp(ptr_, stream_);
  }
  tessera_status allocate(size_t bytes) { return ops_.allocTemp(&ptr_, bytes, stream_); }
  char* data() const { return static_cast<char*>(ptr_); }

 private:
  DeviceOps& ops_;
  void* stream_;
  void* ptr_ = nullptr;
};

size_t roundUp(size_t v, size_t m) { return (v + m - 1) / m * m; }

// Elements per 16 bytes: block boundaries at multiples of this keep every block 16-byte
// aligned, so the GPU reduction loads whole vectors.
size_t alignElems(size_t elemBytes) { return std::max<size_t>(1, 16 / elemBytes); }

// Trees of up to three ranks are the sequential order; the kernels' sequential loop is cheaper.
int effectiveOrder(int order, int p) { return p <= 3 ? reduce::kSequential : order; }

}  // namespace

tessera_status reduceBlocks(tessera_comm_t& c, const char* own, const char* slots, size_t stride, size_t n, void* out,
                            const ReduceSpec& r, void* stream) {
  int p = c.size(), me = c.rank();
  if (p > reduce::kMaxInputs)
    return fail(TESSERA_ERROR_NOT_SUPPORTED, "deterministic reductions take at most ", reduce::kMaxInputs,
                " ranks per communicator, this one has ", p);
  size_t es = tessera_dtype_bits(r.dtype) / 8;
  reduce::ReduceParams P{};
  for (int k = 0; k < p; ++k) P.in[k] = k == me ? own : slots + size_t(k) * stride * es;
  P.out = out;
  P.n = n;
  P.p = p;
  P.order = effectiveOrder(r.order, p);
  return c.ops->reduce(P, r.dtype, r.op, stream);
}

namespace {

// The cases every reduction handles before its own exchange: nothing to do, one rank (still
// through the reduction, so values come out as p ranks would give them: bool as 0/1, NaNs as the
// reduction writes them), and the transport's own collective when determinism is not asked for.
// Returns nullopt when the caller must run the deterministic exchange.
template <typename Native>
std::optional<tessera_status> reduceShortcut(tessera_comm_t& c, const void* send, void* recv, size_t n,
                                             const ReduceSpec& r, void* stream, Native native) {
  if (n == 0) return TESSERA_SUCCESS;
  if (c.size() == 1) return reduceBlocks(c, static_cast<const char*>(send), nullptr, 0, n, recv, r, stream);
  if (!r.deterministic) {
    tessera_status st = native();
    if (st != TESSERA_ERROR_NOT_SUPPORTED) return st;
  }
  return std::nullopt;
}

}  // namespace

tessera_status allReduce(tessera_comm_t& c, const void* send, void* recv, size_t n, const ReduceSpec& r, void* stream,
                         const Deadline& d) {
  int p = c.size(), me = c.rank();
  size_t es = tessera_dtype_bits(r.dtype) / 8;
  if (auto done = reduceShortcut(c, send, recv, n, r, stream,
                                 [&] { return c.transport->nativeAllReduce(send, recv, n, r.dtype, r.op, stream, d); }))
    return *done;
  // Small buffers (and two ranks): one all-gather of every rank's whole buffer, then each rank
  // reduces all of it (the same per-element order, so the same bits as the two phases below):
  // one NCCL operation's latency instead of two, for (p-1) x n bytes instead of 2 (p-1)/p x n.
  if (oneShotAllReduce(n * es, p)) {
    Scratch all(*c.ops, stream);
    TESSERA_TRY(all.allocate(size_t(p) * n * es));
    TESSERA_TRY(c.transport->allGather(send, all.data(), n * es, stream, d));
    return reduceBlocks(c, all.data() + size_t(me) * n * es, all.data(), n, n, recv, r, stream);
  }
  // Block k: elements [k*B, min(n, (k+1)*B)); B a multiple of 16 bytes. The last blocks may be
  // short or empty.
  size_t B = roundUp((n + p - 1) / p, alignElems(es));
  auto off = [&](int k) { return std::min(n, size_t(k) * B); };
  auto len = [&](int k) { return std::min(n, size_t(k + 1) * B) - off(k); };
  const char* in = static_cast<const char*>(send);
  char* out = static_cast<char*>(recv);
  size_t mine = len(me), stride = roundUp(mine, alignElems(es));

  Scratch slots(*c.ops, stream);
  TESSERA_TRY(slots.allocate(std::max<size_t>(1, size_t(p) * stride * es)));
  std::vector<PeerTransfer> t;
  for (int k = 0; k < p; ++k)
    if (k != me) t.push_back({k, in + off(k) * es, len(k) * es, slots.data() + size_t(k) * stride * es, mine * es});
  TESSERA_TRY(c.transport->exchange(t, stream, d));
  TESSERA_TRY(reduceBlocks(c, in + off(me) * es, slots.data(), stride, mine, out + off(me) * es, r, stream));

  if (size_t(p) * B == n)  // equal blocks: the library's all-gather, in place
    return c.transport->allGather(out + off(me) * es, out, B * es, stream, d);
  t.clear();
  for (int k = 0; k < p; ++k)
    if (k != me) t.push_back({k, out + off(me) * es, mine * es, out + off(k) * es, len(k) * es});
  return c.transport->exchange(t, stream, d);
}

tessera_status reduceScatter(tessera_comm_t& c, const void* send, void* recv, size_t n, const ReduceSpec& r,
                             void* stream, const Deadline& d) {
  int p = c.size(), me = c.rank();
  size_t es = tessera_dtype_bits(r.dtype) / 8;
  if (auto done = reduceShortcut(c, send, recv, n, r, stream, [&] {
        return c.transport->nativeReduceScatter(send, recv, n, r.dtype, r.op, stream, d);
      }))
    return *done;
  const char* in = static_cast<const char*>(send);
  size_t stride = roundUp(n, alignElems(es));
  Scratch slots(*c.ops, stream);
  TESSERA_TRY(slots.allocate(size_t(p) * stride * es));
  std::vector<PeerTransfer> t;
  for (int k = 0; k < p; ++k)
    if (k != me) t.push_back({k, in + size_t(k) * n * es, n * es, slots.data() + size_t(k) * stride * es, n * es});
  TESSERA_TRY(c.transport->exchange(t, stream, d));
  return reduceBlocks(c, in + size_t(me) * n * es, slots.data(), stride, n, recv, r, stream);
}

tessera_status allGather(tessera_comm_t& c, const void* send, void* recv, size_t bytes, void* stream,
                         const Deadline& d) {
  if (c.size() == 1) return c.ops->copy(recv, send, bytes, stream);
  return c.transport->allGather(send, recv, bytes, stream, d);
}

tessera_status broadcast(tessera_comm_t& c, const void* send, void* recv, size_t bytes, int root, void* stream,
                         const Deadline& d) {
  if (c.rank() == root) TESSERA_TRY(c.ops->copy(recv, send, bytes, stream));
  if (c.size() == 1) return TESSERA_SUCCESS;
  return c.transport->broadcast(recv, bytes, root, stream, d);
}

tessera_status allToAll(tessera_comm_t& c, const void* send, void* recv, size_t bytes, void* stream,
                        const Deadline& d) {
  int p = c.size(), me = c.rank();
  size_t b = bytes / p;
  const char* in = static_cast<const char*>(send);
  char* out = static_cast<char*>(recv);
  TESSERA_TRY(c.ops->copy(out + size_t(me) * b, in + size_t(me) * b, b, stream));
  std::vector<PeerTransfer> t;
  for (int k = 0; k < p; ++k)
    if (k != me) t.push_back({k, in + size_t(k) * b, b, out + size_t(k) * b, b});
  return c.transport->exchange(t, stream, d);
}

tessera_status sendTo(tessera_comm_t& c, const void* send, size_t bytes, int peer, void* stream, const Deadline& d) {
  return c.transport->exchange({{peer, send, bytes, nullptr, 0}}, stream, d);
}

tessera_status recvFrom(tessera_comm_t& c, void* recv, size_t bytes, int peer, void* stream, const Deadline& d) {
  return c.transport->exchange({{peer, nullptr, 0, recv, bytes}}, stream, d);
}

}  // namespace tessera::dist
