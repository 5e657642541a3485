// C++ layer over libtessera_dist (tessera/dist.h), shaped like the spec's host code:
//
//   tessera::dist::init();
//   auto mesh = tessera::dist::Mesh::create({"dp", "tp"}, {2, 2});
//   auto W = tessera::dist::DTensor::create(mesh, "W", TESSERA_BF16, {8192, 8192},
//                                           tessera::dist::ShardSpec({"col"}, {"tp"}));
//   tessera::dist::index_launch(mesh, "tp")(kernel)(A.parts("tp"), B.parts("tp"), C.parts("tp"));
//   tessera::dist::all_reduce(mesh.comm("dp"), grads, grads, TESSERA_REDUCE_AVG);
//
// Header-only over the C API; results are tessera::Status (tessera/runtime.hpp). Handles own
// what they create and release it when they go out of scope.
#ifndef TESSERA_DIST_HPP
#define TESSERA_DIST_HPP

#include "tessera/dist.h"
#include "tessera/runtime.hpp"

#include <cstdlib>
#include <initializer_list>
#include <string>
#include <utility>
#include <vector>

namespace tessera::dist {

inline Status init(double timeout_s = 0, uint32_t flags = 0) {
  tessera_dist_options o{sizeof(tessera_dist_options), flags, timeout_s};
  return Status::from(tessera_dist_init(&o));
}
inline Status finalize() { return Status::from(tessera_dist_finalize()); }
inline tessera_dist_info info() {
  tessera_dist_info i{};
  tessera_dist_get_info(&i);
  return i;
}
inline int rank() { return info().rank; }
inline int world_size() { return info().world_size; }

// A communicator (not owned: the world's and the mesh's live as long as they do).
class Comm {
public:
  Comm() = default;
  explicit Comm(tessera_comm h) : h_(h) {}
  tessera_comm get() const { return h_; }
  int rank() const {
    int32_t r = -1;
    tessera_comm_rank(h_, &r);
    return r;
  }
  int size() const {
    int32_t s = 0;
    tessera_comm_size(h_, &s);
    return s;
  }
  Status set_timeout(double seconds) const { return Status::from(tessera_comm_set_timeout(h_, seconds)); }
  Status synchronize(tessera_stream stream = nullptr) const { return Status::from(tessera_comm_synchronize(h_, stream)); }

private:
  tessera_comm h_ = nullptr;
};

inline Comm world() {
  tessera_comm c = nullptr;
  tessera_dist_world(&c);
  return Comm(c);
}

// Collective options; the defaults are the spec's: deterministic, binary tree order.
struct Options {
  tessera_stream stream = nullptr;
  bool deterministic = true;
  tessera_reduce_order order = TESSERA_ORDER_TREE;
  const char *name = nullptr;
  tessera_collective_options c() const {
    return {stream, deterministic ? 0u : TESSERA_COLLECTIVE_NONDETERMINISTIC, order, name};
  }
};

inline Status all_reduce(Comm c, const tessera_tensor &send, const tessera_tensor &recv,
                         tessera_reduce_op op = TESSERA_REDUCE_SUM, const Options &o = {}) {
  auto opts = o.c();
  return Status::from(tessera_all_reduce(c.get(), &send, &recv, op, &opts));
}
inline Status all_gather(Comm c, const tessera_tensor &send, const tessera_tensor &recv, const Options &o = {}) {
  auto opts = o.c();
  return Status::from(tessera_all_gather(c.get(), &send, &recv, &opts));
}
inline Status reduce_scatter(Comm c, const tessera_tensor &send, const tessera_tensor &recv,
                             tessera_reduce_op op = TESSERA_REDUCE_SUM, const Options &o = {}) {
  auto opts = o.c();
  return Status::from(tessera_reduce_scatter(c.get(), &send, &recv, op, &opts));
}
inline Status broadcast(Comm c, const tessera_tensor &send, const tessera_tensor &recv, int root,
                        const Options &o = {}) {
  auto opts = o.c();
  return Status::from(tessera_broadcast(c.get(), &send, &recv, root, &opts));
}
inline Status all_to_all(Comm c, const tessera_tensor &send, const tessera_tensor &recv, const Options &o = {}) {
  auto opts = o.c();
  return Status::from(tessera_all_to_all(c.get(), &send, &recv, &opts));
}
inline Status send(Comm c, const tessera_tensor &t, int peer, const Options &o = {}) {
  auto opts = o.c();
  return Status::from(tessera_send(c.get(), &t, peer, &opts));
}
inline Status recv(Comm c, const tessera_tensor &t, int peer, const Options &o = {}) {
  auto opts = o.c();
  return Status::from(tessera_recv(c.get(), &t, peer, &opts));
}
inline Status barrier(Comm c, const Options &o = {}) {
  auto opts = o.c();
  return Status::from(tessera_barrier(c.get(), &opts));
}

// A mesh (owned). Mesh::create is collective over the world.
class Mesh : public Handle<tessera_mesh, tessera_mesh_destroy> {
public:
  static Status create(std::initializer_list<const char *> axes, std::initializer_list<int64_t> shape, Mesh &out) {
    out.reset();
    if (axes.size() != shape.size())
      return Status::failure(TESSERA_ERROR_INVALID_ARGUMENT, "Mesh::create: " + std::to_string(axes.size()) +
                                                                 " axis names but " + std::to_string(shape.size()) +
                                                                 " sizes");
    return Status::from(tessera_mesh_create(axes.begin(), shape.begin(), static_cast<int32_t>(axes.size()), out.out()));
  }
  int64_t size(const char *axis) const {
    int64_t v = 0;
    tessera_mesh_axis_size(get(), axis, &v);
    return v;
  }
  int64_t coord(const char *axis) const {
    int64_t v = -1;
    tessera_mesh_coord(get(), axis, &v);
    return v;
  }
  Comm comm(const char *axis) const {
    tessera_comm c = nullptr;
    tessera_mesh_comm(get(), axis, &c);
    return Comm(c);
  }
};

// dist.ShardSpec(partition=("col",), mesh_axes=("tp",)): which dimensions are partitioned and
// over which mesh axes. A dimension is "row" (the second to last), "col" (the last) or its index
// ("0".."7").
class ShardSpec {
public:
  ShardSpec() = default; // replicated
  ShardSpec(std::initializer_list<const char *> partition, std::initializer_list<const char *> mesh_axes)
      : partition_(partition), axes_(mesh_axes) {}

  // The C spec for a tensor of `rank` dimensions; false (with `error`) for a malformed spec.
  bool resolve(int32_t rank, tessera_shard_spec &out, std::string &error) const {
    out = tessera_shard_spec{};
    if (partition_.size() != axes_.size()) {
      error = "ShardSpec: partition and mesh_axes must have the same length";
      return false;
    }
    for (size_t i = 0; i < partition_.size(); ++i) {
      std::string p = partition_[i] ? partition_[i] : "";
      int32_t d = p == "row" ? rank - 2 : p == "col" ? rank - 1 : (p.size() == 1 && p[0] >= '0' && p[0] <= '7') ? p[0] - '0' : -99;
      if (d < 0 || d >= rank) {
        error = "ShardSpec: '" + p + "' is not a dimension of a rank-" + std::to_string(rank) +
                " tensor (use \"row\", \"col\" or an index)";
        return false;
      }
      out.axis[d] = axes_[i];
    }
    return true;
  }

private:
  std::vector<const char *> partition_, axes_;
};

// A distributed tensor's parts along a mesh axis, for index_launch.
struct Parts {
  tessera_dtensor t;
  const char *axis;
};

// A distributed tensor (owned). DTensor::create is collective over the world.
class DTensor : public Handle<tessera_dtensor, tessera_dtensor_destroy> {
public:
  static Status create(const Mesh &mesh, const char *name, tessera_dtype dtype, std::initializer_list<int64_t> shape,
                       const ShardSpec &layout, DTensor &out) {
    out.reset();
    tessera_shard_spec spec;
    std::string error;
    if (!layout.resolve(static_cast<int32_t>(shape.size()), spec, error))
      return Status::failure(TESSERA_ERROR_INVALID_ARGUMENT, std::string("DTensor::create of '") + name + "': " + error);
    return Status::from(tessera_dtensor_create(mesh.get(), name, dtype, static_cast<int32_t>(shape.size()),
                                               shape.begin(), &spec, out.out()));
  }
  tessera_tensor local() const {
    tessera_tensor t{};
    tessera_dtensor_local(get(), &t);
    return t;
  }
  Parts parts(const char *axis) const { return Parts{get(), axis}; }
  std::vector<int64_t> offset() const {
    tessera_tensor t = local();
    std::vector<int64_t> o(static_cast<size_t>(t.rank));
    tessera_dtensor_offset(get(), o.data());
    return o;
  }
};

inline Status all_gather(const DTensor &src, const DTensor &dst, const Options &o = {}) {
  auto opts = o.c();
  return Status::from(tessera_dtensor_all_gather(src.get(), dst.get(), &opts));
}
inline Status reduce_scatter(const DTensor &src, const DTensor &dst, tessera_reduce_op op = TESSERA_REDUCE_SUM,
                             const Options &o = {}) {
  auto opts = o.c();
  return Status::from(tessera_dtensor_reduce_scatter(src.get(), dst.get(), op, &opts));
}
inline Status all_reduce(const DTensor &t, const char *axis, tessera_reduce_op op = TESSERA_REDUCE_SUM,
                         const Options &o = {}) {
  auto opts = o.c();
  return Status::from(tessera_dtensor_all_reduce(t.get(), axis, op, &opts));
}

// index_launch(mesh, "tp")(kernel)(A.parts("tp"), B.parts("tp"), C.parts("tp")): arguments are
// Parts, local tensors (tessera_tensor) or launch arguments (tessera::scalar(...)).
class IndexLaunchCall {
public:
  IndexLaunchCall(tessera_mesh mesh, const char *axis, const tessera_kernel_desc *kernel,
                  const tessera_launch_options *opts)
      : mesh_(mesh), axis_(axis), kernel_(kernel), opts_(opts) {}

  template <typename... Args> Status operator()(const Args &...args) {
    std::vector<tessera_dist_arg> a;
    a.reserve(sizeof...(Args));
    std::string wrongAxis;
    (a.push_back(toArg(args, wrongAxis)), ...);
    if (!wrongAxis.empty())
      return Status::failure(TESSERA_ERROR_INVALID_ARGUMENT, std::string("index_launch(axis='") + axis_ + "') of kernel '" +
                                                                 (kernel_ ? kernel_->name : "?") + "': an argument is " +
                                                                 wrongAxis + "; pass parts along the launch axis");
    return Status::from(tessera_index_launch(mesh_, axis_, kernel_, opts_, a.data(), static_cast<uint32_t>(a.size())));
  }

private:
  tessera_dist_arg toArg(const Parts &p, std::string &wrongAxis) const {
    if (!p.axis || std::string(p.axis) != axis_)
      wrongAxis = std::string("parts('") + (p.axis ? p.axis : "") + "')";
    tessera_dist_arg a{};
    a.kind = TESSERA_DIST_ARG_PARTS;
    a.dtensor = p.t;
    return a;
  }
  static tessera_dist_arg toArg(const tessera_tensor &t, std::string &) {
    tessera_dist_arg a{};
    a.kind = TESSERA_DIST_ARG_PLAIN;
    a.arg = tessera::arg(t);
    return a;
  }
  static tessera_dist_arg toArg(const tessera_arg &arg, std::string &) {
    tessera_dist_arg a{};
    a.kind = TESSERA_DIST_ARG_PLAIN;
    a.arg = arg;
    return a;
  }
  tessera_mesh mesh_;
  const char *axis_;
  const tessera_kernel_desc *kernel_;
  const tessera_launch_options *opts_;
};

class IndexLaunch {
public:
  IndexLaunch(const Mesh &mesh, const char *axis, const tessera_launch_options *opts = nullptr)
      : mesh_(mesh.get()), axis_(axis), opts_(opts) {}
  IndexLaunchCall operator()(const tessera_kernel_desc *kernel) const { return {mesh_, axis_, kernel, opts_}; }

private:
  tessera_mesh mesh_;
  const char *axis_;
  const tessera_launch_options *opts_;
};

inline IndexLaunch index_launch(const Mesh &mesh, const char *axis, const tessera_launch_options *opts = nullptr) {
  return IndexLaunch(mesh, axis, opts);
}

} // namespace tessera::dist

#endif
