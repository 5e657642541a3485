#include "python/src/Kernel.h"

#include <cstring>

#include "python/src/Streams.h"

namespace pyb = pybind11;

namespace tessera::py {

Kernel::Kernel(uintptr_t desc, pyb::object keep)
    : k_(reinterpret_cast<const tessera_kernel_desc*>(desc)),
      stream_(pyb::none()),
      keep_(std::move(keep)),
      pendingSearch_(pyb::none()) {
  if (!k_) raise(PyExc_ValueError, "tessera: null kernel descriptor");
  owner_ = std::string("kernel '") + k_->name + "'";
  for (uint32_t i = 0; i < k_->num_params; ++i) {
    const tessera_param_desc& p = k_->params[i];
    params_.push_back(ParamInfo{p.name, p.kind == TESSERA_PARAM_TENSOR, p.dtype, p.rank});
  }
}

std::vector<PyObject*> Kernel::ordered(pyb::args& args, pyb::kwargs& kwargs) const {
  std::vector<PyObject*> out(args.size());
  for (size_t i = 0; i < args.size(); ++i) out[i] = PyTuple_GET_ITEM(args.ptr(), i);
  if (!kwargs || kwargs.empty()) return out;
  if (out.size() > params_.size())
    raise(PyExc_TypeError, owner_ + " takes " + std::to_string(params_.size()) + " arguments, got " +
                               std::to_string(out.size() + kwargs.size()));
  out.resize(params_.size(), nullptr);
  for (auto item : kwargs) {
    std::string key = pyb::str(item.first);
    size_t i = 0;
    while (i < params_.size() && params_[i].name != key) ++i;
    if (i == params_.size()) raise(PyExc_TypeError, owner_ + " has no parameter '" + key + "'");
    if (out[i]) raise(PyExc_TypeError, owner_ + ": parameter '" + key + "' given twice");
    out[i] = item.second.ptr();
  }
  for (size_t i = 0; i < out.size(); ++i)
    if (!out[i]) raise(PyExc_TypeError, owner_ + ": missing argument for parameter '" + params_[i].name + "'");
  return out;
}

pyb::object Kernel::call(pyb::args args, pyb::kwargs kwargs) {
  std::vector<PyObject*> in = ordered(args, kwargs);
  CallArgs call(owner_, params_, in.data(), in.size());
  tessera_launch_options opts = opts_;
  opts.stream = callStream(call, stream_.ptr());
  if (!pendingSearch_.is_none()) {
    pyb::object callback = pendingSearch_;
    pendingSearch_ = pyb::none();
    tessera_autotune_result r{};
    tessera_status s;
    {
      pyb::gil_scoped_release nogil;
      s = tessera_autotune_search(k_, &opts, call.args().data(), uint32_t(call.args().size()), &r);
    }
    check(s);
    pyb::list ms;
    for (uint32_t i = 0; i < r.num_candidates; ++i) ms.append(r.ms[i]);
    callback(r.best, ms);
  }
  tessera_status s;
  if (call.device().gpu) {
    s = tessera_launch(k_, &opts, call.args().data(), uint32_t(call.args().size()));
  } else {  // the CPU executor runs the kernel now, on its own threads: let other Python threads run
    pyb::gil_scoped_release nogil;
    s = tessera_launch(k_, &opts, call.args().data(), uint32_t(call.args().size()));
  }
  check(s);
  return pyb::none();
}

namespace {
// Up to three extents from an int or a tuple.
void dims(pyb::object o, uint32_t out[3], const char* what) {
  out[0] = out[1] = out[2] = 0;
  if (o.is_none()) return;
  if (PyLong_Check(o.ptr())) {
    out[0] = o.cast<uint32_t>();
    return;
  }
  pyb::tuple t = pyb::tuple(o);
  if (t.size() > 3) raise(PyExc_ValueError, std::string(what) + ": at most 3 dimensions");
  for (size_t i = 0; i < t.size(); ++i) out[i] = t[i].cast<uint32_t>();
  for (size_t i = t.size(); i < 3 && t.size(); ++i) out[i] = 1;
}
}  // namespace

Kernel Kernel::configured(pyb::object grid, pyb::object group, uint64_t dyn, pyb::object stream) const {
  Kernel k = *this;
  dims(grid, k.opts_.grid, "grid");
  dims(group, k.opts_.group, "group");
  k.opts_.dynamic_shared_bytes = dyn;
  k.stream_ = stream;
  if (!stream.is_none()) streamOf(stream.ptr());  // checks the type now
  k.pendingSearch_ = pyb::none();
  return k;
}

Kernel Kernel::subscript(pyb::object key) const {
  if (!PyTuple_Check(key.ptr())) return configured(key, pyb::none(), 0, pyb::none());
  pyb::tuple t = key;
  if (t.size() > 3) raise(PyExc_TypeError, owner_ + "[grid, group, stream]: at most three items");
  pyb::object none = pyb::none();
  return configured(t.size() > 0 ? pyb::object(t[0]) : none, t.size() > 1 ? pyb::object(t[1]) : none, 0,
                    t.size() > 2 ? pyb::object(t[2]) : none);
}

pyb::tuple Kernel::autotuneSearch(pyb::args args) {
  pyb::kwargs none;
  std::vector<PyObject*> in = ordered(args, none);
  CallArgs call(owner_, params_, in.data(), in.size());
  tessera_launch_options opts = opts_;
  opts.stream = callStream(call, stream_.ptr());
  tessera_autotune_result r{};
  tessera_status s;
  {
    pyb::gil_scoped_release nogil;
    s = tessera_autotune_search(k_, &opts, call.args().data(), uint32_t(call.args().size()), &r);
  }
  check(s);
  pyb::list ms;
  for (uint32_t i = 0; i < r.num_candidates; ++i) ms.append(r.ms[i]);
  return pyb::make_tuple(r.best, ms);
}

std::string Kernel::extentText(const tessera_extent& e) const {
  switch (e.kind) {
    case TESSERA_EXTENT_ANY: return "_";
    case TESSERA_EXTENT_CONST: return std::to_string(e.value);
    case TESSERA_EXTENT_SYMBOL: return k_->symbols[e.symbol];
    default: break;
  }
  std::vector<std::string> st;
  static const char* ops[] = {nullptr, nullptr, "+", "-", "*", "/", "ceil_div", "%"};
  for (uint32_t i = 0; i < e.expr_len; ++i) {
    const tessera_expr_op& op = e.expr[i];
    if (op.op == TESSERA_EXPR_CONST) st.push_back(std::to_string(op.value));
    if (op.op == TESSERA_EXPR_SYMBOL) st.push_back(k_->symbols[op.symbol]);
    if (op.op < TESSERA_EXPR_ADD || op.op > TESSERA_EXPR_MOD) continue;
    if (st.size() < 2) return "?";
    std::string r = st.back();
    st.pop_back();
    std::string l = st.back();
    st.pop_back();
    st.push_back(op.op == TESSERA_EXPR_CEIL_DIV ? "ceil_div(" + l + ", " + r + ")" : "(" + l + ops[op.op] + r + ")");
  }
  if (st.size() != 1) return "?";
  std::string s = st.back();
  return s.size() > 2 && s.front() == '(' && s.back() == ')' ? s.substr(1, s.size() - 2) : s;
}

pyb::list Kernel::params() const {
  pyb::list out;
  for (uint32_t i = 0; i < k_->num_params; ++i) {
    const tessera_param_desc& p = k_->params[i];
    pyb::dict d;
    d["name"] = p.name;
    d["kind"] = p.kind == TESSERA_PARAM_TENSOR ? "tensor" : "scalar";
    d["dtype"] = tessera_dtype_name(p.dtype);
    d["mut"] = bool(p.flags & TESSERA_PARAM_MUT);
    pyb::list shape;
    if (p.kind == TESSERA_PARAM_TENSOR)
      for (int32_t a = 0; a < p.rank; ++a) shape.append(extentText(p.extents[a]));
    d["shape"] = shape;
    out.append(d);
  }
  return out;
}

pyb::dict Kernel::info() const {
  pyb::dict d;
  d["name"] = k_->name;
  d["grouped"] = bool(k_->flags & TESSERA_KERNEL_GROUPED);
  d["deterministic"] = bool(k_->flags & TESSERA_KERNEL_DETERMINISTIC);
  d["bounds_checked"] = bool(k_->flags & TESSERA_KERNEL_BOUNDS_CHECKED);
  d["group_shape"] = pyb::make_tuple(k_->group_shape[0], k_->group_shape[1], k_->group_shape[2]);
  d["shared_bytes"] = k_->shared_bytes;
  d["gpu"] = k_->gpu_entry != nullptr;
  d["cpu"] = k_->cpu_entry != nullptr;
  return d;
}

pyb::dict Kernel::candidate(uint32_t index) const {
  const tessera_autotune_desc* t = tessera_kernel_autotune(k_);
  pyb::dict d;
  if (!t) {
    if (index != 0) raise(PyExc_IndexError, owner_ + " has one candidate");
    return d;
  }
  if (index >= t->num_candidates)
    raise(PyExc_IndexError, owner_ + " has " + std::to_string(t->num_candidates) + " candidates");
  for (uint32_t p = 0; p < t->num_params; ++p) d[t->param_names[p]] = t->values[size_t(index) * t->num_params + p];
  return d;
}

void addKernelType(pyb::module_& m) {
  pyb::class_<Kernel>(m, "Kernel", pyb::dynamic_attr(),
                      "A kernel of a Tessera module: called on tensors in place, scalars by value.")
      .def(pyb::init<uintptr_t, pyb::object>())
      .def("__call__", &Kernel::call)
      .def("__getitem__", &Kernel::subscript)
      .def("launch", &Kernel::configured, pyb::arg("grid") = pyb::none(), pyb::arg("group") = pyb::none(),
           pyb::arg("dynamic_shared_bytes") = 0, pyb::arg("stream") = pyb::none(),
           "The kernel with launch options: kernel.launch(grid=(g,), group=(t,), stream=s)(args...).")
      .def("_autotune_search", &Kernel::autotuneSearch)
      .def("_search_at_next_call", &Kernel::searchAtNextCall)
      .def("_candidate", &Kernel::candidate)
      .def_property_readonly("num_candidates", &Kernel::numCandidates)
      .def_property_readonly("name", &Kernel::name)
      .def_property_readonly("params", &Kernel::params)
      .def_property_readonly("info", &Kernel::info)
      .def_property_readonly("_descriptor", &Kernel::descriptor);
}

}  // namespace tessera::py
