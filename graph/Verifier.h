// The graph IR verifier: structure (operand and result counts from the op table, definitions
// before uses, stores only into writable parameters) and types (every node's result types are
// what its shape rule gives for its operands). Reports every problem as err_graph_verify.
#pragma once

#include "basic/Diagnostics.h"
#include "graph/Graph.h"

namespace tessera::graph {

bool verifyGraph(const Graph& g, DiagnosticEngine& diags);
bool verifyModule(const GraphModule& m, DiagnosticEngine& diags);

}  // namespace tessera::graph
