// Remarks in the editor (tessera-lsp --remarks, or initializationOptions {"remarks": true}): a
// document without errors is lowered as tesserac would lower it for sm_90a, up to the GPU's LLVM
// IR (no PTX, no ptxas), and the remarks of the pipeline and of code generation are added to its
// diagnostics, which the client shows as hints. Anything else those stages report stays out:
// the editor's diagnostics are the front end's and sema's. It lives in the driver, not in lsp/,
// which stays above sema only: the server calls it through ServerOptions::remarkProvider.
#include "basic/Remarks.h"

#include "codegen/CompileModule.h"
#include "codegen/lower/KernelRemarks.h"
#include "codegen/target/GpuTarget.h"
#include "ir/Pass.h"
#include "ir/Verifier.h"
#include "irgen/IRGen.h"
#include "lsp/Analysis.h"
#include "tools/tessera-lsp/Remarks.h"

namespace tessera::lsp {

void addCodegenRemarks(Analysis& a) {
  if (!a.module || !a.sema) return;
  for (const Diagnostic& d : a.diagnostics)
    if (d.severity == Severity::Error || d.severity == Severity::Fatal) return;
  DiagnosticEngine diags(a.sm);
  StoringDiagnosticConsumer store;
  diags.addConsumer(&store);
  diags.setErrorLimit(0);
  auto all = std::make_shared<RemarkFilter>();
  std::string error;
  for (RemarkKind k : {RemarkKind::Passed, RemarkKind::Missed, RemarkKind::Analysis}) all->set(k, ".*", error);
  diags.setRemarkFilter(all);

  std::unique_ptr<ir::Module> m = lowerToTileIR(*a.module, *a.sema, diags);
  if (!m || diags.hasErrors() || !ir::verifyModule(*m, diags)) return;
  ir::PassManager pm;
  if (!pm.parsePipeline(ir::kDefaultPipeline, diags) || !pm.run(*m, diags)) return;
  codegen::CompileOptions co;
  co.moduleName = "editor";
  co.cpu = false;
  if (!codegen::parseGpuArchList("sm_90a", co.archs, error)) return;
  codegen::CompileOutput out;
  if (!codegen::compileModule(*m, co, codegen::StopAfter::LLVM, out, error)) return;
  codegen::emitKernelRemarks(*m, out.kernels, "on the GPU", diags);
  for (Diagnostic& d : store.diagnostics)
    if (d.severity == Severity::Remark) a.diagnostics.push_back(std::move(d));
}

}  // namespace tessera::lsp
