// Go to definition, find references, document highlight and rename: all over sema's symbols
// (NameExpr::symbol). A build without sema answers with empty results.
#include <cctype>

#include "frontend/Token.h"
#include "lsp/ASTWalk.h"
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

// The scope names resolve in at `loc`: the innermost enclosing function's, or the module's. The
// name of a function is resolved where the function is declared, not inside it.
Scope* scopeAt(const Analysis& a, SourceLoc loc, const FunctionDefStmt* skip, std::string& function) {
  std::vector<const FunctionDefStmt*> fns = enclosingFunctions(*a.module, loc);
  for (auto it = fns.rbegin(); it != fns.rend(); ++it) {
    if (*it == skip) continue;
    auto f = a.sema->functions.find(*it);
    if (f != a.sema->functions.end() && f->second && f->second->scope) {
      function = (*it)->name;
      return f->second->scope;
    }
  }
  for (auto& [path, mod] : a.sema->modules)
    if (mod && mod->module == a.module) return mod->scope;
  return nullptr;
}

std::string describe(const Symbol& s, const std::string& function) {
  std::string in = function.empty() ? "" : " of '" + function + "'";
  switch (s.kind) {
    case SymbolKind::Parameter: return "a parameter" + in;
    case SymbolKind::Variable: return function.empty() ? "a module-level name" : "a local variable" + in;
    case SymbolKind::ShapeSymbol: return "a shape symbol" + in;
    case SymbolKind::AutotuneParam: return "an autotune parameter" + in;
    case SymbolKind::Constant: return "a module constant";
    case SymbolKind::Function: return "a function";
    case SymbolKind::Module: return "an imported module";
    case SymbolKind::Namespace: return "a builtin namespace";
    case SymbolKind::Builtin: return "a builtin";
    case SymbolKind::DType: return "a dtype name";
  }
  return "already defined";
}

// A new name that already means something where the symbol is declared or used would change the
// program (the renamed symbol would shadow that meaning, or be shadowed by it): refused, naming
// what the new name already is.
void refuseCollision(const Analysis& a, const Symbol* s, const std::string& newName) {
  if (newName == s->name || !a.sema || !a.module) return;
  const FunctionDefStmt* self = s->kind == SymbolKind::Function ? s->function : nullptr;
  for (const Occurrence& o : occurrencesOf(a, s)) {
    std::string function;
    Scope* scope = scopeAt(a, o.range.begin, o.isDeclaration ? self : nullptr, function);
    const Symbol* other = scope ? scope->lookup(newName) : nullptr;
    if (!other || other == s) continue;
    throw LSPError(ErrorCode::RequestFailed, "cannot rename '" + s->name + "' to '" + newName + "': '" + newName +
                                                 "' is " + describe(*other, function));
  }
}
}  // namespace

json prepareRename(const Analysis& a, uint32_t offset) {
  Target t = targetAt(a, offset);
  const Symbol* s = renameable(a, t);
  return json{{"range", toJSON(a.range(t.range))}, {"placeholder", s->name}};
}

json rename(const Analysis& a, uint32_t offset, const std::string& newName) {
  if (!isIdentifier(newName)) throw LSPError(ErrorCode::InvalidParams, "'" + newName + "' is not a valid identifier");
  Target t = targetAt(a, offset);
  const Symbol* s = renameable(a, t);
  refuseCollision(a, s, newName);
  json edits = json::array();
  for (const Occurrence& o : occurrencesOf(a, s))
    edits.push_back({{"range", toJSON(a.range(nameRangeAt(a, o.range, s->name)))}, {"newText", newName}});
  return json{{"changes", {{a.uri, edits}}}};
}

}  // namespace tessera::lsp
