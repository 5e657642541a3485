//===- CpuBackend.cpp - Memory, streams, events and graphs on the CPU ------------------------===//
#include "runtime/CpuBackend.h"

#include <chrono>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <mutex>
#include <unordered_map>
#include <vector>

#include "runtime/CpuExecutor.h"
#include "runtime/Status.h"

namespace tessera::rt {

namespace {

using Command = std::function<tessera_status()>;

struct CpuStream : tessera_stream_t {
  bool capturing = false;
  std::vector<Command> captured;
};
struct CpuEvent : tessera_event_t {
  bool recorded = false;
  std::chrono::steady_clock::time_point time;
};
struct CpuGraph : tessera_graph_t {
  std::vector<Command> commands;
};

class CpuBackend final : public Backend {
 public:
  tessera_device_kind kind() const override { return TESSERA_DEVICE_CPU; }
  std::string name() const override {
    return "CPU executor (" + std::to_string(CpuExecutor::instance().threads()) + " threads)";
  }
  const DeviceLimits& limits() const override { return limits_; }
  bool pointerUsable(const void*, std::string&) override { return true; }

  // Runs `cmd` now, or records it when `stream` is capturing.
  tessera_status submit(tessera_stream stream, Command cmd) {
    if (auto* s = static_cast<CpuStream*>(stream); s && s->capturing) {
      s->captured.push_back(std::move(cmd));
      return TESSERA_SUCCESS;
    }
    return cmd();
  }

  tessera_status hostCommand(tessera_stream stream, Command cmd) override { return submit(stream, std::move(cmd)); }

  tessera_status launch(const LaunchPlan& plan, tessera_stream stream) override {
    if (auto* s = static_cast<CpuStream*>(stream); s && s->capturing) {
      auto copy = std::make_shared<LaunchPlan>(plan);  // captured launches own their arguments
      s->captured.push_back([copy] { return CpuExecutor::instance().run(*copy); });
      return TESSERA_SUCCESS;
    }
    return CpuExecutor::instance().run(plan);
  }

  tessera_status allocate(void** ptr, size_t bytes) override {
    size_t rounded = (bytes + 63) / 64 * 64;
    void* p = std::aligned_alloc(64, rounded ? rounded : 64);
    if (!p)
      return fail(TESSERA_ERROR_OUT_OF_MEMORY, "tessera_malloc: cannot allocate ", bytes,
                  " bytes of host memory for the CPU executor");
    std::lock_guard<std::mutex> lock(mutex_);
    sizes_[p] = bytes;
    *ptr = p;
    return TESSERA_SUCCESS;
  }
  tessera_status release(void* ptr) override {
    std::lock_guard<std::mutex> lock(mutex_);
    if (!sizes_.erase(ptr))
      return fail(TESSERA_ERROR_INVALID_ARGUMENT, "tessera_free: ", ptr,
                  " was not returned by tessera_malloc (or was freed already)");
    std::free(ptr);
    return TESSERA_SUCCESS;
  }
  tessera_status copy(void* dst, const void* src, size_t bytes, tessera_stream stream, bool async) override {
    return submit(async ? stream : nullptr, [=] {
      std::memmove(dst, src, bytes);
      return TESSERA_SUCCESS;
    });
  }
  tessera_status fill(void* dst, int value, size_t bytes) override {
    std::memset(dst, value, bytes);
    return TESSERA_SUCCESS;
  }
  tessera_status synchronize() override { return TESSERA_SUCCESS; }

  tessera_status streamCreate(tessera_stream* out) override {
    *out = new CpuStream;
    return TESSERA_SUCCESS;
  }
  tessera_status streamDestroy(tessera_stream s) override {
    delete static_cast<CpuStream*>(s);
    return TESSERA_SUCCESS;
  }
  tessera_status streamSynchronize(tessera_stream) override { return TESSERA_SUCCESS; }
  tessera_status eventCreate(tessera_event* out) override {
    *out = new CpuEvent;
    return TESSERA_SUCCESS;
  }
  tessera_status eventDestroy(tessera_event e) override {
    delete static_cast<CpuEvent*>(e);
    return TESSERA_SUCCESS;
  }
  tessera_status eventRecord(tessera_event e, tessera_stream stream) override {
    auto* ev = static_cast<CpuEvent*>(e);
    return submit(stream, [ev] {
      ev->recorded = true;
      ev->time = std::chrono::steady_clock::now();
      return TESSERA_SUCCESS;
    });
  }
  tessera_status eventSynchronize(tessera_event) override { return TESSERA_SUCCESS; }
  tessera_status eventQuery(tessera_event) override { return TESSERA_SUCCESS; }
  tessera_status streamWaitEvent(tessera_stream, tessera_event) override { return TESSERA_SUCCESS; }
  tessera_status eventElapsed(float* ms, tessera_event start, tessera_event end) override {
    auto *a = static_cast<CpuEvent*>(start), *b = static_cast<CpuEvent*>(end);
    if (!a->recorded || !b->recorded)
      return fail(TESSERA_ERROR_NOT_READY, "tessera_event_elapsed_ms: an event was never recorded");
    *ms = std::chrono::duration<float, std::milli>(b->time - a->time).count();
    return TESSERA_SUCCESS;
  }
  bool capturing(tessera_stream stream) override { return stream && static_cast<CpuStream*>(stream)->capturing; }
  tessera_status beginCapture(tessera_stream stream) override {
    auto* s = static_cast<CpuStream*>(stream);
    if (s->capturing)
      return fail(TESSERA_ERROR_INVALID_ARGUMENT, "tessera_stream_begin_capture: the stream is already capturing");
    s->capturing = true;
    s->captured.clear();
    return TESSERA_SUCCESS;
  }
  tessera_status endCapture(tessera_stream stream, tessera_graph* out) override {
    auto* s = static_cast<CpuStream*>(stream);
    if (!s->capturing)
      return fail(TESSERA_ERROR_INVALID_ARGUMENT, "tessera_stream_end_capture: the stream is not capturing");
    auto* g = new CpuGraph;
    g->commands = std::move(s->captured);
    s->captured.clear();
    s->capturing = false;
    *out = g;
    return TESSERA_SUCCESS;
  }
  tessera_status graphLaunch(tessera_graph graph, tessera_stream stream) override {
    auto* g = static_cast<CpuGraph*>(graph);
    if (auto* s = static_cast<CpuStream*>(stream); s && s->capturing)
      return fail(TESSERA_ERROR_NOT_SUPPORTED, "tessera_graph_launch: cannot launch a graph into a capturing stream");
    for (Command& c : g->commands) TESSERA_TRY(c());
    return TESSERA_SUCCESS;
  }
  tessera_status graphUpdate(tessera_graph exec, tessera_graph from, bool& updated) override {
    static_cast<CpuGraph*>(exec)->commands = std::move(static_cast<CpuGraph*>(from)->commands);
    static_cast<CpuGraph*>(from)->commands.clear();
    updated = true;
    return TESSERA_SUCCESS;
  }
  tessera_status graphDestroy(tessera_graph graph) override {
    delete static_cast<CpuGraph*>(graph);
    return TESSERA_SUCCESS;
  }

 private:
  DeviceLimits limits_;  // the GPU's limits, so programs that run here also run there
  std::mutex mutex_;
  std::unordered_map<void*, size_t> sizes_;
};

}  // namespace

std::unique_ptr<Backend> createCpuBackend() { return std::make_unique<CpuBackend>(); }

}  // namespace tessera::rt
