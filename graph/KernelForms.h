// The kernel forms that graph nodes run as (docs/graph.md, "Kernel forms"), as Tessera source
// for one kernel each, written by graph/KernelGenForms.cpp into the module's generated source.
// (Row ops and attention launch stdlib.nn's own kernels and need no source here.)
//  - mmaMatmul: bf16/f16 products as one tile.mma loop, the loop the sm_90a GEMM form
//    recognises (wgmma + TMA on an H100/H200; mma.sync or the CPU executor elsewhere);
//  - tiledMatmul: blocks of 64 x 64 outputs per group, k in steps of 32 through tile.dot with
//    f32 accumulators (tiles clipped at the ends, so any M, K, N), operands read transposed in
//    place;
//  - splitQKV: the copy of split_qkv's thirds (when they are not views).
#pragma once

#include <cstdint>
#include <string>

#include "sema/DType.h"

namespace tessera::graph {

// The module the stdlib kernels come from (stdlib/nn.tessera), under a name no user code sees.
inline constexpr const char* kStdlibNNImport = "import stdlib.nn as _tessera_nn\n";

// Parameters: a [M, K], b [K, N] (tb: [N, K]), y [M, N], one 16-bit dtype.
std::string mmaMatmul(const std::string& name, DType d, bool transposeB);

std::string tiledMatmul(const std::string& name, DType d, bool transposeA, bool transposeB);

// split_qkv: x [R, C] (C = 3 E) -> q, k, v [R, E].
std::string splitQKV(const std::string& name, DType d);

}  // namespace tessera::graph
