#include "codegen/lower/KernelRemarks.h"

#include "basic/Remarks.h"

namespace tessera::codegen {

void emitKernelRemarks(ir::Module& m, const std::vector<KernelInterface>& kernels, const char* where,
                       DiagnosticEngine& diags) {
  auto at = [](SourceLoc loc) { return SourceRange(loc, SourceLoc{loc.offset + 1}); };
  for (const KernelInterface& k : kernels) {
    if (!k.autotuneOf.empty()) continue;  // candidates: their kernel's remarks stand for them
    for (const KernelRemark& r : k.remarks) {
      DiagBuilder b = diags.report(r.id, at(r.loc));
      for (const std::string& a : r.args) b << a;
    }
    // -Rpass-missed=tile-registers: a remark at the kernel, a note at each value.
    if (k.workspaceValues.empty() || !diags.remarkEnabled(diag::remark_tile_workspace)) continue;
    ir::Operation* func = m.lookupFunc(k.name);
    DiagBuilder r = diags.report(diag::remark_tile_workspace, func ? func->loc : SourceLoc{});
    r << k.name << k.workspaceValues.size() << where;
    for (const WorkspaceValue& v : k.workspaceValues) r.note(diag::note_drv_workspace_value, at(v.loc), {v.op, v.type});
  }
}

}  // namespace tessera::codegen
