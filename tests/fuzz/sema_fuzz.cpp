// Fuzzes semantic analysis: any byte string goes through the front end and sema (names, types,
// kernel rules, --emit=sema annotations); the result must be diagnostics, never a crash, hang or
// sanitizer report. Imports resolve against an empty include path.
#include <cstddef>
#include <cstdint>
#include <sstream>
#include <string>

#include "frontend/ASTDump.h"
#include "frontend/Diagnostics.h"
#include "frontend/Parser.h"
#include "sema/Sema.h"

using namespace tessera;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  SourceManager sm;
  FileID file = sm.addBuffer("fuzz.tessera", std::string(reinterpret_cast<const char*>(data), size));
  DiagnosticEngine diags(sm);
  StoringDiagnosticConsumer store;
  diags.addConsumer(&store);
  diags.setErrorLimit(0);
  ASTContext ctx;
  Module* module = parseBuffer(sm, file, ctx, diags);
  if (!module) return 0;
  SemaContext sema(sm, ctx);
  analyzeModule(*module, sema, diags);
  // The typed dump walks every annotation sema left behind.
  std::ostringstream os;
  dumpAST(*module, sm, os, [&](const Node& n) { return sema.annotate(n); });
  for (const Diagnostic& d : store.diagnostics) {
    if (d.message.empty()) __builtin_trap();
    if (d.range.valid() && sm.fileOf(d.range.begin) != file) __builtin_trap();
  }
  return 0;
}
