// Streams, events and graphs of the runtime as Python objects (the spec's stream.new,
// graph.capture / graph.launch), and PyTorch's streams wrapped as runtime streams.
#pragma once

#include <cstdint>
#include <pybind11/pybind11.h>

#include "tessera/runtime.h"

namespace tessera::py {

// tessera.stream.Stream: a stream of the runtime (stream.new()), destroyed with the object.
class Stream {
 public:
  Stream();
  ~Stream();
  Stream(const Stream&) = delete;
  Stream& operator=(const Stream&) = delete;
  tessera_stream handle() const { return s_; }
  void synchronize();
  void beginCapture();
  pybind11::object endCapture();

 private:
  tessera_stream s_ = nullptr;
};

// A captured graph (graph.capture()), replayed by launch(); destroyed with the object.
class Graph {
 public:
  explicit Graph(tessera_graph g) : g_(g) {}
  ~Graph();
  Graph(const Graph&) = delete;
  Graph& operator=(const Graph&) = delete;
  void launch(pybind11::object stream);

 private:
  tessera_graph g_;
};

// An event for ordering and timing (record on a stream, wait, elapsed time).
class Event {
 public:
  Event();
  ~Event();
  Event(const Event&) = delete;
  Event& operator=(const Event&) = delete;
  void record(pybind11::object stream);
  void synchronize();
  float elapsedMs(const Event& end) const;
  tessera_event handle() const { return e_; }

 private:
  tessera_event e_ = nullptr;
};

// A runtime handle for a CUDA stream another library owns (PyTorch's), made once per stream
// value and kept: the handle owns nothing, so a stream value reused later is still right.
tessera_stream wrapNativeStream(uintptr_t native);

void addStreamTypes(pybind11::module_& m);
// memcpy(dst, src, stream, async_): stream.memcpy_async between any two tensors (host or device)
// of the same dtype and element count.
void addCopyFunctions(pybind11::module_& m);

}  // namespace tessera::py
