#include "sema/ASTWalk.h"

#include <utility>
#include <vector>

namespace tessera {

namespace {
bool tooDeep(Expr* root) {
  std::vector<std::pair<Expr*, unsigned>> stack;
  if (root) stack.push_back({root, 1});
  while (!stack.empty()) {
    auto [e, d] = stack.back();
    stack.pop_back();
    if (d > kMaxExprDepth) return true;
    forEachChild(e, [&, d = d](Expr* c) {
      if (c) stack.push_back({c, d + 1});
    });
  }
  return false;
}
void walkExpr(Expr* e, const std::function<void(Expr*)>& fe) {
  if (!e) return;
  fe(e);
  forEachChild(e, [&](Expr* c) { walkExpr(c, fe); });
}
}  // namespace

bool stmtTooDeep(Stmt* s) {
  if (!s) return false;
  switch (s->kind) {
    case NodeKind::ExprStmt: return tooDeep(cast<ExprStmt>(s)->expr);
    case NodeKind::AssignStmt: {
      auto* a = cast<AssignStmt>(s);
      for (Expr* t : a->targets)
        if (tooDeep(t)) return true;
      return tooDeep(a->value);
    }
    case NodeKind::AugAssignStmt: return tooDeep(cast<AugAssignStmt>(s)->target) || tooDeep(cast<AugAssignStmt>(s)->value);
    case NodeKind::AnnAssignStmt: {
      auto* a = cast<AnnAssignStmt>(s);
      return tooDeep(a->target) || tooDeep(a->annotation) || tooDeep(a->value);
    }
    case NodeKind::ReturnStmt: return tooDeep(cast<ReturnStmt>(s)->value);
    case NodeKind::IfStmt: return tooDeep(cast<IfStmt>(s)->cond);
    case NodeKind::WhileStmt: return tooDeep(cast<WhileStmt>(s)->cond);
    case NodeKind::ForStmt: return tooDeep(cast<ForStmt>(s)->target) || tooDeep(cast<ForStmt>(s)->iter);
    case NodeKind::WithStmt:
      for (WithItem& i : cast<WithStmt>(s)->items)
        if (tooDeep(i.context) || tooDeep(i.target)) return true;
      return false;
    case NodeKind::FunctionDefStmt: {
      auto* f = cast<FunctionDefStmt>(s);
      for (Decorator& d : f->decorators) {
        if (tooDeep(d.expr)) return true;
        for (Expr* c : d.clauses)
          if (tooDeep(c)) return true;
      }
      for (Param& p : f->params)
        if (tooDeep(p.annotation) || tooDeep(p.defaultValue)) return true;
      return tooDeep(f->returns);
    }
    default: return false;
  }
}

void walkStmts(const Block& b, const std::function<void(Stmt*)>& onStmt, const std::function<void(Expr*)>& fe) {
  for (Stmt* s : b.stmts) {
    if (!s) continue;
    onStmt(s);
    if (auto* x = dyn_cast<ExprStmt>(s)) {
      walkExpr(x->expr, fe);
    } else if (auto* a = dyn_cast<AssignStmt>(s)) {
      for (Expr* t : a->targets) walkExpr(t, fe);
      walkExpr(a->value, fe);
    } else if (auto* au = dyn_cast<AugAssignStmt>(s)) {
      walkExpr(au->target, fe);
      walkExpr(au->value, fe);
    } else if (auto* an = dyn_cast<AnnAssignStmt>(s)) {
      walkExpr(an->target, fe);
      walkExpr(an->value, fe);
    } else if (auto* r = dyn_cast<ReturnStmt>(s)) {
      walkExpr(r->value, fe);
    } else if (auto* i = dyn_cast<IfStmt>(s)) {
      walkExpr(i->cond, fe);
      walkStmts(i->thenBlock, onStmt, fe);
      walkStmts(i->elseBlock, onStmt, fe);
    } else if (auto* w = dyn_cast<WhileStmt>(s)) {
      walkExpr(w->cond, fe);
      walkStmts(w->body, onStmt, fe);
      walkStmts(w->elseBlock, onStmt, fe);
    } else if (auto* f = dyn_cast<ForStmt>(s)) {
      walkExpr(f->target, fe);
      walkExpr(f->iter, fe);
      walkStmts(f->body, onStmt, fe);
      walkStmts(f->elseBlock, onStmt, fe);
    } else if (auto* wi = dyn_cast<WithStmt>(s)) {
      for (WithItem& it : wi->items) {
        walkExpr(it.context, fe);
        walkExpr(it.target, fe);
      }
      walkStmts(wi->body, onStmt, fe);
    }
  }
}

}  // namespace tessera
