// libFuzzer target for the graph IR's textual form: parse an arbitrary buffer as .tgraph; when it
// parses, verify it; when it verifies, print it, parse the print again and require the same text
// (the round-trip property), then run the default rewrites, which must leave a valid graph that
// prints and reads back the same way; and the kernels that kernel generation writes for the
// rewritten graphs must pass the front end and sema without an error. Any crash, sanitizer
// report or broken property is a bug.
#include <cstdint>
#include <cstdlib>
#include <string>

#include "FuzzInput.h"
#include "frontend/Lexer.h"
#include "frontend/Parser.h"
#include "graph/KernelGen.h"
#include "graph/Passes.h"
#include "graph/Printer.h"
#include "graph/Verifier.h"
#include "sema/Sema.h"

using namespace tessera;

namespace {

// Parses `text` in a fresh engine and requires it to verify and to print as `text`.
void requireFixedPoint(const std::string& text) {
  SourceManager sm;
  DiagnosticEngine diags(sm);
  StoringDiagnosticConsumer sink;
  diags.addConsumer(&sink);
  FileID file = sm.addBuffer("print.tgraph", text);
  std::unique_ptr<graph::GraphModule> m = graph::parseModule(sm, file, diags);
  if (!m || !graph::verifyModule(*m, diags) || graph::printModule(*m) != text) std::abort();
}

// The generated kernels of `m` lex, parse and type-check with no error.
void requireKernelsCheck(const graph::GraphModule& m) {
  SourceManager sm;
  DiagnosticEngine diags(sm);
  StoringDiagnosticConsumer sink;
  diags.addConsumer(&sink);
  graph::GeneratedHostCode code;
  graph::generateHostCode(m, code, diags);  // warnings only
  if (diags.hasErrors()) std::abort();
  if (code.source.empty()) return;
  FileID file = sm.addBuffer("kernels.tessera", code.source);
  std::vector<Token> tokens = lexBuffer(sm, file, diags);
  ASTContext ctx;
  Module* ast = parseTokens(tokens, sm, file, ctx, diags);
  SemaContext sema(sm, ctx);
  sema.stdlibDir = TESSERA_SOURCE_DIR;  // the generated row kernels import stdlib.nn
  if (diags.hasErrors() || !analyzeModule(*ast, sema, diags)) std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size > 64 * 1024) return 0;
  fuzz::FuzzInput in(data, size, "fuzz.tgraph");
  std::unique_ptr<graph::GraphModule> m = graph::parseModule(in.sm, in.file, in.diags);
  if (!m) {
    if (!in.diags.hasErrors()) std::abort();  // a failed parse always says why
    in.checkDiagnostics();
    return 0;
  }
  if (!graph::verifyModule(*m, in.diags)) {
    in.checkDiagnostics();
    return 0;
  }
  requireFixedPoint(graph::printModule(*m));
  std::string error;
  if (!graph::runPipeline(*m, "default", {}, in.diags, error)) std::abort();  // rewrites keep graphs valid
  requireFixedPoint(graph::printModule(*m));
  requireKernelsCheck(*m);
  in.checkDiagnostics();
  return 0;
}
