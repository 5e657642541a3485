// libtessera_dist from Python (tessera.dist, tessera.op's collectives, tessera.index_launch):
// the world, meshes, deterministic collectives on framework tensors, distributed tensors whose
// shards the caller's framework sees without a copy, and index launches.
#pragma once

#include <pybind11/pybind11.h>

namespace tessera::py {

void addDistFunctions(pybind11::module_& m);

}  // namespace tessera::py
