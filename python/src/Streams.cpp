#include "python/src/Streams.h"

#include <mutex>
#include <unordered_map>
#include <vector>

#include "python/src/Args.h"
#include "python/src/Common.h"

namespace pyb = pybind11;

namespace tessera::py {

Stream::Stream() {
  activeDevice(nullptr);
  check(tessera_stream_create(&s_));
}
Stream::~Stream() {
  if (s_) tessera_stream_destroy(s_);
}
void Stream::synchronize() {
  tessera_status s;
  {
    pyb::gil_scoped_release nogil;
    s = tessera_stream_synchronize(s_);
  }
  check(s);
}
void Stream::beginCapture() { check(tessera_stream_begin_capture(s_)); }
pyb::object Stream::endCapture() {
  tessera_graph g = nullptr;
  check(tessera_stream_end_capture(s_, &g));
  return pyb::cast(new Graph(g), pyb::return_value_policy::take_ownership);
}

Graph::~Graph() {
  if (g_) tessera_graph_destroy(g_);
}
void Graph::launch(pyb::object stream) {
  tessera_stream s = streamOf(stream.ptr());
  tessera_status st;
  {
    pyb::gil_scoped_release nogil;
    st = tessera_graph_launch(g_, s);
  }
  check(st);
}

Event::Event() {
  activeDevice(nullptr);
  check(tessera_event_create(&e_));
}
Event::~Event() {
  if (e_) tessera_event_destroy(e_);
}
void Event::record(pyb::object stream) { check(tessera_event_record(e_, streamOf(stream.ptr()))); }
void Event::synchronize() {
  tessera_status s;
  {
    pyb::gil_scoped_release nogil;
    s = tessera_event_synchronize(e_);
  }
  check(s);
}
float Event::elapsedMs(const Event& end) const {
  float ms = 0;
  check(tessera_event_elapsed_ms(&ms, e_, end.e_));
  return ms;
}

tessera_stream wrapNativeStream(uintptr_t native) {
  if (!native) return nullptr;  // the legacy default stream is the runtime's default stream
  static std::mutex mutex;
  static auto* cache = new std::unordered_map<uintptr_t, tessera_stream>;  // lives for the process
  std::lock_guard<std::mutex> lock(mutex);
  auto it = cache->find(native);
  if (it != cache->end()) return it->second;
  tessera_stream s = nullptr;
  check(tessera_stream_wrap(reinterpret_cast<void*>(native), &s));
  cache->emplace(native, s);
  return s;
}

namespace {
thread_local std::vector<PyObject*> streamStack;  // strong references, popped by the `with` exits

PyObject* torchRawStreamFn() {
  static PyObject* fn = nullptr;
  if (fn) return fn;
  PyObject* torch = PyDict_GetItemString(PyImport_GetModuleDict(), "torch");
  PyObject* c = torch ? PyObject_GetAttrString(torch, "_C") : nullptr;
  fn = c ? PyObject_GetAttrString(c, "_cuda_getCurrentRawStream") : nullptr;
  Py_XDECREF(c);
  PyErr_Clear();
  return fn;
}
}  // namespace

tessera_stream torchCurrentStream(const ActiveDevice& d) {
  PyObject* fn = torchRawStreamFn();
  if (!fn) return nullptr;
  PyObject* ordinal = PyLong_FromLong(d.ordinal);
  PyObject* r = PyObject_CallOneArg(fn, ordinal);
  Py_DECREF(ordinal);
  if (!r) throw pyb::error_already_set();
  uintptr_t raw = static_cast<uintptr_t>(PyLong_AsUnsignedLongLong(r));
  Py_DECREF(r);
  if (PyErr_Occurred()) throw pyb::error_already_set();
  return wrapNativeStream(raw);
}

void pushStream(PyObject* stream) {
  Py_INCREF(stream);
  streamStack.push_back(stream);
}
void popStream() {
  if (streamStack.empty()) return;
  Py_DECREF(streamStack.back());
  streamStack.pop_back();
}

tessera_stream streamOf(PyObject* obj) {
  if (!obj || obj == Py_None) return nullptr;
  pyb::handle h(obj);
  if (pyb::isinstance<Stream>(h)) return h.cast<Stream&>().handle();
  if (PyLong_Check(obj)) {
    uintptr_t raw = static_cast<uintptr_t>(PyLong_AsUnsignedLongLong(obj));
    if (PyErr_Occurred()) throw pyb::error_already_set();
    return wrapNativeStream(raw);
  }
  if (PyObject_HasAttrString(obj, "cuda_stream")) {  // torch.cuda.Stream, torch.cuda.ExternalStream
    pyb::object raw = pyb::reinterpret_borrow<pyb::object>(h).attr("cuda_stream");
    return wrapNativeStream(raw.cast<uintptr_t>());
  }
  raise(PyExc_TypeError, std::string("expected a stream (tessera.stream.Stream, torch.cuda.Stream, a CUstream as an "
                                     "int, or None), got ") +
                             Py_TYPE(obj)->tp_name);
}

tessera_stream callStream(const CallArgs& call, PyObject* explicitStream) {
  if (!streamStack.empty()) return streamOf(streamStack.back());
  if (explicitStream && explicitStream != Py_None) return streamOf(explicitStream);
  if (call.anyTorchCuda()) return torchCurrentStream(call.device());
  return nullptr;
}

void addStreamTypes(pyb::module_& m) {
  pyb::class_<Stream>(m, "Stream", "A stream of the runtime (the spec's stream.new()).")
      .def(pyb::init<>())
      .def("synchronize", &Stream::synchronize, "Waits for the work queued on the stream.")
      .def("_begin_capture", &Stream::beginCapture)
      .def("_end_capture", &Stream::endCapture);
  pyb::class_<Graph>(m, "Graph", "A captured sequence of launches and copies (graph.capture()).")
      .def("launch", &Graph::launch, pyb::arg("stream") = pyb::none(), "Replays the graph on a stream.");
  pyb::class_<Event>(m, "Event", "An event of the runtime: ordering and timing on streams.")
      .def(pyb::init<>())
      .def("record", &Event::record, pyb::arg("stream") = pyb::none())
      .def("synchronize", &Event::synchronize)
      .def("elapsed_ms", &Event::elapsedMs, pyb::arg("end"));
  m.def("_push_stream", [](pyb::object s) { pushStream(s.ptr()); });
  m.def("_pop_stream", [] { popStream(); });
  m.def("_current_stream", [](pyb::object fallback) -> pyb::object {
    return streamStack.empty() ? fallback : pyb::reinterpret_borrow<pyb::object>(streamStack.back());
  });
}

}  // namespace tessera::py

namespace tessera::py {

namespace {
// dst[:] = src for two tensors of the same dtype and element count, each dense row-major, in host
// or device memory (the spec's stream.memcpy_async: host to device, device to host, either way).
void copyTensor(pyb::object dst, pyb::object src, pyb::object stream, bool async) {
  static const std::string owner = "stream.memcpy_async", d = "dst", s = "src";
  ImportScope scope;
  ImportedTensor to = scope.import(dst.ptr(), owner, d, TESSERA_DTYPE_INVALID);
  ImportedTensor from = scope.import(src.ptr(), owner, s, TESSERA_DTYPE_INVALID);
  const ActiveDevice& dev = activeDevice(to.device.cuda ? &to.device : &from.device);
  for (const ImportedTensor* t : {&to, &from})
    if (t->device.cuda && (!dev.gpu || t->device.id != dev.ordinal))
      raise(PyExc_ValueError,
            owner + ": a tensor on " + deviceText(t->device) + ", but Tessera runs on the " + dev.name);
  if (to.view.dtype != from.view.dtype)
    raiseStatus(TESSERA_ERROR_DTYPE_MISMATCH, owner + ": dst is " + tessera_dtype_name(to.view.dtype) + ", src is " +
                                                  tessera_dtype_name(from.view.dtype));
  int64_t n = tessera_tensor_numel(&to.view);
  if (n != tessera_tensor_numel(&from.view))
    raiseStatus(TESSERA_ERROR_SHAPE_MISMATCH, owner + ": dst has " + std::to_string(n) + " elements, src " +
                                                  std::to_string(tessera_tensor_numel(&from.view)));
  for (const ImportedTensor* t : {&to, &from}) {
    int64_t want = 1;
    for (int a = t->view.rank - 1; a >= 0; --a) {
      if (t->view.shape[a] != 1 && t->view.strides[a] != want)
        raise(PyExc_ValueError, owner + ": " + (t == &to ? "dst" : "src") + " is not dense row-major (a strided view)");
      want *= t->view.shape[a];
    }
  }
  size_t bytes = size_t(n) * tessera_dtype_bits(to.view.dtype) / 8;
  tessera_stream st = streamOf(stream.ptr());
  if (stream.is_none() && (isTorchTensor(dst.ptr()) || isTorchTensor(src.ptr())) && dev.gpu)
    st = torchCurrentStream(dev);
  tessera_status status;
  {
    pyb::gil_scoped_release nogil;
    status = async ? tessera_memcpy_async(to.view.data, from.view.data, bytes, st)
                   : tessera_memcpy(to.view.data, from.view.data, bytes);
  }
  check(status);
}
}  // namespace

void addCopyFunctions(pyb::module_& m) {
  m.def("memcpy", copyTensor, pyb::arg("dst"), pyb::arg("src"), pyb::arg("stream") = pyb::none(),
        pyb::arg("async_") = true);
}

}  // namespace tessera::py
