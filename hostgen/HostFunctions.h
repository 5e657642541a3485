// The host functions of a module, from their graphs to what code generation needs: the graph
// pipeline, kernel generation (graph/KernelGen.h), compiling the generated kernels with the
// module's Tile IR, and the entry points code generation writes (codegen/host/HostEntry.h).
#pragma once

#include <string>
#include <vector>

#include "basic/Diagnostics.h"
#include "codegen/host/HostEntry.h"
#include "frontend/AST.h"
#include "graph/Graph.h"

namespace tessera::ir {
class Module;
}

namespace tessera {

// What the driver's command line says about host functions.
struct HostFunctionOptions {
  std::string graphPasses = "default";           // --graph-passes=: the graph pipeline ("" for none)
  std::vector<std::string> disabledGraphPasses;  // --disable-graph-pass=NAME
  std::vector<std::string> includePaths;         // -I: where generated kernels' imports are found
  std::string stdlibDir;                         // --stdlib-dir=DIR
  bool stdlibDirGiven = false;                   // else sema's default
};

// Adds the kernels of the host functions of `graphs` to `lowered` and fills `entries`. False
// after an error (a warning leaves a function without an entry point and returns true).
bool compileHostFunctions(graph::GraphModule& graphs, const HostFunctionOptions& opts, SourceManager& sm,
                          ASTContext& ctx, ir::Module& lowered, DiagnosticEngine& diags,
                          std::vector<codegen::HostEntry>& entries);

}  // namespace tessera
