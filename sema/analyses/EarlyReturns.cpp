// Returns inside branches and loops of a device function: the lowering keeps the returned value
// in a local of the function's result type until the end (irgen/ControlFlow.cpp), so a function
// with such a return needs a scalar result annotation ('-> f32') for every `return` of a value.
// Refused here, at the first such return, so that `--check` and the editor show it.
#include "sema/ASTWalk.h"
#include "sema/SemaDiagnostics.h"
#include "sema/analyses/Analyses.h"

namespace tessera {

namespace {

// The first `return <value>` in source order, in the blocks the lowering walks.
const ReturnStmt* firstValueReturn(const std::vector<Stmt*>& stmts);
// By statement kind (frontend/ASTVisitor.h): the return itself, or the first in its blocks.
struct ValueReturn : ConstASTVisitor<ValueReturn, const ReturnStmt*> {
  const ReturnStmt* visitReturnStmt(const ReturnStmt* r) { return r->value ? r : nullptr; }
  const ReturnStmt* visitIfStmt(const IfStmt* i) {
    const ReturnStmt* r = firstValueReturn(i->thenBlock.stmts);
    return r ? r : firstValueReturn(i->elseBlock.stmts);
  }
  const ReturnStmt* visitForStmt(const ForStmt* f) { return firstValueReturn(f->body.stmts); }
  const ReturnStmt* visitWhileStmt(const WhileStmt* w) { return firstValueReturn(w->body.stmts); }
};
const ReturnStmt* firstValueReturn(const std::vector<Stmt*>& stmts) {
  for (Stmt* s : stmts)
    if (const ReturnStmt* r = s ? ValueReturn().visit(s) : nullptr) return r;
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
