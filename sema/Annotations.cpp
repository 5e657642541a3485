// Types written by the programmer: parameter and variable annotations (dtypes, tensors with
// symbolic shapes, mut, Region privileges), numeric policies, and the kernel declaration
// (decorators and their clauses).
#include <algorithm>
#include <cmath>

#include "frontend/ASTVisitor.h"
#include "sema/Checker.h"
#include "sema/SemaDiagnostics.h"

namespace tessera {

namespace {
const char* kHostTypeNames[] = {"str", "list", "dict", "tuple", "any", "Any", "object"};

std::string nameOf(Expr* e) {
  if (auto* n = dyn_cast<NameExpr>(e)) return n->name;
  if (auto* a = dyn_cast<AttributeExpr>(e))
    if (auto* b = dyn_cast<NameExpr>(a->base); b && (b->name == "tessera" || b->name == "ts")) return a->name;
  return "";
}

bool looksLikeDType(Expr* e) {
  if (auto* b = dyn_cast<BinaryExpr>(e); b && b->op == BinaryOp::MatMul) return looksLikeDType(b->lhs);
  std::string n = nameOf(e);
  return !n.empty() && (lookupDType(n) || dtypeMathMode(n));
}

// `flaot` as the last index of `tensor[m, flaot]`: close to a dtype name, so a misspelt dtype
// rather than a shape symbol.
bool looksLikeMisspeltDType(Expr* e) {
  if (auto* b = dyn_cast<BinaryExpr>(e); b && b->op == BinaryOp::MatMul) return true;
  auto* n = dyn_cast<NameExpr>(e);
  if (!n) return false;
  std::vector<std::string> cands;
  for (auto& [sp, d] : allDTypeSpellings()) cands.push_back(sp);
  return !closestMatch(n->name, cands).empty();
}
}  // namespace

void Checker::reportUnknownDType(Expr* e, const std::string& name) {
  if (const char* doc = dtypeMathMode(name)) {
    diags.report(diag::err_math_mode_not_dtype, e->range) << name << doc;
    return;
  }
  std::vector<std::string> cands;
  for (auto& [sp, d] : allDTypeSpellings()) cands.push_back(sp);
  std::string best = closestMatch(name, cands);
  if (!best.empty())
    diags.report(diag::err_unknown_dtype_suggest, e->range)
            .fixit(e->range, isa<StringLiteralExpr>(e) ? '"' + best + '"' : best)
        << name << best;
  else
    diags.report(diag::err_unknown_dtype, e->range) << name;
}

bool Checker::dtypeFromExpr(Expr* e, DType& d, NumericPolicy& policy, bool reportUnknown) {
  if (!e) return false;
  if (auto* b = dyn_cast<BinaryExpr>(e); b && b->op == BinaryOp::MatMul) {
    if (!dtypeFromExpr(b->lhs, d, policy, reportUnknown)) return false;
    applyPolicy(b->rhs, d, policy);
    return true;
  }
  std::string n = nameOf(e);
  if (auto* s = dyn_cast<StringLiteralExpr>(e)) n = s->value;
  if (!n.empty()) {
    if (auto x = lookupDType(n)) {
      d = *x;
      return true;
    }
    if (reportUnknown) reportUnknownDType(e, n);
    return false;
  }
  if (isa<ErrorExpr>(e)) return false;
  if (reportUnknown) diags.report(diag::err_not_a_type, e->range) << text(e->range);
  return false;
}

void Checker::applyPolicy(Expr* pe, DType storage, NumericPolicy& policy) {
  if (!pe) return;
  std::string name;
  std::vector<Expr*> args;
  SourceRange nameRange = pe->range;
  if (auto* n = dyn_cast<NameExpr>(pe)) {
    name = n->name;
  } else if (auto* c = dyn_cast<CallExpr>(pe); c && isa<NameExpr>(c->callee)) {
    name = cast<NameExpr>(c->callee)->name;
    nameRange = c->callee->range;
    for (Argument& a : c->args) args.push_back(a.value);
  } else if (isa<ErrorExpr>(pe)) {
    return;
  } else {
    diags.report(diag::err_unknown_policy, pe->range) << text(pe->range);
    return;
  }
  auto p = lookupPolicy(name);
  if (!p) {
    std::string best = closestMatch(name, allPolicyNames());
    if (!best.empty())
      diags.report(diag::err_unknown_policy_suggest, nameRange).fixit(nameRange, best) << name << best;
    else
      diags.report(diag::err_unknown_policy, nameRange) << name;
    return;
  }
  const PolicyInfo& info = policyInfo(*p);
  if (args.size() < info.minArgs || args.size() > info.maxArgs) {
    std::string want = info.minArgs == info.maxArgs
                           ? std::to_string(info.minArgs)
                           : std::to_string(info.minArgs) + " to " + std::to_string(info.maxArgs);
    diags.report(diag::err_policy_arity, pe->range) << name << want << args.size();
    return;
  }
  auto setRound = [&](RoundMode m, const char* source) {
    if (!isFloat(storage)) {
      diags.report(diag::err_policy_on_non_float, nameRange) << source << dtypeInfo(storage).shortName;
      return;
    }
    if (policy.round) {
      if (policy.roundSource && std::string(policy.roundSource) == source)
        diags.report(diag::err_policy_duplicate, nameRange) << source;
      else
        diags.report(diag::err_round_conflict, nameRange)
            << (policy.roundSource ? policy.roundSource : "round") << source;
      return;
    }
    policy.round = m;
    policy.roundSource = source;
  };
  switch (*p) {
    case Policy::Accum: {
      DType a;
      NumericPolicy inner;
      if (!dtypeFromExpr(args[0], a, inner, true)) return;
      if (policy.accum) {
        diags.report(diag::err_policy_duplicate, nameRange) << name;
        return;
      }
      if (a == DType::BOOL) {
        diags.report(diag::err_accum_bool, args[0]->range);
        return;
      }
      if (!widensTo(storage, a)) {
        diags.report(diag::err_accum_narrower, args[0]->range) << dtypeInfo(a).name << dtypeInfo(storage).name;
        return;
      }
      policy.accum = a;
      return;
    }
    case Policy::Round: {
      std::string mode;
      if (auto* n = dyn_cast<NameExpr>(args[0]))
        mode = n->name;
      else if (auto* s = dyn_cast<StringLiteralExpr>(args[0]))
        mode = s->value;
      else
        mode = text(args[0]->range);
      auto m = lookupRoundMode(mode);
      if (!m) {
        diags.report(diag::err_unknown_round_mode, args[0]->range) << mode;
        return;
      }
      setRound(*m, "round");
      return;
    }
    case Policy::StochasticRound: setRound(RoundMode::Stochastic, "stochastic_round"); return;
    case Policy::Saturate:
      if (!isFloat(storage)) {
        diags.report(diag::err_policy_on_non_float, nameRange) << name << dtypeInfo(storage).shortName;
        return;
      }
      if (policy.saturate) {
        diags.report(diag::err_policy_duplicate, nameRange) << name;
        return;
      }
      policy.saturate = true;
      return;
    case Policy::Scale: {
      if (!policy.scale.empty()) {
        diags.report(diag::err_policy_duplicate, nameRange) << name;
        return;
      }
      if (!isFloat(storage)) {
        diags.report(diag::err_policy_on_non_float, nameRange) << name << dtypeInfo(storage).shortName;
        return;
      }
      // One scale per tensor, known when the kernel is compiled: stores divide by it and loads
      // multiply by it. Per-block scales (a second argument) and run-time scales are not
      // generated yet, so they are refused here rather than ignored.
      auto v = args.size() == 1 ? evalConst(args[0], nullptr) : std::nullopt;
      if (!v || !v->isNumber()) {
        diags.report(diag::err_scale_not_constant, args.size() == 1 ? args[0]->range : args[1]->range);
        return;
      }
      double value = v->asDouble();
      if (!(value > 0) || !std::isfinite(value)) {
        diags.report(diag::err_scale_not_positive, args[0]->range) << text(args[0]->range);
        return;
      }
      for (size_t i = 0; i < args.size(); ++i) policy.scale += (i ? "," : "") + text(args[i]->range);
      policy.scaleValue = value;
      return;
    }
    default: return;
  }
}

namespace {
// The extent an annotation's dimension spells, by its form (frontend/ASTVisitor.h): a positive
// constant, a shape symbol (declared at its first use in a signature), or arithmetic on them;
// "?" after an error.
struct ExtentReader : ASTVisitor<ExtentReader, Extent> {
  Checker& c;
  TypeContext& T;
  const std::string& paramName;
  unsigned dim;
  ExtentReader(Checker& c, const std::string& paramName, unsigned dim) : c(c), T(c.T), paramName(paramName), dim(dim) {}

  Extent visitIntLiteralExpr(IntLiteralExpr* e) {
    auto v = evalConst(e, &c.diags);
    e->type = T.intLiteral();
    if (!v) return "?";
    if (v->i <= 0) {
      c.diags.report(diag::err_extent_not_positive, e->range) << v->i;
      return "?";
    }
    return std::to_string(v->i);
  }
  Extent visitStringLiteralExpr(StringLiteralExpr* e) { return symbol(e, e->value); }
  Extent visitNameExpr(NameExpr* e) { return symbol(e, e->name); }
  Extent symbol(Expr* e, const std::string& name) {
    if (name.empty()) {
      c.diags.report(diag::err_bad_extent, e->range);
      return "?";
    }
    const Type* i64 = T.scalar(DType::INT64);
    Symbol* sym = c.scope->lookup(name);
    auto* ne = dyn_cast<NameExpr>(e);
    if (sym && ne) ne->symbol = sym;
    e->type = i64;
    if (sym && (sym->kind == SymbolKind::Constant || sym->kind == SymbolKind::Variable) && sym->value &&
        sym->value->kind == ConstValue::Int) {
      if (sym->value->i <= 0) {
        c.diags.report(diag::err_extent_not_positive, e->range) << sym->value->i;
        return "?";
      }
      return std::to_string(sym->value->i);
    }
    if (sym && sym->kind == SymbolKind::Builtin && sym->builtin && sym->builtin->sig.isValue) {
      if (c.fn_) c.checkBuiltinUse(*sym->builtin, e->range);
      return name;
    }
    if (sym && sym->kind == SymbolKind::Parameter) {
      const Type* t = sym->type;
      if (t && !t->isLenient() && !t->isIntegral()) {
        c.diags.report(diag::err_shape_symbol_not_int, e->range) << name << t->str();
        return "?";
      }
      return name;
    }
    if (sym && (sym->kind == SymbolKind::ShapeSymbol || sym->kind == SymbolKind::AutotuneParam)) {
      if (c.fn_ && sym->kind == SymbolKind::ShapeSymbol) c.fn_->shapeBindings.push_back({name, paramName, dim});
      return name;
    }
    if (c.fn_ && c.scope->kind == Scope::Function) {
      Symbol* s = c.declareLocal(name, e->range, i64, SymbolKind::ShapeSymbol);
      if (ne) ne->symbol = s;
      c.fn_->shapeBindings.push_back({name, paramName, dim});
    }
    return name;
  }
  Extent visitBinaryExpr(BinaryExpr* b) {
    bool arith = b->op == BinaryOp::Add || b->op == BinaryOp::Sub || b->op == BinaryOp::Mul || b->op == BinaryOp::Div ||
                 b->op == BinaryOp::FloorDiv || b->op == BinaryOp::Mod;
    if (!arith) {
      c.diags.report(diag::err_bad_extent, b->range);
      return "?";
    }
    Extent l = c.extentFromExpr(b->lhs, "", 0);
    Extent r = c.extentFromExpr(b->rhs, "", 0);
    if (l == "?" || r == "?") return "?";
    b->type = T.scalar(DType::INT64);
    if (extentIsConst(l) && extentIsConst(r)) {
      auto v = evalConst(b, &c.diags);
      if (!v) return "?";
      if (v->kind != ConstValue::Int || v->i <= 0) {
        c.diags.report(diag::err_extent_not_positive, b->range) << v->str();
        return "?";
      }
      return std::to_string(v->i);
    }
    Extent::Op op = b->op == BinaryOp::Add   ? Extent::Op::Add
                    : b->op == BinaryOp::Sub ? Extent::Op::Sub
                    : b->op == BinaryOp::Mul ? Extent::Op::Mul
                    : b->op == BinaryOp::Mod ? Extent::Op::Mod
                                             : Extent::Op::Div;
    return Extent::binary(op, l, r);
  }
  Extent visitErrorExpr(ErrorExpr*) { return "?"; }
  Extent visitExpr(Expr* e) {
    c.diags.report(diag::err_bad_extent, e->range);
    return "?";
  }
};
}  // namespace

Extent Checker::extentFromExpr(Expr* e, const std::string& paramName, unsigned dim) {
  if (!e) return "?";
  return ExtentReader(*this, paramName, dim).visit(e);
}

void Checker::declareExtentsOfBadType(const std::vector<Expr*>& extents, size_t count, const std::string& paramName) {
  // Only names matter here; errors in the extents themselves were not the first problem.
  for (size_t i = 0; i < count && i < extents.size(); ++i)
    if (isa<NameExpr>(extents[i]) || isa<StringLiteralExpr>(extents[i]) || isa<BinaryExpr>(extents[i]))
      extentFromExpr(extents[i], paramName, static_cast<unsigned>(i));
}

// An annotation with extents or an argument: f32[m, n], tensor[...], Region[privilege]. Null
// after a diagnostic; the extents of a bad type still declare the parameter's shape symbols, so
// that a misspelt dtype does not cascade into "undefined name" errors wherever they are used.
const Type* Checker::typeFromSubscriptAnnotation(SubscriptExpr* s, const std::string& paramName) {
  Expr* e = s;
  std::string n = nameOf(s->base);
  std::vector<Expr*> idx;
  for (Argument& a : s->indices)
    if (a.value) idx.push_back(a.value);
  if (auto d = lookupDType(n)) {
    std::vector<Extent> dims;
    for (size_t i = 0; i < idx.size(); ++i) dims.push_back(extentFromExpr(idx[i], paramName, static_cast<unsigned>(i)));
    return T.tensor(*d, true, {}, dims, true, false);
  }
  if (n == "tensor" || n == "Tensor") {
    DType d = DType::FP32;
    NumericPolicy p;
    bool known = false;
    size_t dimCount = idx.size();
    if (!idx.empty() && (idx.size() == 1 || looksLikeDType(idx.back()) || looksLikeMisspeltDType(idx.back()))) {
      known = dtypeFromExpr(idx.back(), d, p, true);
      if (!known) {
        declareExtentsOfBadType(idx, idx.size() - 1, paramName);
        return nullptr;
      }
      dimCount = idx.size() - 1;
    } else {
      diags.report(diag::err_tensor_missing_dtype, e->range);
      declareExtentsOfBadType(idx, idx.size(), paramName);
      return nullptr;
    }
    std::vector<Extent> dims;
    for (size_t i = 0; i < dimCount; ++i) dims.push_back(extentFromExpr(idx[i], paramName, static_cast<unsigned>(i)));
    return T.tensor(d, known, p, dims, dimCount > 0, false);
  }
  if (n == "Region") {
    Privilege pr = Privilege::None;
    std::string pn;
    if (idx.size() == 1 || idx.size() == 2) {
      if (auto* ne = dyn_cast<NameExpr>(idx[0]))
        pn = ne->name;
      else if (auto* se = dyn_cast<StringLiteralExpr>(idx[0]))
        pn = se->value;
    }
    if (pn == "read")
      pr = Privilege::Read;
    else if (pn == "write")
      pr = Privilege::Write;
    else if (pn == "reduce_sum")
      pr = Privilege::ReduceSum;
    else if (pn == "reduce_max")
      pr = Privilege::ReduceMax;
    else if (pn == "reduce_min")
      pr = Privilege::ReduceMin;
    else {
      diags.report(diag::err_unknown_privilege, idx.empty() ? e->range : idx[0]->range)
          << (pn.empty() && !idx.empty() ? text(idx[0]->range) : pn);
      return nullptr;
    }
    // `Region[read, f32[B, S, D]]`: the privilege of a tensor of known dtype and shape.
    if (idx.size() == 2) {
      const Type* inner = typeFromAnnotation(idx[1], false, paramName);
      if (inner->isError()) return nullptr;
      if (inner->kind != TypeKind::Tensor) {
        diags.report(diag::err_not_a_type, idx[1]->range) << text(idx[1]->range);
        return nullptr;
      }
      return T.tensor(inner->dtype, inner->dtypeKnown, inner->policy, inner->dims, inner->rankKnown, false, pr);
    }
    return T.tensor(DType::FP32, false, {}, {}, false, false, pr);
  }
  if (n.empty())
    diags.report(diag::err_not_a_type, s->base->range) << text(s->base->range);
  else if (scope->lookup(n))
    diags.report(diag::err_not_a_type, s->base->range) << n;
  else
    reportUnknownDType(s->base, n);
  declareExtentsOfBadType(idx, idx.size(), paramName);
  return nullptr;
}

namespace {
// The type an annotation spells, by the annotation's form (frontend/ASTVisitor.h). Null: an
// error reported (or left to the parser) and the annotation keeps no type.
struct AnnotationTyper : ASTVisitor<AnnotationTyper, const Type*> {
  Checker& c;
  TypeContext& T;
  bool allowMut;
  const std::string& paramName;
  AnnotationTyper(Checker& c, bool allowMut, const std::string& paramName)
      : c(c), T(c.T), allowMut(allowMut), paramName(paramName) {}

  const Type* visitErrorExpr(ErrorExpr*) { return nullptr; }
  const Type* visitNoneLiteralExpr(NoneLiteralExpr*) { return T.none(); }
  const Type* visitStringLiteralExpr(StringLiteralExpr*) { return T.dynamic(); }
  const Type* visitMutExpr(MutExpr* m) {
    if (!allowMut) return nullptr;  // misplaced `mut`: the parser reports it
    const Type* inner = c.typeFromAnnotation(m->type, false, paramName);
    if (inner->kind == TypeKind::Tensor)
      return T.tensor(inner->dtype, inner->dtypeKnown, inner->policy, inner->dims, inner->rankKnown, true,
                      inner->privilege);
    if (inner->isLenient()) return inner;
    c.diags.report(diag::err_mut_not_tensor, m->range) << inner->str();
    return T.error();
  }
  const Type* visitNameExpr(NameExpr* e) { return named(e); }
  const Type* visitAttributeExpr(AttributeExpr* e) { return named(e); }
  // A dtype, `tensor`, a host type name, or a dtype value written another way (`tessera.f16`).
  const Type* named(Expr* e) {
    std::string n = nameOf(e);
    if (n.empty()) {
      const Type* t = c.check(e);
      if (t->kind == TypeKind::DTypeValue) return T.scalar(t->dtype, t->policy);
      if (t->isLenient()) return t;
      c.diags.report(diag::err_not_a_type, e->range) << c.text(e->range);
      return T.error();
    }
    if (auto d = lookupDType(n)) return T.scalar(*d);
    if (n == "tensor" || n == "Tensor" || n == "Region") return T.tensor(DType::FP32, false, {}, {}, false, false);
    if (std::find(std::begin(kHostTypeNames), std::end(kHostTypeNames), n) != std::end(kHostTypeNames))
      return n == "str" ? T.str() : T.dynamic();
    Symbol* sym = isa<NameExpr>(e) ? c.scope->lookup(n) : nullptr;
    if (sym && sym->kind != SymbolKind::DType) {
      c.diags.report(diag::err_not_a_type, e->range) << n;
      return nullptr;
    }
    c.reportUnknownDType(e, n);
    return nullptr;
  }
  // `f16 @ accum(f32)`, `f16 @accum(f32)[n]`: an element type with a numeric policy.
  const Type* visitBinaryExpr(BinaryExpr* b) {
    if (b->op != BinaryOp::MatMul) {
      c.diags.report(diag::err_not_a_type, b->range) << c.text(b->range);
      return nullptr;
    }
    const Type* base = c.typeFromAnnotation(b->lhs, false, paramName);
    // `f16 @accum(f32)[n]` reads as `f16 @ (accum(f32)[n])`: a policy followed by extents.
    Expr* policyExpr = b->rhs;
    auto* dimsOf = dyn_cast<SubscriptExpr>(b->rhs);
    if (dimsOf && (isa<CallExpr>(dimsOf->base) || isa<NameExpr>(dimsOf->base)))
      policyExpr = dimsOf->base;
    else
      dimsOf = nullptr;
    if (base->kind == TypeKind::Scalar || (base->kind == TypeKind::Tensor && base->dtypeKnown)) {
      NumericPolicy p = base->policy;
      c.applyPolicy(policyExpr, base->dtype, p);
      const Type* withPolicy = T.withElement(base, base->dtype, p);
      if (dimsOf && base->kind == TypeKind::Scalar) {
        std::vector<Extent> dims;
        for (size_t i = 0; i < dimsOf->indices.size(); ++i)
          dims.push_back(c.extentFromExpr(dimsOf->indices[i].value, paramName, static_cast<unsigned>(i)));
        return T.tensor(base->dtype, true, p, dims, true, false);
      }
      return withPolicy;
    }
    if (dimsOf && base->isError()) {
      std::vector<Expr*> idx;
      for (Argument& a : dimsOf->indices)
        if (a.value) idx.push_back(a.value);
      c.declareExtentsOfBadType(idx, idx.size(), paramName);
    }
    return base;
  }
  const Type* visitSubscriptExpr(SubscriptExpr* s) { return c.typeFromSubscriptAnnotation(s, paramName); }
  const Type* visitTupleExpr(TupleExpr* t) {
    std::vector<const Type*> elems;
    for (Expr* x : t->elements) elems.push_back(c.typeFromAnnotation(x, false, paramName));
    return T.tuple(std::move(elems));
  }
  const Type* visitExpr(Expr* e) {
    c.diags.report(diag::err_not_a_type, e->range) << c.text(e->range);
    return nullptr;
  }
};
}  // namespace

const Type* Checker::typeFromAnnotation(Expr* e, bool allowMut, const std::string& paramName) {
  if (!e) return T.dynamic();
  const Type* result = AnnotationTyper(*this, allowMut, paramName).visit(e);
  if (!result) return T.error();
  // A kernel's tensor parameter crosses the launch ABI, whose views have at most
  // kMaxTensorParamRank dimensions.
  if (result->kind == TypeKind::Tensor && result->rankKnown && result->dims.size() > kMaxTensorParamRank && fn_ &&
      fn_->isKernel() && !paramName.empty()) {
    diags.report(diag::err_tensor_rank_too_large, e->range) << paramName << result->dims.size() << kMaxTensorParamRank;
    return T.error();
  }
  e->type = result;
  return result;
}

// ---------------------------------------------------------------- decorators

void Checker::checkDecorators(FunctionDefStmt* f, FunctionInfo& info) {
  for (Decorator& d : f->decorators) {
    if (!d.expr) continue;
    auto* call = dyn_cast<CallExpr>(d.expr);
    Expr* head = call ? call->callee : d.expr;
    check(d.expr);
    const Type* ht = head->type ? head->type : T.dynamic();
    bool isKernelDecorator = false;
    if (ht->kind == TypeKind::Builtin && ht->builtin) {
      switch (ht->builtin->id) {
        case BuiltinId::Kernel:
        case BuiltinId::KernelAutotune: {
          isKernelDecorator = true;
          info.kind = FunctionKind::Kernel;
          info.kernelDecoratorRange = d.expr->range;
          if (!call) break;
          for (Argument& a : call->args) {
            if (a.keyword == "deterministic")
              if (auto c = evalConst(a.value, nullptr); c && c->isNumber()) info.deterministic = c->asDouble() != 0;
            if (a.keyword == "flops")
              if (auto c = evalConst(a.value, nullptr); c && c->kind == ConstValue::Str) {
                info.flops = c->s;
                info.flopsRange = a.value->range;
              }
            if (a.keyword == "space") {
              bool valid = false;
              auto addCands = [&](const std::string& name, Expr* v) {
                std::vector<Expr*> elems;
                if (auto* l = dyn_cast<ListExpr>(v))
                  elems = l->elements;
                else if (auto* t = dyn_cast<TupleExpr>(v))
                  elems = t->elements;
                else
                  return false;
                std::vector<long long> cands;
                for (Expr* x : elems) {
                  auto c = evalConst(x, nullptr);
                  if (!c || c->kind != ConstValue::Int) return false;
                  cands.push_back(c->i);
                }
                if (cands.empty() || name.empty()) return false;
                info.autotuneSpace[name] = cands;
                return true;
              };
              if (auto* dc = dyn_cast<CallExpr>(a.value);
                  dc && isa<NameExpr>(dc->callee) && cast<NameExpr>(dc->callee)->name == "dict") {
                valid = true;
                for (Argument& kv : dc->args)
                  if (kv.kind != Argument::Keyword || !addCands(kv.keyword, kv.value)) valid = false;
              } else if (auto* de = dyn_cast<DictExpr>(a.value)) {
                valid = true;
                for (DictEntry& kv : de->entries) {
                  auto* ks = dyn_cast<StringLiteralExpr>(kv.key);
                  if (!ks || !addCands(ks->value, kv.value)) valid = false;
                }
              }
              if (!valid) diags.report(diag::err_autotune_space_invalid, a.value ? a.value->range : a.range);
              // Each configuration is a kernel of its own (irgen/Autotune.cpp): their number is bounded.
              size_t configs = 1;
              for (auto& [name, cands] : info.autotuneSpace)
                configs = std::min(configs * cands.size(), kMaxAutotuneConfigurations + 1);
              if (valid && configs > kMaxAutotuneConfigurations)
                diags.report(diag::err_autotune_space_too_large, info.kernelDecoratorRange)
                    << f->name << static_cast<unsigned long long>(kMaxAutotuneConfigurations);
            }
          }
          break;
        }
        case BuiltinId::Jit:
        case BuiltinId::Autodiff:
        case BuiltinId::GraphModule:
          if (info.kind != FunctionKind::Kernel) info.kind = FunctionKind::Jit;
          break;
        default: diags.report(diag::err_not_a_decorator, head->range) << ht->builtin->name; break;
      }
    } else if (!ht->isLenient() && ht->kind != TypeKind::Function) {
      diags.report(diag::err_not_a_decorator, head->range) << text(head->range);
    }
    if (d.clauses.empty()) continue;
    if (!isKernelDecorator) {
      diags.report(diag::err_clause_without_kernel, d.clauses[0]->range);
      continue;
    }
    // Clauses see the autotune parameters and the module's constants.
    Scope* outer = scope;
    scope = sc.symbols.makeScope(Scope::Comprehension, outer);
    for (auto& [name, cands] : info.autotuneSpace) {
      Symbol* s = declareLocal(name, f->nameRange, T.scalar(DType::INT32), SymbolKind::AutotuneParam);
      if (!cands.empty())
        s->value = ConstValue::ofInt(sc.autotuneValue(f->name, name, cands));  // the compiled candidate
    }
    for (Expr* c : d.clauses) {
      auto constInt = [&](Expr* x) -> std::optional<long long> {
        check(x);
        auto v = evalConst(x, &diags);
        if (v && v->kind == ConstValue::Int) return v->i;
        return std::nullopt;
      };
      if (auto* sub = dyn_cast<SubscriptExpr>(c); sub && nameOf(sub->base) == "tile") {
        std::vector<Expr*> parts;
        if (sub->indices.size() == 1 && sub->indices[0].value) {
          if (auto* t = dyn_cast<TupleExpr>(sub->indices[0].value))
            parts = t->elements;
          else
            parts = {sub->indices[0].value};
        } else {
          for (Argument& a : sub->indices) parts.push_back(a.value);
        }
        std::vector<long long> shape;
        bool valid = !parts.empty() && parts.size() <= 3;
        for (Expr* p : parts) {
          auto v = p ? constInt(p) : std::nullopt;
          if (!v || *v <= 0)
            valid = false;
          else
            shape.push_back(*v);
        }
        if (!valid) {
          diags.report(diag::err_group_shape_invalid, c->range);
          continue;
        }
        long long total = 1;
        for (long long v : shape) total = total > 4096 ? total : total * v;
        if (total > 1024) {
          diags.report(diag::err_group_shape_too_large, c->range) << total;
          continue;
        }
        info.groupShape = shape;
      } else if (auto* sh = dyn_cast<CallExpr>(c); sh && nameOf(sh->callee) == "shared" && sh->args.size() == 1) {
        auto v = constInt(sh->args[0].value);
        if (!v || *v < 0) {
          diags.report(diag::err_shared_extent_not_const, sh->args[0].value ? sh->args[0].value->range : c->range);
          continue;
        }
        info.sharedClauseRange = c->range;
        if (*v > kHopperSharedLimit) {
          diags.report(diag::err_shared_budget_too_large, c->range) << *v;
          continue;
        }
        info.sharedBudget = *v;
      } else {
        diags.report(diag::err_unknown_kernel_clause, c->range);
      }
    }
    scope = outer;
  }
}

}  // namespace tessera

namespace tessera {

namespace {
// Recognises the grammar of a cost expression (integers, names, + - * / // %, parentheses),
// collecting the names; codegen reads the same text into the descriptor (codegen/lower/CostExpr.cpp).
class CostExprScanner {
 public:
  explicit CostExprScanner(const std::string& s) : s_(s) {}
  bool valid(std::vector<std::string>& names) {
    names_ = &names;
    return sum() && (skip(), pos_ == s_.size());
  }

 private:
  void skip() {
    while (pos_ < s_.size() && s_[pos_] == ' ') ++pos_;
  }
  bool at(char c) { return skip(), pos_ < s_.size() && s_[pos_] == c; }
  bool sum() {
    if (!product()) return false;
    while (at('+') || at('-'))
      if (++pos_, !product()) return false;
    return true;
  }
  bool product() {
    if (!atom()) return false;
    while (at('*') || at('/') || at('%')) {
      char op = s_[pos_++];
      if (op == '*' && pos_ < s_.size() && s_[pos_] == '*') return false;
      if (op == '/' && pos_ < s_.size() && s_[pos_] == '/') ++pos_;
      if (!atom()) return false;
    }
    return true;
  }
  bool atom() {
    skip();
    if (pos_ >= s_.size()) return false;
    if (s_[pos_] == '(') return ++pos_, sum() && at(')') && (++pos_, true);
    size_t start = pos_;
    if (isdigit(static_cast<unsigned char>(s_[pos_]))) {
      while (pos_ < s_.size() && isdigit(static_cast<unsigned char>(s_[pos_]))) ++pos_;
      return pos_ - start <= 18;
    }
    while (pos_ < s_.size() && (isalnum(static_cast<unsigned char>(s_[pos_])) || s_[pos_] == '_')) ++pos_;
    if (start == pos_) return false;
    names_->push_back(s_.substr(start, pos_ - start));
    return true;
  }
  const std::string& s_;
  size_t pos_ = 0;
  std::vector<std::string>* names_ = nullptr;
};
}  // namespace

void Checker::checkFlopsExpression(FunctionInfo& info) {
  std::vector<std::string> names;
  if (!CostExprScanner(info.flops).valid(names)) {
    diags.report(diag::err_flops_not_expression, info.flopsRange);
    return;
  }
  for (const std::string& n : names) {
    bool bound = false;
    for (const ShapeBinding& b : info.shapeBindings) bound |= b.symbol == n;
    if (!bound) {
      diags.report(diag::err_flops_unknown_symbol, info.flopsRange) << n;
      return;
    }
  }
}

}  // namespace tessera
