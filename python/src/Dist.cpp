#include "python/src/Dist.h"

#include <pybind11/stl.h>
#include <string>
#include <vector>

#include "python/src/Args.h"
#include "python/src/Kernel.h"
#include "python/src/Streams.h"
#include "tessera/dist.h"

namespace pyb = pybind11;

namespace tessera::py {

namespace {

int32_t dtypeByName(const std::string& name) {
  for (int32_t d = 1; d < TESSERA_DTYPE_COUNT; ++d)
    if (name == tessera_dtype_name(d)) return d;
  raise(PyExc_TypeError, "tessera.dist: unknown dtype '" + name + "'");
}

// A communicator the runtime owns (the world's, a mesh axis's).
struct Comm {
  tessera_comm c = nullptr;
  int rank() const {
    int32_t r = 0;
    check(tessera_comm_rank(c, &r));
    return r;
  }
  int size() const {
    int32_t n = 0;
    check(tessera_comm_size(c, &n));
    return n;
  }
};

class Mesh {
 public:
  Mesh(std::vector<std::string> axes, std::vector<int64_t> shape) : axes_(std::move(axes)) {
    std::vector<const char*> names;
    for (const std::string& a : axes_) names.push_back(a.c_str());
    if (names.size() != shape.size()) raise(PyExc_ValueError, "tessera.dist.Mesh: one size per axis");
    tessera_status s;
    {
      pyb::gil_scoped_release nogil;  // collective over the world
      s = tessera_mesh_create(names.data(), shape.data(), int32_t(names.size()), &m_);
    }
    check(s);
  }
  ~Mesh() {
    if (m_) tessera_mesh_destroy(m_);
  }
  Mesh(const Mesh&) = delete;
  Mesh& operator=(const Mesh&) = delete;
  int64_t axisSize(const std::string& a) const {
    int64_t n = 0;
    check(tessera_mesh_axis_size(m_, a.c_str(), &n));
    return n;
  }
  int64_t coord(const std::string& a) const {
    int64_t n = 0;
    check(tessera_mesh_coord(m_, a.c_str(), &n));
    return n;
  }
  Comm comm(const std::string& a) const {
    Comm c;
    check(tessera_mesh_comm(m_, a.c_str(), &c.c));
    return c;
  }
  tessera_mesh handle() const { return m_; }
  const std::vector<std::string>& axes() const { return axes_; }

 private:
  tessera_mesh m_ = nullptr;
  std::vector<std::string> axes_;
};

class DTensor {
 public:
  DTensor(Mesh& mesh, const std::string& name, const std::string& dtype, std::vector<int64_t> shape,
          std::vector<pyb::object> axes)
      : name_(name) {
    if (axes.size() != shape.size())
      raise(PyExc_ValueError, "tessera.dist.tensor: one mesh axis (or None) per dimension");
    if (shape.size() > TESSERA_MAX_RANK) raise(PyExc_ValueError, "tessera.dist.tensor: at most 8 dimensions");
    tessera_shard_spec spec{};
    std::vector<std::string> names(axes.size());
    for (size_t d = 0; d < axes.size(); ++d)
      if (!axes[d].is_none()) {
        names[d] = axes[d].cast<std::string>();
        spec.axis[d] = names[d].c_str();
      }
    int32_t dt = dtypeByName(dtype);
    tessera_status s;
    {
      pyb::gil_scoped_release nogil;
      s = tessera_dtensor_create(mesh.handle(), name.c_str(), dt, int32_t(shape.size()), shape.data(), &spec, &t_);
    }
    check(s);
  }
  ~DTensor() {
    if (t_) tessera_dtensor_destroy(t_);
  }
  DTensor(const DTensor&) = delete;
  DTensor& operator=(const DTensor&) = delete;
  tessera_dtensor handle() const { return t_; }
  // The local shard as a DLPack producer that keeps this tensor alive (`self`).
  pyb::object local(pyb::object self) const {
    tessera_tensor v{};
    check(tessera_dtensor_local(t_, &v));
    return pyb::reinterpret_steal<pyb::object>(makeBuffer(v, false, nullptr, self.ptr(), false));
  }
  void checkParts(const std::string& axis) const {
    tessera_tensor v{};
    check(tessera_dtensor_parts(t_, axis.c_str(), &v));
  }
  pyb::tuple vec(tessera_status (*get)(tessera_dtensor, int64_t*)) const {
    tessera_tensor v{};
    check(tessera_dtensor_local(t_, &v));
    std::vector<int64_t> out(size_t(v.rank));
    check(get(t_, out.data()));
    pyb::tuple t(out.size());
    for (size_t i = 0; i < out.size(); ++i) t[i] = out[i];
    return t;
  }
  const std::string& name() const { return name_; }

 private:
  tessera_dtensor t_ = nullptr;
  std::string name_;
};

// Collective options for Python's keywords.
tessera_collective_options collectiveOptions(bool deterministic, const std::string& algo, const char* name,
                                             tessera_stream stream) {
  tessera_collective_options o{};
  o.stream = stream;
  o.flags = deterministic ? 0 : TESSERA_COLLECTIVE_NONDETERMINISTIC;
  if (algo == "binary_tree" || algo == "tree")
    o.order = TESSERA_ORDER_TREE;
  else if (algo == "sequential" || algo == "ring_order")
    o.order = TESSERA_ORDER_SEQUENTIAL;
  else
    raise(PyExc_ValueError, "collective: algo must be 'binary_tree' or 'sequential', not '" + algo + "'");
  o.name = name;
  return o;
}

int32_t reduceOp(const std::string& op) {
  if (op == "sum") return TESSERA_REDUCE_SUM;
  if (op == "max") return TESSERA_REDUCE_MAX;
  if (op == "min") return TESSERA_REDUCE_MIN;
  if (op == "avg" || op == "mean") return TESSERA_REDUCE_AVG;
  raise(PyExc_ValueError, "collective: op must be 'sum', 'max', 'min' or 'avg', not '" + op + "'");
}

const std::vector<ParamInfo>& sendRecv() {
  static const std::vector<ParamInfo> p = {{"send", true, 0, 0}, {"recv", true, 0, 0}};
  return p;
}

// One collective on (send, recv): imports both as a call does (device checks), then `run`.
template <typename Run>
void collective(const std::string& what, pyb::object send, pyb::object recv, Run run) {
  PyObject* in[2] = {send.ptr(), recv.ptr()};
  CallArgs call(what, sendRecv(), in, 2);
  tessera_stream stream = callStream(call, nullptr);
  tessera_status s;
  {
    pyb::gil_scoped_release nogil;
    s = run(call.tensor(0), call.tensor(1), stream);
  }
  check(s);
}

void addCollectives(pyb::module_& m) {
  m.def(
      "all_reduce",
      [](const Comm& c, pyb::object send, pyb::object recv, const std::string& op, const std::string& algo,
         bool deterministic, const std::string& name) {
        int32_t rop = reduceOp(op);
        collective("all_reduce of '" + name + "'", send, recv, [&](auto* s, auto* r, tessera_stream st) {
          tessera_collective_options o = collectiveOptions(deterministic, algo, name.c_str(), st);
          return tessera_all_reduce(c.c, s, r, rop, &o);
        });
      },
      pyb::arg("comm"), pyb::arg("send"), pyb::arg("recv"), pyb::arg("op"), pyb::arg("algo"), pyb::arg("deterministic"),
      pyb::arg("name"));
  m.def(
      "reduce_scatter",
      [](const Comm& c, pyb::object send, pyb::object recv, const std::string& op, const std::string& algo,
         bool deterministic, const std::string& name) {
        int32_t rop = reduceOp(op);
        collective("reduce_scatter of '" + name + "'", send, recv, [&](auto* s, auto* r, tessera_stream st) {
          tessera_collective_options o = collectiveOptions(deterministic, algo, name.c_str(), st);
          return tessera_reduce_scatter(c.c, s, r, rop, &o);
        });
      },
      pyb::arg("comm"), pyb::arg("send"), pyb::arg("recv"), pyb::arg("op"), pyb::arg("algo"), pyb::arg("deterministic"),
      pyb::arg("name"));
  m.def(
      "all_gather",
      [](const Comm& c, pyb::object send, pyb::object recv, const std::string& name) {
        collective("all_gather of '" + name + "'", send, recv, [&](auto* s, auto* r, tessera_stream st) {
          tessera_collective_options o = collectiveOptions(true, "binary_tree", name.c_str(), st);
          return tessera_all_gather(c.c, s, r, &o);
        });
      },
      pyb::arg("comm"), pyb::arg("send"), pyb::arg("recv"), pyb::arg("name"));
  m.def(
      "broadcast",
      [](const Comm& c, pyb::object send, pyb::object recv, int root, const std::string& name) {
        collective("broadcast of '" + name + "'", send, recv, [&](auto* s, auto* r, tessera_stream st) {
          tessera_collective_options o = collectiveOptions(true, "binary_tree", name.c_str(), st);
          return tessera_broadcast(c.c, s, r, root, &o);
        });
      },
      pyb::arg("comm"), pyb::arg("send"), pyb::arg("recv"), pyb::arg("root"), pyb::arg("name"));
  m.def("barrier", [](const Comm& c) {
    tessera_status s;
    {
      pyb::gil_scoped_release nogil;
      s = tessera_barrier(c.c, nullptr);
    }
    check(s);
  });
}

// index_launch(mesh, axis, kernel, args): each argument is a distributed tensor (its parts along
// `axis`) or what a launch takes (a tensor, a scalar).
void indexLaunch(Mesh& mesh, const std::string& axis, Kernel& kernel, pyb::list args) {
  const auto* k = reinterpret_cast<const tessera_kernel_desc*>(kernel.descriptor());
  std::string owner = std::string("kernel '") + k->name + "'";
  if (args.size() != k->num_params)
    raise(PyExc_TypeError,
          owner + " takes " + std::to_string(k->num_params) + " arguments, got " + std::to_string(args.size()));
  std::vector<ParamInfo> plainParams;
  std::vector<PyObject*> plain;
  std::vector<size_t> plainIndex;
  std::vector<tessera_dist_arg> dargs(args.size());
  for (size_t i = 0; i < args.size(); ++i) {
    pyb::handle a = args[i];
    if (pyb::isinstance<DTensor>(a)) {
      dargs[i].kind = TESSERA_DIST_ARG_PARTS;
      dargs[i].dtensor = a.cast<DTensor&>().handle();
      continue;
    }
    const tessera_param_desc& p = k->params[i];
    plainParams.push_back(ParamInfo{p.name, p.kind == TESSERA_PARAM_TENSOR, p.dtype, p.rank});
    plain.push_back(a.ptr());
    plainIndex.push_back(i);
  }
  CallArgs call(owner, plainParams, plain.data(), plain.size());
  for (size_t j = 0; j < plainIndex.size(); ++j) {
    dargs[plainIndex[j]].kind = TESSERA_DIST_ARG_PLAIN;
    dargs[plainIndex[j]].arg = call.args()[j];
  }
  tessera_launch_options opts{};
  opts.stream = callStream(call, nullptr);
  tessera_status s;
  {
    pyb::gil_scoped_release nogil;
    s = tessera_index_launch(mesh.handle(), axis.c_str(), k, &opts, dargs.data(), uint32_t(dargs.size()));
  }
  check(s);
}

pyb::dict distInfo() {
  tessera_dist_info i{};
  check(tessera_dist_get_info(&i));
  pyb::dict d;
  d["rank"] = i.rank;
  d["world_size"] = i.world_size;
  d["local_rank"] = i.local_rank;
  d["local_world_size"] = i.local_world_size;
  d["launcher"] = i.launcher == TESSERA_LAUNCHER_MPI ? "mpirun" : i.launcher == TESSERA_LAUNCHER_ENV ? "env" : "single";
  d["transport"] = i.transport == TESSERA_TRANSPORT_MPI    ? "mpi"
                   : i.transport == TESSERA_TRANSPORT_NCCL ? "nccl"
                                                           : "self";
  d["device"] = i.device_kind == TESSERA_DEVICE_GPU ? "gpu" : "cpu";
  d["gpu_ordinal"] = i.gpu_ordinal;
  return d;
}

}  // namespace

void addDistFunctions(pyb::module_& root) {
  pyb::module_ m = root.def_submodule("dist", "libtessera_dist: the world, meshes, collectives, distributed tensors.");
  m.def(
      "init",
      [](double timeout, bool noSignatureChecks) {
        tessera_dist_options o{};
        o.struct_size = sizeof o;
        o.timeout_s = timeout;
        o.flags = noSignatureChecks ? TESSERA_DIST_NO_SIGNATURE_CHECKS : 0;
        tessera_status s;
        {
          pyb::gil_scoped_release nogil;
          s = tessera_dist_init(&o);
        }
        check(s);
      },
      pyb::arg("timeout") = 0.0, pyb::arg("no_signature_checks") = false);
  m.def("finalize", [] {
    tessera_status s;
    {
      pyb::gil_scoped_release nogil;
      s = tessera_dist_finalize();
    }
    check(s);
  });
  m.def("info", &distInfo);
  m.def("describe", [] { return std::string(tessera_dist_describe()); });
  m.def("abort", [](int code) { tessera_dist_abort(code); });
  pyb::class_<Comm>(m, "Comm", "A communicator the runtime owns (the world's or a mesh axis's).")
      .def_property_readonly("rank", &Comm::rank)
      .def_property_readonly("size", &Comm::size)
      .def("set_timeout", [](Comm& c, double s) { check(tessera_comm_set_timeout(c.c, s)); });
  m.def("world", [] {
    Comm c;
    check(tessera_dist_world(&c.c));
    return c;
  });
  pyb::class_<Mesh>(m, "Mesh")
      .def(pyb::init<std::vector<std::string>, std::vector<int64_t>>())
      .def("axis_size", &Mesh::axisSize)
      .def("coord", &Mesh::coord)
      .def("comm", &Mesh::comm)
      .def_property_readonly("axes", &Mesh::axes);
  pyb::class_<DTensor>(m, "DTensor")
      .def(pyb::init<Mesh&, std::string, std::string, std::vector<int64_t>, std::vector<pyb::object>>())
      .def("local", [](pyb::object self) { return self.cast<DTensor&>().local(self); })
      .def("check_parts", &DTensor::checkParts)
      .def("offset", [](DTensor& t) { return t.vec(tessera_dtensor_offset); })
      .def("global_shape", [](DTensor& t) { return t.vec(tessera_dtensor_global_shape); })
      .def_property_readonly("name", &DTensor::name)
      .def("all_gather_into",
           [](DTensor& src, DTensor& dst) { check(tessera_dtensor_all_gather(src.handle(), dst.handle(), nullptr)); })
      .def("reduce_scatter_into",
           [](DTensor& src, DTensor& dst, const std::string& op) {
             check(tessera_dtensor_reduce_scatter(src.handle(), dst.handle(), reduceOp(op), nullptr));
           })
      .def("all_reduce", [](DTensor& t, const std::string& axis, const std::string& op) {
        check(tessera_dtensor_all_reduce(t.handle(), axis.c_str(), reduceOp(op), nullptr));
      });
  m.def("index_launch", &indexLaunch);
  addCollectives(m);
}

}  // namespace tessera::py
