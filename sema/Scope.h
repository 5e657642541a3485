// Lexical scopes. Lookup walks outwards to the prelude, whose symbols (builtins, namespaces,
// dtype names, `tessera`) are made on first use.
#pragma once

#include <deque>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "sema/Symbol.h"

namespace tessera {

class SymbolTable;

class Scope {
 public:
  enum Kind : uint8_t { Prelude, Module, Function, Comprehension };
  Scope(Kind k, Scope* parent, SymbolTable& table) : kind(k), parent(parent), table_(table) {}

  Symbol* lookupLocal(const std::string& name);
  Symbol* lookup(const std::string& name);
  void declare(Symbol* s) { symbols_[s->name] = s; }
  // Every name visible from here (for did-you-mean suggestions).
  std::vector<std::string> visibleNames() const;
  const std::map<std::string, Symbol*>& symbols() const { return symbols_; }

  Kind kind;
  Scope* parent;
  FunctionInfo* function = nullptr;

 private:
  SymbolTable& table_;
  std::map<std::string, Symbol*> symbols_;
};

// Owns symbols and scopes; makes prelude symbols.
class SymbolTable {
 public:
  explicit SymbolTable(TypeContext& types) : types_(types) {}
  Symbol* make(SymbolKind k, std::string name, SourceRange decl, const Type* type);
  Scope* makeScope(Scope::Kind k, Scope* parent);
  // A prelude symbol for `name`, or nullptr.
  Symbol* preludeSymbol(const std::string& name);
  TypeContext& types() { return types_; }

 private:
  TypeContext& types_;
  std::deque<std::unique_ptr<Symbol>> symbols_;
  std::deque<std::unique_ptr<Scope>> scopes_;
  std::map<std::string, Symbol*> prelude_;
};

}  // namespace tessera
