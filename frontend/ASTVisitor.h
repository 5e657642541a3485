// The one traversal of the AST, generated from ASTNodes.def: every pass that walks or dispatches
// over nodes (sema, the language server, the dump, lowering) goes through it.
//  - ASTVisitor / ConstASTVisitor: CRTP dispatch on a node's kind to visit<Kind>(Kind*, args...),
//    as clang's StmtVisitor; an unhandled kind falls back to visitExpr / visitStmt, then visitNode.
//  - forEachChild(node, f): each direct child (expressions and the statements of nested blocks) in
//    source order; the children of a kind are named once, in childrenOf below.
// Adding a row to ASTNodes.def without its class or its childrenOf overload is a build error.
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
#define EXPR(NAME) \
  case NodeKind::NAME##Expr: return self().visit##NAME##Expr(static_cast<Ptr<NAME##Expr>>(n), args...);
#define STMT(NAME) \
  case NodeKind::NAME##Stmt: return self().visit##NAME##Stmt(static_cast<Ptr<NAME##Stmt>>(n), args...);
#include "frontend/ASTNodes.def"
    }
    return self().visitNode(n, args...);  // a kind outside the table (a corrupted node)
  }

  // Defaults: each kind falls back to its category, each category to visitNode.
#define EXPR(NAME) \
  Ret visit##NAME##Expr(Ptr<NAME##Expr> e, Args... args) { return self().visitExpr(e, args...); }
#define STMT(NAME) \
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
template <class F>
void child(Node* n, F& f) {
  if (n) f(n);
}
template <class F>
void block(Block& b, F& f) {
  for (Stmt* s : b.stmts) child(s, f);
}
template <class F>
void arguments(std::vector<Argument>& as, F& f) {
  for (Argument& a : as) child(a.value, f);
}
}  // namespace ast_detail

// Leaves.
template <class F>
void childrenOf(NameExpr&, F&) {}
template <class F>
void childrenOf(IntLiteralExpr&, F&) {}
template <class F>
void childrenOf(FloatLiteralExpr&, F&) {}
template <class F>
void childrenOf(StringLiteralExpr&, F&) {}
template <class F>
void childrenOf(BoolLiteralExpr&, F&) {}
template <class F>
void childrenOf(NoneLiteralExpr&, F&) {}
template <class F>
void childrenOf(EllipsisExpr&, F&) {}
template <class F>
void childrenOf(ErrorExpr&, F&) {}
template <class F>
void childrenOf(PassStmt&, F&) {}
template <class F>
void childrenOf(BreakStmt&, F&) {}
template <class F>
void childrenOf(ContinueStmt&, F&) {}
template <class F>
void childrenOf(ImportStmt&, F&) {}
template <class F>
void childrenOf(ImportFromStmt&, F&) {}
template <class F>
void childrenOf(ErrorStmt&, F&) {}

// Expressions.
template <class F>
void childrenOf(FStringExpr& e, F& f) {
  for (FStringPart& p : e.parts) ast_detail::child(p.expr, f);
}
template <class F>
void childrenOf(UnaryExpr& e, F& f) {
  ast_detail::child(e.operand, f);
}
template <class F>
void childrenOf(BinaryExpr& e, F& f) {
  ast_detail::child(e.lhs, f);
  ast_detail::child(e.rhs, f);
}
template <class F>
void childrenOf(ConditionalExpr& e, F& f) {  // `then if cond else other`
  ast_detail::child(e.thenExpr, f);
  ast_detail::child(e.cond, f);
  ast_detail::child(e.elseExpr, f);
}
template <class F>
void childrenOf(CallExpr& e, F& f) {
  ast_detail::child(e.callee, f);
  ast_detail::arguments(e.args, f);
}
template <class F>
void childrenOf(SubscriptExpr& e, F& f) {
  ast_detail::child(e.base, f);
  ast_detail::arguments(e.indices, f);
}
template <class F>
void childrenOf(SliceExpr& e, F& f) {
  ast_detail::child(e.lower, f);
  ast_detail::child(e.upper, f);
  ast_detail::child(e.step, f);
}
template <class F>
void childrenOf(AttributeExpr& e, F& f) {
  ast_detail::child(e.base, f);
}
template <class F>
void childrenOf(TupleExpr& e, F& f) {
  for (Expr* x : e.elements) ast_detail::child(x, f);
}
template <class F>
void childrenOf(ListExpr& e, F& f) {
  for (Expr* x : e.elements) ast_detail::child(x, f);
}
template <class F>
void childrenOf(DictExpr& e, F& f) {
  for (DictEntry& d : e.entries) {
    ast_detail::child(d.key, f);
    ast_detail::child(d.value, f);
  }
}
template <class F>
void childrenOf(ComprehensionExpr& e, F& f) {
  ast_detail::child(e.element, f);
  for (ComprehensionClause& c : e.clauses) {
    ast_detail::child(c.target, f);
    ast_detail::child(c.iter, f);
    for (Expr* x : c.conditions) ast_detail::child(x, f);
  }
}
template <class F>
void childrenOf(MutExpr& e, F& f) {
  ast_detail::child(e.type, f);
}
template <class F>
void childrenOf(StarredExpr& e, F& f) {
  ast_detail::child(e.value, f);
}

// Statements: the expressions written in the statement, then the statements of its blocks.
template <class F>
void childrenOf(ExprStmt& s, F& f) {
  ast_detail::child(s.expr, f);
}
template <class F>
void childrenOf(AssignStmt& s, F& f) {
  for (Expr* t : s.targets) ast_detail::child(t, f);
  ast_detail::child(s.value, f);
}
template <class F>
void childrenOf(AugAssignStmt& s, F& f) {
  ast_detail::child(s.target, f);
  ast_detail::child(s.value, f);
}
template <class F>
void childrenOf(AnnAssignStmt& s, F& f) {
  ast_detail::child(s.target, f);
  ast_detail::child(s.annotation, f);
  ast_detail::child(s.value, f);
}
template <class F>
void childrenOf(ReturnStmt& s, F& f) {
  ast_detail::child(s.value, f);
}
template <class F>
void childrenOf(IfStmt& s, F& f) {
  ast_detail::child(s.cond, f);
  ast_detail::block(s.thenBlock, f);
  ast_detail::block(s.elseBlock, f);
}
template <class F>
void childrenOf(WhileStmt& s, F& f) {
  ast_detail::child(s.cond, f);
  ast_detail::block(s.body, f);
  ast_detail::block(s.elseBlock, f);
}
template <class F>
void childrenOf(ForStmt& s, F& f) {
  ast_detail::child(s.target, f);
  ast_detail::child(s.iter, f);
  ast_detail::block(s.body, f);
  ast_detail::block(s.elseBlock, f);
}
template <class F>
void childrenOf(WithStmt& s, F& f) {
  for (WithItem& w : s.items) {
    ast_detail::child(w.context, f);
    ast_detail::child(w.target, f);
  }
  ast_detail::block(s.body, f);
}
template <class F>
void childrenOf(FunctionDefStmt& s, F& f) {
  for (Decorator& d : s.decorators) {
    ast_detail::child(d.expr, f);
    for (Expr* c : d.clauses) ast_detail::child(c, f);
  }
  for (Param& p : s.params) {
    ast_detail::child(p.annotation, f);
    ast_detail::child(p.defaultValue, f);
  }
  ast_detail::child(s.returns, f);
  ast_detail::block(s.body, f);
}

// Calls f(Node*) on each non-null direct child of `n`, in source order.
template <class F>
void forEachChild(Node* n, F&& f) {
  if (!n) return;
  switch (n->kind) {
#define EXPR(NAME) \
  case NodeKind::NAME##Expr: return childrenOf(*static_cast<NAME##Expr*>(n), f);
#define STMT(NAME) \
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
