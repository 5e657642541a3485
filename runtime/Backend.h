//===- Backend.h - What a device (GPU or CPU executor) provides -------------------*- C++ -*-===//
//
// The C API (Api.cpp) checks arguments and dispatches to the one active Backend chosen by
// Device.cpp. Handles handed to users derive from the opaque C types so each backend can
// recover its own objects.
//
//===----------------------------------------------------------------------------------------===//
#ifndef TESSERA_RUNTIME_BACKEND_H
#define TESSERA_RUNTIME_BACKEND_H

#include <cstddef>
#include <functional>
#include <string>
#include <vector>

#include "runtime/LaunchPlan.h"
#include "tessera/runtime.h"

struct tessera_stream_t {
  virtual ~tessera_stream_t() = default;
};
struct tessera_event_t {
  virtual ~tessera_event_t() = default;
};
struct tessera_graph_t {
  virtual ~tessera_graph_t() = default;
  // The key tessera_graph_replay_keyed recorded with a cached graph (empty: none).
  std::vector<int64_t> replayKey;
};

namespace tessera::rt {

struct DeviceLimits {
  uint32_t maxGroupTiles = 1024;
  uint32_t maxGroupDim[3] = {1024, 1024, 64};
  uint32_t maxGrid[3] = {2147483647u, 65535u, 65535u};
  uint64_t maxSharedBytes = 227 * 1024;  // opt-in maximum per group (Hopper)
};

class Backend {
 public:
  virtual ~Backend() = default;
  virtual tessera_device_kind kind() const = 0;
  virtual std::string name() const = 0;
  virtual const DeviceLimits& limits() const = 0;

  // Whether the kernel can read `ptr` (a non-empty tensor's data); on failure `why` says why.
  virtual bool pointerUsable(const void* ptr, std::string& why) = 0;
  // Loads what the plan's launch needs (the GPU function of its module) ahead of launch(), so
  // the profiler's start marker does not time a module load. Optional.
  virtual tessera_status prepare(const LaunchPlan& plan) { return TESSERA_SUCCESS; }
  // Runs or enqueues a checked plan (on CPU: runs it now, or records it while capturing).
  virtual tessera_status launch(const LaunchPlan& plan, tessera_stream stream) = 0;

  virtual tessera_status allocate(void** ptr, size_t bytes) = 0;
  virtual tessera_status release(void* ptr) = 0;
  // Stream-ordered allocation (tessera_malloc_async): memory usable by work submitted to
  // `stream` after this call, returned to a cache by releaseAsync once that stream's earlier
  // work is done. Backends without a stream-ordered allocator allocate now and free after
  // waiting for the stream.
  virtual tessera_status allocateAsync(void** ptr, size_t bytes, tessera_stream stream) {
    (void)stream;
    return allocate(ptr, bytes);
  }
  virtual tessera_status releaseAsync(void* ptr, tessera_stream stream) {
    if (tessera_status s = streamSynchronize(stream); s != TESSERA_SUCCESS) return s;
    return release(ptr);
  }
  virtual tessera_status copy(void* dst, const void* src, size_t bytes, tessera_stream stream, bool async) = 0;
  virtual tessera_status fill(void* dst, int value, size_t bytes) = 0;
  virtual tessera_status synchronize() = 0;

  virtual tessera_status streamCreate(tessera_stream* out) = 0;
  // A handle for another library's stream (tessera_stream_wrap); GPU only.
  virtual tessera_status streamWrap(void* native, tessera_stream* out) {
    (void)native;
    (void)out;
    return TESSERA_ERROR_NOT_SUPPORTED;
  }
  virtual tessera_status streamDestroy(tessera_stream stream) = 0;
  virtual tessera_status streamSynchronize(tessera_stream stream) = 0;
  virtual tessera_status eventCreate(tessera_event* out) = 0;
  virtual tessera_status eventDestroy(tessera_event event) = 0;
  virtual tessera_status eventRecord(tessera_event event, tessera_stream stream) = 0;
  virtual tessera_status eventSynchronize(tessera_event event) = 0;
  // TESSERA_SUCCESS when the event's work is done, TESSERA_ERROR_NOT_READY while it is pending.
  virtual tessera_status eventQuery(tessera_event event) = 0;
  virtual tessera_status streamWaitEvent(tessera_stream stream, tessera_event event) = 0;
  virtual tessera_status eventElapsed(float* ms, tessera_event start, tessera_event end) = 0;
  // Whether `stream` is recording into a graph (work submitted to it does not run now).
  virtual bool capturing(tessera_stream stream) = 0;
  virtual tessera_status beginCapture(tessera_stream stream) = 0;
  virtual tessera_status endCapture(tessera_stream stream, tessera_graph* out) = 0;
  virtual tessera_status graphLaunch(tessera_graph graph, tessera_stream stream) = 0;
  virtual tessera_status graphDestroy(tessera_graph graph) = 0;
  // Makes `exec` run `from`'s work (same launches, new arguments); `updated` false, and `exec`
  // unusable, where the backend refuses.
  virtual tessera_status graphUpdate(tessera_graph exec, tessera_graph from, bool& updated) = 0;

  // For the distributed runtime (runtime/dist), which drives NCCL and its own kernels on the
  // same device and streams. The CUDA stream behind `stream` (null: the legacy default
  // stream; always null on the CPU).
  virtual void* nativeStream(tessera_stream stream) { return nullptr; }
  // Makes the device current on the calling thread (the GPU's context) and reports earlier
  // faults.
  virtual tessera_status enterDevice() { return TESSERA_SUCCESS; }
  // The CUDA device ordinal in use; -1 on the CPU.
  virtual int deviceOrdinal() const { return -1; }
  // Runs `cmd` in the order of `stream`: now, or recorded when the stream is capturing (CPU
  // executor). GPU work goes onto native streams instead.
  virtual tessera_status hostCommand(tessera_stream stream, std::function<tessera_status()> cmd) { return cmd(); }
};

}  // namespace tessera::rt

#endif
