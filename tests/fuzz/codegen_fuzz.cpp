// Fuzzes the back half of the compiler on programs: source -> parse -> sema -> Tile IR (lowering,
// verifier, the default pass pipeline) -> LLVM IR for the CPU and for the GPU, then the LLVM
// optimiser and the NVPTX back end to PTX (no ptxas), with bounds checking. Any input may be
// rejected with a message; a crash, hang or sanitizer report is a bug, and so is an error
// without a message.
#include <cstddef>
#include <cstdint>
#include <string>

#include "FuzzInput.h"
#include "codegen/CompileModule.h"
#include "codegen/target/GpuTarget.h"
#include "frontend/Parser.h"
#include "ir/IR.h"
#include "ir/Pass.h"
#include "irgen/IRGen.h"
#include "sema/Sema.h"

using namespace tessera;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size > 4096) return 0;  // keep inputs small: every accepted one goes through LLVM
  fuzz::FuzzInput in(data, size, "fuzz.tessera");
  SourceManager& sm = in.sm;
  DiagnosticEngine& diags = in.diags;
  ASTContext ctx;
  Module* module = parseBuffer(sm, in.file, ctx, diags);
  if (!module || diags.hasErrors()) return 0;
  SemaContext sema(sm, ctx);
  analyzeModule(*module, sema, diags);
  if (diags.hasErrors()) return 0;
  std::unique_ptr<ir::Module> m = lowerToTileIR(*module, sema, diags);
  if (!m || diags.hasErrors()) return 0;
  ir::PassManager pm;
  if (!pm.parsePipeline("row-partition,inline,canonicalize,cse,licm,dce,uniformity,mma-form,attention-form,attention-"
                        "backward-form,product-steps,pipeline,smem-plan",
                        diags))
    __builtin_trap();
  if (!pm.run(*m, diags)) return 0;
  codegen::CompileOptions opts;
  opts.moduleName = "fuzz";
  opts.sourceName = "fuzz.tessera";
  // With bounds checking, as the execution tests and exec_fuzz run (issue 11's bar); the examples
  // and benchmarks build the unchecked code.
  opts.boundsCheck = true;
  std::string error;
  std::optional<codegen::GpuArch> arch = codegen::parseGpuArch("sm_90a", error);
  if (!arch) __builtin_trap();
  opts.archs = {*arch};
  codegen::CompileOutput out;
  if (!codegen::compileModule(*m, opts, codegen::StopAfter::PTX, out, error) && error.empty()) __builtin_trap();
  in.checkDiagnostics();
  return 0;
}
