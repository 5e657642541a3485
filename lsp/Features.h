// The language features: each is a pure function of an analysed document (and a position),
// returning the LSP result as JSON. One file each; the server only dispatches.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "lsp/Analysis.h"

namespace tessera::lsp {

// Diagnostics.cpp: the `diagnostics` array of publishDiagnostics; fix-its become code actions.
json diagnosticsJSON(const Analysis& a);
json codeActions(const Analysis& a, const Range& range);

// Symbols.cpp
json documentSymbols(const Analysis& a);
json workspaceSymbols(const std::vector<std::shared_ptr<const Analysis>>& docs, const std::string& query);

// SemanticTokens.cpp
json semanticTokensLegend();
json semanticTokens(const Analysis& a);

// Folding.cpp
json foldingRanges(const Analysis& a);

// Completion.cpp. The context comes from `text` (the document as it is now); `a` supplies the
// scopes and may be the analysis of a slightly older text, so completion never waits for a
// re-analysis of the whole file.
json completion(const Analysis& a, std::string_view text, Position pos);

// Hover.cpp: null when there is nothing to say.
json hover(const Analysis& a, uint32_t offset);

// Navigation.cpp (all use sema's NameExpr::symbol).
json definition(const Analysis& a, uint32_t offset);
json references(const Analysis& a, uint32_t offset, bool includeDeclaration);
json documentHighlights(const Analysis& a, uint32_t offset);
json prepareRename(const Analysis& a, uint32_t offset);
json rename(const Analysis& a, uint32_t offset, const std::string& newName);

// SignatureHelp.cpp
json signatureHelp(const Analysis& a, uint32_t offset);

// InlayHints.cpp
json inlayHints(const Analysis& a, const Range& range);

// Formatting.cpp: the edits that turn the text into its formatted form (empty when it is
// formatted already); throws LSPError(RequestFailed) when the text cannot be formatted.
json formattingEdits(const Analysis& a);

}  // namespace tessera::lsp
