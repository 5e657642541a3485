//===- Profiler.cpp - Recording launches, copies and collectives ------------------------------===//
#include "runtime/Profiler.h"

#include <atomic>
#include <cstdlib>
#include <deque>
#include <map>
#include <mutex>
#include <vector>

#include "runtime/Backend.h"
#include "runtime/Device.h"
#include "runtime/ProfileReport.h"

namespace tessera::rt::profile {

namespace {

// Records wait for their end markers to complete. Each new record first resolves up to two
// older ones whose markers are done (a query, no wait), so markers are reused instead of
// created per operation; past kMaxPending the oldest are waited for, bounding the events held.
constexpr size_t kMaxPending = 4096;
constexpr size_t kResolvePerAdd = 2;

struct Pending {
  Kind kind;
  std::string name;
  tessera_stream stream;
  tessera_event start = nullptr, end = nullptr;
  uint64_t bytes = 0;
  double flops = 0;
  std::string detail;
};

class Recorder {
 public:
  static Recorder* instance() {
    static Recorder* r = create();
    return r;
  }

  Backend& backend() { return *backend_; }

  tessera_event acquire() {
    std::lock_guard<std::mutex> lock(mutex_);
    if (!pool_.empty()) {
      tessera_event e = pool_.back();
      pool_.pop_back();
      return e;
    }
    tessera_event e = nullptr;
    return backend_->eventCreate(&e) == TESSERA_SUCCESS ? e : nullptr;
  }
  void release(tessera_event e) {
    std::lock_guard<std::mutex> lock(mutex_);
    if (e) pool_.push_back(e);
  }

  void add(Pending&& p) {
    std::lock_guard<std::mutex> lock(mutex_);
    pending_.push_back(std::move(p));
    for (size_t i = 0; i < kResolvePerAdd && pending_.size() > 1; ++i) {
      if (backend_->eventQuery(pending_.front().end) != TESSERA_SUCCESS) break;
      resolve(1);
    }
    if (pending_.size() > kMaxPending) resolve(pending_.size() / 2);
  }

  bool flush(std::string& error) {
    backend_->synchronize();  // a fault is reported by the launch that caused it, not here
    std::lock_guard<std::mutex> lock(mutex_);
    resolve(pending_.size());
    TraceInfo info{path_, backend_->name(), streamNames()};
    return writeTrace(records_, info, error) && (printSummary(records_, info), true);
  }

 private:
  static Recorder* create() {
    Backend* b = nullptr;
    if (activeBackend(b) != TESSERA_SUCCESS) return nullptr;
    auto* r = new Recorder;  // lives until exit: its atexit handler writes the trace
    r->backend_ = b;
    r->path_ = std::getenv("TESSERA_PROFILE");
    if (b->eventCreate(&r->epoch_) != TESSERA_SUCCESS || b->eventRecord(r->epoch_, nullptr) != TESSERA_SUCCESS)
      return nullptr;
    std::atexit([] {
      std::string error;
      if (Recorder* rec = instance(); rec && !rec->flush(error))
        std::fprintf(stderr, "tessera: TESSERA_PROFILE: %s\n", error.c_str());
    });
    return r;
  }

  uint32_t streamId(tessera_stream s) {
    if (!s) return 0;
    auto it = streams_.emplace(s, static_cast<uint32_t>(streams_.size() + 1)).first;
    return it->second;
  }
  std::map<uint32_t, std::string> streamNames() {
    std::map<uint32_t, std::string> names{{0, "default stream"}};
    for (auto& [s, id] : streams_) names[id] = "stream " + std::to_string(id);
    return names;
  }

  // Turns the oldest `n` pending records into timed records (times relative to the first
  // marker, in microseconds), returning their markers to the pool.
  void resolve(size_t n) {
    for (size_t i = 0; i < n && !pending_.empty(); ++i) {
      Pending p = std::move(pending_.front());
      pending_.pop_front();
      float at = 0, took = 0;
      if (backend_->eventSynchronize(p.end) == TESSERA_SUCCESS &&
          backend_->eventElapsed(&at, epoch_, p.start) == TESSERA_SUCCESS &&
          backend_->eventElapsed(&took, p.start, p.end) == TESSERA_SUCCESS)
        records_.push_back(Record{p.kind, std::move(p.name), streamId(p.stream), at * 1000.0, took * 1000.0, p.bytes,
                                  p.flops, std::move(p.detail)});
      pool_.push_back(p.start);
      pool_.push_back(p.end);
    }
  }

  std::mutex mutex_;
  Backend* backend_ = nullptr;
  std::string path_;
  tessera_event epoch_ = nullptr;
  std::vector<tessera_event> pool_;
  std::deque<Pending> pending_;
  std::vector<Record> records_;
  std::map<tessera_stream, uint32_t> streams_;
};

}  // namespace

static std::atomic<int> capturingStreams{0};

struct Scope::Pending : profile::Pending {};

void captureStarted() { ++capturingStreams; }
void captureEnded() { --capturingStreams; }

const char* kindName(Kind k) {
  switch (k) {
    case Kind::Launch: return "launch";
    case Kind::Copy: return "copy";
    case Kind::Collective: return "collective";
    case Kind::Graph: return "graph";
  }
  return "?";
}

bool enabled() {
  static const bool on = [] {
    const char* p = std::getenv("TESSERA_PROFILE");
    return p && *p;
  }();
  return on;
}

Scope::Scope(Kind kind, const char* name, tessera_stream stream) {
  if (!enabled()) return;
  Recorder* r = Recorder::instance();
  if (!r || (capturingStreams.load(std::memory_order_relaxed) > 0 && r->backend().capturing(stream))) return;
  tessera_event start = r->acquire();
  if (!start) return;
  if (r->backend().eventRecord(start, stream) != TESSERA_SUCCESS) {
    r->release(start);
    return;
  }
  pending_ = new Pending;
  pending_->kind = kind;
  pending_->name = name;
  pending_->stream = stream;
  pending_->start = start;
}

Scope::~Scope() {
  if (pending_) {
    Recorder::instance()->release(pending_->start);
    delete pending_;
  }
}

void Scope::finish(uint64_t bytes, double flops, std::string detail) {
  if (!pending_) return;
  Recorder* r = Recorder::instance();
  tessera_event end = r->acquire();
  if (end && r->backend().eventRecord(end, pending_->stream) == TESSERA_SUCCESS) {
    pending_->end = end;
    pending_->bytes = bytes;
    pending_->flops = flops;
    pending_->detail = std::move(detail);
    r->add(std::move(*pending_));
    delete pending_;
    pending_ = nullptr;
    return;
  }
  r->release(end);
}

bool flush(std::string& error) {
  Recorder* r = enabled() ? Recorder::instance() : nullptr;
  if (!r) {
    error = "profiling is off (TESSERA_PROFILE is not set) or no device is usable";
    return false;
  }
  return r->flush(error);
}

}  // namespace tessera::rt::profile
