// Fuzzes the front end (scanner, indentation layer, parser) and, where it is built, semantic
// analysis: any byte string must give diagnostics, never a crash, hang or sanitizer report.
#include <cstddef>
#include <cstdint>
#include <string>

#include "frontend/Diagnostics.h"
#include "frontend/Lexer.h"
#include "frontend/Parser.h"

using namespace tessera;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  SourceManager sm;
  FileID file = sm.addBuffer("fuzz.tessera", std::string(reinterpret_cast<const char*>(data), size));
  DiagnosticEngine diags(sm);
  StoringDiagnosticConsumer store;
  diags.addConsumer(&store);
  diags.setErrorLimit(0);
  // Keep-comments mode is the language server's; exercise both.
  LexOptions opts;
  opts.keepComments = size % 2;
  std::vector<Token> tokens = lexBuffer(sm, file, diags, opts);
  (void)tokens;
  ASTContext ctx;
  Module* module = parseBuffer(sm, file, ctx, diags);
  (void)module;
  for (const Diagnostic& d : store.diagnostics) {
    // Every diagnostic must point inside the buffer (or nowhere).
    if (d.range.valid() && sm.fileOf(d.range.begin) != file) __builtin_trap();
  }
  return 0;
}
