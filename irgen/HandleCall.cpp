// Calls: casts (`f16(x)`), calls of device functions (lowered once per argument types), and
// builtins, dispatched on their id to the handler that BuiltinTable.cpp names.
#include "irgen/FunctionContext.h"

namespace tessera::irgen {

// The argument bound to parameter `name` of the call, as sema bound it (sema/Binding.h).
Expr* FunctionContext::argument(CallExpr* e, const BuiltinInfo& b, const char* name) {
  const CallBinding* binding = bindingOf(e);
  return binding ? binding->arg(name) : nullptr;
}

const CallBinding* FunctionContext::bindingOf(CallExpr* e) {
  auto it = ml_.sema.bindings.find(e);
  return it == ml_.sema.bindings.end() ? nullptr : &it->second;
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
  std::vector<const Param*> normals;
  for (const Param& p : f->params) {
    if (p.paramKind == Param::VarArgs || p.paramKind == Param::KwArgs)
      unsupported(p.range, "a device function with '*' parameters");
    if (p.paramKind == Param::Normal && !p.name.empty()) normals.push_back(&p);
  }
  for (const Argument& a : e->args)
    if (a.kind == Argument::Star || a.kind == Argument::DoubleStar) unsupported(a.range, "'*' arguments");
  const CallBinding* binding = bindingOf(e);
  if (!binding || binding->args.size() != normals.size()) unsupported(e->range, "this call");
  const std::vector<Expr*>& bound = binding->args;
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
  I::Operation* call = op(I::OpId::FuncCall, args, fn.results, {{I::AttrId::Callee, I::Attribute::symbol(fn.name)}});
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
Lowered FunctionContext::handleDict(const BuiltinCall& c) { return unsupportedBuiltin(c); }
Lowered FunctionContext::handleTensorType(const BuiltinCall& c) { return unsupportedBuiltin(c); }
Lowered FunctionContext::handleTensorTypeCap(const BuiltinCall& c) { return unsupportedBuiltin(c); }
Lowered FunctionContext::handleRegionType(const BuiltinCall& c) { return unsupportedBuiltin(c); }

}  // namespace tessera::irgen
