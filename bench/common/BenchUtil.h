// What the benchmarks in bench/ share: failing loudly on a runtime error, and the median time of
// a piece of work, by the device's events (GPU work) or the wall clock (CPU work).
#pragma once

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <tessera/runtime.h>
#include <vector>

namespace bench {

inline void check(tessera_status s, const char* what) {
  if (s != TESSERA_SUCCESS) {
    std::printf("FAIL: %s: %s\n", what, tessera_last_error_message());
    std::exit(1);
  }
}

inline double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

// Median of `runs` timings of run(), after `warmups` untimed ones, timed with events on the
// default stream.
inline double medianEventMs(const std::function<void()>& run, int warmups, int runs) {
  tessera_event a, b;
  check(tessera_event_create(&a), "event");
  check(tessera_event_create(&b), "event");
  for (int i = 0; i < warmups; ++i) run();
  check(tessera_synchronize(), "warm-up");
  std::vector<double> ms;
  for (int i = 0; i < runs; ++i) {
    check(tessera_event_record(a, nullptr), "record");
    run();
    check(tessera_event_record(b, nullptr), "record");
    check(tessera_event_synchronize(b), "sync");
    float t;
    check(tessera_event_elapsed_ms(&t, a, b), "elapsed");
    ms.push_back(t);
  }
  tessera_event_destroy(a);
  tessera_event_destroy(b);
  return median(ms);
}

// Median wall-clock time of `runs` calls of run() (which must finish its work), after `warmups`.
inline double medianWallMs(const std::function<void()>& run, int warmups, int runs) {
  for (int i = 0; i < warmups; ++i) run();
  std::vector<double> ms;
  for (int i = 0; i < runs; ++i) {
    auto t0 = std::chrono::steady_clock::now();
    run();
    ms.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
  }
  return median(ms);
}

}  // namespace bench
