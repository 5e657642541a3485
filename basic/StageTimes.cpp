// The process-wide record of stage times (StageTimes.h).
#include "basic/StageTimes.h"

#include <cstdio>

namespace tessera {

StageTimes& StageTimes::get() {
  static StageTimes times;
  return times;
}

void StageTimes::add(const std::string& stage, double seconds) {
  std::lock_guard<std::mutex> lock(mutex_);
  for (auto& [name, total] : rows_)
    if (name == stage) {
      total += seconds;
      return;
    }
  rows_.push_back({stage, seconds});
}

std::string StageTimes::report() const {
  std::lock_guard<std::mutex> lock(mutex_);
  double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
  double total = 0;
  for (const auto& row : rows_) total += row.second;
  std::string out =
      "===-------------------------------------------------------------------------===\n"
      "                         ... Stage timing report ...\n"
      "===-------------------------------------------------------------------------===\n";
  char buf[200];
  std::snprintf(buf, sizeof buf, "  Total Execution Time: %.4f seconds\n\n   Wall Time  Stage\n", total);
  out += buf;
  for (const auto& [name, seconds] : rows_) {
    std::snprintf(buf, sizeof buf, "  %.4f (%5.1f%%)  %s\n", seconds, total > 0 ? 100.0 * seconds / total : 0.0,
                  name.c_str());
    out += buf;
  }
  std::snprintf(buf, sizeof buf, "  %.4f (100.0%%)  Total\n", total);
  out += buf;
  std::snprintf(buf, sizeof buf, "  %.4f           Wall time of the compile (stages may overlap)\n", wall);
  out += buf;
  return out;
}

}  // namespace tessera
