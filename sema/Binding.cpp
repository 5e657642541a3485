#include "sema/Binding.h"

#include <cstdint>

#include "sema/Builtins.h"

namespace tessera {

std::vector<ParamSpec> paramSpecs(const BuiltinSignature& sig) {
  std::vector<ParamSpec> out;
  for (const BuiltinParam& p : sig.params) out.push_back({p.name, p.optional, p.keywordOnly, p.variadic});
  return out;
}

std::vector<ParamSpec> paramSpecs(const FunctionDefStmt& f) {
  std::vector<ParamSpec> out;
  for (const Param& p : f.params)
    if (p.paramKind == Param::Normal && !p.name.empty())
      out.push_back({p.name, p.defaultValue != nullptr, false, false});
  return out;
}

Expr* CallBinding::arg(std::string_view name) const {
  for (size_t p = 0; p < names.size(); ++p)
    if (names[p] == name) return args[p];
  return nullptr;
}

CallBinding bindArguments(const std::vector<ParamSpec>& params, bool anyKeywords, const CallExpr& call,
                          std::vector<BindError>& errors) {
  CallBinding b;
  for (const ParamSpec& p : params) b.names.push_back(p.name);
  b.args.assign(params.size(), nullptr);
  b.argIndex.assign(params.size(), SIZE_MAX);
  size_t next = 0;
  for (size_t i = 0; i < call.args.size(); ++i) {
    const Argument& a = call.args[i];
    if (a.kind == Argument::Star || a.kind == Argument::DoubleStar) {
      b.star = true;
    } else if (a.kind == Argument::Positional) {
      while (next < params.size() && params[next].keywordOnly && !params[next].variadic) ++next;
      if (next < params.size() && params[next].variadic) {
        b.variadic.push_back(a.value);
        b.variadicIndex.push_back(i);
      } else if (next < params.size()) {
        b.args[next] = a.value;
        b.argIndex[next] = i;
        ++next;
      } else {
        errors.push_back({BindError::TooManyPositional, i});
      }
    } else if (a.kind == Argument::Keyword) {
      size_t idx = SIZE_MAX;
      for (size_t p = 0; p < params.size(); ++p)
        if (params[p].name == a.keyword && !params[p].variadic) idx = p;
      if (idx == SIZE_MAX) {
        if (!anyKeywords) errors.push_back({BindError::UnknownKeyword, i});
      } else if (b.args[idx]) {
        errors.push_back({BindError::DuplicateKeyword, i});
      } else {
        b.args[idx] = a.value;
        b.argIndex[idx] = i;
      }
    }
  }
  return b;
}

}  // namespace tessera
