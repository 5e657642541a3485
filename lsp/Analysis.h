// One analysed version of a document: its source buffer, tokens (comments kept), the AST, the
// diagnostics, and sema's results when the build has sema. Immutable once built; features read
// it through a shared_ptr so a newer version can replace it at any time.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "basic/Diagnostics.h"
#include "frontend/AST.h"
#include "frontend/Token.h"
#include "lsp/Protocol.h"
#include "sema/Sema.h"

namespace tessera::lsp {

struct Analysis {
  std::string uri;
  int64_t version = 0;
  SourceManager sm;
  FileID file = 0;
  std::vector<Token> tokens;  // with Comment tokens
  ASTContext ast;
  Module* module = nullptr;
  std::vector<Diagnostic> diagnostics;
  LineTable lines;
  bool hasSema = false;
  std::unique_ptr<SemaContext> sema;

  std::string_view text() const { return sm.bufferText(file); }
  uint32_t base() const { return sm.bufferStart(file).offset; }
  // Offsets inside the buffer <-> locations.
  uint32_t offsetOf(SourceLoc loc) const;
  SourceLoc locAt(uint32_t offset) const { return {base() + offset}; }
  Position position(SourceLoc loc) const { return lines.position(offsetOf(loc)); }
  Range range(SourceRange r) const;
  bool contains(SourceRange r, uint32_t offset) const;  // inclusive of the end (cursor after a name)
  // The token whose range contains `offset` (or ends at it); nullptr between tokens.
  const Token* tokenAt(uint32_t offset) const;
  // The offset for a request's position; throws LSPError(InvalidParams) past the last line.
  uint32_t offsetFor(Position p) const;
};

// Adds diagnostics of later stages to an analysis: code generation's remarks, which the driver
// provides (tools/tessera-lsp/Remarks.cpp), since this library stays above sema only.
using RemarkProvider = std::function<void(Analysis&)>;

// Lexes, parses and (when built with sema) analyses `text`, then runs `remarks` if given.
std::shared_ptr<const Analysis> analyze(const std::string& uri, const std::string& text, int64_t version,
                                        const RemarkProvider& remarks = {});

}  // namespace tessera::lsp
