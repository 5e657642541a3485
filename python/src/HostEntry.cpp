#include "python/src/HostEntry.h"

#include <cstring>

#include "python/src/Streams.h"

namespace pyb = pybind11;

namespace tessera::py {

namespace {

int32_t dtypeByName(const std::string& name) {
  for (int32_t d = 1; d < TESSERA_DTYPE_COUNT; ++d)
    if (name == tessera_dtype_name(d)) return d;
  return TESSERA_DTYPE_INVALID;
}

// The C type of a host scalar (basic/DTypes.def, CTYPE column), as libffi passes it.
ffi_type* scalarType(int32_t dtype) {
  switch (dtype) {
    case TESSERA_F64: return &ffi_type_double;
    case TESSERA_F32: return &ffi_type_float;
    case TESSERA_I8: return &ffi_type_sint8;
    case TESSERA_I16: return &ffi_type_sint16;
    case TESSERA_I32: return &ffi_type_sint32;
    case TESSERA_I64: return &ffi_type_sint64;
    case TESSERA_F16:
    case TESSERA_BF16:
    case TESSERA_U16: return &ffi_type_uint16;
    case TESSERA_U32: return &ffi_type_uint32;
    case TESSERA_U64: return &ffi_type_uint64;
    default: return &ffi_type_uint8;  // bool, u8 and the 8-bit floats
  }
}

}  // namespace

HostEntry::HostEntry(uintptr_t fn, std::string name, pyb::list params, pyb::list resultRanks, pyb::object keep)
    : fn_(reinterpret_cast<void*>(fn)), name_(std::move(name)), keep_(std::move(keep)) {
  if (!fn_) raise(PyExc_ValueError, "tessera: null entry point for '" + name_ + "'");
  owner_ = "function '" + name_ + "'";
  types_.push_back(&ffi_type_pointer);  // opts
  for (pyb::handle h : params) {
    pyb::tuple t = pyb::reinterpret_borrow<pyb::tuple>(h);
    ParamInfo p;
    p.name = t[0].cast<std::string>();
    std::string kind = t[1].cast<std::string>();
    p.tensor = kind == "tensor";
    p.dtype = p.tensor ? dtypeByName(t[2].cast<std::string>()) : dtypeByName(kind);
    p.rank = t[3].cast<int>();
    if (!p.tensor && p.dtype == TESSERA_DTYPE_INVALID)
      raise(PyExc_ValueError, owner_ + ": parameter '" + p.name + "' has an unknown scalar type '" + kind + "'");
    types_.push_back(p.tensor ? &ffi_type_pointer : scalarType(p.dtype));
    params_.push_back(p);
  }
  for (pyb::handle h : resultRanks) {
    resultRanks_.push_back(h.cast<int>());
    types_.push_back(&ffi_type_pointer);
  }
  if (ffi_prep_cif(&cif_, FFI_DEFAULT_ABI, unsigned(types_.size()), &ffi_type_sint32, types_.data()) != FFI_OK)
    raise(PyExc_RuntimeError, owner_ + ": libffi cannot describe the entry point's signature");
}

// The runtime's message for a failed call, naming the function, and the parameters that are
// strided views when the entry point needed a dense one (its plan views a buffer as another shape).
void HostEntry::fail(const CallArgs& call, tessera_status status) const {
  std::string message = tessera_last_error_message();
  if (message.find("kernel '") == std::string::npos) message = owner_ + ": " + message;
  if (status == TESSERA_ERROR_INVALID_ARGUMENT && message.find("not dense") != std::string::npos) {
    std::string strided;
    for (size_t i = 0; i < params_.size(); ++i) {
      if (!params_[i].tensor) continue;
      const tessera_tensor* t = call.tensor(i);
      int64_t want = 1;
      bool dense = true;
      for (int a = t->rank - 1; a >= 0; --a) {
        dense = dense && (t->shape[a] == 1 || t->strides[a] == want);
        want *= t->shape[a];
      }
      if (!dense) strided += (strided.empty() ? "'" : ", '") + params_[i].name + "'";
    }
    if (!strided.empty())
      message += " (parameter " + strided + " is a strided view; this function needs it dense: pass a contiguous copy)";
  }
  raiseStatus(status, message);
}

pyb::tuple HostEntry::call(pyb::args args, pyb::object stream) {
  std::vector<PyObject*> in(args.size());
  for (size_t i = 0; i < args.size(); ++i) in[i] = PyTuple_GET_ITEM(args.ptr(), i);
  CallArgs call(owner_, params_, in.data(), in.size());
  tessera_launch_options opts{};
  opts.stream = callStream(call, stream.ptr());
  const tessera_launch_options* optsPtr = &opts;
  std::vector<tessera_tensor> outs(resultRanks_.size());
  std::vector<const void*> tensorPtrs(params_.size());
  std::vector<tessera_tensor*> outPtrs(outs.size());
  std::vector<void*> values;
  values.reserve(types_.size());
  values.push_back(&optsPtr);
  for (size_t i = 0; i < params_.size(); ++i) {
    if (params_[i].tensor) {
      tensorPtrs[i] = call.tensor(i);
      values.push_back(&tensorPtrs[i]);
    } else {
      values.push_back(&call.scalars()[i]);  // little-endian: the low bytes are the C value
    }
  }
  for (size_t i = 0; i < outs.size(); ++i) {
    outPtrs[i] = &outs[i];
    values.push_back(&outPtrs[i]);
  }
  ffi_sarg status = 0;
  {
    pyb::gil_scoped_release nogil;
    ffi_call(&cif_, FFI_FN(fn_), &status, values.data());
  }
  if (status != TESSERA_SUCCESS) fail(call, static_cast<tessera_status>(status));
  pyb::list results;
  for (size_t i = 0; i < outs.size(); ++i) {
    bool rank0 = resultRanks_[i] == 0 && tessera_tensor_numel(&outs[i]) == 1;
    results.append(pyb::reinterpret_steal<pyb::object>(makeBuffer(outs[i], true, opts.stream, nullptr, rank0)));
  }
  return pyb::make_tuple(int(call.framework()), results);
}

void addHostEntryType(pyb::module_& m) {
  pyb::class_<HostEntry>(m, "HostEntry", "A host function's entry point: tensors in, new tensors out.")
      .def(pyb::init<uintptr_t, std::string, pyb::list, pyb::list, pyb::object>())
      .def("__call__", &HostEntry::call, pyb::arg("stream") = pyb::none())
      .def_property_readonly("name", &HostEntry::name)
      .def_property_readonly("num_params", &HostEntry::numParams)
      .def_property_readonly("num_results", &HostEntry::numResults);
}

}  // namespace tessera::py
