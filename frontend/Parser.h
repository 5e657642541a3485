// The hand-written recursive-descent parser. It reads the whole surface syntax (DESIGN.md,
// spec/), recovers at statement and block boundaries, and reports every independent error once.
#pragma once

#include <vector>

#include "basic/Diagnostics.h"
#include "frontend/AST.h"
#include "frontend/Token.h"

namespace tessera {

// Parses a token stream produced by lexBuffer for `file`. Always returns a module; statements
// the parser could not read appear as ErrorStmt.
Module* parseTokens(const std::vector<Token>& tokens, const SourceManager& sm, FileID file, ASTContext& ctx,
                    DiagnosticEngine& diags);

// Lexes and parses a buffer.
Module* parseBuffer(const SourceManager& sm, FileID file, ASTContext& ctx, DiagnosticEngine& diags);

}  // namespace tessera
