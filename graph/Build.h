// Building graphs from host functions: the typed AST of every @jit, @graph.module and
// @autodiff function becomes a graph::Graph, and an @autodiff function adds its backward
// function `<name>_backward` (graph/Autodiff.h; tessera.grad is refused until it lands). Host
// code runs at compile time as far as it can: names bind values,
// user host functions inline, loops over constants unroll, conditions on constants choose a
// branch; what remains are operators on whole tensors, launches of user kernels and stores
// into writable parameters, in program order. Errors are reported with err_graph_* at the
// source range that caused them; the function is then skipped.
#pragma once

#include <memory>

#include "basic/Diagnostics.h"
#include "frontend/AST.h"
#include "graph/Graph.h"

namespace tessera {
class SemaContext;
}

namespace tessera::graph {

struct BuildOptions {
  // Rank given to tensor parameters that have no annotation (docs/language.md, "Host functions").
  unsigned defaultRank = 2;
};

// Null when an error was reported. The graphs are verified.
std::unique_ptr<GraphModule> buildGraphs(const Module& ast, const SemaContext& sema, DiagnosticEngine& diags,
                                         const BuildOptions& opts = {});

}  // namespace tessera::graph
