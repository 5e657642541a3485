#include "lsp/ASTWalk.h"

namespace tessera::lsp {

namespace {
void block(const Block& b, const std::function<void(const Node*)>& fn) {
  for (const Stmt* s : b.stmts)
    if (s) fn(s);
}
void args(const std::vector<Argument>& as, const std::function<void(const Node*)>& fn) {
  for (const Argument& a : as)
    if (a.value) fn(a.value);
}
}  // namespace

void forEachChild(const Node* n, const std::function<void(const Node*)>& fn) {
  if (!n) return;
  auto visit = [&](const Node* c) {
    if (c) fn(c);
  };
  switch (n->kind) {
    case NodeKind::FStringExpr:
      for (const FStringPart& p : cast<FStringExpr>(n)->parts) visit(p.expr);
      break;
    case NodeKind::UnaryExpr: visit(cast<UnaryExpr>(n)->operand); break;
    case NodeKind::BinaryExpr:
      visit(cast<BinaryExpr>(n)->lhs);
      visit(cast<BinaryExpr>(n)->rhs);
      break;
    case NodeKind::ConditionalExpr: {
      auto* c = cast<ConditionalExpr>(n);
      visit(c->thenExpr);
      visit(c->cond);
      visit(c->elseExpr);
      break;
    }
    case NodeKind::CallExpr:
      visit(cast<CallExpr>(n)->callee);
      args(cast<CallExpr>(n)->args, fn);
      break;
    case NodeKind::SubscriptExpr:
      visit(cast<SubscriptExpr>(n)->base);
      args(cast<SubscriptExpr>(n)->indices, fn);
      break;
    case NodeKind::SliceExpr: {
      auto* s = cast<SliceExpr>(n);
      visit(s->lower);
      visit(s->upper);
      visit(s->step);
      break;
    }
    case NodeKind::AttributeExpr: visit(cast<AttributeExpr>(n)->base); break;
    case NodeKind::TupleExpr:
      for (const Expr* e : cast<TupleExpr>(n)->elements) visit(e);
      break;
    case NodeKind::ListExpr:
      for (const Expr* e : cast<ListExpr>(n)->elements) visit(e);
      break;
    case NodeKind::DictExpr:
      for (const DictEntry& e : cast<DictExpr>(n)->entries) {
        visit(e.key);
        visit(e.value);
      }
      break;
    case NodeKind::ComprehensionExpr: {
      auto* c = cast<ComprehensionExpr>(n);
      visit(c->element);
      for (const ComprehensionClause& cl : c->clauses) {
        visit(cl.target);
        visit(cl.iter);
        for (const Expr* e : cl.conditions) visit(e);
      }
      break;
    }
    case NodeKind::MutExpr: visit(cast<MutExpr>(n)->type); break;
    case NodeKind::StarredExpr: visit(cast<StarredExpr>(n)->value); break;
    case NodeKind::ExprStmt: visit(cast<ExprStmt>(n)->expr); break;
    case NodeKind::AssignStmt:
      for (const Expr* t : cast<AssignStmt>(n)->targets) visit(t);
      visit(cast<AssignStmt>(n)->value);
      break;
    case NodeKind::AugAssignStmt:
      visit(cast<AugAssignStmt>(n)->target);
      visit(cast<AugAssignStmt>(n)->value);
      break;
    case NodeKind::AnnAssignStmt: {
      auto* s = cast<AnnAssignStmt>(n);
      visit(s->target);
      visit(s->annotation);
      visit(s->value);
      break;
    }
    case NodeKind::ReturnStmt: visit(cast<ReturnStmt>(n)->value); break;
    case NodeKind::IfStmt:
      visit(cast<IfStmt>(n)->cond);
      block(cast<IfStmt>(n)->thenBlock, fn);
      block(cast<IfStmt>(n)->elseBlock, fn);
      break;
    case NodeKind::WhileStmt:
      visit(cast<WhileStmt>(n)->cond);
      block(cast<WhileStmt>(n)->body, fn);
      block(cast<WhileStmt>(n)->elseBlock, fn);
      break;
    case NodeKind::ForStmt:
      visit(cast<ForStmt>(n)->target);
      visit(cast<ForStmt>(n)->iter);
      block(cast<ForStmt>(n)->body, fn);
      block(cast<ForStmt>(n)->elseBlock, fn);
      break;
    case NodeKind::WithStmt:
      for (const WithItem& w : cast<WithStmt>(n)->items) {
        visit(w.context);
        visit(w.target);
      }
      block(cast<WithStmt>(n)->body, fn);
      break;
    case NodeKind::FunctionDefStmt: {
      auto* f = cast<FunctionDefStmt>(n);
      for (const Decorator& d : f->decorators) {
        visit(d.expr);
        for (const Expr* c : d.clauses) visit(c);
      }
      for (const Param& p : f->params) {
        visit(p.annotation);
        visit(p.defaultValue);
      }
      visit(f->returns);
      block(f->body, fn);
      break;
    }
    default: break;
  }
}

void walk(const Module& m, const std::function<bool(const Node*)>& fn) {
  std::function<void(const Node*)> rec = [&](const Node* n) {
    if (fn(n)) forEachChild(n, rec);
  };
  for (const Stmt* s : m.stmts)
    if (s) rec(s);
}

namespace {
bool containsLoc(const Node* n, SourceLoc loc) {
  return n->range.valid() && n->range.begin.offset <= loc.offset &&
         (!n->range.end.valid() || loc.offset <= n->range.end.offset);
}
}  // namespace

std::vector<const Node*> nodesAt(const Module& m, SourceLoc loc) {
  std::vector<const Node*> chain;
  walk(m, [&](const Node* n) {
    if (!containsLoc(n, loc)) return false;
    chain.push_back(n);
    return true;
  });
  return chain;
}

std::vector<const FunctionDefStmt*> enclosingFunctions(const Module& m, SourceLoc loc) {
  std::vector<const FunctionDefStmt*> out;
  for (const Node* n : nodesAt(m, loc))
    if (auto* f = dyn_cast<FunctionDefStmt>(n)) out.push_back(f);
  return out;
}

}  // namespace tessera::lsp
