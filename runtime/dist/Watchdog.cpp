//===- Watchdog.cpp - The thread that aborts GPU communicators whose work does not end -------===//
#include "runtime/dist/Watchdog.h"

#include "runtime/Status.h"

#if !TESSERA_RT_HAVE_CUDA
namespace tessera::dist {
bool gpuStreamCapturing(void*) { return false; }
tessera_status watchGpuWork(tessera_comm_t&, void*, const std::string&) { return TESSERA_SUCCESS; }
void unwatchComm(tessera_comm_t&) {}
std::string pendingWork(tessera_comm_t&) { return ""; }
tessera_status waitGpuStream(tessera_comm_t& c, void*, const Deadline&) { return c.live(); }
int watchdogThreads() { return 0; }
HostCallGuard::HostCallGuard(std::function<void()>, const Deadline&) {}
HostCallGuard::~HostCallGuard() {}
bool HostCallGuard::fired() const { return false; }
}  // namespace tessera::dist
#else

#include <condition_variable>
#include <cstdlib>
#include <deque>
#include <map>
#include <thread>
#include <vector>

#include "runtime/CudaDriver.h"

namespace tessera::dist {

using rt::concat;
using rt::CudaDriver;
using rt::fail;

namespace {

const CudaDriver* driver() {
  std::string why;
  return CudaDriver::load(why);
}

struct Pending {
  CUevent event;
  Clock::time_point due;
  std::string what;
};

class Watchdog {
 public:
  static Watchdog& instance() {
    static Watchdog* w = new Watchdog;  // never destroyed: stop() ends the thread at exit
    return *w;
  }

  tessera_status watch(tessera_comm_t& c, CUstream stream, const std::string& what) {
    const CudaDriver* d = driver();
    std::lock_guard<std::mutex> lock(mutex_);
    CUevent ev = nullptr;
    if (!free_.empty()) {  // events are reused: creating one per collective costs microseconds
      ev = free_.back();
      free_.pop_back();
    } else if (d->cuEventCreate(&ev, CU_EVENT_DISABLE_TIMING) != CUDA_SUCCESS) {
      return fail(TESSERA_ERROR_DRIVER, what, ": cannot create an event to follow it");
    }
    if (d->cuEventRecord(ev, stream) != CUDA_SUCCESS) {
      free_.push_back(ev);
      return fail(TESSERA_ERROR_DRIVER, what, ": cannot record an event to follow it");
    }
    auto due = Clock::now() + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(c.timeout));
    pending_[&c].push_back({ev, due, what});
    if (!backend_) backend_ = c.backend;
    startLocked();
    if (idle_) wake_.notify_one();  // a busy thread looks again within 2 ms anyway
    return TESSERA_SUCCESS;
  }

  uint64_t guard(std::function<void()> onTimeout, Clock::time_point due) {
    std::lock_guard<std::mutex> lock(mutex_);
    uint64_t id = ++nextGuard_;
    guards_[id] = {std::move(onTimeout), due, false};
    startLocked();
    return id;
  }
  void release(uint64_t id) {
    std::lock_guard<std::mutex> lock(mutex_);
    guards_.erase(id);
  }
  bool fired(uint64_t id) {
    std::lock_guard<std::mutex> lock(mutex_);
    auto it = guards_.find(id);
    return it != guards_.end() && it->second.fired;
  }

  void unwatch(tessera_comm_t& c) {
    std::lock_guard<std::mutex> lock(mutex_);
    auto it = pending_.find(&c);
    if (it == pending_.end()) return;
    for (Pending& p : it->second) free_.push_back(p.event);
    pending_.erase(it);
  }

  std::string oldest(tessera_comm_t& c) {
    std::lock_guard<std::mutex> lock(mutex_);
    auto it = pending_.find(&c);
    return it == pending_.end() || it->second.empty() ? std::string() : it->second.front().what;
  }

  int threads() {
    std::lock_guard<std::mutex> lock(mutex_);
    return started_ ? 1 : 0;
  }

 private:
  // At exit, before the CUDA driver and NCCL unload: the thread must not query events then.
  void stop() {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      stopping_ = true;
    }
    wake_.notify_one();
    if (thread_.joinable()) thread_.join();
  }

  // One thread for the process. (Starting it only when std::thread::joinable() was false,
  // after detaching it, once started a thread per collective: thousands per process.)
  void startLocked() {
    if (started_) return;
    started_ = true;
    thread_ = std::thread([this] { run(); });
    std::atexit([] { instance().stop(); });
  }

  void run() {
    const CudaDriver* d = driver();
    std::unique_lock<std::mutex> lock(mutex_);
    bool entered = false;
    while (!stopping_) {
      bool busy = false;
      for (auto& [comm, queue] : pending_) busy = busy || !queue.empty();
      // Busy: look again in 2 ms. Idle: sleep until a collective is watched, and at most 50 ms
      // (host-call guards are registered without waking the thread; their deadlines are seconds).
      if (busy) {
        wake_.wait_for(lock, std::chrono::milliseconds(2));
      } else {
        idle_ = true;
        wake_.wait_for(lock, std::chrono::milliseconds(50));
        idle_ = false;
      }
      if (stopping_) break;
      if (!entered && backend_) entered = backend_->enterDevice() == TESSERA_SUCCESS;
      if (entered) pass(*d);
      fireGuards();
    }
  }

  void fireGuards() {
    auto now = Clock::now();
    for (auto& [id, g] : guards_)
      if (!g.fired && now >= g.due) {
        g.fired = true;
        g.onTimeout();
      }
  }

  // One look at every communicator's pending work (under the lock, so that a communicator is
  // not destroyed meanwhile: destroyComm unwatches it first).
  void pass(const CudaDriver& d) {
    for (auto& [comm, queue] : pending_) {
      if (queue.empty()) continue;
      if (comm->aborted()) {
        for (Pending& p : queue) free_.push_back(p.event);
        queue.clear();
        continue;
      }
      if (tessera_status st = comm->transport->asyncError(); st != TESSERA_SUCCESS) {
        comm->abort(st, concat(queue.front().what, " on ", comm->where(), ": ", tessera_last_error_message(),
                               "; the communicator was aborted"));
        continue;
      }
      while (!queue.empty()) {
        Pending& p = queue.front();
        CUresult r = d.cuEventQuery(p.event);
        if (r == CUDA_ERROR_NOT_READY) {
          if (Clock::now() >= p.due)
            comm->abort(TESSERA_ERROR_TIMEOUT,
                        concat(p.what, " on ", comm->where(), " did not complete within ", comm->timeout,
                               " s (a rank died or stalled); the communicator was aborted"));
          break;
        }
        free_.push_back(p.event);
        queue.pop_front();
      }
    }
  }

  struct Guard {
    std::function<void()> onTimeout;
    Clock::time_point due;
    bool fired;
  };
  std::mutex mutex_;
  std::condition_variable wake_;
  std::map<uint64_t, Guard> guards_;
  uint64_t nextGuard_ = 0;
  std::map<tessera_comm_t*, std::deque<Pending> > pending_;
  std::vector<CUevent> free_;
  std::thread thread_;
  bool started_ = false, stopping_ = false, idle_ = false;
  rt::Backend* backend_ = nullptr;
};

}  // namespace

bool gpuStreamCapturing(void* stream) {
  CUstreamCaptureStatus st = CU_STREAM_CAPTURE_STATUS_NONE;
  return stream && driver()->cuStreamIsCapturing(static_cast<CUstream>(stream), &st) == CUDA_SUCCESS &&
         st != CU_STREAM_CAPTURE_STATUS_NONE;
}

tessera_status watchGpuWork(tessera_comm_t& c, void* stream, const std::string& what) {
  return Watchdog::instance().watch(c, static_cast<CUstream>(stream), what);
}

void unwatchComm(tessera_comm_t& c) { Watchdog::instance().unwatch(c); }

std::string pendingWork(tessera_comm_t& c) { return Watchdog::instance().oldest(c); }

int watchdogThreads() { return Watchdog::instance().threads(); }

HostCallGuard::HostCallGuard(std::function<void()> onTimeout, const Deadline& d)
    : id_(Watchdog::instance().guard(std::move(onTimeout), d.at)) {}
HostCallGuard::~HostCallGuard() { Watchdog::instance().release(id_); }
bool HostCallGuard::fired() const { return Watchdog::instance().fired(id_); }

tessera_status waitGpuStream(tessera_comm_t& c, void* stream, const Deadline& d) {
  const CudaDriver* drv = driver();
  Poller poller;
  for (;;) {
    if (c.aborted()) return c.abortCause();
    CUresult r = drv->cuStreamQuery(static_cast<CUstream>(stream));
    if (r == CUDA_SUCCESS) return c.aborted() ? c.abortCause() : TESSERA_SUCCESS;
    if (r != CUDA_ERROR_NOT_READY)
      return fail(TESSERA_ERROR_DRIVER, "tessera_comm_synchronize on ", c.where(),
                  ": cuStreamQuery failed: ", drv->describe(r));
    if (d.passed()) {
      std::string what = pendingWork(c);
      std::string msg = concat(what.empty() ? "the collectives" : what, " on ", c.where(), " did not complete within ",
                               d.seconds, " s (a rank died or stalled); the communicator was aborted");
      c.abort(TESSERA_ERROR_TIMEOUT, msg);
      return fail(TESSERA_ERROR_TIMEOUT, msg);
    }
    poller.pause();
  }
}

}  // namespace tessera::dist
#endif
