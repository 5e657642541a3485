// Kernel generation: from the graphs of a module (after the rewrites) to the Tessera source of
// the kernels their nodes run as, and one HostPlan per graph (graph/HostPlan.h) that launches
// them in node order. The source is compiled with the module like user kernels (the driver
// parses, checks and lowers it), so generated kernels get the same checks and both targets.
//
// Each node is one kernel (fusion of elementwise chains comes later): elementwise ops from the
// expression column of graph/GraphOps.def with NumPy broadcasting, matmul, softmax,
// log_softmax, rmsnorm, flash_attention (heads = 1), transpose, fill, and stores into writable
// parameters. The kernels are the one-tile-per-output-element reference forms (docs/graph.md,
// "Host entry points"): exact in their summation order, not yet fast. A graph with an op,
// dtype or rank they do not cover gets no entry point and a warning (warn_graph_no_entry) at
// the op: the module still compiles, and the header has no function that could be wrong.
#pragma once

#include <string>
#include <vector>

#include "basic/Diagnostics.h"
#include "graph/Graph.h"
#include "graph/HostPlan.h"

namespace tessera::graph {

struct GeneratedHostCode {
  std::string source;           // Tessera source of every generated kernel
  std::vector<HostPlan> plans;  // one per graph that got an entry point
};

void generateHostCode(const GraphModule& m, GeneratedHostCode& out, DiagnosticEngine& diags);

}  // namespace tessera::graph
