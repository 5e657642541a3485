//===- Profiler.h - TESSERA_PROFILE: a timeline of launches, copies and collectives -*- C++ -*-===//
//
// With TESSERA_PROFILE=path.json set, the runtime records every kernel launch, copy and
// collective with its stream, duration, bytes moved and floating-point operations, and at exit
// writes a Chrome trace (Perfetto and chrome://tracing open it) and prints a summary table.
// Durations come from stream-ordered markers: CUDA events on the GPU, the clock on the CPU
// executor (whose work runs at submission). Unset, every entry point costs one branch.
//
// Other parts of the runtime (collectives in runtime/dist/) record their operations the same way:
//
//   profile::Scope scope(profile::Kind::Collective, "all_reduce", stream);
//   ... enqueue the operation on `stream` ...
//   scope.finish(bytes, /*flops=*/0, "axis=tp ranks=4");   // not called on failure: nothing kept
//
//===----------------------------------------------------------------------------------------===//
#ifndef TESSERA_RUNTIME_PROFILER_H
#define TESSERA_RUNTIME_PROFILER_H

#include <cstdint>
#include <string>

#include "tessera/runtime.h"

namespace tessera::rt {
class Backend;
struct LaunchPlan;
}  // namespace tessera::rt

namespace tessera::rt::profile {

enum class Kind { Launch, Copy, Collective, Graph };
const char* kindName(Kind k);

// Whether TESSERA_PROFILE is set (read once).
bool enabled();

// Brackets one operation on a stream. Construction records the start marker, finish() the end
// marker and keeps the record; a Scope destroyed without finish() (the operation failed) keeps
// nothing. Work on a capturing stream is not recorded (it does not run now; the graph's launch
// is). Does nothing unless enabled().
class Scope {
 public:
  Scope(Kind kind, const char* name, tessera_stream stream);
  ~Scope();
  Scope(const Scope&) = delete;
  Scope& operator=(const Scope&) = delete;
  void finish(uint64_t bytes, double flops, std::string detail = {});

 private:
  struct Pending;
  Pending* pending_ = nullptr;
};

// The compulsory traffic of a launch (each tensor argument read once, each mut tensor written
// once, write-only ones not read) and its flops from the kernel's @kernel(flops=) expression
// (0 when it has none).
uint64_t launchBytes(const LaunchPlan& plan);
double launchFlops(const LaunchPlan& plan);

// Streams capturing into graphs: while none is, recording skips the per-operation query of
// the stream's capture state (a driver call on the GPU).
void captureStarted();
void captureEnded();

// Writes the trace and prints the summary now (also done at exit). Returns false with `error`
// when the file cannot be written.
bool flush(std::string& error);

}  // namespace tessera::rt::profile

#endif
