//===- Api.cpp - The C API: argument checks, then the active backend -------------------------===//
#include <cstring>
#include <mutex>
#include <unordered_set>

#include "runtime/Autotune.h"
#include "runtime/Backend.h"
#include "runtime/Device.h"
#include "runtime/LaunchChecks.h"
#include "runtime/Nvtx.h"
#include "runtime/Profiler.h"
#include "runtime/Status.h"

using namespace tessera::rt;

namespace {

// Live handles of one kind, so a destroyed or foreign handle is an error, not a crash.
class HandleSet {
 public:
  void add(void* h) {
    std::lock_guard<std::mutex> lock(mutex_);
    live_.insert(h);
  }
  bool remove(void* h) {
    std::lock_guard<std::mutex> lock(mutex_);
    return live_.erase(h) != 0;
  }
  bool contains(void* h) {
    std::lock_guard<std::mutex> lock(mutex_);
    return live_.count(h) != 0;
  }

 private:
  std::mutex mutex_;
  std::unordered_set<void*> live_;
};

HandleSet& streams() {
  static HandleSet* s = new HandleSet;
  return *s;
}
HandleSet& events() {
  static HandleSet* s = new HandleSet;
  return *s;
}
HandleSet& graphs() {
  static HandleSet* s = new HandleSet;
  return *s;
}

#define GET_BACKEND(b)  \
  Backend* b = nullptr; \
  TESSERA_TRY(activeBackend(b))

// A null stream is the default stream; anything else must be live.
tessera_status checkStream(const char* fn, tessera_stream s) {
  if (s && !streams().contains(s)) return fail(TESSERA_ERROR_INVALID_HANDLE, fn, ": unknown or destroyed stream");
  return TESSERA_SUCCESS;
}
tessera_status checkEvent(const char* fn, tessera_event e) {
  if (!e || !events().contains(e)) return fail(TESSERA_ERROR_INVALID_HANDLE, fn, ": null, unknown or destroyed event");
  return TESSERA_SUCCESS;
}

// tessera_stream_create and tessera_event_create: the backend makes the handle (`make`), the set
// of live handles records it.
template <typename Handle, typename Make>
tessera_status createHandle(const char* fn, Handle* out, HandleSet& live, Make make) {
  if (!out) return fail(TESSERA_ERROR_INVALID_ARGUMENT, fn, ": null output");
  GET_BACKEND(b);
  TESSERA_TRY(make(*b, out));
  live.add(*out);
  return TESSERA_SUCCESS;
}

// tessera_stream_destroy and tessera_event_destroy: only a live handle (`what`) is destroyed.
template <typename Handle, typename Destroy>
tessera_status destroyHandle(const char* fn, const char* what, Handle h, HandleSet& live, Destroy destroy) {
  if (!h || !live.remove(h)) return fail(TESSERA_ERROR_INVALID_HANDLE, fn, ": null, unknown or destroyed ", what);
  GET_BACKEND(b);
  return destroy(*b, h);
}

}  // namespace

extern "C" {

tessera_status tessera_init(void) {
  GET_BACKEND(b);
  (void)b;
  return TESSERA_SUCCESS;
}

tessera_status tessera_get_device_kind(tessera_device_kind* out) {
  if (!out) return fail(TESSERA_ERROR_INVALID_ARGUMENT, "tessera_get_device_kind: null output");
  GET_BACKEND(b);
  *out = b->kind();
  return TESSERA_SUCCESS;
}

const char* tessera_device_name(void) {
  static thread_local std::string name;
  Backend* b = nullptr;
  name = activeBackend(b) == TESSERA_SUCCESS ? b->name() : "no device";
  return name.c_str();
}

const char* tessera_gpu_unavailable_reason(void) { return gpuUnavailableReason().c_str(); }

tessera_status tessera_malloc(void** ptr, size_t bytes) {
  if (!ptr) return fail(TESSERA_ERROR_INVALID_ARGUMENT, "tessera_malloc: null output pointer");
  *ptr = nullptr;
  GET_BACKEND(b);
  return b->allocate(ptr, bytes);
}

tessera_status tessera_free(void* ptr) {
  if (!ptr) return TESSERA_SUCCESS;  // like free(NULL)
  GET_BACKEND(b);
  return b->release(ptr);
}

tessera_status tessera_malloc_async(void** ptr, size_t bytes, tessera_stream stream) {
  if (!ptr) return fail(TESSERA_ERROR_INVALID_ARGUMENT, "tessera_malloc_async: null output pointer");
  *ptr = nullptr;
  GET_BACKEND(b);
  return b->allocateAsync(ptr, bytes, stream);
}

tessera_status tessera_free_async(void* ptr, tessera_stream stream) {
  if (!ptr) return TESSERA_SUCCESS;
  GET_BACKEND(b);
  return b->releaseAsync(ptr, stream);
}

tessera_status tessera_memcpy(void* dst, const void* src, size_t bytes) {
  if (!bytes) return TESSERA_SUCCESS;
  if (!dst || !src) return fail(TESSERA_ERROR_NULL_POINTER, "tessera_memcpy: null ", dst ? "source" : "destination");
  GET_BACKEND(b);
  nvtx::Range range("memcpy");
  profile::Scope scope(profile::Kind::Copy, "memcpy", nullptr);
  TESSERA_TRY(b->copy(dst, src, bytes, nullptr, false));
  scope.finish(bytes, 0);
  return TESSERA_SUCCESS;
}

tessera_status tessera_memcpy_async(void* dst, const void* src, size_t bytes, tessera_stream stream) {
  TESSERA_TRY(checkStream("tessera_memcpy_async", stream));
  if (!bytes) return TESSERA_SUCCESS;
  if (!dst || !src)
    return fail(TESSERA_ERROR_NULL_POINTER, "tessera_memcpy_async: null ", dst ? "source" : "destination");
  GET_BACKEND(b);
  nvtx::Range range("memcpy_async");
  profile::Scope scope(profile::Kind::Copy, "memcpy_async", stream);
  TESSERA_TRY(b->copy(dst, src, bytes, stream, true));
  scope.finish(bytes, 0);
  return TESSERA_SUCCESS;
}

tessera_status tessera_memset(void* dst, int value, size_t bytes) {
  if (!bytes) return TESSERA_SUCCESS;
  if (!dst) return fail(TESSERA_ERROR_NULL_POINTER, "tessera_memset: null destination");
  GET_BACKEND(b);
  nvtx::Range range("memset");
  profile::Scope scope(profile::Kind::Copy, "memset", nullptr);
  TESSERA_TRY(b->fill(dst, value, bytes));
  scope.finish(bytes, 0);
  return TESSERA_SUCCESS;
}

tessera_status tessera_stream_create(tessera_stream* out) {
  return createHandle("tessera_stream_create", out, streams(),
                      [](Backend& b, tessera_stream* s) { return b.streamCreate(s); });
}

tessera_status tessera_stream_wrap(void* native, tessera_stream* out) {
  if (!out) return fail(TESSERA_ERROR_INVALID_ARGUMENT, "tessera_stream_wrap: null output");
  *out = nullptr;
  GET_BACKEND(b);
  if (b->kind() != TESSERA_DEVICE_GPU)
    return fail(TESSERA_ERROR_NOT_SUPPORTED, "tessera_stream_wrap: the ", b->name(), " has no native streams");
  TESSERA_TRY(b->streamWrap(native, out));
  streams().add(*out);
  return TESSERA_SUCCESS;
}

tessera_status tessera_stream_destroy(tessera_stream stream) {
  return destroyHandle("tessera_stream_destroy", "stream", stream, streams(),
                       [](Backend& b, tessera_stream s) { return b.streamDestroy(s); });
}

tessera_status tessera_stream_synchronize(tessera_stream stream) {
  TESSERA_TRY(checkStream("tessera_stream_synchronize", stream));
  GET_BACKEND(b);
  return b->streamSynchronize(stream);
}

tessera_status tessera_synchronize(void) {
  GET_BACKEND(b);
  return b->synchronize();
}

tessera_status tessera_event_create(tessera_event* out) {
  return createHandle("tessera_event_create", out, events(),
                      [](Backend& b, tessera_event* e) { return b.eventCreate(e); });
}

tessera_status tessera_event_destroy(tessera_event event) {
  return destroyHandle("tessera_event_destroy", "event", event, events(),
                       [](Backend& b, tessera_event e) { return b.eventDestroy(e); });
}

tessera_status tessera_event_record(tessera_event event, tessera_stream stream) {
  TESSERA_TRY(checkEvent("tessera_event_record", event));
  TESSERA_TRY(checkStream("tessera_event_record", stream));
  GET_BACKEND(b);
  return b->eventRecord(event, stream);
}

tessera_status tessera_event_synchronize(tessera_event event) {
  TESSERA_TRY(checkEvent("tessera_event_synchronize", event));
  GET_BACKEND(b);
  return b->eventSynchronize(event);
}

tessera_status tessera_stream_wait_event(tessera_stream stream, tessera_event event) {
  TESSERA_TRY(checkStream("tessera_stream_wait_event", stream));
  TESSERA_TRY(checkEvent("tessera_stream_wait_event", event));
  GET_BACKEND(b);
  return b->streamWaitEvent(stream, event);
}

tessera_status tessera_event_elapsed_ms(float* ms, tessera_event start, tessera_event end) {
  if (!ms) return fail(TESSERA_ERROR_INVALID_ARGUMENT, "tessera_event_elapsed_ms: null output");
  TESSERA_TRY(checkEvent("tessera_event_elapsed_ms", start));
  TESSERA_TRY(checkEvent("tessera_event_elapsed_ms", end));
  GET_BACKEND(b);
  return b->eventElapsed(ms, start, end);
}

tessera_status tessera_stream_begin_capture(tessera_stream stream) {
  if (!stream)
    return fail(TESSERA_ERROR_INVALID_ARGUMENT,
                "tessera_stream_begin_capture: the default stream cannot capture; create a stream");
  TESSERA_TRY(checkStream("tessera_stream_begin_capture", stream));
  GET_BACKEND(b);
  TESSERA_TRY(b->beginCapture(stream));
  profile::captureStarted();
  return TESSERA_SUCCESS;
}

tessera_status tessera_stream_end_capture(tessera_stream stream, tessera_graph* out) {
  if (!stream || !out)
    return fail(TESSERA_ERROR_INVALID_ARGUMENT, "tessera_stream_end_capture: null ", stream ? "output" : "stream");
  TESSERA_TRY(checkStream("tessera_stream_end_capture", stream));
  GET_BACKEND(b);
  tessera_status ended = b->endCapture(stream, out);
  if (ended == TESSERA_SUCCESS || !b->capturing(stream)) profile::captureEnded();
  TESSERA_TRY(ended);
  graphs().add(*out);
  return TESSERA_SUCCESS;
}

tessera_status tessera_graph_launch(tessera_graph graph, tessera_stream stream) {
  if (!graph || !graphs().contains(graph))
    return fail(TESSERA_ERROR_INVALID_HANDLE, "tessera_graph_launch: null, unknown or destroyed graph");
  TESSERA_TRY(checkStream("tessera_graph_launch", stream));
  GET_BACKEND(b);
  nvtx::Range range("graph");
  profile::Scope scope(profile::Kind::Graph, "graph", stream);
  TESSERA_TRY(b->graphLaunch(graph, stream));
  scope.finish(0, 0);
  return TESSERA_SUCCESS;
}

tessera_status tessera_graph_destroy(tessera_graph graph) {
  if (!graph || !graphs().remove(graph))
    return fail(TESSERA_ERROR_INVALID_HANDLE, "tessera_graph_destroy: null, unknown or destroyed graph");
  GET_BACKEND(b);
  return b->graphDestroy(graph);
}

namespace {

// Calls of capture_graph entry points take turns in the cache functions below.
std::mutex& replayMutex() {
  static std::mutex* m = new std::mutex;
  return *m;
}

// The key as one vector: the stream, then each tensor's address, dtype, rank, extents and
// strides, then the scalars. Empty for a null key.
std::vector<int64_t> flattenKey(const tessera_graph_key* key, tessera_stream stream) {
  std::vector<int64_t> k;
  if (!key) return k;
  k.push_back(static_cast<int64_t>(reinterpret_cast<intptr_t>(stream)));
  k.push_back(key->num_tensors);
  for (uint32_t i = 0; i < key->num_tensors; ++i) {
    const tessera_tensor* t = key->tensors[i];
    if (!t) {
      k.push_back(-1);
      continue;
    }
    int32_t rank = t->rank < 0 ? 0 : t->rank > TESSERA_MAX_RANK ? TESSERA_MAX_RANK : t->rank;
    k.push_back(static_cast<int64_t>(reinterpret_cast<intptr_t>(t->data)));
    k.push_back((static_cast<int64_t>(t->dtype) << 32) | static_cast<uint32_t>(t->rank));
    k.insert(k.end(), t->shape, t->shape + rank);
    k.insert(k.end(), t->strides, t->strides + rank);
  }
  if (key->scalars) k.insert(k.end(), key->scalars, key->scalars + key->num_scalars);
  return k;
}

}  // namespace

tessera_status tessera_graph_launch_cached(tessera_graph* cache, const tessera_graph_key* key, tessera_stream stream,
                                           int32_t* launched) {
  if (!cache || !key || !launched || (key->num_tensors && !key->tensors) || (key->num_scalars && !key->scalars))
    return fail(TESSERA_ERROR_INVALID_ARGUMENT, "tessera_graph_launch_cached: null cache, key or result");
  *launched = 0;
  TESSERA_TRY(checkStream("tessera_graph_launch_cached", stream));
  std::lock_guard<std::mutex> lock(replayMutex());
  if (!*cache || !graphs().contains(*cache) || (*cache)->replayKey.empty() ||
      (*cache)->replayKey != flattenKey(key, stream))
    return TESSERA_SUCCESS;
  TESSERA_TRY(tessera_graph_launch(*cache, stream));
  *launched = 1;
  return TESSERA_SUCCESS;
}

tessera_status tessera_entry_check_pointers(const char* entry, const void* const* pointers, const char* const* names,
                                            uint32_t count) {
  if (count && (!pointers || !names))
    return fail(TESSERA_ERROR_NULL_POINTER, "tessera_entry_check_pointers: null argument list");
  for (uint32_t i = 0; i < count; ++i)
    if (!pointers[i])
      return fail(TESSERA_ERROR_NULL_POINTER, "host function '", entry ? entry : "?",
                  "': ", names[i] ? names[i] : "an argument", " is null");
  return TESSERA_SUCCESS;
}

tessera_status tessera_graph_replay(tessera_graph* cache, tessera_graph captured, tessera_stream stream) {
  return tessera_graph_replay_keyed(cache, captured, nullptr, stream);
}

tessera_status tessera_graph_replay_keyed(tessera_graph* cache, tessera_graph captured, const tessera_graph_key* key,
                                          tessera_stream stream) {
  if (!cache || !captured || !graphs().contains(captured))
    return fail(TESSERA_ERROR_INVALID_HANDLE, "tessera_graph_replay: null cache, or null, unknown or destroyed graph");
  TESSERA_TRY(checkStream("tessera_graph_replay", stream));
  GET_BACKEND(b);
  std::lock_guard<std::mutex> lock(replayMutex());  // one entry point's calls from several threads take turns
  if (*cache && !graphs().contains(*cache))
    return fail(TESSERA_ERROR_INVALID_HANDLE, "tessera_graph_replay: the cached graph was destroyed");
  bool updated = false;
  if (*cache) {
    (*cache)->replayKey.clear();  // until the update succeeds, no call may hit the old key
    TESSERA_TRY(b->graphUpdate(*cache, captured, updated));
  }
  if (updated) {
    TESSERA_TRY(tessera_graph_destroy(captured));
  } else {
    if (*cache) TESSERA_TRY(tessera_graph_destroy(*cache));
    *cache = captured;
  }
  tessera_status launched = tessera_graph_launch(*cache, stream);
  if (launched == TESSERA_SUCCESS)
    (*cache)->replayKey = flattenKey(key, stream);  // a graph that failed to launch is never hit
  return launched;
}

tessera_status tessera_launch(const tessera_kernel_desc* kernel, const tessera_launch_options* opts,
                              const tessera_arg* args, uint32_t num_args) {
  GET_BACKEND(b);
  if (opts) TESSERA_TRY(checkStream("tessera_launch", opts->stream));
  LaunchPlan plan;
  TESSERA_TRY(planLaunch(kernel, opts, args, num_args, *b, plan));
  // An autotuned kernel runs the candidate recorded for this launch's key (tuning first).
  TESSERA_TRY(autotune::select(kernel, opts, args, num_args, *b, plan));
  tessera_stream stream = opts ? opts->stream : nullptr;
  if (profile::enabled()) TESSERA_TRY(b->prepare(plan));  // a first launch's module load is not the kernel's time
  nvtx::Range range(kernel->name);
  profile::Scope scope(profile::Kind::Launch, kernel->name, stream);
  TESSERA_TRY(b->launch(plan, stream));
  if (profile::enabled())
    scope.finish(profile::launchBytes(plan), profile::launchFlops(plan), plan.module ? plan.module->name : "");
  return TESSERA_SUCCESS;
}

tessera_status tessera_autotune_set_mode(tessera_autotune_mode mode) {
  if (mode != TESSERA_AUTOTUNE_OFF && mode != TESSERA_AUTOTUNE_CACHED && mode != TESSERA_AUTOTUNE_ON)
    return fail(TESSERA_ERROR_INVALID_ARGUMENT, "tessera_autotune_set_mode: ", static_cast<int>(mode),
                " is not TESSERA_AUTOTUNE_OFF, _CACHED or _ON");
  autotune::setMode(mode);
  return TESSERA_SUCCESS;
}

tessera_autotune_mode tessera_autotune_get_mode(void) { return autotune::mode(); }

tessera_status tessera_autotune_search(const tessera_kernel_desc* kernel, const tessera_launch_options* opts,
                                       const tessera_arg* args, uint32_t num_args, tessera_autotune_result* out) {
  GET_BACKEND(b);
  if (!out) return fail(TESSERA_ERROR_INVALID_ARGUMENT, "tessera_autotune_search: null result");
  if (opts) TESSERA_TRY(checkStream("tessera_autotune_search", opts->stream));
  LaunchPlan plan;
  TESSERA_TRY(planLaunch(kernel, opts, args, num_args, *b, plan));
  return autotune::search(kernel, opts, args, num_args, *b, plan, *out);
}

tessera_status tessera_launch_candidate(const tessera_kernel_desc* kernel, uint32_t index,
                                        const tessera_launch_options* opts, const tessera_arg* args,
                                        uint32_t num_args) {
  GET_BACKEND(b);
  if (opts) TESSERA_TRY(checkStream("tessera_launch_candidate", opts->stream));
  LaunchPlan plan0, plan;
  TESSERA_TRY(planLaunch(kernel, opts, args, num_args, *b, plan0));  // the kernel's module
  TESSERA_TRY(autotune::planCandidate(kernel, index, opts, args, num_args, *b, plan0.module, plan));
  tessera_stream stream = opts ? opts->stream : nullptr;
  nvtx::Range range(plan.kernel->name);
  return b->launch(plan, stream);
}

uint32_t tessera_autotune_num_candidates(const tessera_kernel_desc* kernel) {
  const tessera_autotune_desc* t = kernel ? tessera_kernel_autotune(kernel) : nullptr;
  return t ? t->num_candidates : 1;
}

tessera_status tessera_autotune_value(const tessera_kernel_desc* kernel, uint32_t index, const char* param,
                                      int64_t* out) {
  const tessera_autotune_desc* t = kernel ? tessera_kernel_autotune(kernel) : nullptr;
  if (!kernel || !param || !out)
    return fail(TESSERA_ERROR_INVALID_ARGUMENT, "tessera_autotune_value: null kernel, parameter or result");
  if (!t || index >= t->num_candidates)
    return fail(TESSERA_ERROR_INVALID_ARGUMENT, "tessera_autotune_value: kernel '", kernel->name, "' has no candidate ",
                index);
  for (uint32_t p = 0; p < t->num_params; ++p)
    if (!std::strcmp(t->param_names[p], param)) {
      *out = t->values[size_t(index) * t->num_params + p];
      return TESSERA_SUCCESS;
    }
  return fail(TESSERA_ERROR_INVALID_ARGUMENT, "tessera_autotune_value: kernel '", kernel->name,
              "' has no tuned parameter '", param, "'");
}

tessera_status tessera_profile_flush(void) {
  std::string error;
  if (!profile::flush(error)) return fail(TESSERA_ERROR_NOT_SUPPORTED, "tessera_profile_flush: ", error);
  return TESSERA_SUCCESS;
}

tessera_status tessera_launch_bound(const tessera_kernel_desc* kernel, const tessera_launch_options* opts,
                                    const tessera_arg* args, uint32_t num_args, const tessera_symbol_binding* bindings,
                                    uint32_t num_bindings) {
  GET_BACKEND(b);
  if (opts) TESSERA_TRY(checkStream("tessera_launch_bound", opts->stream));
  LaunchPlan plan;
  TESSERA_TRY(planLaunchBound(kernel, opts, args, num_args, bindings, num_bindings, *b, plan));
  return b->launch(plan, opts ? opts->stream : nullptr);
}

}  // extern "C"
