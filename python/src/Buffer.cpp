// Tensors out: runtime memory exported through DLPack (see Tensors.h, makeBuffer).
#include <atomic>
#include <cstring>
#include <memory>
#include <pybind11/pybind11.h>
#include <vector>

#include "python/src/DLPack.h"
#include "python/src/Tensors.h"

namespace pyb = pybind11;

namespace tessera::py {

namespace {

// Set at interpreter exit: deleters that run later (a framework's tensors destroyed during
// finalisation) no longer touch Python objects.
std::atomic<bool> finalizing{false};

// What an exported DLManagedTensor owns: its shape and strides, and the memory (freed on the
// stream it was allocated on) or a reference to the object that owns it.
struct Export {
  DLManagedTensor managed{};
  int64_t shape[TESSERA_MAX_RANK] = {};
  int64_t strides[TESSERA_MAX_RANK] = {};
  bool owned = false;
  tessera_stream stream = nullptr;
  PyObject* keepAlive = nullptr;
};

void deleteExport(DLManagedTensor* self) {
  auto* e = static_cast<Export*>(self->manager_ctx);
  if (e->owned) tessera_free_async(e->managed.dl_tensor.data, e->stream);  // no GIL needed
  if (e->keepAlive && !finalizing.load() && Py_IsInitialized()) {
    PyGILState_STATE g = PyGILState_Ensure();
    Py_DECREF(e->keepAlive);
    PyGILState_Release(g);
  }
  delete e;
}

// A capsule nobody consumed still owns its tensor.
void capsuleDestructor(PyObject* capsule) {
  if (!PyCapsule_IsValid(capsule, kCapsuleName)) return;  // consumed: the consumer calls the deleter
  auto* m = static_cast<DLManagedTensor*>(PyCapsule_GetPointer(capsule, kCapsuleName));
  if (m && m->deleter) m->deleter(m);
}

}  // namespace

// The Python object: exports once through __dlpack__; frees what it owns when it is never
// exported.
class Buffer {
 public:
  Buffer(const tessera_tensor& t, bool owned, tessera_stream stream, PyObject* keepAlive, bool rank0)
      : t_(t), owned_(owned), stream_(stream), keepAlive_(keepAlive), rank0_(rank0) {
    Py_XINCREF(keepAlive_);
    const ActiveDevice& d = activeDevice(nullptr);
    device_ = d.gpu ? Device{true, d.ordinal} : Device{false, 0};
  }
  ~Buffer() {
    if (!exported_ && owned_) tessera_free_async(t_.data, stream_);
    if (!exported_) Py_XDECREF(keepAlive_);
  }

  pyb::object dlpack(pyb::object stream, pyb::kwargs) {
    (void)stream;  // the memory was produced on the stream the caller's framework uses
    if (exported_) raise(PyExc_BufferError, "this Tessera result was already exported through DLPack");
    auto e = std::make_unique<Export>();
    e->owned = owned_;
    e->stream = stream_;
    e->keepAlive = keepAlive_;  // the reference moves to the export
    DLTensor& dl = e->managed.dl_tensor;
    dl.data = t_.data;
    dl.device.device_type = device_.cuda ? kDLCUDA : kDLCPU;
    dl.device.device_id = device_.cuda ? device_.id : 0;
    dl.ndim = rank0_ ? 0 : t_.rank;
    dl.dtype = dlType(t_.dtype);
    for (int d = 0; d < t_.rank; ++d) {
      e->shape[d] = t_.shape[d];
      e->strides[d] = t_.strides[d];
    }
    dl.shape = e->shape;
    dl.strides = e->strides;
    dl.byte_offset = 0;
    e->managed.manager_ctx = e.get();
    e->managed.deleter = deleteExport;
    PyObject* cap = PyCapsule_New(&e->managed, kCapsuleName, capsuleDestructor);
    if (!cap) throw pyb::error_already_set();
    e.release();
    exported_ = true;
    return pyb::reinterpret_steal<pyb::object>(cap);
  }

  pyb::tuple dlpackDevice() const {
    return pyb::make_tuple(device_.cuda ? int(kDLCUDA) : int(kDLCPU), device_.cuda ? device_.id : 0);
  }
  pyb::tuple shape() const {
    pyb::tuple s(rank0_ ? 0 : t_.rank);
    for (int d = 0; d < (rank0_ ? 0 : t_.rank); ++d) s[d] = t_.shape[d];
    return s;
  }
  std::string dtype() const { return tessera_dtype_name(t_.dtype); }
  // The buffer protocol, for host memory (NumPy takes results through it: its DLPack imports are
  // read-only before NumPy 2).
  pyb::buffer_info bufferInfo() const {
    if (device_.cuda) raise(PyExc_BufferError, "a CUDA result has no buffer protocol: use DLPack");
    if (exported_) raise(PyExc_BufferError, "this Tessera result was already exported through DLPack");
    const char* format = nullptr;
    switch (t_.dtype) {
      case TESSERA_F64: format = "d"; break;
      case TESSERA_F32: format = "f"; break;
      case TESSERA_F16: format = "e"; break;
      case TESSERA_I8: format = "b"; break;
      case TESSERA_I16: format = "h"; break;
      case TESSERA_I32: format = "i"; break;
      case TESSERA_I64: format = "q"; break;
      case TESSERA_U8: format = "B"; break;
      case TESSERA_U16: format = "H"; break;
      case TESSERA_U32: format = "I"; break;
      case TESSERA_U64: format = "Q"; break;
      case TESSERA_BOOL: format = "?"; break;
      default:
        raise(PyExc_BufferError, std::string("a result of dtype ") + tessera_dtype_name(t_.dtype) +
                                     " has no buffer-protocol format (NumPy has no such dtype)");
    }
    ssize_t item = tessera_dtype_bits(t_.dtype) / 8;
    std::vector<ssize_t> shape, strides;
    for (int d = 0; d < (rank0_ ? 0 : t_.rank); ++d) {
      shape.push_back(t_.shape[d]);
      strides.push_back(t_.strides[d] * item);
    }
    return pyb::buffer_info(t_.data, item, format, ssize_t(shape.size()), shape, strides, false);
  }
  bool exported() const { return exported_; }

 private:
  static DLDataType dlType(int32_t dtype) {
    switch (dtype) {
      case TESSERA_F64: return {kDLFloat, 64, 1};
      case TESSERA_F32: return {kDLFloat, 32, 1};
      case TESSERA_F16: return {kDLFloat, 16, 1};
      case TESSERA_BF16: return {kDLBfloat, 16, 1};
      case TESSERA_F8_E4M3: return {kDLFloat8_e4m3fn, 8, 1};
      case TESSERA_F8_E5M2: return {kDLFloat8_e5m2, 8, 1};
      case TESSERA_I8: return {kDLInt, 8, 1};
      case TESSERA_I16: return {kDLInt, 16, 1};
      case TESSERA_I32: return {kDLInt, 32, 1};
      case TESSERA_I64: return {kDLInt, 64, 1};
      case TESSERA_U8: return {kDLUInt, 8, 1};
      case TESSERA_U16: return {kDLUInt, 16, 1};
      case TESSERA_U32: return {kDLUInt, 32, 1};
      case TESSERA_U64: return {kDLUInt, 64, 1};
      case TESSERA_BOOL: return {kDLBool, 8, 1};
      default:
        raise(PyExc_TypeError,
              std::string("a result of dtype ") + tessera_dtype_name(dtype) + " cannot be exported through DLPack");
    }
  }

  tessera_tensor t_;
  bool owned_;
  tessera_stream stream_;
  PyObject* keepAlive_;
  bool rank0_;
  bool exported_ = false;
  Device device_;
};

PyObject* makeBuffer(const tessera_tensor& t, bool owned, tessera_stream stream, PyObject* keepAlive, bool rank0) {
  pyb::object o = pyb::cast(new Buffer(t, owned, stream, keepAlive, rank0), pyb::return_value_policy::take_ownership);
  return o.release().ptr();
}

void addBufferType(PyObject* module) {
  pyb::module_ m = pyb::reinterpret_borrow<pyb::module_>(module);
  pyb::class_<Buffer>(m, "Buffer", pyb::buffer_protocol(),
                      "Memory the runtime allocated (a host entry's result, a distributed tensor's shard), "
                      "exported once through DLPack to the caller's framework.")
      .def_buffer([](Buffer& b) { return b.bufferInfo(); })
      .def("__dlpack__", &Buffer::dlpack, pyb::arg("stream") = pyb::none())
      .def("__dlpack_device__", &Buffer::dlpackDevice)
      .def_property_readonly("shape", &Buffer::shape)
      .def_property_readonly("dtype", &Buffer::dtype)
      .def_property_readonly("exported", &Buffer::exported);
  pyb::module_ atexit = pyb::module_::import("atexit");
  atexit.attr("register")(pyb::cpp_function([] { finalizing.store(true); }));
}

}  // namespace tessera::py
