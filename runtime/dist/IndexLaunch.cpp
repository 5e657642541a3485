//===- IndexLaunch.cpp - index_launch(axis=)(kernel)(parts...) ------------------------------===//
//
// Every rank launches the kernel once, on its parts. Before that the kernel's shape symbols are
// bound from the mesh and the distributed tensors and handed to tessera_launch_bound, which
// checks every extent (K/tp included) as any launch does:
// - a symbol named like a mesh axis is that axis's size (tp = 4);
// - a dimension whose extent is `S / axis` (postfix {SYMBOL S, SYMBOL axis, DIV}) of a tensor
//   partitioned along it over that axis binds S to the global extent (K = 4096), so the local
//   extent is checked against K/tp; the same extent on a dimension that the axis does not
//   partition is an error, since the kernel expects a part there;
// - every other symbol binds from the local shapes, as in a plain launch.
//
//===----------------------------------------------------------------------------------------===//
#include <algorithm>
#include <cstring>
#include <map>
#include <memory>
#include <vector>

#include "runtime/Status.h"
#include "runtime/dist/MeshTypes.h"
#include "runtime/dist/Overlap.h"
#include "runtime/dist/Signature.h"
#include "runtime/dist/World.h"

using namespace tessera::dist;
using tessera::rt::concat;
using tessera::rt::fail;

namespace {

struct Binding {
  int64_t value;
  std::string source;
};

// For an extent {SYMBOL s, SYMBOL a, DIV} where a names a mesh axis: s and the axis index.
bool dividedByAxis(const tessera_kernel_desc& k, const tessera_extent& e, tessera_mesh mesh, int& numerator,
                   int& axis) {
  if (e.kind != TESSERA_EXTENT_EXPR || e.expr_len != 3 || e.expr[0].op != TESSERA_EXPR_SYMBOL ||
      e.expr[1].op != TESSERA_EXPR_SYMBOL || e.expr[2].op != TESSERA_EXPR_DIV)
    return false;
  numerator = e.expr[0].symbol;
  axis = mesh->axisIndex(k.symbols[e.expr[1].symbol]);
  return axis >= 0 && numerator >= 0 && static_cast<uint32_t>(numerator) < k.num_symbols;
}

tessera_status bindFromParts(const char* fn, const tessera_kernel_desc& k, tessera_mesh mesh, uint32_t p,
                             tessera_dtensor t, std::map<std::string, Binding>& bound) {
  const tessera_param_desc& pd = k.params[p];
  if (pd.rank != t->rank) return TESSERA_SUCCESS;  // tessera_launch_bound reports the rank mismatch
  for (int32_t d = 0; d < pd.rank; ++d) {
    int sym = 0, axis = 0;
    if (!dividedByAxis(k, pd.extents[d], mesh, sym, axis)) continue;
    const char* axisName = mesh->axes[axis].c_str();
    if (t->axisOf[d] != axis)
      return fail(TESSERA_ERROR_SHAPE_MISMATCH, fn, ": kernel '", k.name, "': parameter '", pd.name, "' dimension ", d,
                  " is ", k.symbols[sym], "/", axisName, ", a part along mesh axis '", axisName,
                  "', but distributed tensor '", t->name, "' is ", t->layout());
    std::string source = concat("the global shape of '", t->name, "' dimension ", d);
    auto [it, fresh] = bound.emplace(k.symbols[sym], Binding{t->global[d], source});
    if (!fresh && it->second.value != t->global[d])
      return fail(TESSERA_ERROR_SHAPE_MISMATCH, fn, ": kernel '", k.name, "': symbol '", k.symbols[sym], "' is ",
                  it->second.value, " from ", it->second.source, " but ", t->global[d], " from ", source);
  }
  return TESSERA_SUCCESS;
}

// What every index launch starts with: the mesh, the axis, the kernel and the argument count;
// then the mesh's axis sizes as bindings.
tessera_status beginLaunch(const char* fn, tessera_mesh mesh, const char* axis, const tessera_kernel_desc* kernel,
                           const tessera_dist_arg* args, uint32_t num_args, int& launchAxis,
                           std::map<std::string, Binding>& bound) {
  TESSERA_TRY(checkMesh(fn, mesh));
  TESSERA_TRY(findAxis(fn, mesh, axis, launchAxis));
  if (!kernel) return fail(TESSERA_ERROR_INVALID_ARGUMENT, fn, ": null kernel descriptor");
  if (num_args && !args)
    return fail(TESSERA_ERROR_INVALID_ARGUMENT, fn, ": kernel '", kernel->name, "': null argument array");
  if (num_args != kernel->num_params)
    return fail(TESSERA_ERROR_INVALID_ARGUMENT, fn, ": kernel '", kernel->name, "': expected ", kernel->num_params,
                " arguments, got ", num_args);
  for (size_t a = 0; a < mesh->axes.size(); ++a)
    bound[mesh->axes[a]] = {mesh->shape[a], concat("mesh axis '", mesh->axes[a], "'")};
  return TESSERA_SUCCESS;
}

// A PARTS argument: the tensor's parts along the launch axis, binding symbols like K in K/tp.
tessera_status partsArg(const char* fn, tessera_mesh mesh, const char* axis, const tessera_kernel_desc& k, uint32_t p,
                        tessera_dtensor t, tessera_tensor& view, std::map<std::string, Binding>& bound) {
  TESSERA_TRY(checkDTensor(fn, t));
  if (t->mesh != mesh)
    return fail(TESSERA_ERROR_INVALID_ARGUMENT, fn, ": kernel '", k.name, "': '", t->name,
                "' lives on another mesh than the launch");
  TESSERA_TRY(tessera_dtensor_parts(t, axis, &view));
  if (k.params[p].kind == TESSERA_PARAM_TENSOR) TESSERA_TRY(bindFromParts(fn, k, mesh, p, t, bound));
  return TESSERA_SUCCESS;
}

std::vector<tessera_symbol_binding> bindingsOf(const std::map<std::string, Binding>& bound) {
  std::vector<tessera_symbol_binding> out;
  for (auto& [name, b] : bound) out.push_back({name.c_str(), b.value, b.source.c_str()});
  return out;
}

}  // namespace

extern "C" {

tessera_status tessera_index_launch(tessera_mesh mesh, const char* axis, const tessera_kernel_desc* kernel,
                                    const tessera_launch_options* opts, const tessera_dist_arg* args,
                                    uint32_t num_args) {
  const char* fn = "tessera_index_launch";
  int launchAxis = 0;
  std::map<std::string, Binding> bound;
  TESSERA_TRY(beginLaunch(fn, mesh, axis, kernel, args, num_args, launchAxis, bound));
  const tessera_kernel_desc& k = *kernel;
  std::vector<tessera_tensor> views(num_args);
  std::vector<tessera_arg> plain(num_args);
  for (uint32_t p = 0; p < num_args; ++p) {
    const tessera_dist_arg& a = args[p];
    if (a.kind == TESSERA_DIST_ARG_PLAIN) {
      plain[p] = a.arg;
      continue;
    }
    if (a.kind != TESSERA_DIST_ARG_PARTS)
      return fail(TESSERA_ERROR_INVALID_ARGUMENT, fn, ": kernel '", k.name, "': argument ", p, " has kind ", a.kind,
                  " (PLAIN or PARTS here; GATHER and ROWS belong to tessera_index_launch_gathered)");
    TESSERA_TRY(partsArg(fn, mesh, axis, k, p, a.dtensor, views[p], bound));
    plain[p] = tessera_arg_tensor(&views[p]);
  }
  std::vector<tessera_symbol_binding> bindings = bindingsOf(bound);
  return tessera_launch_bound(kernel, opts, plain.data(), num_args, bindings.data(),
                              static_cast<uint32_t>(bindings.size()));
}

}  // extern "C"

namespace {

// What each launch of a gathered index launch needs, shared by the blocks' callbacks.
struct GatheredLaunch {
  const tessera_kernel_desc* kernel = nullptr;
  tessera_launch_options opts{};
  std::vector<tessera_tensor> views;
  std::vector<tessera_arg> args;
  std::map<std::string, Binding> bound;
  uint32_t gather = 0;
  std::vector<uint32_t> rows;
  int64_t blockRows = 0;

  // The kernel on block `block` (its data at `data`) and the same rows of the ROWS arguments.
  tessera_status launch(int block, char* data) const {
    std::vector<tessera_tensor> v = views;
    std::vector<tessera_arg> a = args;
    v[gather].data = data;
    for (uint32_t r : rows) {
      size_t rowBytes = size_t(v[r].strides[0]) * (tessera_dtype_bits(v[r].dtype) / 8);
      v[r].data = static_cast<char*>(v[r].data) + size_t(block) * size_t(blockRows) * rowBytes;
      v[r].shape[0] = blockRows;
    }
    for (size_t p = 0; p < a.size(); ++p)
      if (a[p].kind == TESSERA_PARAM_TENSOR && a[p].value.tensor == &views[p]) a[p].value.tensor = &v[p];
    std::vector<tessera_symbol_binding> bindings = bindingsOf(bound);
    return tessera_launch_bound(kernel, &opts, a.data(), static_cast<uint32_t>(a.size()), bindings.data(),
                                static_cast<uint32_t>(bindings.size()));
  }
};

// The arguments of a gathered launch: exactly one GATHER (partitioned along dimension 0 over the
// launch axis), ROWS tensors spanning its gathered rows, PLAIN and PARTS as in index_launch.
tessera_status gatheredArgs(const char* fn, tessera_mesh mesh, const char* axis, int launchAxis,
                            const tessera_dist_arg* args, uint32_t n, GatheredLaunch& L, tessera_dtensor& g) {
  const tessera_kernel_desc& k = *L.kernel;
  L.views.resize(n);
  L.args.resize(n);
  g = nullptr;
  for (uint32_t p = 0; p < n; ++p) {
    const tessera_dist_arg& a = args[p];
    if (a.kind == TESSERA_DIST_ARG_PLAIN) {
      L.args[p] = a.arg;
    } else if (a.kind == TESSERA_DIST_ARG_PARTS) {
      TESSERA_TRY(partsArg(fn, mesh, axis, k, p, a.dtensor, L.views[p], L.bound));
      L.args[p] = tessera_arg_tensor(&L.views[p]);
    } else if (a.kind == TESSERA_DIST_ARG_GATHER) {
      TESSERA_TRY(checkDTensor(fn, a.dtensor));
      if (g)
        return fail(TESSERA_ERROR_INVALID_ARGUMENT, fn, ": kernel '", k.name, "': two GATHER arguments ('", g->name,
                    "' and '", a.dtensor->name, "'); one tensor is gathered");
      g = a.dtensor;
      if (g->mesh != mesh || g->rank < 1 || g->axisOf[0] != launchAxis)
        return fail(TESSERA_ERROR_INVALID_ARGUMENT, fn, ": kernel '", k.name, "': GATHER argument '", g->name,
                    "' must be partitioned along dimension 0 over mesh axis '", axis, "' of the launch's mesh (it is ",
                    g->layout(), ")");
      L.gather = p;
      L.views[p] = g->view();
      L.args[p] = tessera_arg_tensor(&L.views[p]);
    } else if (a.kind == TESSERA_DIST_ARG_ROWS) {
      if (a.arg.kind != TESSERA_PARAM_TENSOR || !a.arg.value.tensor)
        return fail(TESSERA_ERROR_INVALID_ARGUMENT, fn, ": kernel '", k.name, "': ROWS argument ", p,
                    " is not a tensor");
      L.rows.push_back(p);
      L.views[p] = *a.arg.value.tensor;
      L.args[p] = tessera_arg_tensor(&L.views[p]);
    } else {
      return fail(TESSERA_ERROR_INVALID_ARGUMENT, fn, ": kernel '", k.name, "': argument ", p, " has unknown kind ",
                  a.kind);
    }
  }
  if (!g)
    return fail(TESSERA_ERROR_INVALID_ARGUMENT, fn, ": kernel '", k.name,
                "': no TESSERA_DIST_ARG_GATHER argument (the tensor whose all_gather the launches overlap)");
  L.blockRows = g->local[0];
  int64_t total = g->global[0];
  for (uint32_t r : L.rows) {
    const tessera_tensor& t = L.views[r];
    if (t.rank < 1 || t.shape[0] != total || tessera_dtype_bits(t.dtype) % 8)
      return fail(TESSERA_ERROR_SHAPE_MISMATCH, fn, ": kernel '", k.name, "': ROWS argument '", k.params[r].name,
                  "' must be a whole-byte tensor whose dimension 0 spans the ", total, " gathered rows of '", g->name,
                  "' (it has ", t.rank < 1 ? 0 : t.shape[0], ")");
  }
  return TESSERA_SUCCESS;
}

}  // namespace

extern "C" {

tessera_status tessera_index_launch_gathered(tessera_mesh mesh, const char* axis, const tessera_kernel_desc* kernel,
                                             const tessera_launch_options* opts, const tessera_dist_arg* args,
                                             uint32_t num_args) {
  const char* fn = "tessera_index_launch_gathered";
  int launchAxis = 0;
  auto L = std::make_shared<GatheredLaunch>();
  TESSERA_TRY(beginLaunch(fn, mesh, axis, kernel, args, num_args, launchAxis, L->bound));
  L->kernel = kernel;
  if (opts) L->opts = *opts;
  tessera_dtensor g = nullptr;
  TESSERA_TRY(gatheredArgs(fn, mesh, axis, launchAxis, args, num_args, *L, g));
  tessera_comm comm = mesh->axisComms[launchAxis];
  std::string what = concat("all_gather (overlapped) of '", g->name, "' for kernel '", kernel->name, "'");
  Signature sig = makeSignature(OpKind::AllGatherOverlap, g->name.c_str(), g->dtype, g->rank, g->local);
  std::strncpy(sig.layout, kernel->name, sizeof sig.layout - 1);  // every rank launches the same kernel
  TESSERA_TRY(agree(*comm, sig, what));
  BlockFn onBlock = [L, comm, what](int block, char* data, void*) -> tessera_status {
    tessera_status st = L->launch(block, data);
    if (st == TESSERA_SUCCESS) return st;
    std::string msg =
        concat(what, " on ", comm->where(), ": the launch on block ", block, " failed: ", tessera_last_error_message(),
               "; the communicator is aborted, since the other ranks' transfers cannot complete");
    comm->abort(TESSERA_ERROR_COMM_ABORTED, msg);
    return fail(st, msg);
  };
  const char* in = static_cast<const char*>(g->data);
  size_t bytes = g->bytes;
  int p = comm->size();
  return issue(*comm, L->opts.stream, what, bytes * p, [comm, in, bytes, p, onBlock](void* stream, const Deadline& d) {
    void* gathered = nullptr;
    TESSERA_TRY(comm->ops->allocTemp(&gathered, std::max<size_t>(1, bytes * p), stream));
    tessera_status st = allGatherOverlap(*comm, in, gathered, bytes, onBlock, stream, d);
    comm->ops->freeTemp(gathered, stream);
    return st;
  });
}

}  // extern "C"
