// Document symbols (a tree: functions with their parameters, locals and nested functions;
// module-level variables and constants) and workspace symbols (flat, over the open documents).
#include <algorithm>
#include <cctype>
#include <set>

#include "lsp/ASTWalk.h"
#include "lsp/Features.h"

namespace tessera::lsp {

namespace {
enum LspSymbolKind { kFunction = 12, kVariable = 13, kConstant = 14, kModule = 2 };

bool isConstantName(const std::string& n) {
  bool letter = false;
  for (char c : n) {
    if (std::islower(static_cast<unsigned char>(c))) return false;
    if (std::isupper(static_cast<unsigned char>(c))) letter = true;
  }
  return letter && n.size() > 1;
}

std::string decoratorText(const Analysis& a, const FunctionDefStmt* f) {
  std::string out;
  for (const Decorator& d : f->decorators) {
    if (!out.empty()) out += ' ';
    out += '@';
    out += a.sm.text(SourceRange(d.expr ? d.expr->range.begin : d.range.begin, d.range.end));
  }
  return out;
}

std::string signatureText(const Analysis& a, const FunctionDefStmt* f) {
  std::string s = "(";
  for (size_t i = 0; i < f->params.size(); ++i) {
    if (i) s += ", ";
    s += a.sm.text(f->params[i].range);
  }
  s += ")";
  if (f->returns) s += " -> " + std::string(a.sm.text(f->returns->range));
  return s;
}

json symbol(const Analysis& a, const std::string& name, int kind, SourceRange full, SourceRange sel,
            const std::string& detail = "") {
  if (!sel.valid()) sel = full;
  Range r = a.range(full), s = a.range(sel);
  json j = {{"name", name.empty() ? "<anonymous>" : name},
            {"kind", kind},
            {"range", toJSON(r)},
            {"selectionRange", toJSON(s)}};
  if (!detail.empty()) j["detail"] = detail;
  return j;
}

// Names bound by an assignment target (a, (a, b), *a).
void targetNames(const Expr* e, std::vector<const NameExpr*>& out) {
  if (!e) return;
  if (auto* n = dyn_cast<NameExpr>(e))
    out.push_back(n);
  else if (auto* t = dyn_cast<TupleExpr>(e))
    for (const Expr* x : t->elements) targetNames(x, out);
  else if (auto* l = dyn_cast<ListExpr>(e))
    for (const Expr* x : l->elements) targetNames(x, out);
  else if (auto* s = dyn_cast<StarredExpr>(e))
    targetNames(s->value, out);
}

void collect(const Analysis& a, const std::vector<Stmt*>& stmts, bool moduleLevel, json& out,
             std::set<std::string>& seen);

void collectBlock(const Analysis& a, const Block& b, bool moduleLevel, json& out, std::set<std::string>& seen) {
  collect(a, b.stmts, moduleLevel, out, seen);
}

json functionSymbol(const Analysis& a, const FunctionDefStmt* f) {
  std::string detail = decoratorText(a, f);
  if (!detail.empty()) detail += ' ';
  detail += signatureText(a, f);
  SourceRange full = f->range;
  if (!f->decorators.empty()) full.begin = f->decorators.front().range.begin;
  json sym = symbol(a, f->name, kFunction, full, f->nameRange, detail);
  json children = json::array();
  std::set<std::string> seen;
  for (const Param& p : f->params) {
    if (p.name.empty()) continue;
    seen.insert(p.name);
    children.push_back(symbol(a, p.name, kVariable, p.range, p.nameRange,
                              p.annotation ? std::string(a.sm.text(p.annotation->range)) : ""));
  }
  collectBlock(a, f->body, false, children, seen);
  sym["children"] = children;
  return sym;
}

void addTargets(const Analysis& a, const Expr* target, const Stmt* s, bool moduleLevel, json& out,
                std::set<std::string>& seen, const Expr* annotation = nullptr) {
  std::vector<const NameExpr*> names;
  targetNames(target, names);
  for (const NameExpr* n : names) {
    if (!seen.insert(n->name).second) continue;
    int kind = moduleLevel && isConstantName(n->name) ? kConstant : kVariable;
    out.push_back(
        symbol(a, n->name, kind, s->range, n->range, annotation ? std::string(a.sm.text(annotation->range)) : ""));
  }
}

// The symbols a statement declares, by its kind (frontend/ASTVisitor.h): a function (with its
// own children), the names its targets bind, and those of the statements nested in its blocks.
struct SymbolCollector : ConstASTVisitor<SymbolCollector> {
  const Analysis& a;
  bool moduleLevel;
  json& out;
  std::set<std::string>& seen;
  SymbolCollector(const Analysis& a, bool moduleLevel, json& out, std::set<std::string>& seen)
      : a(a), moduleLevel(moduleLevel), out(out), seen(seen) {}

  void targets(const Expr* target, const Stmt* s, const Expr* annotation = nullptr) {
    addTargets(a, target, s, moduleLevel, out, seen, annotation);
  }
  void nested(const Stmt* s) {
    forEachChild(s, [&](const Node* c) {
      if (isa<Stmt>(c)) visit(c);
    });
  }
  void visitFunctionDefStmt(const FunctionDefStmt* f) { out.push_back(functionSymbol(a, f)); }
  void visitAssignStmt(const AssignStmt* s) {
    for (const Expr* t : s->targets) targets(t, s);
  }
  void visitAnnAssignStmt(const AnnAssignStmt* s) { targets(s->target, s, s->annotation); }
  void visitForStmt(const ForStmt* s) {
    targets(s->target, s);
    nested(s);
  }
  void visitWithStmt(const WithStmt* s) {
    for (const WithItem& w : s->items) targets(w.target, s);
    nested(s);
  }
  void visitStmt(const Stmt* s) { nested(s); }  // if and while: their blocks
};

void collect(const Analysis& a, const std::vector<Stmt*>& stmts, bool moduleLevel, json& out,
             std::set<std::string>& seen) {
  for (const Stmt* s : stmts)
    if (s) SymbolCollector(a, moduleLevel, out, seen).visit(s);
}

// Case-insensitive subsequence match (the usual fuzzy filter of symbol pickers).
bool fuzzyMatch(const std::string& query, const std::string& name) {
  size_t qi = 0;
  for (size_t i = 0; i < name.size() && qi < query.size(); ++i)
    if (std::tolower(static_cast<unsigned char>(name[i])) == std::tolower(static_cast<unsigned char>(query[qi]))) ++qi;
  return qi == query.size();
}

void flatten(const json& syms, const std::string& uri, const std::string& container, const std::string& query,
             json& out) {
  for (const json& s : syms) {
    const std::string& name = s["name"].get_ref<const std::string&>();
    if (fuzzyMatch(query, name)) {
      json info = {{"name", name}, {"kind", s["kind"]}, {"location", {{"uri", uri}, {"range", s["selectionRange"]}}}};
      if (!container.empty()) info["containerName"] = container;
      out.push_back(std::move(info));
    }
    // Locals stay out of the workspace list; nested functions are listed.
    if (s.contains("children"))
      for (const json& c : s["children"])
        if (c["kind"] == kFunction) flatten(json::array({c}), uri, name, query, out);
  }
}
}  // namespace

json documentSymbols(const Analysis& a) {
  json out = json::array();
  if (!a.module) return out;
  std::set<std::string> seen;
  collect(a, a.module->stmts, true, out, seen);
  return out;
}

json workspaceSymbols(const std::vector<std::shared_ptr<const Analysis>>& docs, const std::string& query) {
  json out = json::array();
  for (const auto& a : docs) {
    json top = documentSymbols(*a);
    flatten(top, a->uri, "", query, out);
  }
  return out;
}

}  // namespace tessera::lsp
