// Fuzzes the front end (scanner, indentation layer, parser) and, where it is built, semantic
// analysis: any byte string must give diagnostics, never a crash, hang or sanitizer report.
#include <cstddef>
#include <cstdint>
#include <string>

#include "FuzzInput.h"
#include "frontend/Lexer.h"
#include "frontend/Parser.h"

using namespace tessera;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  fuzz::FuzzInput in(data, size, "fuzz.tessera");
  SourceManager& sm = in.sm;
  DiagnosticEngine& diags = in.diags;
  // Keep-comments mode is the language server's; exercise both.
  LexOptions opts;
  opts.keepComments = size % 2;
  std::vector<Token> tokens = lexBuffer(sm, in.file, diags, opts);
  (void)tokens;
  ASTContext ctx;
  Module* module = parseBuffer(sm, in.file, ctx, diags);
  (void)module;
  in.checkDiagnostics();
  return 0;
}
