// Argument binding: which argument of a call each parameter gets. One binder for builtin calls
// (their signatures in Builtins.def) and calls of user functions (their definitions); sema binds
// every call it checks and records the result (SemaContext::bindings), and irgen reads it
// instead of binding again.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "frontend/AST.h"

namespace tessera {

struct BuiltinSignature;

// A parameter as the binder sees it.
struct ParamSpec {
  std::string name;
  bool optional = false;     // may be left unbound (a default, `= ?`)
  bool keywordOnly = false;  // only `name=` binds it
  bool variadic = false;     // *rest: takes every further positional argument
};
std::vector<ParamSpec> paramSpecs(const BuiltinSignature& sig);
// The named, non-star parameters of a user function, in order (positional or keyword).
std::vector<ParamSpec> paramSpecs(const FunctionDefStmt& f);

// A mistake of the call, at argument `arg` (an index into CallExpr::args).
struct BindError {
  enum Kind { TooManyPositional, UnknownKeyword, DuplicateKeyword } kind;
  size_t arg;
};

// The result of binding one call.
struct CallBinding {
  std::vector<std::string> names;  // the parameters, in order
  std::vector<Expr*> args;         // per parameter: its argument, or null
  std::vector<size_t> argIndex;    // per parameter: the index in CallExpr::args (SIZE_MAX: none)
  std::vector<Expr*> variadic;     // the arguments of a *rest parameter
  std::vector<size_t> variadicIndex;
  bool star = false;  // the call passes *args or **kwargs: nothing is known
  // The argument of parameter `name`, or null.
  Expr* arg(std::string_view name) const;
};

// Binds positional arguments in order (skipping keyword-only parameters; a variadic parameter
// takes the rest) and keyword arguments by name. Unknown keywords are errors unless
// `anyKeywords` (a `**` signature). Missing required parameters are the caller's to report.
CallBinding bindArguments(const std::vector<ParamSpec>& params, bool anyKeywords, const CallExpr& call,
                          std::vector<BindError>& errors);

}  // namespace tessera
