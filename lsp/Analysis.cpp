#include "lsp/Analysis.h"

#include <algorithm>

#include "frontend/Lexer.h"
#include "frontend/Parser.h"

namespace tessera::lsp {

uint32_t Analysis::offsetOf(SourceLoc loc) const {
  uint32_t b = base();
  uint32_t size = static_cast<uint32_t>(text().size());
  if (!loc.valid() || loc.offset < b) return 0;
  return std::min(loc.offset - b, size);
}

Range Analysis::range(SourceRange r) const {
  Position s = position(r.begin);
  Position e = r.end.valid() ? position(r.end) : s;
  return {s, e};
}

bool Analysis::contains(SourceRange r, uint32_t offset) const {
  if (!r.valid()) return false;
  uint32_t b = offsetOf(r.begin), e = r.end.valid() ? offsetOf(r.end) : b;
  return b <= offset && offset <= e;
}

const Token* Analysis::tokenAt(uint32_t offset) const {
  SourceLoc at = locAt(offset);
  auto it = std::lower_bound(tokens.begin(), tokens.end(), at,
                             [](const Token& t, SourceLoc l) { return t.range.end.offset < l.offset; });
  for (; it != tokens.end() && it->range.begin.offset <= at.offset; ++it)
    if (!it->text.empty()) return &*it;
  return nullptr;
}

uint32_t Analysis::offsetFor(Position p) const {
  auto o = lines.offset(p);
  if (!o)
    throw LSPError(ErrorCode::InvalidParams, "line " + std::to_string(p.line) + " is past the end of the document");
  return *o;
}

std::shared_ptr<const Analysis> analyze(const std::string& uri, const std::string& text, int64_t version,
                                        const RemarkProvider& remarks) {
  auto a = std::make_shared<Analysis>();
  a->uri = uri;
  a->version = version;
  a->file = a->sm.addBuffer(uri, text);
  a->lines = LineTable(a->sm.bufferText(a->file));
  DiagnosticEngine diags(a->sm);
  StoringDiagnosticConsumer store;
  diags.addConsumer(&store);
  diags.setErrorLimit(0);
  a->tokens = lexBuffer(a->sm, a->file, diags, LexOptions{true});
  std::vector<Token> code;
  code.reserve(a->tokens.size());
  for (const Token& t : a->tokens)
    if (t.kind != TokenKind::Comment) code.push_back(t);
  a->module = parseTokens(code, a->sm, a->file, a->ast, diags);
  if (a->module) {
    a->sema = std::make_unique<SemaContext>(a->sm, a->ast);
    a->sema->stdlibDir = defaultStdlibDir();
    if (auto path = uriToPath(uri)) {
      auto slash = path->rfind('/');
      if (slash != std::string::npos) a->sema->includePaths.push_back(path->substr(0, slash));
    }
    analyzeModule(*a->module, *a->sema, diags);
    a->hasSema = true;
  }
  diags.finish();
  a->diagnostics = std::move(store.diagnostics);
  if (remarks) remarks(*a);
  return a;
}

}  // namespace tessera::lsp
