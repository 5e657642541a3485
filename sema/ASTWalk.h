// Small helpers over the AST that every sema pass shares: visiting the direct children of an
// expression, and the nesting-depth guard that keeps recursive passes off pathological trees.
#pragma once

#include <utility>
#include <vector>

#include "frontend/AST.h"

namespace tessera {

template <class F>
void forEachChild(Expr* e, F f) {
  if (!e) return;
  switch (e->kind) {
    case NodeKind::FStringExpr:
      for (FStringPart& p : cast<FStringExpr>(e)->parts) f(p.expr);
      return;
    case NodeKind::UnaryExpr: f(cast<UnaryExpr>(e)->operand); return;
    case NodeKind::BinaryExpr: f(cast<BinaryExpr>(e)->lhs); f(cast<BinaryExpr>(e)->rhs); return;
    case NodeKind::ConditionalExpr: {
      auto* c = cast<ConditionalExpr>(e);
      f(c->cond); f(c->thenExpr); f(c->elseExpr);
      return;
    }
    case NodeKind::CallExpr:
      f(cast<CallExpr>(e)->callee);
      for (Argument& a : cast<CallExpr>(e)->args) f(a.value);
      return;
    case NodeKind::SubscriptExpr:
      f(cast<SubscriptExpr>(e)->base);
      for (Argument& a : cast<SubscriptExpr>(e)->indices) f(a.value);
      return;
    case NodeKind::SliceExpr: {
      auto* s = cast<SliceExpr>(e);
      f(s->lower); f(s->upper); f(s->step);
      return;
    }
    case NodeKind::AttributeExpr: f(cast<AttributeExpr>(e)->base); return;
    case NodeKind::TupleExpr: for (Expr* x : cast<TupleExpr>(e)->elements) f(x); return;
    case NodeKind::ListExpr: for (Expr* x : cast<ListExpr>(e)->elements) f(x); return;
    case NodeKind::DictExpr:
      for (DictEntry& d : cast<DictExpr>(e)->entries) { f(d.key); f(d.value); }
      return;
    case NodeKind::ComprehensionExpr: {
      auto* c = cast<ComprehensionExpr>(e);
      f(c->element);
      for (ComprehensionClause& cl : c->clauses) {
        f(cl.target); f(cl.iter);
        for (Expr* x : cl.conditions) f(x);
      }
      return;
    }
    case NodeKind::MutExpr: f(cast<MutExpr>(e)->type); return;
    case NodeKind::StarredExpr: f(cast<StarredExpr>(e)->value); return;
    default: return;
  }
}

// Calls f(stmt) for every statement of `b` and of the blocks nested in it (if/while/for/with
// bodies), in source order, but not for the bodies of nested function definitions. Iterative.
template <class F>
void forEachStmtIn(const Block& b, F f) {
  std::vector<std::pair<const Block*, size_t>> stack{{&b, 0}};
  while (!stack.empty()) {
    auto& [blk, i] = stack.back();
    if (i >= blk->stmts.size()) {
      stack.pop_back();
      continue;
    }
    Stmt* s = blk->stmts[i++];
    if (!s) continue;
    f(s);
    // Pushed in reverse so that they are visited in source order.
    std::vector<const Block*> inner;
    if (auto* x = dyn_cast<IfStmt>(s)) inner = {&x->thenBlock, &x->elseBlock};
    else if (auto* x = dyn_cast<WhileStmt>(s)) inner = {&x->body, &x->elseBlock};
    else if (auto* x = dyn_cast<ForStmt>(s)) inner = {&x->body, &x->elseBlock};
    else if (auto* x = dyn_cast<WithStmt>(s)) inner = {&x->body};
    for (auto it = inner.rbegin(); it != inner.rend(); ++it) stack.push_back({*it, 0});
  }
}

// Calls f(expr) for every expression written directly in `s` and every subexpression of it
// (not those of nested blocks). Iterative, so any nesting depth is fine.
template <class F>
void forEachExprIn(Stmt* s, F f) {
  std::vector<Expr*> stack;
  auto push = [&](Expr* e) {
    if (e) stack.push_back(e);
  };
  switch (s->kind) {
    case NodeKind::ExprStmt: push(cast<ExprStmt>(s)->expr); break;
    case NodeKind::AssignStmt:
      for (Expr* t : cast<AssignStmt>(s)->targets) push(t);
      push(cast<AssignStmt>(s)->value);
      break;
    case NodeKind::AugAssignStmt: push(cast<AugAssignStmt>(s)->target); push(cast<AugAssignStmt>(s)->value); break;
    case NodeKind::AnnAssignStmt: push(cast<AnnAssignStmt>(s)->target); push(cast<AnnAssignStmt>(s)->value); break;
    case NodeKind::ReturnStmt: push(cast<ReturnStmt>(s)->value); break;
    case NodeKind::IfStmt: push(cast<IfStmt>(s)->cond); break;
    case NodeKind::WhileStmt: push(cast<WhileStmt>(s)->cond); break;
    case NodeKind::ForStmt: push(cast<ForStmt>(s)->target); push(cast<ForStmt>(s)->iter); break;
    case NodeKind::WithStmt:
      for (WithItem& i : cast<WithStmt>(s)->items) {
        push(i.context);
        push(i.target);
      }
      break;
    default: break;
  }
  while (!stack.empty()) {
    Expr* e = stack.back();
    stack.pop_back();
    f(e);
    forEachChild(e, push);
  }
}

// Expressions nested deeper than this are not analysed (every sema pass recurses over them).
constexpr unsigned kMaxExprDepth = 512;

// True when an expression written directly in `s` (not in nested statements) nests deeper than
// kMaxExprDepth. Computed without recursion.
bool stmtTooDeep(Stmt* s);

}  // namespace tessera
