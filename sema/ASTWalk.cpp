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

}  // namespace tessera
