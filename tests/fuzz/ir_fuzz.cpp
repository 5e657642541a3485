// libFuzzer target for the Tile IR parser and verifier: parse an arbitrary buffer as .tir;
// when it parses, verify it; when it verifies, print it, parse the print again and require the
// same text (the round-trip property), and run the passes with verification after each.
// Any crash, sanitizer report or broken round trip is a bug.
#include <cstdint>
#include <cstdlib>
#include <string>

#include "basic/Diagnostics.h"
#include "ir/AsmFormat.h"
#include "ir/IRDiagnostics.h"
#include "ir/Pass.h"
#include "ir/Verifier.h"

using namespace tessera;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size > 64 * 1024) return 0;
  SourceManager sm;
  DiagnosticEngine diags(sm);
  StoringDiagnosticConsumer sink;
  diags.addConsumer(&sink);
  diags.setErrorLimit(0);
  FileID file = sm.addBuffer("fuzz.tir", std::string(reinterpret_cast<const char*>(data), size));
  std::unique_ptr<ir::Module> m = ir::parseModule(sm, file, diags);
  if (!m) {
    if (!diags.hasErrors()) std::abort();  // a failed parse always says why
    return 0;
  }
  if (!ir::verifyModule(*m, diags)) return 0;
  std::string once = ir::printModule(*m);
  {
    SourceManager sm2;
    DiagnosticEngine d2(sm2);
    StoringDiagnosticConsumer s2;
    d2.addConsumer(&s2);
    FileID f2 = sm2.addBuffer("print.tir", once);
    std::unique_ptr<ir::Module> m2 = ir::parseModule(sm2, f2, d2);
    if (!m2 || !ir::verifyModule(*m2, d2) || ir::printModule(*m2) != once) std::abort();
  }
  ir::PassManagerOptions opts;
  opts.verifyEach = true;
  ir::PassManager pm(opts);
  pm.parsePipeline(
      "row-partition,canonicalize,cse,licm,dce,inline,uniformity,mma-form,attention-form,attention-backward-form,chain-"
      "form,pipeline,smem-plan",
      diags);
  unsigned before = diags.errorCount();
  // Passes may reject valid input (recursion, budgets), but must never leave invalid IR.
  if (!pm.run(*m, diags)) {
    for (auto& d : sink.diagnostics)
      if (d.id == diag::err_ir_verify_after_pass) std::abort();
  }
  (void)before;
  return 0;
}
