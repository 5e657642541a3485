// The host functions of a module in the driver: the graph pipeline, kernel generation
// (graph/KernelGen.h), compiling the generated kernels with the module's Tile IR, and the entry
// points code generation writes (codegen/HostEntry.h).
#pragma once

#include <vector>

#include "basic/Diagnostics.h"
#include "codegen/HostEntry.h"
#include "frontend/AST.h"
#include "graph/Graph.h"
#include "tools/tesserac/Options.h"

namespace tessera::ir {
class Module;
}

namespace tessera {

// Adds the kernels of the host functions of `graphs` to `lowered` and fills `entries`. False
// after an error (a warning leaves a function without an entry point and returns true).
bool compileHostFunctions(graph::GraphModule& graphs, const DriverOptions& opts, SourceManager& sm, ASTContext& ctx,
                          ir::Module& lowered, DiagnosticEngine& diags, std::vector<codegen::HostEntry>& entries);

}  // namespace tessera
