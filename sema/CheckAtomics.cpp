// The rules of atomic builtins (docs/language.md, "Atomics"): what they may update, the element
// types code generation takes, and determinism. Integer add, sub, min and max leave the same
// bits whatever order tiles run in, but the old value each call returns does not: in a
// deterministic kernel (and in helper functions, which cannot opt out) it must be discarded.
// Floating-point add and sub round differently in every order, and exch and cas pick a winner
// by scheduling: those need @kernel(deterministic=False).
#include "sema/Checker.h"
#include "sema/SemaDiagnostics.h"

namespace tessera {

void Checker::checkAtomicCall(const BoundBuiltinCall& bc, SourceRange at) {
  const BuiltinInfo& b = bc.b;
  Expr* refArg = bc.arg("ref");
  auto* ref = refArg ? dyn_cast<SubscriptExpr>(refArg) : nullptr;
  if (!ref || !ref->base || !ref->base->type) return;
  const Type* base = ref->base->type;
  // The memory by its name, so that AtomicAccess.cpp sees every other use of it.
  auto* name = dyn_cast<NameExpr>(ref->base);
  const Symbol* sym = name ? name->symbol : nullptr;
  bool direct = sym && (sym->kind == SymbolKind::Parameter || base->kind == TypeKind::Shared);
  if (!base->isError() &&
      (!direct || !(base->kind == TypeKind::Tensor || base->kind == TypeKind::Shared || base->isDynamic()))) {
    diags.report(diag::err_atomic_ref, ref->base->range) << b.name << text(ref->base->range);
    return;
  }
  DType d;
  if (base->kind == TypeKind::Tensor || base->kind == TypeKind::Shared) {
    d = base->dtype;
  } else if (base->isDynamic()) {
    // An unannotated kernel parameter is compiled as an f32 tensor (docs/language.md, section 2).
    Symbol* p = rootParam(ref);
    if (!p || !p->param || p->param->annotation) return;
    d = DType::FP32;
  } else {
    return;
  }
  bool fpKind = b.id == BuiltinId::AtomicAdd || b.id == BuiltinId::AtomicSub || b.id == BuiltinId::AtomicExch;
  unsigned bits = dtypeInfo(d).bits;
  bool fp = isFloat(d);
  if (!(bits == 32 || bits == 64) || !(isInteger(d) || (fp && fpKind))) {
    diags.report(diag::err_atomic_dtype, at)
        << b.name << dtypeInfo(d).shortName << (fpKind ? "i32, u32, i64, u64, f32, f64" : "i32, u32, i64, u64");
    return;
  }
  bool deterministic = fn_->deterministic;
  if (fp && deterministic && !b.has(eff::NonDeterministic))
    diags.report(diag::err_float_atomic, at) << b.name << dtypeInfo(d).shortName;
  // Kernels get err_nondeterministic_builtin from checkBuiltinUse; helper functions here.
  if (b.has(eff::NonDeterministic) && !inKernel()) diags.report(diag::err_nondeterministic_builtin, at) << text(at);
  if (deterministic && !(fp || b.has(eff::NonDeterministic)) && bc.call != statementExpr_)
    diags.report(diag::err_atomic_result_used, bc.call->range) << b.name;
  const Type* elem = T.scalar(d);
  for (const char* name : {"compare", "value"})
    if (Expr* v = bc.arg(name); v && v->type) checkConversion(v->type, elem, v->range, false, v);
}

}  // namespace tessera
