// Generic traversal of the AST for the features: every child of a node in source order, a
// pre-order walk, and the chain of nodes that contain a location.
#pragma once

#include <functional>
#include <vector>

#include "frontend/AST.h"

namespace tessera::lsp {

// Calls `fn` on each direct child (expressions and statements, decorators, parameters'
// annotations and defaults, the statements of nested blocks). Null children are skipped.
void forEachChild(const Node* n, const std::function<void(const Node*)>& fn);

// Pre-order walk of every node of the module; `fn` returns false to skip a node's children.
void walk(const Module& m, const std::function<bool(const Node*)>& fn);

// The nodes whose range contains `loc` (end inclusive), outermost first.
std::vector<const Node*> nodesAt(const Module& m, SourceLoc loc);

// The function definitions enclosing `loc`, outermost first.
std::vector<const FunctionDefStmt*> enclosingFunctions(const Module& m, SourceLoc loc);

}  // namespace tessera::lsp
