//===- MeshTypes.h - Meshes and distributed tensors ---------------------------------*- C++ -*-===//
#ifndef TESSERA_RUNTIME_DIST_MESHTYPES_H
#define TESSERA_RUNTIME_DIST_MESHTYPES_H

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "tessera/dist.h"

// Named axes over the world, ranks row-major (the last axis fastest).
struct tessera_mesh_t {
  std::vector<std::string> axes;
  std::vector<int64_t> shape;
  std::vector<int64_t> coord;                   // this rank's coordinates
  std::vector<tessera_comm> axisComms;          // one per axis, owned
  std::map<uint32_t, tessera_comm> groupComms;  // by the bit set of axes, owned
  tessera_comm world = nullptr;
  uint64_t seq = 0;  // creation order (finalize destroys meshes in reverse, on every rank alike)

  int axisIndex(const char* name) const;  // -1 if absent
  std::string describe() const;           // "mesh (dp=2, tp=2)"
};

struct tessera_dtensor_t {
  tessera_mesh mesh = nullptr;
  std::string name;
  int32_t dtype = 0;
  int32_t rank = 0;
  int64_t global[TESSERA_MAX_RANK] = {};
  int axisOf[TESSERA_MAX_RANK] = {};  // mesh axis partitioning each dimension, -1: replicated
  int64_t local[TESSERA_MAX_RANK] = {};
  int64_t offset[TESSERA_MAX_RANK] = {};
  void* data = nullptr;
  size_t bytes = 0;

  // "partitioned along dimension 1 over 'tp'" / "replicated"
  std::string layout() const;
  tessera_tensor view() const;
};

namespace tessera::dist {
// Validates a mesh handle (INVALID_HANDLE) and an axis name (INVALID_ARGUMENT listing the axes).
tessera_status checkMesh(const char* fn, tessera_mesh mesh);
tessera_status findAxis(const char* fn, tessera_mesh mesh, const char* axis, int& index);
tessera_status checkDTensor(const char* fn, tessera_dtensor t);
}  // namespace tessera::dist

#endif
