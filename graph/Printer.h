// The textual form of the graph IR: printer and parser (docs/graph.md has the grammar).
// print(parse(print(m))) == print(m).
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "basic/Diagnostics.h"
#include "graph/Graph.h"

namespace tessera::graph {

std::string printGraph(const Graph& g);
std::string printModule(const GraphModule& m);
std::string printAttrs(const Attrs& attrs);
// The shortest spelling that reads back to the same double, always with '.', 'e', inf or nan.
std::string formatFloat(double v);

// Parses a .tgraph buffer, or its bytes [begin, end). Errors go to `diags` (err_graph_parse) at
// their exact location; returns null after the first error. The result is not verified.
std::unique_ptr<GraphModule> parseModule(const SourceManager& sm, FileID file, DiagnosticEngine& diags,
                                         size_t begin = 0, size_t end = SIZE_MAX);

// A dim from its canonical spelling ("3*E", "ceil_div(N,256)").
Dim parseDimSpelling(const std::string& text, bool& ok);

}  // namespace tessera::graph
