#include "sema/Scope.h"

#include <set>

namespace tessera {

const char* symbolKindName(SymbolKind k) {
  switch (k) {
    case SymbolKind::Variable: return "variable";
    case SymbolKind::Parameter: return "parameter";
    case SymbolKind::Function: return "function";
    case SymbolKind::Builtin: return "builtin";
    case SymbolKind::Namespace: return "namespace";
    case SymbolKind::Module: return "module";
    case SymbolKind::DType: return "dtype";
    case SymbolKind::ShapeSymbol: return "shape symbol";
    case SymbolKind::Constant: return "constant";
    case SymbolKind::AutotuneParam: return "autotune parameter";
  }
  return "?";
}

std::string ConstValue::str() const {
  switch (kind) {
    case Int: return std::to_string(i);
    case Float: {
      char buf[32];
      snprintf(buf, sizeof buf, "%g", f);
      return buf;
    }
    case Bool: return b ? "True" : "False";
    case Str: return "\"" + s + "\"";
  }
  return "?";
}

Symbol* Scope::lookupLocal(const std::string& name) {
  if (kind == Prelude) return table_.preludeSymbol(name);
  auto it = symbols_.find(name);
  return it == symbols_.end() ? nullptr : it->second;
}

Symbol* Scope::lookup(const std::string& name) {
  for (Scope* s = this; s; s = s->parent)
    if (Symbol* sym = s->lookupLocal(name)) return sym;
  return nullptr;
}

std::vector<std::string> Scope::visibleNames() const {
  std::set<std::string> out;
  for (const Scope* s = this; s; s = s->parent) {
    for (auto& [n, sym] : s->symbols_) out.insert(n);
    if (s->kind == Prelude) {
      for (const std::string& n : preludeNames()) out.insert(n);
      for (auto& [n, d] : allDTypeSpellings()) out.insert(n);
    }
  }
  return {out.begin(), out.end()};
}

Symbol* SymbolTable::make(SymbolKind k, std::string name, SourceRange decl, const Type* type) {
  auto s = std::make_unique<Symbol>();
  s->kind = k;
  s->name = std::move(name);
  s->declRange = decl;
  s->type = type;
  symbols_.push_back(std::move(s));
  return symbols_.back().get();
}

Scope* SymbolTable::makeScope(Scope::Kind k, Scope* parent) {
  scopes_.push_back(std::make_unique<Scope>(k, parent, *this));
  return scopes_.back().get();
}

Symbol* SymbolTable::preludeSymbol(const std::string& name) {
  auto it = prelude_.find(name);
  if (it != prelude_.end()) return it->second;
  Symbol* sym = nullptr;
  if (name == "tessera") {
    sym = make(SymbolKind::Namespace, name, SourceRange(), types_.ns(""));
  } else if (auto d = lookupDType(name)) {
    sym = make(SymbolKind::DType, name, SourceRange(), types_.dtypeValue(*d));
  } else if (const BuiltinInfo* b = lookupBuiltin(name)) {
    sym = make(SymbolKind::Builtin, name, SourceRange(), types_.builtin(b));
    sym->builtin = b;
  } else if (isBuiltinNamespace(name)) {
    sym = make(SymbolKind::Namespace, name, SourceRange(), types_.ns(name));
  }
  if (sym) prelude_[name] = sym;
  return sym;
}

}  // namespace tessera
