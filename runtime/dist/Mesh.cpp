//===- Mesh.cpp - Meshes: axes over the world, one communicator per axis ---------------------===//
#include <cstring>

#include "runtime/Status.h"
#include "runtime/dist/MeshTypes.h"
#include "runtime/dist/Signature.h"
#include "runtime/dist/World.h"

using namespace tessera::dist;
using tessera::rt::concat;
using tessera::rt::fail;

int tessera_mesh_t::axisIndex(const char* name) const {
  for (size_t a = 0; name && a < axes.size(); ++a)
    if (axes[a] == name) return static_cast<int>(a);
  return -1;
}

std::string tessera_mesh_t::describe() const {
  std::string s = "mesh (";
  for (size_t a = 0; a < axes.size(); ++a) s += concat(a ? ", " : "", axes[a], "=", shape[a]);
  return s + ")";
}

namespace tessera::dist {

tessera_status checkMesh(const char* fn, tessera_mesh mesh) {
  TESSERA_TRY(requireInit(fn));
  if (!mesh || !worldState().meshes.count(mesh))
    return fail(TESSERA_ERROR_INVALID_HANDLE, fn, ": null, unknown or destroyed mesh");
  return TESSERA_SUCCESS;
}

tessera_status findAxis(const char* fn, tessera_mesh mesh, const char* axis, int& index) {
  index = mesh->axisIndex(axis);
  if (index >= 0) return TESSERA_SUCCESS;
  std::string names;
  for (const std::string& a : mesh->axes) names += concat(names.empty() ? "'" : ", '", a, "'");
  return fail(TESSERA_ERROR_INVALID_ARGUMENT, fn, ": ", mesh->describe(), " has no axis '", axis ? axis : "(null)",
              "' (its axes: ", names, ")");
}

namespace {

// The communicator of the ranks that share every coordinate outside `mask` (ordered by their
// coordinates inside it): a split of the world, owned by the mesh.
tessera_status splitByAxes(tessera_mesh m, uint32_t mask, const std::string& name, tessera_comm& out) {
  int64_t color = 0, key = 0;
  for (size_t a = 0; a < m->axes.size(); ++a) {
    if (mask & (1u << a))
      key = key * m->shape[a] + m->coord[a];
    else
      color = color * m->shape[a] + m->coord[a];
  }
  TESSERA_TRY(tessera_comm_split(m->world, static_cast<int32_t>(color), static_cast<int32_t>(key), name.c_str(), &out));
  out->owned = true;
  return TESSERA_SUCCESS;
}

void destroyMesh(tessera_mesh m) {
  for (tessera_comm c : m->axisComms)
    if (c) destroyComm(c);
  for (auto& [mask, c] : m->groupComms) destroyComm(c);
  worldState().meshes.erase(m);
  delete m;
}

// The mesh accessors by axis name: checks the mesh, the axis and the output, then writes
// `value(axis index)` to *out.
template <typename T, typename Value>
tessera_status axisQuery(const char* fn, tessera_mesh mesh, const char* axis, T* out, Value value) {
  TESSERA_TRY(checkMesh(fn, mesh));
  int a = 0;
  TESSERA_TRY(findAxis(fn, mesh, axis, a));
  if (!out) return fail(TESSERA_ERROR_INVALID_ARGUMENT, fn, ": null output");
  *out = value(a);
  return TESSERA_SUCCESS;
}

}  // namespace

}  // namespace tessera::dist

extern "C" {

tessera_status tessera_mesh_create(const char* const* axes, const int64_t* shape, int32_t ndims, tessera_mesh* out) {
  const char* fn = "tessera_mesh_create";
  if (!out) return fail(TESSERA_ERROR_INVALID_ARGUMENT, fn, ": null output");
  *out = nullptr;
  TESSERA_TRY(requireInit(fn));
  if (ndims < 1 || ndims > TESSERA_MAX_RANK || !axes || !shape)
    return fail(TESSERA_ERROR_INVALID_ARGUMENT, fn, ": a mesh has 1 to ", TESSERA_MAX_RANK,
                " named axes and a size for each (got ", ndims, ")");
  auto m = std::make_unique<tessera_mesh_t>();
  int64_t positions = 1;
  for (int32_t a = 0; a < ndims; ++a) {
    if (!axes[a] || !*axes[a]) return fail(TESSERA_ERROR_INVALID_ARGUMENT, fn, ": axis ", a, " has no name");
    if (m->axisIndex(axes[a]) >= 0)
      return fail(TESSERA_ERROR_INVALID_ARGUMENT, fn, ": axis '", axes[a], "' is named twice");
    if (shape[a] < 1) return fail(TESSERA_ERROR_INVALID_ARGUMENT, fn, ": axis '", axes[a], "' has size ", shape[a]);
    m->axes.push_back(axes[a]);
    m->shape.push_back(shape[a]);
    if (__builtin_mul_overflow(positions, shape[a], &positions)) positions = INT64_MAX;  // more than any world
  }
  WorldState& w = worldState();
  int world = w.info.world_size;
  if (positions != world)
    return fail(TESSERA_ERROR_SHAPE_MISMATCH, fn, ": ", m->describe(), " has ", positions,
                " positions but the world has ", world, " rank", world == 1 ? "" : "s",
                " (the axis sizes must multiply to the world size)");
  // The ranks must build the same mesh.
  std::string names;
  for (const std::string& a : m->axes) names += concat(names.empty() ? "" : ",", a);
  Signature sig = makeSignature(OpKind::MeshCreate, names.c_str(), 0, ndims, shape);
  TESSERA_TRY(agree(*w.world, sig, concat(fn, " of ", m->describe())));
  m->world = w.world.get();
  int64_t r = w.info.rank;
  m->coord.assign(ndims, 0);
  for (int32_t a = ndims - 1; a >= 0; --a) {
    m->coord[a] = r % m->shape[a];
    r /= m->shape[a];
  }
  tessera_mesh mesh = m.release();
  mesh->seq = ++w.created;
  w.meshes.insert(mesh);
  mesh->axisComms.assign(ndims, nullptr);
  for (int32_t a = 0; a < ndims; ++a)
    if (tessera_status st = splitByAxes(mesh, 1u << a, mesh->axes[a], mesh->axisComms[a]); st != TESSERA_SUCCESS) {
      std::string msg = tessera_last_error_message();
      destroyMesh(mesh);
      return fail(st, msg);
    }
  *out = mesh;
  return TESSERA_SUCCESS;
}

tessera_status tessera_mesh_destroy(tessera_mesh mesh) {
  TESSERA_TRY(checkMesh("tessera_mesh_destroy", mesh));
  for (tessera_dtensor t : worldState().dtensors)
    if (t->mesh == mesh)
      return fail(TESSERA_ERROR_INVALID_ARGUMENT, "tessera_mesh_destroy: distributed tensor '", t->name,
                  "' still lives on ", mesh->describe(), "; destroy it first");
  destroyMesh(mesh);
  return TESSERA_SUCCESS;
}

tessera_status tessera_mesh_ndims(tessera_mesh mesh, int32_t* out) {
  TESSERA_TRY(checkMesh("tessera_mesh_ndims", mesh));
  if (!out) return fail(TESSERA_ERROR_INVALID_ARGUMENT, "tessera_mesh_ndims: null output");
  *out = static_cast<int32_t>(mesh->axes.size());
  return TESSERA_SUCCESS;
}

tessera_status tessera_mesh_axis_size(tessera_mesh mesh, const char* axis, int64_t* out) {
  return axisQuery("tessera_mesh_axis_size", mesh, axis, out, [&](int a) { return mesh->shape[a]; });
}

tessera_status tessera_mesh_coord(tessera_mesh mesh, const char* axis, int64_t* out) {
  return axisQuery("tessera_mesh_coord", mesh, axis, out, [&](int a) { return mesh->coord[a]; });
}

tessera_status tessera_mesh_comm(tessera_mesh mesh, const char* axis, tessera_comm* out) {
  return axisQuery("tessera_mesh_comm", mesh, axis, out, [&](int a) { return mesh->axisComms[a]; });
}

tessera_status tessera_mesh_group_comm(tessera_mesh mesh, const char* const* axes, int32_t naxes, tessera_comm* out) {
  const char* fn = "tessera_mesh_group_comm";
  TESSERA_TRY(checkMesh(fn, mesh));
  if (!out || !axes || naxes < 1)
    return fail(TESSERA_ERROR_INVALID_ARGUMENT, fn, ": needs at least one axis and an output");
  uint32_t mask = 0;
  std::string name;
  for (int32_t i = 0; i < naxes; ++i) {
    int a = 0;
    TESSERA_TRY(findAxis(fn, mesh, axes[i], a));
    if (mask & (1u << a)) return fail(TESSERA_ERROR_INVALID_ARGUMENT, fn, ": axis '", axes[i], "' is named twice");
    mask |= 1u << a;
  }
  for (size_t a = 0; a < mesh->axes.size(); ++a)
    if (mask & (1u << a)) name += concat(name.empty() ? "" : "+", mesh->axes[a]);
  if (auto it = mesh->groupComms.find(mask); it != mesh->groupComms.end()) {
    *out = it->second;
    return TESSERA_SUCCESS;
  }
  if (__builtin_popcount(mask) == 1) {
    *out = mesh->axisComms[__builtin_ctz(mask)];
    return TESSERA_SUCCESS;
  }
  tessera_comm c = nullptr;
  TESSERA_TRY(splitByAxes(mesh, mask, name, c));
  mesh->groupComms[mask] = c;
  *out = c;
  return TESSERA_SUCCESS;
}

}  // extern "C"
