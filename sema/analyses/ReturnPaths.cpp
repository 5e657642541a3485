// Return paths of a function declared to return a value (`def f(x) -> f32:`): if control can
// reach the end of the body without a `return`, that is an error, as in clang and rustc (the
// compiled code would otherwise return whatever the register held). The note says through which
// statement control falls off: an `if` without `else` whose condition is false, a loop that ends,
// or the last statement.
//
// A statement "completes" when control can go on after it: `return` does not; an `if` completes
// when a branch does (a missing `else` does); a loop completes when it can end (its condition
// becomes false or it runs out of elements, or a `break` leaves it); `while True:` completes only
// through a `break`. A statement the parser could not read counts as not completing, so that a
// syntax error is not reported twice.
#include <optional>

#include "frontend/ASTVisitor.h"
#include "sema/SemaDiagnostics.h"
#include "sema/analyses/Analyses.h"

namespace tessera {

namespace {

struct FallOff {
  SourceRange at;
  DiagID note;
};

// Dispatches on the statement's kind through the generated visitor (frontend/ASTVisitor.h).
class ReturnPaths : public ASTVisitor<ReturnPaths, bool, std::optional<FallOff>&> {
 public:
  // True when control can leave `b` at its end; `why` says where.
  bool completes(const Block& b, std::optional<FallOff>& why) {
    if (b.stmts.empty()) return true;
    for (Stmt* s : b.stmts)
      if (s && !visit(s, why)) return false;
    return true;
  }

  bool visitReturnStmt(ReturnStmt*, std::optional<FallOff>&) { return false; }
  bool visitErrorStmt(ErrorStmt*, std::optional<FallOff>&) { return false; }
  bool visitIfStmt(IfStmt* i, std::optional<FallOff>& why) {
    std::optional<FallOff> thenWhy, elseWhy;
    bool t = completes(i->thenBlock, thenWhy);
    if (i->elseBlock.stmts.empty()) {
      why = t ? thenWhy : FallOff{i->cond ? i->cond->range : i->range, diag::note_falls_off_if};
      return true;
    }
    bool e = completes(i->elseBlock, elseWhy);
    why = t ? thenWhy : elseWhy;
    return t || e;
  }
  bool visitWhileStmt(WhileStmt* w, std::optional<FallOff>& why) {
    auto c = evalConst(w->cond, nullptr);
    bool forever = c && c->isNumber() && c->asDouble() != 0;
    return loopCompletes(w->body, w->elseBlock, forever, w->cond ? w->cond->range : w->range, why);
  }
  bool visitForStmt(ForStmt* f, std::optional<FallOff>& why) {
    return loopCompletes(f->body, f->elseBlock, false, f->iter ? f->iter->range : f->range, why);
  }
  bool visitWithStmt(WithStmt* w, std::optional<FallOff>& why) { return completes(w->body, why); }
  bool visitNode(Node* s, std::optional<FallOff>& why) {
    why = FallOff{s->range, diag::note_falls_off_end};
    return true;
  }

 private:
  bool loopCompletes(const Block& body, const Block& elseBlock, bool forever, SourceRange header,
                     std::optional<FallOff>& why) {
    if (hasBreak(body)) {
      why = FallOff{header, diag::note_falls_off_loop};
      return true;
    }
    if (forever) return false;
    // The `else` block runs when the loop ends without `break`.
    if (elseBlock.stmts.empty()) {
      why = FallOff{header, diag::note_falls_off_loop};
      return true;
    }
    return completes(elseBlock, why);
  }

  // A `break` of this loop: not one inside a nested loop.
  static bool hasBreak(const Block& b) {
    for (Stmt* s : b.stmts)
      if (s && BreakIn().visit(s)) return true;
    return false;
  }
  // By statement kind (frontend/ASTVisitor.h); a nested loop's body has breaks of its own, its
  // `else` belongs to the outer loop's body.
  struct BreakIn : ASTVisitor<BreakIn, bool> {
    bool visitBreakStmt(BreakStmt*) { return true; }
    bool visitIfStmt(IfStmt* i) { return hasBreak(i->thenBlock) || hasBreak(i->elseBlock); }
    bool visitWithStmt(WithStmt* w) { return hasBreak(w->body); }
    bool visitWhileStmt(WhileStmt* w) { return hasBreak(w->elseBlock); }
    bool visitForStmt(ForStmt* f) { return hasBreak(f->elseBlock); }
  };
};

// `...` or a docstring alone: a declaration, not a definition.
bool isDeclarationOnly(const FunctionDefStmt* f) {
  for (Stmt* s : f->body.stmts) {
    auto* es = dyn_cast<ExprStmt>(s);
    if (!es || !(isa<EllipsisExpr>(es->expr) || isa<StringLiteralExpr>(es->expr))) return false;
  }
  return true;
}

}  // namespace

void checkReturnPaths(FunctionDefStmt* f, const FunctionInfo& info, DiagnosticEngine& diags) {
  const Type* fnType = info.type;
  const Type* result = fnType ? fnType->result : nullptr;
  if (!f->returns || !result || result->kind == TypeKind::None || result->isLenient()) return;
  if (isDeclarationOnly(f)) return;
  std::optional<FallOff> why;
  if (!ReturnPaths().completes(f->body, why)) return;
  auto d = diags.report(diag::err_missing_return, f->returns->range);
  d << f->name << result->str();
  if (why) d.note(why->note, why->at, {f->name});
}

}  // namespace tessera
