// The tiled kernel forms that graph nodes run as (docs/graph.md, "Kernel forms"): Tessera source
// for one kernel each, written by graph/KernelGen.cpp into the module's generated source.
//  - tiledMatmul: blocks of 64 x 64 outputs per group, k in steps of 32 through tile.dot (tiles
//    clipped at the ends, so any M, K, N), operands read transposed in place;
//  - stdlibRows: softmax, log_softmax, rmsnorm (safe) and layernorm (safe) of f32 rows through
//    the row helpers of stdlib/nn.tessera (one group of 256 tiles per row, the row staged in
//    shared memory), the same code as the stdlib's own kernels;
//  - tiledAttention: attention as the online-softmax loop of examples/flash_attention.tessera
//    (64 query rows per group, key blocks of 64; several heads side by side), with the per-row
//    log-sum-exp that the backward pass reads.
#pragma once

#include <cstdint>
#include <string>

#include "sema/DType.h"

namespace tessera::graph {

// The module the row kernels import (stdlib/nn.tessera), under a name no user code sees.
inline constexpr const char* kStdlibNNImport = "import stdlib.nn as _tessera_nn\n";

std::string tiledMatmul(const std::string& name, DType d, bool transposeA, bool transposeB);

enum class RowsForm : uint8_t { Softmax, LogSoftmax, RMSNorm, LayerNorm };
// Parameters: x [R, C] (f32), then w [C] for the norms, b [C] for layernorm, then y [R, C].
std::string stdlibRows(const std::string& name, RowsForm form, const std::string& eps);

// Parameters: q [S, D], k [T, D], v [T, E], o [S, E], lse [heads, S]; `scale` is Tessera source
// of the dtype (a literal or an expression over D). heads > 1 needs the head dims dq = D / heads
// and dv = E / heads as constants (tile extents must be constants or shape symbols).
std::string tiledAttention(const std::string& name, DType d, const std::string& scale, bool causal, int64_t heads = 1,
                           int64_t dq = 0, int64_t dv = 0);

// split_qkv: x [R, C] (C = 3 E) -> q, k, v [R, E], a copy (views come later).
std::string splitQKV(const std::string& name, DType d);

}  // namespace tessera::graph
