// Fuzzes semantic analysis: any byte string goes through the front end and sema (names, types,
// kernel rules, --emit=sema annotations) and, for a module sema accepts, the building and rewriting
// of host functions' graphs; the result must be diagnostics, never a crash, hang or sanitizer
// report. Imports resolve against an empty include path.
#include <cstddef>
#include <cstdint>
#include <sstream>
#include <string>

#include "FuzzInput.h"
#include "frontend/ASTDump.h"
#include "frontend/Parser.h"
#include "graph/Build.h"
#include "graph/Passes.h"
#include "graph/Printer.h"
#include "sema/Sema.h"

using namespace tessera;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  fuzz::FuzzInput in(data, size, "fuzz.tessera");
  SourceManager& sm = in.sm;
  DiagnosticEngine& diags = in.diags;
  ASTContext ctx;
  Module* module = parseBuffer(sm, in.file, ctx, diags);
  if (!module) return 0;
  SemaContext sema(sm, ctx);
  analyzeModule(*module, sema, diags);
  // The typed dump walks every annotation sema left behind.
  std::ostringstream os;
  dumpAST(*module, sm, os, [&](const Node& n) { return sema.annotate(n); });
  // Host functions become graphs (as tesserac --check and --emit=graph do); the rewrites must
  // keep them valid.
  if (!diags.hasErrors())
    if (std::unique_ptr<graph::GraphModule> graphs = graph::buildGraphs(*module, sema, diags)) {
      std::string error;
      if (!graph::runPipeline(*graphs, "default", {}, diags, error)) __builtin_trap();
      os << graph::printModule(*graphs);
    }
  in.checkDiagnostics();
  return 0;
}
