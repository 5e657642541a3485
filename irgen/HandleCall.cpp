// Calls: casts (`f16(x)`), calls of device functions (lowered once per argument types), and
// builtins, dispatched on their id to the handler that BuiltinTable.cpp names.
#include "irgen/FunctionContext.h"

namespace tessera::irgen {

Expr* FunctionContext::argument(CallExpr* e, const BuiltinInfo& b, const char* name) {
  size_t pos = 0;
  for (size_t p = 0; p < b.sig.params.size(); ++p) {
    const BuiltinParam& bp = b.sig.params[p];
    if (bp.variadic) {
      pos = SIZE_MAX / 2;  // later parameters are keyword-only
      continue;
    }
    if (bp.name == name) {
      for (const Argument& a : e->args)
        if (a.kind == Argument::Keyword && a.keyword == name) return a.value;
      if (bp.keywordOnly) return nullptr;
      size_t k = 0;
      for (const Argument& a : e->args)
        if (a.kind == Argument::Positional) {
          if (k == pos) return a.value;
          ++k;
        }
      return nullptr;
    }
    if (!bp.keywordOnly) ++pos;
  }
  return nullptr;
}

Lowered FunctionContext::lowerCall(CallExpr* e, I::Type want) {
  const Type* ct = e->callee->type;
  if (!ct) unsupported(e->range, "this call");
  switch (ct->kind) {
    case TypeKind::Builtin:
      if (!ct->builtin) break;
      return lowerBuiltin(*ct->builtin, ct->typeArg, e, want);
    case TypeKind::DTypeValue: return lowerCast(ct, e);
    case TypeKind::Function: return lowerUserCall(ct, e);
    default: break;
  }
  unsupported(e->range, "calling '" + text(e->callee->range) + "'");
}

Lowered FunctionContext::lowerCast(const Type* dt, CallExpr* e) {
  if (e->args.size() != 1) unsupported(e->range, "this cast");
  I::Type to = scalarType(dt->dtype, dt->policy);
  I::Value* v = value(lower(e->args[0].value, to), e->args[0].value->range);
  loc(e);
  if (I::isView(v->type)) v = asTile(v, e->range);
  return Lowered::val(convertElem(v, to, e->range));
}

Lowered FunctionContext::lowerBuiltin(const BuiltinInfo& b, const Type* typeArg, CallExpr* e, I::Type want) {
  BuiltinCall call{b, typeArg, e, want, {}};
  for (const Argument& a : e->args) {
    if (a.kind == Argument::Star || a.kind == Argument::DoubleStar) unsupported(a.range, "'*' arguments");
    if (a.kind == Argument::Positional) call.positional.push_back(a.value);
  }
  return BuiltinTable::dispatch(*this, call);
}

Lowered FunctionContext::lowerUserCall(const Type* fnType, CallExpr* e) {
  const FunctionDefStmt* f = fnType->function;
  if (!f) unsupported(e->range, "calling '" + text(e->callee->range) + "'");
  if (fnType->functionKind != FunctionKind::Plain) unsupported(e->range, "calling '" + f->name + "' from a kernel");
  // Bind arguments to parameters (positional, then keywords).
  std::vector<const Param*> normals;
  for (const Param& p : f->params) {
    if (p.paramKind == Param::VarArgs || p.paramKind == Param::KwArgs)
      unsupported(p.range, "a device function with '*' parameters");
    if (p.paramKind == Param::Normal && !p.name.empty()) normals.push_back(&p);
  }
  std::vector<Expr*> bound(normals.size(), nullptr);
  size_t pos = 0;
  for (const Argument& a : e->args) {
    if (a.kind == Argument::Positional) {
      if (pos < bound.size()) bound[pos++] = a.value;
    } else if (a.kind == Argument::Keyword) {
      for (size_t i = 0; i < normals.size(); ++i)
        if (normals[i]->name == a.keyword) bound[i] = a.value;
    } else {
      unsupported(a.range, "'*' arguments");
    }
  }
  std::vector<I::Value*> args;
  std::vector<I::Type> types;
  const FunctionInfo* fi = ml_.info(f);
  for (size_t i = 0; i < normals.size(); ++i) {
    const Param& p = *normals[i];
    Expr* a = bound[i] ? bound[i] : p.defaultValue;
    if (!a) unsupported(e->range, "a call that leaves parameter '" + p.name + "' unbound");
    const Type* pt = fi && fi->type && i < fi->type->elems.size() ? fi->type->elems[i] : nullptr;
    I::Type want = pt && pt->kind == TypeKind::Scalar ? scalarType(pt->dtype, pt->policy) : nullptr;
    I::Value* v = value(lower(a, want), a->range);
    if (want) v = coerce(v, want, a->range);
    args.push_back(v);
    types.push_back(v->type);
  }
  loc(e);
  ModuleContext::DeviceFn fn;
  if (!ml_.device(f, types, e->range, fn)) abort();
  I::Operation* call = op(I::OpId::FuncCall, args, fn.results, {{"callee", I::Attribute::symbol(fn.name)}});
  if (call->numResults() == 0) return Lowered();
  if (call->numResults() == 1) return Lowered::val(call->result());
  std::vector<Lowered> rs;
  for (unsigned i = 0; i < call->numResults(); ++i) rs.push_back(Lowered::val(call->result(i)));
  return Lowered::tuple(std::move(rs));
}

Lowered FunctionContext::unsupportedBuiltin(const BuiltinCall& c) {
  unsupported(c.range(), "'" + text(c.expr->callee->range) + "'");
}

// Builtins of both contexts that have no meaning in a kernel.
Lowered FunctionContext::handlePrint(const BuiltinCall& c) { return unsupportedBuiltin(c); }
Lowered FunctionContext::handleDict(const BuiltinCall& c) { return unsupportedBuiltin(c); }
Lowered FunctionContext::handleTensorType(const BuiltinCall& c) { return unsupportedBuiltin(c); }
Lowered FunctionContext::handleTensorTypeCap(const BuiltinCall& c) { return unsupportedBuiltin(c); }
Lowered FunctionContext::handleRegionType(const BuiltinCall& c) { return unsupportedBuiltin(c); }

}  // namespace tessera::irgen
