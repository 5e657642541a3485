//===- Transport.h - Moving data among the ranks of a communicator ----------------*- C++ -*-===//
//
// The data plane under the collectives: NCCL on GPU ranks (stream-ordered, enqueued on `stream`,
// a CUstream), MPI on CPU ranks (finished before returning, within the deadline), or a world of
// one. The transports only move bytes; the collectives (Collectives.cpp) build every operation,
// including the deterministic reductions, from these primitives and DeviceOps.
//
//===----------------------------------------------------------------------------------------===//
#ifndef TESSERA_RUNTIME_DIST_TRANSPORT_H
#define TESSERA_RUNTIME_DIST_TRANSPORT_H

#include <memory>
#include <vector>

#include "runtime/dist/Bootstrap.h"

namespace tessera::dist {

// What this rank sends to and receives from one peer in an exchange; zero bytes skip.
struct PeerTransfer {
  int peer = 0;
  const void* send = nullptr;
  size_t sendBytes = 0;
  void* recv = nullptr;
  size_t recvBytes = 0;
};

class Transport {
 public:
  virtual ~Transport() = default;
  virtual tessera_dist_transport kind() const = 0;
  virtual int rank() const = 0;
  virtual int size() const = 0;
  // The host channel among the same ranks (signatures, splits).
  virtual Bootstrap& bootstrap() = 0;

  // Point-to-point transfers with several peers at once (never this rank itself); both sides
  // list each other.
  virtual tessera_status exchange(const std::vector<PeerTransfer>& transfers, void* stream, const Deadline& d) = 0;
  // recv (size() * bytes) = every rank's `bytes` of send in rank order; send may be recv's own
  // slot (in place).
  virtual tessera_status allGather(const void* send, void* recv, size_t bytes, void* stream, const Deadline& d) = 0;
  virtual tessera_status broadcast(void* buffer, size_t bytes, int root, void* stream, const Deadline& d) = 0;
  virtual tessera_status barrier(void* stream, const Deadline& d) = 0;
  // The library's own reductions (deterministic=False): NOT_SUPPORTED for a dtype or operation
  // it lacks, and the caller falls back to the deterministic path.
  virtual tessera_status nativeAllReduce(const void* send, void* recv, size_t count, int dtype, int op, void* stream,
                                         const Deadline& d) = 0;
  virtual tessera_status nativeReduceScatter(const void* send, void* recv, size_t recvCount, int dtype, int op,
                                             void* stream, const Deadline& d) = 0;
  // Collective: the ranks with this color (>= 0) form a new transport ordered by (key, rank).
  virtual tessera_status split(int color, int key, const Deadline& d, std::unique_ptr<Transport>& out) = 0;
  // Stops all pending and future work (ncclCommAbort); the transport is unusable afterwards.
  virtual void abort() = 0;
  // An error the library found asynchronously (ncclCommGetAsyncError), or SUCCESS.
  virtual tessera_status asyncError() { return TESSERA_SUCCESS; }
};

// A world of one on the CPU executor.
std::unique_ptr<Transport> makeSelfTransport();

}  // namespace tessera::dist

#endif
