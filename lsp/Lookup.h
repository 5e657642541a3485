// What is under the cursor, and where else it occurs. Identifiers are found in the AST
// (function and parameter names, names, attribute names); their meaning comes from sema's
// NameExpr::symbol (and Expr::type for attributes). Occurrences of one symbol are the
// NameExprs that resolve to it plus its declaration.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "lsp/Analysis.h"

namespace tessera::lsp {

struct Target {
  enum Kind { None, Name, Attribute, FunctionName, ParamName } kind = None;
  SourceRange range;  // the identifier
  std::string name;
  const NameExpr* nameExpr = nullptr;
  const AttributeExpr* attr = nullptr;
  const FunctionDefStmt* function = nullptr;
  const Param* param = nullptr;
  const FunctionDefStmt* paramOwner = nullptr;
};

Target targetAt(const Analysis& a, uint32_t offset);

// An LSP Location for a range, in this document or (for imports) in another buffer of the
// same source manager. nullopt for an invalid range.
std::optional<json> locationOf(const Analysis& a, SourceRange r);

// The symbol the target means (nullptr when sema did not resolve it).
const Symbol* symbolOf(const Analysis& a, const Target& t);
// Every occurrence of `s` in this document, as identifier ranges, declaration first when it
// lies here; `isWrite` marks assignment targets and declarations.
struct Occurrence {
  SourceRange range;
  bool isDeclaration = false;
  bool isWrite = false;
};
std::vector<Occurrence> occurrencesOf(const Analysis& a, const Symbol* s);

// The symbol `name` means at `offset` (in the innermost enclosing function, else the module).
const Symbol* lookupAt(const Analysis& a, uint32_t offset, const std::string& name);
// The module-level symbol `member` of the user module `module` names (`import act_lib as act`:
// act.relu6), or nullptr when `module` is not an imported module or has no such member.
const Symbol* moduleMember(const Symbol* module, const std::string& member);

// Range of `name` starting at `r.begin` (declarations may cover more than the name).
SourceRange nameRangeAt(const Analysis& a, SourceRange r, const std::string& name);

}  // namespace tessera::lsp
