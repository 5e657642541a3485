// The generated traversal (frontend/ASTVisitor.h): dispatch reaches the handler of each kind,
// unhandled kinds fall back to their category, and forEachChild lists every child of every kind
// in source order (a pre-order walk reproduces the source's token order of names).
#include <doctest/doctest.h>
#include <string>
#include <vector>

#include "frontend/ASTVisitor.h"
#include "frontend/FrontendDiagnostics.h"
#include "frontend/Parser.h"

using namespace tessera;

namespace {

struct Parsed {
  SourceManager sm;
  DiagnosticEngine diags{sm};
  StoringDiagnosticConsumer store;
  ASTContext ctx;
  Module* module = nullptr;
  explicit Parsed(std::string text) {
    diags.addConsumer(&store);
    module = parseBuffer(sm, sm.addBuffer("t.tessera", std::move(text)), ctx, diags);
  }
};

// Names each node it is given: calls by the handler, other expressions and statements by category.
struct Namer : ConstASTVisitor<Namer, std::string, int> {
  std::string visitCallExpr(const CallExpr*, int depth) { return "call@" + std::to_string(depth); }
  std::string visitExpr(const Expr*, int) { return "expr"; }
  std::string visitStmt(const Stmt* s, int) { return nodeKindName(s->kind); }
};

void preorder(const Node* n, std::vector<std::string>& names) {
  if (auto* x = dyn_cast<NameExpr>(n)) names.push_back(x->name);
  forEachChild(n, [&](const Node* c) { preorder(c, names); });
}

}  // namespace

TEST_CASE("the visitor dispatches on the kind and falls back to the category") {
  Parsed p("f(x)\ny = 1\n");
  REQUIRE(p.module->stmts.size() == 2);
  auto* call = cast<ExprStmt>(p.module->stmts[0])->expr;
  Namer n;
  CHECK(n.visit(call, 3) == "call@3");
  CHECK(n.visit(cast<CallExpr>(call)->callee, 0) == "expr");
  CHECK(n.visit(p.module->stmts[1], 0) == "AssignStmt");
}

TEST_CASE("forEachChild lists the children of every kind in source order") {
  Parsed p(
      "@d1 c1\n"
      "def f(a1: t1 = v1, *a2) -> r1:\n"
      "    x1 = f1(p1, k=p2, *p3)[i1, j1:j2:j3]\n"
      "    x2 += -u1 if c2 else e1\n"
      "    x3: t2 = {k1: w1, k2: dd}\n"
      "    for q1 in it1:\n"
      "        while c3:\n"
      "            pass\n"
      "        else:\n"
      "            y1 = [g1 for z1 in zz if h1]\n"
      "    with m1 as n1:\n"
      "        return (s1, *s2, a.b)\n"
      "    if c4:\n"
      "        y2 = f\"{fs1}\"\n"
      "    else:\n"
      "        y3 = not nn\n");
  REQUIRE(p.store.diagnostics.empty());
  std::vector<std::string> names;
  for (const Stmt* s : p.module->stmts) preorder(s, names);
  std::string joined;
  for (auto& n : names) joined += n + " ";
  CHECK(joined ==
        "d1 c1 t1 v1 r1 x1 f1 p1 p2 p3 i1 j1 j2 j3 x2 u1 c2 e1 x3 t2 k1 w1 k2 dd q1 it1 c3 y1 g1 z1 zz h1 m1 n1 "
        "s1 s2 a c4 y2 fs1 y3 nn ");
}
