// The one traversal of the AST, generated from ASTNodes.def: every pass that walks or dispatches
// over nodes (sema, the language server, the dump, lowering) goes through it.
//  - ASTVisitor / ConstASTVisitor: CRTP dispatch on a node's kind to visit<Kind>(Kind*, args...),
//    as clang's StmtVisitor; an unhandled kind falls back to visitExpr / visitStmt, then visitNode.
//  - forEachChild(node, f): each direct child (expressions and the statements of nested blocks) in
//    source order; the children of a kind are named once, in ASTNodes.def's CHILDREN column.
// Adding a row to ASTNodes.def without its class (or, for CUSTOM, its customChildrenOf) is a build
// error.
#pragma once

#include "frontend/AST.h"

namespace tessera {

namespace ast_detail {
template <class T>
using MutPtr = T*;
template <class T>
using ConstPtr = const T*;

template <template <class> class Ptr, class Derived, class Ret, class... Args>
class VisitorBase {
 public:
  Ret visit(Ptr<Node> n, Args... args) {
    switch (n->kind) {
#define EXPR(NAME, ...) \
  case NodeKind::NAME##Expr: return self().visit##NAME##Expr(static_cast<Ptr<NAME##Expr>>(n), args...);
#define STMT(NAME, ...) \
  case NodeKind::NAME##Stmt: return self().visit##NAME##Stmt(static_cast<Ptr<NAME##Stmt>>(n), args...);
#include "frontend/ASTNodes.def"
    }
    return self().visitNode(n, args...);  // a kind outside the table (a corrupted node)
  }

  // Defaults: each kind falls back to its category, each category to visitNode.
#define EXPR(NAME, ...) \
  Ret visit##NAME##Expr(Ptr<NAME##Expr> e, Args... args) { return self().visitExpr(e, args...); }
#define STMT(NAME, ...) \
  Ret visit##NAME##Stmt(Ptr<NAME##Stmt> s, Args... args) { return self().visitStmt(s, args...); }
#include "frontend/ASTNodes.def"
  Ret visitExpr(Ptr<Expr> e, Args... args) { return self().visitNode(e, args...); }
  Ret visitStmt(Ptr<Stmt> s, Args... args) { return self().visitNode(s, args...); }
  Ret visitNode(Ptr<Node>, Args...) { return Ret(); }

 private:
  Derived& self() { return static_cast<Derived&>(*this); }
};
}  // namespace ast_detail

// Derive as `struct Lower : ASTVisitor<Lower, Value, Type> { Value visitCallExpr(CallExpr*, Type); }`.
template <class Derived, class Ret = void, class... Args>
using ASTVisitor = ast_detail::VisitorBase<ast_detail::MutPtr, Derived, Ret, Args...>;
template <class Derived, class Ret = void, class... Args>
using ConstASTVisitor = ast_detail::VisitorBase<ast_detail::ConstPtr, Derived, Ret, Args...>;

// ------------------------------------------------------------------ children, one overload a kind

namespace ast_detail {
// f on each of the nodes that is not null, in order.
template <class F, class... N>
void each(F& f, N*... nodes) {
  ((nodes ? (void)f(static_cast<Node*>(nodes)) : void()), ...);
}
template <class F, class N>
void all(F& f, const std::vector<N*>& nodes) {
  for (N* n : nodes) each(f, n);
}
template <class F>
void all(F& f, const std::vector<Argument>& args) {
  for (const Argument& a : args) each(f, a.value);
}
}  // namespace ast_detail

// The kinds whose children sit inside nested records (CUSTOM in ASTNodes.def).
template <class F>
void customChildrenOf(FStringExpr& e, F& f) {
  for (FStringPart& p : e.parts) ast_detail::each(f, p.expr);
}
template <class F>
void customChildrenOf(DictExpr& e, F& f) {
  for (DictEntry& d : e.entries) ast_detail::each(f, d.key, d.value);
}
template <class F>
void customChildrenOf(ComprehensionExpr& e, F& f) {
  ast_detail::each(f, e.element);
  for (ComprehensionClause& c : e.clauses) {
    ast_detail::each(f, c.target, c.iter);
    ast_detail::all(f, c.conditions);
  }
}
template <class F>
void customChildrenOf(WithStmt& s, F& f) {
  for (WithItem& w : s.items) ast_detail::each(f, w.context, w.target);
  ast_detail::all(f, s.body.stmts);
}
template <class F>
void customChildrenOf(FunctionDefStmt& s, F& f) {
  for (Decorator& d : s.decorators) {
    ast_detail::each(f, d.expr);
    ast_detail::all(f, d.clauses);
  }
  for (Param& p : s.params) ast_detail::each(f, p.annotation, p.defaultValue);
  ast_detail::each(f, s.returns);
  ast_detail::all(f, s.body.stmts);
}

// childrenOf(node, f), one overload a kind, from the CHILDREN column of ASTNodes.def: the
// expressions written in the node, then (statements) the statements of its blocks.
#define ONE(field) ast_detail::each(f, node.field);
#define ALL(field) ast_detail::all(f, node.field);
#define BLOCK(field) ast_detail::all(f, node.field.stmts);
#define CUSTOM customChildrenOf(node, f);
#define EXPR(NAME, CHILDREN)                                                  \
  template <class F>                                                          \
  void childrenOf([[maybe_unused]] NAME##Expr& node, [[maybe_unused]] F& f) { \
    CHILDREN                                                                  \
  }
#define STMT(NAME, CHILDREN)                                                  \
  template <class F>                                                          \
  void childrenOf([[maybe_unused]] NAME##Stmt& node, [[maybe_unused]] F& f) { \
    CHILDREN                                                                  \
  }
#include "frontend/ASTNodes.def"
#undef ONE
#undef ALL
#undef BLOCK
#undef CUSTOM

// Calls f(Node*) on each non-null direct child of `n`, in source order.
template <class F>
void forEachChild(Node* n, F&& f) {
  if (!n) return;
  switch (n->kind) {
#define EXPR(NAME, ...) \
  case NodeKind::NAME##Expr: return childrenOf(*static_cast<NAME##Expr*>(n), f);
#define STMT(NAME, ...) \
  case NodeKind::NAME##Stmt: return childrenOf(*static_cast<NAME##Stmt*>(n), f);
#include "frontend/ASTNodes.def"
  }
}

// The same over a const tree: f(const Node*).
template <class F>
void forEachChild(const Node* n, F&& f) {
  forEachChild(const_cast<Node*>(n), [&](Node* c) { f(static_cast<const Node*>(c)); });
}

}  // namespace tessera
