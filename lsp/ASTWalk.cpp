#include "lsp/ASTWalk.h"

namespace tessera::lsp {

void walk(const Module& m, const std::function<bool(const Node*)>& fn) {
  std::function<void(const Node*)> rec = [&](const Node* n) {
    if (fn(n)) forEachChild(n, rec);  // frontend/ASTVisitor.h
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
