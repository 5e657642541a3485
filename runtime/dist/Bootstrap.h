//===- Bootstrap.h - Small host messages among a group of ranks --------------------*- C++ -*-===//
//
// What the ranks of a communicator tell each other on the host: the NCCL unique id, the device
// kind of every rank, and before every collective its signature (operation, dtype, shape,
// name), so ranks that disagree fail with a message instead of hanging or corrupting memory.
// Implementations: MPI (mpirun launches), the TCP store at MASTER_ADDR:MASTER_PORT (torchrun-style
// launches) and a world of one. Every call has a deadline.
//
//===----------------------------------------------------------------------------------------===//
#ifndef TESSERA_RUNTIME_DIST_BOOTSTRAP_H
#define TESSERA_RUNTIME_DIST_BOOTSTRAP_H

#include <cstddef>
#include <memory>
#include <string>
#include <vector>

#include "runtime/dist/Deadline.h"
#include "tessera/dist.h"

namespace tessera::dist {

class Bootstrap {
 public:
  virtual ~Bootstrap() = default;
  virtual int rank() const = 0;
  virtual int size() const = 0;
  // Every member's `bytes` bytes, in rank order, into `all` (size() * bytes).
  virtual tessera_status allGather(const void* mine, size_t bytes, void* all, const Deadline& d) = 0;
  // The members with this color (>= 0) form a new group ordered by (key, rank); color < 0
  // leaves `out` null. Collective over this group.
  virtual tessera_status split(int color, int key, const Deadline& d, std::unique_ptr<Bootstrap>& out) = 0;
  // Swaps `bytes` with one member that calls exchange naming this rank.
  virtual tessera_status exchange(int peer, const void* mine, void* theirs, size_t bytes, const Deadline& d) = 0;
  // "MPI", "TCP store at host:port", "single process": for messages.
  virtual std::string describe() const = 0;
};

// A group of one.
std::unique_ptr<Bootstrap> makeSoloBootstrap();

// Helper for implementations of split(): from every member's (color, key), this member's new
// rank and the old ranks of its new group, in order.
void splitMembership(const int* colorKey, int size, int me, int& newRank, std::vector<int>& members);

}  // namespace tessera::dist

#endif
