//===- Deadline.h - Time limits for waiting on peers -------------------------------*- C++ -*-===//
//
// Every wait on another rank (rendezvous, metadata exchange, MPI requests, GPU work) has a
// deadline, so a rank that died or stalled turns into TESSERA_ERROR_TIMEOUT instead of a hang.
// Waits poll: spin briefly (collectives are usually quick), then sleep in short steps.
//
//===----------------------------------------------------------------------------------------===//
#ifndef TESSERA_RUNTIME_DIST_DEADLINE_H
#define TESSERA_RUNTIME_DIST_DEADLINE_H

#include <chrono>
#include <thread>

namespace tessera::dist {

using Clock = std::chrono::steady_clock;

struct Deadline {
  Clock::time_point at;
  double seconds = 0;  // the limit it was made from, for messages

  static Deadline after(double s) {
    return {Clock::now() + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(s)), s};
  }
  bool passed() const { return Clock::now() >= at; }
  double remaining() const { return std::chrono::duration<double>(at - Clock::now()).count(); }
};

// Backoff for polling loops: the first ~50 us spin, then sleeps growing to 1 ms.
class Poller {
 public:
  void pause() {
    if (++polls_ < 64) {
      std::this_thread::yield();
      return;
    }
    std::this_thread::sleep_for(std::chrono::microseconds(sleepUs_));
    if (sleepUs_ < 1000) sleepUs_ *= 2;
  }

 private:
  int polls_ = 0;
  int sleepUs_ = 10;
};

}  // namespace tessera::dist

#endif
