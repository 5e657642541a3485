//===- Comm.h - Communicators: a transport, a device, a timeout and an abort state ---*- C++ -*-===//
//
// tessera_comm is a Transport (NCCL, MPI or self) plus what every collective on it shares: the
// device that does the local work, the timeout, whether signatures are checked, and the abort
// state. issue() runs a collective's body: on GPU ranks it enqueues on the stream and hands the
// work to the watchdog; on CPU ranks it runs in stream order (recorded while the stream is
// captured into a graph). A timeout or transport failure aborts the communicator for good.
//
//===----------------------------------------------------------------------------------------===//
#ifndef TESSERA_RUNTIME_DIST_COMM_H
#define TESSERA_RUNTIME_DIST_COMM_H

#include <atomic>
#include <functional>
#include <mutex>
#include <string>

#include "runtime/Backend.h"
#include "runtime/dist/DeviceOps.h"
#include "runtime/dist/Transport.h"

struct tessera_comm_t {
  std::string name;  // "world", a mesh axis ("tp"), or the name given to tessera_comm_split
  std::unique_ptr<tessera::dist::Transport> transport;
  tessera::dist::DeviceOps* ops = nullptr;
  tessera::rt::Backend* backend = nullptr;
  bool gpu = false;
  double timeout = 300;
  bool checkSignatures = true;
  bool owned = false;  // by the world or a mesh: tessera_comm_destroy refuses it
  uint64_t collectives = 0;
  void* side = nullptr;  // the stream of overlapped transfers (Overlap.cpp), made on first use
  uint64_t seq = 0;      // creation order: finalize destroys in reverse, the same on every rank

  int rank() const { return transport->rank(); }
  int size() const { return transport->size(); }
  // "communicator 'tp' (rank 1 of 2)"
  std::string where() const;
  // COMM_ABORTED with the abort's message once aborted.
  tessera_status live();
  // Aborts the transport once and remembers why (`message` is the first failure's).
  void abort(tessera_status why, const std::string& message);
  bool aborted() const { return aborted_.load(); }
  // The abort's own status (TIMEOUT, COMM_ABORTED) and message, set as the thread's error.
  tessera_status abortCause();

 private:
  std::mutex mutex_;
  std::atomic<bool> aborted_{false};
  tessera_status abortStatus_ = TESSERA_SUCCESS;
  std::string abortMessage_;
};

namespace tessera::dist {

using Body = std::function<tessera_status(void* stream, const Deadline& d)>;

// Runs a collective's body as described above. `what` names it for messages ("all_reduce of
// 'grads'"); failures come back as "<what> on <communicator>: <problem>". With TESSERA_PROFILE the
// operation is recorded with `bytes` (the tensor's size) on the runtime's timeline.
tessera_status issue(tessera_comm_t& c, tessera_stream stream, const std::string& what, uint64_t bytes, Body body);

// Waits for the stream's collectives (GPU) within the timeout; reports an earlier abort.
tessera_status synchronizeComm(tessera_comm_t& c, tessera_stream stream);

// Creates a communicator over a transport on the active device.
tessera_status makeComm(std::unique_ptr<Transport> t, std::string name, double timeout, bool checks,
                        std::unique_ptr<tessera_comm_t>& out);

}  // namespace tessera::dist

#endif
