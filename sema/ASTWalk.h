// Small helpers over the AST that every sema pass shares, built on the generated traversal of
// frontend/ASTVisitor.h: the subexpressions of an expression, a walk over a body's statements and
// expressions, and the nesting-depth guard that keeps recursive passes off pathological trees.
#pragma once

#include <functional>

#include "frontend/ASTVisitor.h"

namespace tessera {

// Calls f(Expr*) on each non-null direct subexpression of `e`, in source order.
template <class F>
void forEachSubexpression(Expr* e, F f) {
  forEachChild(static_cast<Node*>(e), [&](Node* c) { f(cast<Expr>(c)); });
}

// Visits every statement of `b` (nested blocks included) with `onStmt`, then every value
// expression written in it, recursively, with `onExpr`. Annotations (types) and the bodies of
// nested function definitions (scopes of their own) are not entered.
void walkStmts(const Block& b, const std::function<void(Stmt*)>& onStmt, const std::function<void(Expr*)>& onExpr);

// Expressions nested deeper than this are not analysed (every sema pass recurses over them).
constexpr unsigned kMaxExprDepth = 512;

// True when an expression written directly in `s` (not in nested statements) nests deeper than
// kMaxExprDepth. Computed without recursion.
bool stmtTooDeep(Stmt* s);

// True when a `return` stands anywhere in `stmts`, nested blocks of if/for/while included.
bool containsReturn(const std::vector<Stmt*>& stmts);

// The user function a call resolves to (through its callee's type or name), or null.
const FunctionDefStmt* calledFunction(const CallExpr* c);

}  // namespace tessera
