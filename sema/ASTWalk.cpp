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
    forEachSubexpression(e, [&, d = d](Expr* c) { stack.push_back({c, d + 1}); });
  }
  return false;
}

void walkNode(Node* n, const std::function<void(Stmt*)>& onStmt, const std::function<void(Expr*)>& onExpr) {
  if (auto* e = dyn_cast<Expr>(n)) {
    onExpr(e);
    forEachChild(n, [&](Node* c) { walkNode(c, onStmt, onExpr); });
    return;
  }
  auto* s = cast<Stmt>(n);
  onStmt(s);
  if (isa<FunctionDefStmt>(s)) return;
  if (auto* a = dyn_cast<AnnAssignStmt>(s)) {
    for (Expr* value : {a->target, a->value})
      if (value) walkNode(value, onStmt, onExpr);
    return;
  }
  forEachChild(n, [&](Node* c) { walkNode(c, onStmt, onExpr); });
}
}  // namespace

bool stmtTooDeep(Stmt* s) {
  bool deep = false;
  forEachChild(static_cast<Node*>(s), [&](Node* c) {
    if (auto* e = dyn_cast<Expr>(c)) deep = deep || tooDeep(e);
  });
  return deep;
}

void walkStmts(const Block& b, const std::function<void(Stmt*)>& onStmt, const std::function<void(Expr*)>& onExpr) {
  for (Stmt* s : b.stmts)
    if (s) walkNode(s, onStmt, onExpr);
}

}  // namespace tessera
