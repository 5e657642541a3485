// Kernel generation: from the graphs of a module (after the rewrites) to the Tessera source of
// the kernels their nodes run as, and one HostPlan per graph (graph/HostPlan.h) that launches
// them in node order. The source is compiled with the module like user kernels (the driver
// parses, checks and lowers it), so generated kernels get the same checks and both targets.
//
// Each node (a graph.fused chain counts as one) is one kernel or a launch of a stdlib.nn kernel:
// elementwise ops from the expression column of graph/GraphOps.def with NumPy broadcasting,
// products on the tile.mma loop (16-bit) or tiled tile.dot (f32), row ops and attention as
// stdlib.nn's kernels, split_qkv, transpose, reshape, reductions, fill and stores into writable
// parameters (docs/graph.md, "Host entry points"; the forms are in graph/KernelGenForms.cpp and
// graph/KernelForms.cpp). A graph with an op, dtype or rank they do not cover gets no entry point
// and a warning (warn_graph_no_entry) at the op: the module still compiles, and the header has no
// function that could be wrong.
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
