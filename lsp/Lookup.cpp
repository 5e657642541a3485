#include "lsp/Lookup.h"

#include <algorithm>
#include <set>

#include "lsp/ASTWalk.h"

namespace tessera::lsp {

namespace {
bool inRange(const Analysis& a, SourceRange r, uint32_t offset) { return r.valid() && a.contains(r, offset); }
}  // namespace

Target targetAt(const Analysis& a, uint32_t offset) {
  Target t;
  if (!a.module) return t;
  SourceLoc loc = a.locAt(offset);
  for (const Node* n : nodesAt(*a.module, loc)) {
    if (auto* f = dyn_cast<FunctionDefStmt>(n)) {
      if (inRange(a, f->nameRange, offset)) {
        t = Target{};
        t.kind = Target::FunctionName;
        t.range = f->nameRange;
        t.name = f->name;
        t.function = f;
      }
      for (const Param& p : f->params)
        if (!p.name.empty() && inRange(a, p.nameRange, offset)) {
          t = Target{};
          t.kind = Target::ParamName;
          t.range = p.nameRange;
          t.name = p.name;
          t.param = &p;
          t.paramOwner = f;
        }
    } else if (auto* at = dyn_cast<AttributeExpr>(n)) {
      if (inRange(a, at->nameRange, offset)) {
        t = Target{};
        t.kind = Target::Attribute;
        t.range = at->nameRange;
        t.name = at->name;
        t.attr = at;
      }
    } else if (auto* nm = dyn_cast<NameExpr>(n)) {
      if (inRange(a, nm->range, offset)) {
        t = Target{};
        t.kind = Target::Name;
        t.range = nm->range;
        t.name = nm->name;
        t.nameExpr = nm;
      }
    }
  }
  return t;
}

SourceRange nameRangeAt(const Analysis& a, SourceRange r, const std::string& name) {
  if (!r.valid()) return r;
  SourceRange exact(r.begin, SourceLoc{r.begin.offset + static_cast<uint32_t>(name.size())});
  if (a.sm.text(exact) == name) return exact;
  return r;
}

std::optional<json> locationOf(const Analysis& a, SourceRange r) {
  if (!r.valid()) return std::nullopt;
  FileID f = a.sm.fileOf(r.begin);
  if (f == a.file) return json{{"uri", a.uri}, {"range", toJSON(a.range(r))}};
  std::string_view text = a.sm.bufferText(f);
  LineTable lines(text);
  uint32_t base = a.sm.bufferStart(f).offset;
  Range range{lines.position(r.begin.offset - base), lines.position((r.end.valid() ? r.end : r.begin).offset - base)};
  std::string name(a.sm.bufferName(f));
  std::string uri = name.rfind("file://", 0) == 0 ? name : pathToURI(name);
  return json{{"uri", uri}, {"range", toJSON(range)}};
}

namespace {
// Symbols sema declared in scopes, by declaration location (function and parameter names are
// not NameExprs, so they are found through the scopes).
const Symbol* declaredAt(const Analysis& a, SourceLoc at, SymbolKind kind) {
  if (!a.sema) return nullptr;
  auto search = [&](const Scope* s) -> const Symbol* {
    if (!s) return nullptr;
    for (auto& [name, sym] : s->symbols())
      if (sym && sym->kind == kind && sym->declRange.begin == at) return sym;
    return nullptr;
  };
  for (auto& [path, mod] : a.sema->modules)
    if (mod && mod->module == a.module)
      if (auto* s = search(mod->scope)) return s;
  for (auto& [def, info] : a.sema->functions)
    if (info)
      if (auto* s = search(info->scope)) return s;
  return nullptr;
}

void targets(const Expr* e, std::set<const Expr*>& out) {
  if (!e) return;
  out.insert(e);
  if (auto* t = dyn_cast<TupleExpr>(e))
    for (const Expr* x : t->elements) targets(x, out);
  else if (auto* l = dyn_cast<ListExpr>(e))
    for (const Expr* x : l->elements) targets(x, out);
  else if (auto* s = dyn_cast<StarredExpr>(e))
    targets(s->value, out);
}
}  // namespace

const Symbol* moduleMember(const Symbol* module, const std::string& member) {
  if (!module || module->kind != SymbolKind::Module || !module->type || !module->type->module) return nullptr;
  Scope* scope = module->type->module->scope;
  return scope ? scope->lookupLocal(member) : nullptr;
}

const Symbol* lookupAt(const Analysis& a, uint32_t offset, const std::string& name) {
  if (!a.sema || !a.module) return nullptr;
  std::vector<const FunctionDefStmt*> fns = enclosingFunctions(*a.module, a.locAt(offset));
  for (auto it = fns.rbegin(); it != fns.rend(); ++it) {
    auto f = a.sema->functions.find(*it);
    if (f != a.sema->functions.end() && f->second && f->second->scope) return f->second->scope->lookup(name);
  }
  for (auto& [path, mod] : a.sema->modules)
    if (mod && mod->module == a.module && mod->scope) return mod->scope->lookup(name);
  return nullptr;
}

const Symbol* symbolOf(const Analysis& a, const Target& t) {
  switch (t.kind) {
    case Target::Name: return t.nameExpr->symbol;
    case Target::Attribute:  // act.relu6 with `import act_lib as act`
      if (auto* base = dyn_cast<NameExpr>(t.attr->base)) return moduleMember(base->symbol, t.attr->name);
      return nullptr;
    case Target::FunctionName: return declaredAt(a, t.range.begin, SymbolKind::Function);
    case Target::ParamName: return declaredAt(a, t.range.begin, SymbolKind::Parameter);
    default: return nullptr;
  }
}

std::vector<Occurrence> occurrencesOf(const Analysis& a, const Symbol* s) {
  std::vector<Occurrence> out;
  if (!s || !a.module) return out;
  bool declHere = s->declRange.valid() && a.sm.fileOf(s->declRange.begin) == a.file;
  std::set<const Expr*> written;
  walk(*a.module, [&](const Node* n) {
    if (auto* as = dyn_cast<AssignStmt>(n))
      for (const Expr* t : as->targets) targets(t, written);
    else if (auto* aa = dyn_cast<AugAssignStmt>(n))
      targets(aa->target, written);
    else if (auto* an = dyn_cast<AnnAssignStmt>(n))
      targets(an->target, written);
    else if (auto* f = dyn_cast<ForStmt>(n))
      targets(f->target, written);
    if (auto* nm = dyn_cast<NameExpr>(n))
      if (nm->symbol == s) {
        bool isDecl = declHere && nm->range.begin == s->declRange.begin;
        out.push_back({nm->range, isDecl, isDecl || written.count(nm) > 0});
      }
    return true;
  });
  if (declHere) {
    bool seen = std::any_of(out.begin(), out.end(), [](const Occurrence& o) { return o.isDeclaration; });
    if (!seen) out.push_back({nameRangeAt(a, s->declRange, s->name), true, true});
  }
  std::sort(out.begin(), out.end(),
            [](const Occurrence& x, const Occurrence& y) { return x.range.begin.offset < y.range.begin.offset; });
  return out;
}

}  // namespace tessera::lsp
