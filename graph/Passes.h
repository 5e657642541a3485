// The graph pipeline (graph/GraphPasses.def).
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "basic/Diagnostics.h"
#include "graph/Graph.h"

namespace tessera::graph {

#define GRAPH_PASS(FN, NAME, DOC) bool run##FN(Graph& g, DiagnosticEngine& diags);
#include "graph/GraphPasses.def"

// Applies `rewrite` to nodes in order until it applies to none: after each rewrite the walk starts
// again, since a rewrite may erase nodes the iteration holds. The pattern passes' driver.
void rewriteUntilFixed(Graph& g, const std::function<bool(Graph&, Node*)>& rewrite);

// The default pipeline, every pass of the table in order.
std::vector<std::string> defaultPipeline();
// Runs the passes named (comma-separated; "default" is the default pipeline) minus `disabled`,
// on every graph, verifying after each. An unknown name is an error (err_graph_attr).
bool runPipeline(GraphModule& m, const std::string& pipeline, const std::vector<std::string>& disabled,
                 DiagnosticEngine& diags, std::string& error);

}  // namespace tessera::graph
