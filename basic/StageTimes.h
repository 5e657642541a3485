// Wall time of the compiler's stages for `--time-passes`: the front end, sema, lowering, the Tile
// IR passes, LLVM (per target), ptxas and the fatbinary each add their time under their name to
// one process-wide record, which the driver prints after the Tile IR pass report. Stages may run
// at once (the CPU code is optimised on a thread of its own while the GPU code is built): the
// record takes additions from any thread, and the report also gives the wall time from enable()
// to the report, which is less than the stages' sum when they overlap.
#pragma once

#include <chrono>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

namespace tessera {

class StageTimes {
 public:
  static StageTimes& get();
  // Off until the driver turns it on: a stage timed while off costs one clock read.
  bool enabled = false;
  void enable(bool on) {
    enabled = on;
    start_ = std::chrono::steady_clock::now();
  }
  void add(const std::string& stage, double seconds);
  // "===...=== Stage timing report" with one row per stage, in the order first timed.
  std::string report() const;

 private:
  mutable std::mutex mutex_;
  std::vector<std::pair<std::string, double>> rows_;
  std::chrono::steady_clock::time_point start_ = std::chrono::steady_clock::now();
};

// Adds the time from its construction to its destruction (or stop()) to `stage`.
class StageTimer {
 public:
  explicit StageTimer(std::string stage) : stage_(std::move(stage)), t0_(std::chrono::steady_clock::now()) {}
  ~StageTimer() { stop(); }
  StageTimer(const StageTimer&) = delete;
  StageTimer& operator=(const StageTimer&) = delete;
  void stop() {
    if (stopped_) return;
    stopped_ = true;
    if (StageTimes::get().enabled)
      StageTimes::get().add(stage_, std::chrono::duration<double>(std::chrono::steady_clock::now() - t0_).count());
  }

 private:
  std::string stage_;
  std::chrono::steady_clock::time_point t0_;
  bool stopped_ = false;
};

}  // namespace tessera
