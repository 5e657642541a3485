// Go to definition, find references, document highlight and rename: all over sema's symbols
// (NameExpr::symbol). A build without sema answers with empty results.
#include <cctype>

#include "frontend/Token.h"
#include "lsp/Features.h"
#include "lsp/Lookup.h"

namespace tessera::lsp {

json definition(const Analysis& a, uint32_t offset) {
  json out = json::array();
  Target t = targetAt(a, offset);
  const Symbol* s = symbolOf(a, t);
  if (s && s->declRange.valid())
    if (auto loc = locationOf(a, nameRangeAt(a, s->declRange, s->name))) out.push_back(*loc);
  return out;
}

json references(const Analysis& a, uint32_t offset, bool includeDeclaration) {
  json out = json::array();
  Target t = targetAt(a, offset);
  for (const Occurrence& o : occurrencesOf(a, symbolOf(a, t)))
    if (includeDeclaration || !o.isDeclaration) out.push_back({{"uri", a.uri}, {"range", toJSON(a.range(o.range))}});
  return out;
}

json documentHighlights(const Analysis& a, uint32_t offset) {
  json out = json::array();
  Target t = targetAt(a, offset);
  for (const Occurrence& o : occurrencesOf(a, symbolOf(a, t)))
    out.push_back({{"range", toJSON(a.range(o.range))}, {"kind", o.isWrite ? 3 : 2}});  // Write : Read
  return out;
}

namespace {
bool isIdentifier(const std::string& s) {
  if (s.empty() || !(std::isalpha(static_cast<unsigned char>(s[0])) || s[0] == '_')) return false;
  for (char c : s)
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '_')) return false;
  return keywordKind(s) == TokenKind::Identifier;
}

// The symbol a rename at `offset` would change; throws with the reason when there is none.
const Symbol* renameable(const Analysis& a, const Target& t) {
  if (t.kind == Target::None) throw LSPError(ErrorCode::RequestFailed, "there is no symbol here to rename");
  const Symbol* s = symbolOf(a, t);
  if (!s) throw LSPError(ErrorCode::RequestFailed, "'" + t.name + "' is not resolved, so it cannot be renamed");
  switch (s->kind) {
    case SymbolKind::Builtin:
    case SymbolKind::Namespace:
    case SymbolKind::DType:
      throw LSPError(ErrorCode::RequestFailed, "'" + s->name + "' is a builtin and cannot be renamed");
    default: break;
  }
  if (!s->declRange.valid() || a.sm.fileOf(s->declRange.begin) != a.file)
    throw LSPError(ErrorCode::RequestFailed, "'" + s->name + "' is declared in another file");
  return s;
}
}  // namespace

json prepareRename(const Analysis& a, uint32_t offset) {
  Target t = targetAt(a, offset);
  const Symbol* s = renameable(a, t);
  return json{{"range", toJSON(a.range(t.range))}, {"placeholder", s->name}};
}

json rename(const Analysis& a, uint32_t offset, const std::string& newName) {
  if (!isIdentifier(newName))
    throw LSPError(ErrorCode::InvalidParams, "'" + newName + "' is not a valid identifier");
  Target t = targetAt(a, offset);
  const Symbol* s = renameable(a, t);
  json edits = json::array();
  for (const Occurrence& o : occurrencesOf(a, s))
    edits.push_back({{"range", toJSON(a.range(nameRangeAt(a, o.range, s->name)))}, {"newText", newName}});
  return json{{"changes", {{a.uri, edits}}}};
}

}  // namespace tessera::lsp
