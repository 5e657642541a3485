#include "sema/ASTWalk.h"

#include <utility>
#include <vector>

#include "sema/Symbol.h"
#include "sema/Type.h"

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

namespace {
// A `return` through if and the bodies of loops, by statement kind (frontend/ASTVisitor.h).
struct ReturnIn : ASTVisitor<ReturnIn, bool> {
  bool visitReturnStmt(ReturnStmt*) { return true; }
  bool visitIfStmt(IfStmt* i) { return containsReturn(i->thenBlock.stmts) || containsReturn(i->elseBlock.stmts); }
  bool visitForStmt(ForStmt* f) { return containsReturn(f->body.stmts); }
  bool visitWhileStmt(WhileStmt* w) { return containsReturn(w->body.stmts); }
};
}  // namespace

bool containsReturn(const std::vector<Stmt*>& stmts) {
  for (Stmt* s : stmts)
    if (s && ReturnIn().visit(s)) return true;
  return false;
}

const FunctionDefStmt* calledFunction(const CallExpr* c) {
  if (!c || !c->callee) return nullptr;
  if (const Type* t = c->callee->type; t && t->kind == TypeKind::Function && t->function) return t->function;
  if (auto* n = dyn_cast<NameExpr>(c->callee); n && n->symbol && n->symbol->kind == SymbolKind::Function)
    return n->symbol->function;
  return nullptr;
}

}  // namespace tessera
