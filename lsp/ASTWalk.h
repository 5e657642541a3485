// Traversals of the AST for the features, over the generated one of frontend/ASTVisitor.h: a
// pre-order walk, and the chain of nodes that contain a location.
#pragma once

#include <functional>
#include <vector>

#include "frontend/ASTVisitor.h"

namespace tessera::lsp {

// Pre-order walk of every node of the module; `fn` returns false to skip a node's children.
void walk(const Module& m, const std::function<bool(const Node*)>& fn);

// The nodes whose range contains `loc` (end inclusive), outermost first.
std::vector<const Node*> nodesAt(const Module& m, SourceLoc loc);

// The function definitions enclosing `loc`, outermost first.
std::vector<const FunctionDefStmt*> enclosingFunctions(const Module& m, SourceLoc loc);

}  // namespace tessera::lsp
