#include "python/src/Args.h"

#include <cmath>
#include <cstring>
#include <mutex>
#include <pybind11/pybind11.h>
#include <unordered_map>

#include "python/src/Streams.h"

namespace pyb = pybind11;

namespace tessera::py {

namespace {

// IEEE binary16 and bfloat16 from a double, rounded to nearest even (as a C cast would).
uint16_t toHalf(double v) {
  float f = static_cast<float>(v);
  uint32_t x;
  std::memcpy(&x, &f, 4);
  uint32_t sign = (x >> 16) & 0x8000u;
  uint32_t exp = (x >> 23) & 0xFF, mant = x & 0x7FFFFFu;
  if (exp == 0xFF) return static_cast<uint16_t>(sign | 0x7C00u | (mant ? 0x200u : 0));
  int e = int(exp) - 127 + 15;
  if (e >= 31) return static_cast<uint16_t>(sign | 0x7C00u);
  if (e <= 0) {  // subnormal or zero
    if (e < -10) return static_cast<uint16_t>(sign);
    mant |= 0x800000u;
    int shift = 14 - e;
    uint32_t h = mant >> shift, rem = mant & ((1u << shift) - 1), half = 1u << (shift - 1);
    if (rem > half || (rem == half && (h & 1))) ++h;
    return static_cast<uint16_t>(sign | h);
  }
  uint32_t h = (uint32_t(e) << 10) | (mant >> 13), rem = mant & 0x1FFFu;
  if (rem > 0x1000u || (rem == 0x1000u && (h & 1))) ++h;  // may carry into the exponent: correct
  return static_cast<uint16_t>(sign | h);
}

uint16_t toBfloat(double v) {
  float f = static_cast<float>(v);
  uint32_t x;
  std::memcpy(&x, &f, 4);
  if ((x & 0x7FFFFFFFu) > 0x7F800000u) return static_cast<uint16_t>((x >> 16) | 0x40);  // quiet NaN
  x += 0x7FFFu + ((x >> 16) & 1);
  return static_cast<uint16_t>(x >> 16);
}

std::string typeName(PyObject* obj) { return Py_TYPE(obj)->tp_name; }

// TypeError for `obj` where a scalar of `dtype` goes.
[[noreturn]] void notScalar(PyObject* obj, int32_t dtype, const Where& where) {
  PyErr_Clear();
  bool tensor = PyObject_HasAttrString(obj, "__dlpack__");
  raise(PyExc_TypeError, where() + ": expected a " + tessera_dtype_name(dtype) + " scalar, got " +
                             (tensor ? "a tensor (" + typeName(obj) + ")" : typeName(obj)));
}

int64_t intValue(PyObject* obj, int32_t dtype, const Where& where, bool& isUnsignedBig, uint64_t& big) {
  PyObject* idx = PyNumber_Index(obj);
  if (!idx) notScalar(obj, dtype, where);
  int overflow = 0;
  long long v = PyLong_AsLongLongAndOverflow(idx, &overflow);
  isUnsignedBig = false;
  if (overflow > 0) {
    big = PyLong_AsUnsignedLongLong(idx);
    if (PyErr_Occurred()) {
      PyErr_Clear();
      Py_DECREF(idx);
      raise(PyExc_ValueError, where() + ": the integer does not fit in " + tessera_dtype_name(dtype));
    }
    isUnsignedBig = true;
  }
  Py_DECREF(idx);
  if (overflow < 0) raise(PyExc_ValueError, where() + ": the integer does not fit in " + tessera_dtype_name(dtype));
  return v;
}

}  // namespace

uint64_t scalarBits(PyObject* obj, int32_t dtype, const Where& where) {
  if (obj == Py_None)
    raise(PyExc_TypeError, where() + ": expected a " + tessera_dtype_name(dtype) + " scalar, got None");
  switch (dtype) {
    case TESSERA_F64:
    case TESSERA_F32:
    case TESSERA_F16:
    case TESSERA_BF16: {
      double v = PyFloat_AsDouble(obj);
      if (v == -1.0 && PyErr_Occurred()) notScalar(obj, dtype, where);
      uint64_t bits = 0;
      if (dtype == TESSERA_F64) std::memcpy(&bits, &v, 8);
      if (dtype == TESSERA_F32) {
        float f = static_cast<float>(v);
        std::memcpy(&bits, &f, 4);
      }
      if (dtype == TESSERA_F16) bits = toHalf(v);
      if (dtype == TESSERA_BF16) bits = toBfloat(v);
      return bits;
    }
    case TESSERA_BOOL: {
      if (!PyBool_Check(obj) && !PyNumber_Check(obj)) notScalar(obj, dtype, where);
      int t = PyObject_IsTrue(obj);
      if (t < 0) notScalar(obj, dtype, where);
      return uint64_t(t);
    }
    default: break;
  }
  uint32_t bits = tessera_dtype_bits(dtype);
  bool isInt = dtype >= TESSERA_I8 && dtype <= TESSERA_U64;
  if (!isInt || bits < 8)
    raise(PyExc_TypeError, where() + ": Python scalars of dtype " + tessera_dtype_name(dtype) + " are not supported");
  if (PyFloat_Check(obj))
    raise(PyExc_TypeError, where() + ": expected an integer (" + tessera_dtype_name(dtype) + "), got float");
  bool big = false;
  uint64_t u = 0;
  int64_t v = intValue(obj, dtype, where, big, u);
  bool isUnsigned = dtype >= TESSERA_U8;
  if (big) {
    if (!isUnsigned || bits < 64)
      raise(PyExc_ValueError, where() + ": the integer does not fit in " + tessera_dtype_name(dtype));
    return u;
  }
  bool fits = isUnsigned ? v >= 0 && (bits == 64 || uint64_t(v) < (uint64_t(1) << bits))
                         : bits == 64 || (v >= -(int64_t(1) << (bits - 1)) && v < (int64_t(1) << (bits - 1)));
  if (!fits)
    raise(PyExc_ValueError, where() + ": " + std::to_string(v) + " does not fit in " + tessera_dtype_name(dtype));
  return bits == 64 ? uint64_t(v) : uint64_t(v) & ((uint64_t(1) << bits) - 1);
}

CallArgs::CallArgs(const std::string& owner, const std::vector<ParamInfo>& params, PyObject* const* args, size_t n) {
  if (n != params.size())
    raise(PyExc_TypeError, owner + " takes " + std::to_string(params.size()) + " argument" +
                               (params.size() == 1 ? "" : "s") + ", got " + std::to_string(n));
  tensors_.resize(n);
  args_.resize(n);
  scalars_.assign(n, 0);
  Device first;
  bool haveFirst = false;
  std::vector<Device> devices(n);
  for (size_t i = 0; i < n; ++i) {
    const ParamInfo& p = params[i];
    Where where{owner, p.name};
    tessera_arg& a = args_[i];
    if (!p.tensor) {
      scalars_[i] = scalarBits(args[i], p.dtype, where);
      a.kind = TESSERA_PARAM_SCALAR;
      a.dtype = p.dtype;
      a.value.u = scalars_[i];
      continue;
    }
    if (PyFloat_Check(args[i]) || PyLong_Check(args[i]) || PyBool_Check(args[i]))
      raise(PyExc_TypeError, where() + ": expected a tensor, got a Python " + typeName(args[i]));
    ImportedTensor t = scope_.import(args[i], owner, p.name, p.dtype);
    tensors_[i] = t.view;
    devices[i] = t.device;
    if (framework_ == Framework::None) framework_ = t.framework;
    if (t.framework == Framework::Torch && t.device.cuda) anyTorchCuda_ = true;
    if (!haveFirst) first = t.device, haveFirst = true;
    a.kind = TESSERA_PARAM_TENSOR;
    a.dtype = t.view.dtype;
    a.value.tensor = &tensors_[i];
  }
  device_ = &activeDevice(haveFirst ? &first : nullptr);
  for (size_t i = 0; i < n; ++i) {
    if (!params[i].tensor) continue;
    Where where{owner, params[i].name};
    if (!devices[i].cuda) {
      if (device_->gpu)
        raiseStatus(TESSERA_ERROR_HOST_POINTER,
                    where() + ": a CPU tensor, but this process runs Tessera on the " + device_->name +
                        " (chosen at the first call; TESSERA_DEVICE=cpu or tessera.set_device('cpu') before it runs "
                        "CPU tensors on the CPU executor)");
      continue;
    }
    if (!device_->gpu)
      raiseStatus(TESSERA_ERROR_HOST_POINTER,
                  where() + ": a CUDA tensor (" + deviceText(devices[i]) + "), but this process runs Tessera on the " +
                      device_->name + " (chosen at the first call; TESSERA_DEVICE or tessera.set_device picks it)");
    if (devices[i].id != device_->ordinal)
      raiseStatus(TESSERA_ERROR_INVALID_ARGUMENT, where() + ": a tensor on " + deviceText(devices[i]) +
                                                      ", but Tessera runs on cuda:" + std::to_string(device_->ordinal) +
                                                      " in this process (one GPU per process)");
  }
}

}  // namespace tessera::py
