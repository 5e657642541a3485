// Tensors in, through DLPack (see Tensors.h).
#include "python/src/Tensors.h"

#include <cstring>
#include <pybind11/pybind11.h>

#include "python/src/DLPack.h"

namespace tessera::py {

std::string Where::operator()() const { return owner + ": parameter '" + param + "'"; }

namespace {

// PyTorch's exporter and tensor type, looked up once PyTorch is imported (never imported here:
// a NumPy user does not pay for it).
struct TorchHooks {
  PyObject* tensorType = nullptr;
  PyObject* toDLPack = nullptr;  // torch._C._to_dlpack: the exporter without __dlpack__'s checks
  PyObject* boolDtype = nullptr;
  PyObject* uint8Dtype = nullptr;
};

TorchHooks& torchHooks() {
  static TorchHooks h;
  if (h.tensorType) return h;
  PyObject* torch = PyDict_GetItemString(PyImport_GetModuleDict(), "torch");  // borrowed
  if (!torch) return h;
  PyObject* type = PyObject_GetAttrString(torch, "Tensor");
  PyObject* c = PyObject_GetAttrString(torch, "_C");
  PyObject* exporter = c ? PyObject_GetAttrString(c, "_to_dlpack") : nullptr;
  PyObject* boolDtype = PyObject_GetAttrString(torch, "bool");
  PyObject* uint8Dtype = PyObject_GetAttrString(torch, "uint8");
  Py_XDECREF(c);
  PyErr_Clear();
  if (type && PyType_Check(type)) {  // kept for the life of the process
    h.tensorType = type;
    h.toDLPack = exporter;
    h.boolDtype = boolDtype;
    h.uint8Dtype = uint8Dtype;
  } else {
    Py_XDECREF(type);
    Py_XDECREF(exporter);
    Py_XDECREF(boolDtype);
    Py_XDECREF(uint8Dtype);
  }
  return h;
}

std::string typeName(PyObject* obj) {
  return obj == Py_None ? std::string("None") : std::string(Py_TYPE(obj)->tp_name);
}

// PyTorch tensors that its DLPack exporter refuses (bool before PyTorch 2, float8 before DLPack
// 1.1): exported as uint8 views, with the dtype carried beside them.
int32_t torchByteDtype(PyObject* obj) {
  PyObject* dtype = PyObject_GetAttrString(obj, "dtype");
  if (!dtype) {
    PyErr_Clear();
    return TESSERA_DTYPE_INVALID;
  }
  PyObject* text = PyObject_Str(dtype);
  Py_DECREF(dtype);
  const char* s = text ? PyUnicode_AsUTF8(text) : nullptr;
  int32_t out = TESSERA_DTYPE_INVALID;
  if (s && !std::strcmp(s, "torch.float8_e4m3fn")) out = TESSERA_F8_E4M3;
  if (s && !std::strcmp(s, "torch.float8_e5m2")) out = TESSERA_F8_E5M2;
  if (s && !std::strcmp(s, "torch.bool")) out = TESSERA_BOOL;
  Py_XDECREF(text);
  PyErr_Clear();
  return out;
}

bool isTorchBool(PyObject* obj) {
  TorchHooks& h = torchHooks();
  if (!h.boolDtype) return false;
  PyObject* dtype = PyObject_GetAttrString(obj, "dtype");
  if (!dtype) {
    PyErr_Clear();
    return false;
  }
  bool b = dtype == h.boolDtype;
  Py_DECREF(dtype);
  return b;
}

// The dtype of a buffer-protocol format character of `itemsize` bytes.
int32_t dtypeFromFormat(const char* format, Py_ssize_t itemsize) {
  const char* f = format ? format : "B";
  if (*f == '<' || *f == '=' || *f == '@') ++f;
  if (f[0] == 0 || f[1] != 0) return TESSERA_DTYPE_INVALID;
  switch (f[0]) {
    case 'd': return TESSERA_F64;
    case 'f': return TESSERA_F32;
    case 'e': return TESSERA_F16;
    case '?': return TESSERA_BOOL;
    case 'b':
    case 'h':
    case 'i':
    case 'l':
    case 'q':
      return itemsize == 1 ? TESSERA_I8 : itemsize == 2 ? TESSERA_I16 : itemsize == 4 ? TESSERA_I32 : TESSERA_I64;
    case 'B':
    case 'H':
    case 'I':
    case 'L':
    case 'Q':
      return itemsize == 1 ? TESSERA_U8 : itemsize == 2 ? TESSERA_U16 : itemsize == 4 ? TESSERA_U32 : TESSERA_U64;
    default: return TESSERA_DTYPE_INVALID;
  }
}

}  // namespace

ImportedTensor ImportScope::importBuffer(PyObject* obj, const Where& where) {
  Py_buffer b;
  if (PyObject_GetBuffer(obj, &b, PyBUF_STRIDES | PyBUF_FORMAT) != 0) throw pybind11::error_already_set();
  buffers_.push_back(b);
  ImportedTensor out;
  out.framework = Framework::NumPy;
  tessera_tensor& t = out.view;
  t.dtype = dtypeFromFormat(b.format, b.itemsize);
  if (t.dtype == TESSERA_DTYPE_INVALID)
    raise(PyExc_TypeError,
          where() + ": buffer format '" + std::string(b.format ? b.format : "B") + "' has no Tessera dtype");
  if (b.ndim > TESSERA_MAX_RANK)
    raise(PyExc_ValueError, where() + ": a tensor of rank " + std::to_string(b.ndim) +
                                "; Tessera tensors have at most " + std::to_string(TESSERA_MAX_RANK) + " dimensions");
  t.rank = b.ndim;
  t.data = b.buf;
  t.device = TESSERA_HOST;
  for (int d = 0; d < b.ndim; ++d) {
    t.shape[d] = b.shape[d];
    if (b.strides[d] % b.itemsize)
      raise(PyExc_ValueError,
            where() + ": a stride of " + std::to_string(b.strides[d]) + " bytes is not a whole number of elements");
    t.strides[d] = b.strides[d] / b.itemsize;
  }
  return out;
}

bool isTorchTensor(PyObject* obj) {
  TorchHooks& h = torchHooks();
  return h.tensorType && PyObject_TypeCheck(obj, reinterpret_cast<PyTypeObject*>(h.tensorType));
}

int32_t dtypeFromDLPack(uint8_t code, uint8_t bits, uint16_t lanes) {
  if (lanes != 1) return TESSERA_DTYPE_INVALID;
  switch (code) {
    case kDLFloat: return bits == 64 ? TESSERA_F64 : bits == 32 ? TESSERA_F32 : bits == 16 ? TESSERA_F16 : 0;
    case kDLBfloat: return bits == 16 ? TESSERA_BF16 : 0;
    case kDLInt:
      return bits == 8    ? TESSERA_I8
             : bits == 16 ? TESSERA_I16
             : bits == 32 ? TESSERA_I32
             : bits == 64 ? TESSERA_I64
                          : 0;
    case kDLUInt:
      return bits == 8    ? TESSERA_U8
             : bits == 16 ? TESSERA_U16
             : bits == 32 ? TESSERA_U32
             : bits == 64 ? TESSERA_U64
                          : 0;
    case kDLBool: return bits == 8 ? TESSERA_BOOL : 0;
    case kDLFloat8_e4m3fn: return bits == 8 ? TESSERA_F8_E4M3 : 0;
    case kDLFloat8_e5m2: return bits == 8 ? TESSERA_F8_E5M2 : 0;
    default: return TESSERA_DTYPE_INVALID;
  }
}

ImportScope::~ImportScope() {
  for (PyObject* c : capsules_) Py_DECREF(c);  // the producer's capsule destructor releases its export
  for (Py_buffer& b : buffers_) PyBuffer_Release(&b);
}

// The capsule of `obj`'s export: the object itself when it is one, PyTorch's exporter for torch
// tensors, else obj.__dlpack__(). A new reference; raises TypeError naming `where` otherwise.
PyObject* ImportScope::exportCapsule(PyObject* obj, Framework& fw, int32_t& dtypeOverride, const Where& where) {
  if (PyCapsule_CheckExact(obj)) {
    if (!PyCapsule_IsValid(obj, kCapsuleName))
      raise(PyExc_TypeError, where() + ": a capsule that is not an unused DLPack 'dltensor' (already consumed?)");
    fw = Framework::Other;
    Py_INCREF(obj);  // borrowed from the caller, who keeps ownership: never renamed or deleted here
    return obj;
  }
  TorchHooks& h = torchHooks();
  if (h.toDLPack && isTorchTensor(obj)) {
    fw = Framework::Torch;
    PyObject* cap = PyObject_CallOneArg(h.toDLPack, obj);
    if (cap) return cap;
    // bool and float8 tensors on PyTorch versions whose exporter refuses them: their bytes as uint8.
    PyObject *type, *value, *tb;
    PyErr_Fetch(&type, &value, &tb);
    int32_t narrow = torchByteDtype(obj);
    if (narrow == TESSERA_DTYPE_INVALID) {
      PyObject* text = value ? PyObject_Str(value) : nullptr;
      std::string why = text && PyUnicode_Check(text) ? PyUnicode_AsUTF8(text) : "unknown reason";
      Py_XDECREF(text);
      Py_XDECREF(type);
      Py_XDECREF(value);
      Py_XDECREF(tb);
      PyErr_Clear();
      raise(PyExc_TypeError, where() + ": PyTorch cannot export this tensor through DLPack: " + why);
    }
    Py_XDECREF(type);
    Py_XDECREF(value);
    Py_XDECREF(tb);
    PyErr_Clear();
    PyObject* bytes = h.uint8Dtype ? PyObject_CallMethod(obj, "view", "(O)", h.uint8Dtype) : nullptr;
    if (!bytes) throw pybind11::error_already_set();
    cap = PyObject_CallOneArg(h.toDLPack, bytes);
    Py_DECREF(bytes);
    if (!cap) throw pybind11::error_already_set();
    dtypeOverride = narrow;
    return cap;
  }
  PyObject* method = PyObject_GetAttrString(obj, "__dlpack__");
  if (!method) {
    PyErr_Clear();
    raise(
        PyExc_TypeError,
        where() + ": expected a tensor (a PyTorch tensor, a NumPy array or any DLPack producer), got " + typeName(obj));
  }
  PyObject* mod = PyObject_GetAttrString(reinterpret_cast<PyObject*>(Py_TYPE(obj)), "__module__");
  const char* m = mod && PyUnicode_Check(mod) ? PyUnicode_AsUTF8(mod) : "";
  fw = isTorchTensor(obj) ? Framework::Torch : m && !std::strncmp(m, "numpy", 5) ? Framework::NumPy : Framework::Other;
  Py_XDECREF(mod);
  PyErr_Clear();
  PyObject* cap = PyObject_CallNoArgs(method);
  Py_DECREF(method);
  if (!cap) throw pybind11::error_already_set();
  if (!PyCapsule_IsValid(cap, kCapsuleName)) {
    Py_DECREF(cap);
    raise(PyExc_TypeError, where() + ": " + typeName(obj) + ".__dlpack__() did not return a DLPack capsule");
  }
  return cap;
}

ImportedTensor ImportScope::import(PyObject* obj, const std::string& owner, const std::string& param, int32_t want) {
  Where where{owner, param};
  if (obj == Py_None) raise(PyExc_TypeError, where() + ": expected a tensor, got None");
  ImportedTensor out;
  int32_t dtypeOverride = TESSERA_DTYPE_INVALID;
  PyObject* cap = nullptr;
  try {
    cap = exportCapsule(obj, out.framework, dtypeOverride, where);
  } catch (pybind11::error_already_set& e) {
    // NumPy refuses to export read-only arrays through DLPack: read them through the buffer
    // protocol instead (the kernel does not write a read-only parameter).
    if (!e.matches(PyExc_BufferError) || !PyObject_CheckBuffer(obj)) throw;
    e.restore();
    PyErr_Clear();
    return importBuffer(obj, where);
  }
  capsules_.push_back(cap);
  auto* managed = static_cast<DLManagedTensor*>(PyCapsule_GetPointer(cap, kCapsuleName));
  if (!managed) throw pybind11::error_already_set();
  const DLTensor& dl = managed->dl_tensor;
  if (dl.ndim < 0 || dl.ndim > TESSERA_MAX_RANK)
    raise(PyExc_ValueError, where() + ": a tensor of rank " + std::to_string(dl.ndim) +
                                "; Tessera tensors have at most " + std::to_string(TESSERA_MAX_RANK) + " dimensions");
  int32_t dtype = dtypeOverride ? dtypeOverride : dtypeFromDLPack(dl.dtype.code, dl.dtype.bits, dl.dtype.lanes);
  if (want == TESSERA_BOOL && dtype == TESSERA_U8 && out.framework == Framework::Torch && isTorchBool(obj))
    dtype = TESSERA_BOOL;  // PyTorch 1.x exports bool as uint8
  if (dtype == TESSERA_DTYPE_INVALID)
    raise(PyExc_TypeError, where() + ": DLPack dtype (code " + std::to_string(dl.dtype.code) + ", " +
                               std::to_string(dl.dtype.bits) + " bits, " + std::to_string(dl.dtype.lanes) +
                               " lanes) has no Tessera dtype");
  switch (dl.device.device_type) {
    case kDLCPU:
    case kDLCUDAHost: out.device = Device{false, 0}; break;
    case kDLCUDA:
    case kDLCUDAManaged: out.device = Device{true, dl.device.device_id}; break;
    default:
      raise(PyExc_TypeError, where() + ": a tensor on DLPack device type " + std::to_string(dl.device.device_type) +
                                 "; Tessera takes CPU and CUDA tensors");
  }
  tessera_tensor& t = out.view;
  t.dtype = dtype;
  t.rank = dl.ndim;
  t.data = dl.data ? static_cast<char*>(dl.data) + dl.byte_offset : nullptr;
  int64_t stride = 1;
  for (int d = dl.ndim - 1; d >= 0; --d) {
    t.shape[d] = dl.shape[d];
    t.strides[d] = dl.strides ? dl.strides[d] : stride;
    stride *= dl.shape[d];
  }
  t.device = out.device.cuda ? 0 : TESSERA_HOST;  // the active device's ordinal is checked by the caller
  return out;
}

}  // namespace tessera::py
