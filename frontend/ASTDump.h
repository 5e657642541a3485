// Stable, readable text forms of tokens and trees (`tesserac --emit=tokens|ast`), used by the
// lit tests. Ranges print as line:col-line:col (end exclusive).
#pragma once

#include <functional>
#include <ostream>
#include <vector>

#include "frontend/AST.h"
#include "frontend/Token.h"

namespace tessera {

void dumpTokens(const std::vector<Token>& tokens, const SourceManager& sm, std::ostream& os);

// `annotate` (optional) adds text after a node's header line, e.g. sema's type of an expression.
using ASTAnnotator = std::function<std::string(const Node&)>;
void dumpAST(const Module& module, const SourceManager& sm, std::ostream& os, const ASTAnnotator& annotate = {});

}  // namespace tessera
