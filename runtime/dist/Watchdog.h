//===- Watchdog.h - Timeouts for collectives enqueued on GPU streams ---------------*- C++ -*-===//
//
// NCCL work runs asynchronously, so a dead or stalled peer shows only as work that never ends.
// One thread per process (started with the first GPU collective, stopped at exit) follows the
// work of every GPU communicator through an event recorded after each collective: work still
// pending when the communicator's timeout has passed, or an error NCCL reports, aborts the
// communicator (ncclCommAbort makes its kernels return), so nothing waits forever. Messages name
// the oldest collective still pending ("all_reduce of 'grads'"). Work recorded into a CUDA graph
// is not followed (it runs when the graph is launched).
//
//===----------------------------------------------------------------------------------------===//
#ifndef TESSERA_RUNTIME_DIST_WATCHDOG_H
#define TESSERA_RUNTIME_DIST_WATCHDOG_H

#include <functional>

#include "runtime/dist/Comm.h"

namespace tessera::dist {

// Whether the CUstream is being captured into a graph.
bool gpuStreamCapturing(void* stream);
// Follows the work just enqueued on `stream`.
tessera_status watchGpuWork(tessera_comm_t& c, void* stream, const std::string& what);
// Stops following `c` (before it is destroyed).
void unwatchComm(tessera_comm_t& c);
// The oldest collective of `c` whose work has not finished ("all_reduce of 'grads'"), or "".
std::string pendingWork(tessera_comm_t& c);
// Polls the stream until its work is done, the deadline passes (the communicator is aborted) or
// the communicator is aborted.
tessera_status waitGpuStream(tessera_comm_t& c, void* stream, const Deadline& d);
// How many watchdog threads this process started (0 or 1; tests check that it stays at one).
int watchdogThreads();

// While a blocking call may wait for peers (NCCL's connection setup, a split), the watchdog runs
// `onTimeout` (an abort of the communicator, after which the call returns) once the deadline has
// passed, unless the guard went out of scope first. Checked every 50 ms at most.
class HostCallGuard {
 public:
  HostCallGuard(std::function<void()> onTimeout, const Deadline& d);
  ~HostCallGuard();
  HostCallGuard(const HostCallGuard&) = delete;
  HostCallGuard& operator=(const HostCallGuard&) = delete;
  bool fired() const;

 private:
  uint64_t id_ = 0;
};

}  // namespace tessera::dist

#endif
