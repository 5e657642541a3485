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
#include <cstring>
#include <map>
#include <vector>

#include "runtime/Status.h"
#include "runtime/dist/MeshTypes.h"
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

}  // namespace

extern "C" {

tessera_status tessera_index_launch(tessera_mesh mesh, const char* axis, const tessera_kernel_desc* kernel,
                                    const tessera_launch_options* opts, const tessera_dist_arg* args,
                                    uint32_t num_args) {
  const char* fn = "tessera_index_launch";
  TESSERA_TRY(checkMesh(fn, mesh));
  int launchAxis = 0;
  TESSERA_TRY(findAxis(fn, mesh, axis, launchAxis));
  if (!kernel) return fail(TESSERA_ERROR_INVALID_ARGUMENT, fn, ": null kernel descriptor");
  if (num_args && !args)
    return fail(TESSERA_ERROR_INVALID_ARGUMENT, fn, ": kernel '", kernel->name, "': null argument array");
  const tessera_kernel_desc& k = *kernel;
  if (num_args != k.num_params)
    return fail(TESSERA_ERROR_INVALID_ARGUMENT, fn, ": kernel '", k.name, "': expected ", k.num_params,
                " arguments, got ", num_args);

  std::map<std::string, Binding> bound;
  for (size_t a = 0; a < mesh->axes.size(); ++a)
    bound[mesh->axes[a]] = {mesh->shape[a], concat("mesh axis '", mesh->axes[a], "'")};
  std::vector<tessera_tensor> views(num_args);
  std::vector<tessera_arg> plain(num_args);
  for (uint32_t p = 0; p < num_args; ++p) {
    const tessera_dist_arg& a = args[p];
    if (a.kind == TESSERA_DIST_ARG_PLAIN) {
      plain[p] = a.arg;
      continue;
    }
    if (a.kind != TESSERA_DIST_ARG_PARTS)
      return fail(TESSERA_ERROR_INVALID_ARGUMENT, fn, ": kernel '", k.name, "': argument ", p, " has unknown kind ",
                  a.kind);
    TESSERA_TRY(checkDTensor(fn, a.dtensor));
    if (a.dtensor->mesh != mesh)
      return fail(TESSERA_ERROR_INVALID_ARGUMENT, fn, ": kernel '", k.name, "': '", a.dtensor->name,
                  "' lives on another mesh than the launch");
    TESSERA_TRY(tessera_dtensor_parts(a.dtensor, axis, &views[p]));
    if (k.params[p].kind == TESSERA_PARAM_TENSOR) TESSERA_TRY(bindFromParts(fn, k, mesh, p, a.dtensor, bound));
    plain[p] = tessera_arg_tensor(&views[p]);
  }
  std::vector<tessera_symbol_binding> bindings;
  for (auto& [name, b] : bound) bindings.push_back({name.c_str(), b.value, b.source.c_str()});
  return tessera_launch_bound(kernel, opts, plain.data(), num_args, bindings.data(),
                              static_cast<uint32_t>(bindings.size()));
}

}  // extern "C"
