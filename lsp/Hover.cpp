// Hover: a local's or parameter's type (dtype, numeric policy, shape), a function's signature
// and docstring (a kernel's group shape and shared memory too), a builtin's signature and doc
// from the builtins table, a dtype's or policy's doc. The types come from sema; a build without
// sema shows the declarations as written.
#include "lsp/ASTWalk.h"
#include "lsp/BuiltinDocs.h"
#include "lsp/Features.h"
#include "lsp/Lookup.h"

namespace tessera::lsp {

namespace {
std::string code(const std::string& s) { return "```tessera\n" + s + "\n```"; }

std::string functionHeader(const Analysis& a, const FunctionDefStmt* f) {
  std::string s;
  for (const Decorator& d : f->decorators)
    s += "@" + std::string(a.sm.text(SourceRange(d.expr ? d.expr->range.begin : d.range.begin, d.range.end))) + "\n";
  s += "def " + f->name + "(";
  for (size_t i = 0; i < f->params.size(); ++i) s += (i ? ", " : "") + std::string(a.sm.text(f->params[i].range));
  s += ")";
  if (f->returns) s += " -> " + std::string(a.sm.text(f->returns->range));
  return s;
}

std::string sizeText(long long bytes) {
  if (bytes >= 1024 && bytes % 1024 == 0) return std::to_string(bytes / 1024) + " KiB";
  return std::to_string(bytes) + " B";
}

std::string functionMarkdown(const Analysis& a, const FunctionDefStmt* f) {
  std::string s = code(functionHeader(a, f));
  if (a.sema) {
    auto it = a.sema->functions.find(f);
    if (it != a.sema->functions.end() && it->second) {
      const FunctionInfo& info = *it->second;
      if (info.isKernel()) {
        s += "\n\nKernel";
        if (!info.groupShape.empty()) {
          s += ", group shape (";
          for (size_t i = 0; i < info.groupShape.size(); ++i) s += (i ? ", " : "") + std::to_string(info.groupShape[i]);
          s += info.groupShape.size() == 1 ? ",)" : ")";
        }
        if (info.sharedBudget >= 0) s += ", shared memory budget " + sizeText(info.sharedBudget);
        if (!info.deterministic) s += ", non-deterministic";
        if (!info.shapeBindings.empty()) {
          s += "\n\nShape symbols: ";
          for (size_t i = 0; i < info.shapeBindings.size(); ++i) {
            const ShapeBinding& b = info.shapeBindings[i];
            s += (i ? ", " : "") + ("`" + b.symbol + "` = " + b.param + ".shape[" + std::to_string(b.dim) + "]");
          }
        }
      }
      if (info.type && info.type->result) s += "\n\nReturns `" + info.type->result->str() + "`";
    }
  }
  if (!f->docstring.empty()) s += "\n\n" + f->docstring;
  return s;
}

std::string symbolMarkdown(const Analysis& a, const Symbol* s, const Expr* use) {
  const Type* t = use && use->type ? use->type : s->type;
  std::string ty = t && !t->isError() ? t->str() : "?";
  switch (s->kind) {
    case SymbolKind::Parameter: return code("(parameter) " + s->name + ": " + ty);
    case SymbolKind::Variable: return code("(variable) " + s->name + ": " + ty);
    case SymbolKind::Function:
      if (s->function) return functionMarkdown(a, s->function);
      return code("(function) " + s->name);
    case SymbolKind::Builtin:
      if (s->builtin) return builtinMarkdown(*s->builtin);
      break;
    case SymbolKind::Namespace: {
      std::string m = code("(namespace) " + s->name) + "\n\nMembers: ";
      auto members = builtinMembers(s->name);
      for (size_t i = 0; i < members.size(); ++i) m += (i ? ", `" : "`") + members[i] + "`";
      return m;
    }
    case SymbolKind::Module: return code("(module) " + s->name);
    case SymbolKind::DType:
      if (auto d = lookupDType(s->name)) return dtypeMarkdown(*d, s->name);
      break;
    case SymbolKind::ShapeSymbol: return code("(shape symbol) " + s->name + ": " + ty);
    case SymbolKind::Constant:
      return code("(constant) " + s->name + ": " + ty + (s->value ? " = " + s->value->str() : ""));
    case SymbolKind::AutotuneParam: {
      std::string c;
      for (size_t i = 0; i < s->candidates.size(); ++i) c += (i ? ", " : "") + std::to_string(s->candidates[i]);
      return code("(autotune parameter) " + s->name + ": " + ty) + "\n\nCandidates: " + c;
    }
  }
  return code(std::string("(") + symbolKindName(s->kind) + ") " + s->name + ": " + ty);
}

std::string typeMarkdown(const Analysis& a, const Target& t) {
  const Type* ty = t.attr->type;
  if (!ty) return "";
  if (ty->kind == TypeKind::Builtin && ty->builtin) return builtinMarkdown(*ty->builtin);
  if (ty->kind == TypeKind::Namespace) return code("(namespace) " + ty->name);
  if (ty->kind == TypeKind::DTypeValue) return dtypeMarkdown(ty->dtype, t.name);
  if (ty->kind == TypeKind::Function && ty->function) return functionMarkdown(a, ty->function);
  return code("(attribute) " + t.name + ": " + ty->str());
}
}  // namespace

json hover(const Analysis& a, uint32_t offset) {
  Target t = targetAt(a, offset);
  std::string md;
  if (const Symbol* s = symbolOf(a, t)) {
    md = symbolMarkdown(a, s, t.nameExpr);
  } else if (t.kind == Target::Attribute) {
    md = typeMarkdown(a, t);
  } else if (t.kind == Target::Name) {
    // Unresolved: builtins and policies by name (`accum` in `fp6 @accum(fp32)`).
    if (auto* b = lookupBuiltin(stripTesseraPrefix(t.name)))
      md = builtinMarkdown(*b);
    else if (auto p = lookupPolicy(t.name))
      md = policyMarkdown(policyInfo(*p));
    else if (auto d = lookupDType(t.name))
      md = dtypeMarkdown(*d, t.name);
  }
  if (md.empty()) {
    // Declarations as written (always available, with or without sema).
    if (t.kind == Target::FunctionName)
      md = code(functionHeader(a, t.function)) + (t.function->docstring.empty() ? "" : "\n\n" + t.function->docstring);
    else if (t.kind == Target::ParamName)
      md = code("(parameter) " + std::string(a.sm.text(t.param->range)));
  }
  if (md.empty()) return nullptr;
  return json{{"contents", {{"kind", "markdown"}, {"value", md}}}, {"range", toJSON(a.range(t.range))}};
}

}  // namespace tessera::lsp
