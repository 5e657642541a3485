// The rules of code that runs on the device and that the lowering would otherwise be the first
// to refuse: every kernel and every function a kernel calls (directly or through other functions;
// they are inlined or specialised into kernels). Functions only host code calls are not checked.
#include <algorithm>
#include <set>

#include "sema/ASTWalk.h"
#include "sema/analyses/Analyses.h"

namespace tessera {

namespace {

// The user functions `f` calls (kernels excluded: calling one is an error of its own).
std::vector<const FunctionDefStmt*> callees(const FunctionDefStmt* f, const SemaContext& sc) {
  std::vector<const FunctionDefStmt*> out;
  walkStmts(
      f->body, [](Stmt*) {},
      [&](Expr* e) {
        const FunctionDefStmt* callee = calledFunction(dyn_cast<CallExpr>(e));
        auto info = callee ? sc.functions.find(callee) : sc.functions.end();
        if (info != sc.functions.end() && info->second && !info->second->isKernel()) out.push_back(callee);
      });
  return out;
}

}  // namespace

void checkDeviceCode(SemaContext& sc, DiagnosticEngine& diags) {
  // Kernels in source order, then what they reach, each once (an explicit worklist: call chains
  // may be thousands deep).
  std::vector<const FunctionDefStmt*> work;
  for (auto& [def, info] : sc.functions)
    if (info->isKernel()) work.push_back(def);
  std::sort(work.begin(), work.end(), [](const FunctionDefStmt* a, const FunctionDefStmt* b) {
    return a->range.begin.offset < b->range.begin.offset;
  });
  std::set<const FunctionDefStmt*> seen(work.begin(), work.end());
  for (size_t i = 0; i < work.size() && !diags.stopped(); ++i) {
    const FunctionDefStmt* f = work[i];
    const FunctionInfo& info = *sc.functions.at(f);
    if (!info.bodyHasErrors) {
      checkDefiniteAssignment(f, diags);
      checkEarlyReturns(f, info, diags);
      checkViewExtents(f, info, sc, diags);
      checkTileValueStores(f, diags);
    }
    for (const FunctionDefStmt* c : callees(f, sc))
      if (seen.insert(c).second) work.push_back(c);
  }
}

}  // namespace tessera
