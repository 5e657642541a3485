// Returns inside branches and loops of a device function: the lowering keeps the returned value
// in a local of the function's result type until the end (irgen/ControlFlow.cpp), so a function
// with such a return needs a scalar result annotation ('-> f32') for every `return` of a value.
// Refused here, at the first such return, so that `--check` and the editor show it.
#include "sema/ASTWalk.h"
#include "sema/Checker.h"
#include "sema/SemaDiagnostics.h"

namespace tessera {

namespace {

// The first `return <value>` in source order, in the blocks the lowering walks.
const ReturnStmt* firstValueReturn(const std::vector<Stmt*>& stmts) {
  for (Stmt* s : stmts) {
    const ReturnStmt* r = nullptr;
    if (auto* ret = dyn_cast<ReturnStmt>(s)) {
      if (ret->value) return ret;
      continue;
    }
    if (auto* i = dyn_cast<IfStmt>(s)) {
      r = firstValueReturn(i->thenBlock.stmts);
      if (!r) r = firstValueReturn(i->elseBlock.stmts);
    } else if (auto* f = dyn_cast<ForStmt>(s)) {
      r = firstValueReturn(f->body.stmts);
    } else if (auto* w = dyn_cast<WhileStmt>(s)) {
      r = firstValueReturn(w->body.stmts);
    }
    if (r) return r;
  }
  return nullptr;
}

}  // namespace

void checkEarlyReturns(const FunctionDefStmt* fn, const FunctionInfo& info, DiagnosticEngine& diags) {
  if (info.isKernel()) return;  // a kernel returns no value (reported where it does)
  const Type* rt = info.type ? info.type->result : nullptr;
  if (rt && rt->kind == TypeKind::Scalar) return;
  bool nested = false;
  for (Stmt* s : fn->body.stmts)
    if (!isa<ReturnStmt>(s) && containsReturn({s})) nested = true;
  if (!nested) return;
  if (const ReturnStmt* r = firstValueReturn(fn->body.stmts))
    diags.report(diag::err_early_return, r->range)
        << "of a value from inside a branch of a function without a scalar result annotation ('-> f32')";
}

}  // namespace tessera
