// Small helpers over the AST that every sema pass shares: visiting the direct children of an
// expression, and the nesting-depth guard that keeps recursive passes off pathological trees.
#pragma once

#include <functional>

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

// Visits every statement of `b` (nested blocks included) with `onStmt`, then every expression
// written in it, recursively, with `onExpr`.
void walkStmts(const Block& b, const std::function<void(Stmt*)>& onStmt, const std::function<void(Expr*)>& onExpr);

// Expressions nested deeper than this are not analysed (every sema pass recurses over them).
constexpr unsigned kMaxExprDepth = 512;

// True when an expression written directly in `s` (not in nested statements) nests deeper than
// kMaxExprDepth. Computed without recursion.
bool stmtTooDeep(Stmt* s);

}  // namespace tessera
