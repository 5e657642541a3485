// Expressions: names, attributes, subscripts, operators, literals, comprehensions.
#include <algorithm>
#include <climits>

#include "frontend/ASTVisitor.h"
#include "sema/Checker.h"
#include "sema/SemaDiagnostics.h"

namespace tessera {

namespace {
// The numeric policy and dtype of an operand that has elements (scalar or tile-like).
bool elementDType(const Type* t, DType& d, bool& known) {
  if (t->kind == TypeKind::Scalar || t->isTileLike()) {
    d = t->dtype;
    known = t->kind == TypeKind::Scalar || t->dtypeKnown;
    return true;
  }
  return false;
}
bool isBitwise(BinaryOp op) {
  return op == BinaryOp::BitAnd || op == BinaryOp::BitOr || op == BinaryOp::BitXor || op == BinaryOp::Shl ||
         op == BinaryOp::Shr;
}
}  // namespace

namespace {
// The dispatch of expression checking on the node's kind (frontend/ASTVisitor.h): each visit
// returns the expression's type; kinds that have none are dynamic.
struct ExprTyper : ASTVisitor<ExprTyper, const Type*> {
  Checker& c;
  TypeContext& T;
  explicit ExprTyper(Checker& c) : c(c), T(c.T) {}

  const Type* visitNameExpr(NameExpr* e) { return c.checkName(e); }
  const Type* visitIntLiteralExpr(IntLiteralExpr* e) {
    // As in C and Triton: an integer literal is i32 when it fits, i64 otherwise.
    return e->value > static_cast<uint64_t>(INT32_MAX) ? T.scalar(DType::INT64, {}, true) : T.intLiteral();
  }
  const Type* visitFloatLiteralExpr(FloatLiteralExpr*) { return T.floatLiteral(); }
  const Type* visitStringLiteralExpr(StringLiteralExpr*) { return T.str(); }
  const Type* visitFStringExpr(FStringExpr* e) {
    for (FStringPart& p : e->parts)
      if (p.expr) c.check(p.expr);
    return T.str();
  }
  const Type* visitBoolLiteralExpr(BoolLiteralExpr*) { return T.boolType(); }
  const Type* visitNoneLiteralExpr(NoneLiteralExpr*) { return T.none(); }
  const Type* visitEllipsisExpr(EllipsisExpr* e) {
    // As a statement (a body that is only `...`) it is nothing; kernels have no value for it.
    if (c.deviceOnly(diag::err_ellipsis_value_in_kernel, e->range, "")) return T.error();
    return T.dynamic();
  }
  const Type* visitUnaryExpr(UnaryExpr* e) { return c.checkUnary(e); }
  const Type* visitBinaryExpr(BinaryExpr* e) { return c.checkBinary(e); }
  const Type* visitConditionalExpr(ConditionalExpr* e) { return c.checkConditional(e); }
  const Type* visitCallExpr(CallExpr* e) { return c.checkCall(e); }
  const Type* visitSubscriptExpr(SubscriptExpr* e) { return c.checkSubscript(e); }
  const Type* visitSliceExpr(SliceExpr* s) {
    c.check(s->lower);
    c.check(s->upper);
    c.check(s->step);
    return T.slice();
  }
  const Type* visitAttributeExpr(AttributeExpr* e) { return c.checkAttribute(e); }
  const Type* visitTupleExpr(TupleExpr* e) {
    std::vector<const Type*> elems;
    for (Expr* x : e->elements) elems.push_back(c.check(x));
    return T.tuple(std::move(elems));
  }
  const Type* visitListExpr(ListExpr* e) {
    const Type* joined = nullptr;
    bool mixed = false;
    for (Expr* x : e->elements) {
      const Type* et = c.check(x);
      if (!joined)
        joined = et;
      else if (joined != et) {
        DType a, b;
        bool ka, kb;
        if (joined->kind == TypeKind::Scalar && et->kind == TypeKind::Scalar && elementDType(joined, a, ka) &&
            elementDType(et, b, kb))
          joined = joined->weak && et->weak ? (isFloat(a) ? joined : et) : T.scalar(promote(a, b));
        else
          mixed = true;
      }
    }
    return T.list(!joined || mixed ? T.dynamic() : joined);
  }
  const Type* visitDictExpr(DictExpr* e) {
    for (DictEntry& d : e->entries) {
      c.check(d.key);
      c.check(d.value);
    }
    return T.dict();
  }
  const Type* visitComprehensionExpr(ComprehensionExpr* e) { return c.checkComprehension(e); }
  const Type* visitMutExpr(MutExpr*) { return T.error(); }  // misplaced `mut`: the parser reports it
  const Type* visitStarredExpr(StarredExpr* e) { return c.check(e->value)->isError() ? T.error() : T.dynamic(); }
  const Type* visitErrorExpr(ErrorExpr*) { return T.error(); }
  const Type* visitNode(Node*) { return T.dynamic(); }
};
}  // namespace

const Type* Checker::check(Expr* e) {
  if (!e) return T.dynamic();
  const Type* t = ExprTyper(*this).visit(e);
  e->type = t;
  return t;
}

// The type of a builtin that is a value (`grid_groups`, `inf`): its signature's `= T`.
const Type* Checker::valueBuiltinType(const BuiltinInfo& b) {
  return T.scalar(b.sig.result == "f32" ? DType::FP32 : DType::INT64);
}

const Type* Checker::checkName(NameExpr* e) {
  Symbol* s = scope->lookup(e->name);
  if (!s && fn_ && moduleGlobals.count(e->name)) {  // assigned later at module level
    deviceOnly(diag::err_module_variable_in_device_code, e->range, e->name);
    return T.dynamic();
  }
  if (!s) {
    reportUndefined(e->name, e->range);
    return T.error();
  }
  e->symbol = s;
  // A module-level variable has no value in device code (the lowering keeps no globals).
  if (s->kind == SymbolKind::Variable && fn_ && mod.scope && mod.scope->lookupLocal(e->name) == s) {
    if (deviceOnly(diag::err_module_variable_in_device_code, e->range, e->name)) return T.error();
  }
  if (s->kind == SymbolKind::Builtin && s->builtin && s->builtin->sig.isValue) {
    checkBuiltinUse(*s->builtin, e->range);
    return valueBuiltinType(*s->builtin);
  }
  return s->type ? s->type : T.dynamic();
}

const Type* Checker::checkAttribute(AttributeExpr* e) {
  const Type* b = check(e->base);
  const std::string& name = e->name;
  if (b->isError()) return T.error();
  if (b->isDynamic()) return T.dynamic();
  auto unknownMember = [&](const std::string& owner, const std::vector<std::string>& cands) {
    std::string best = closestMatch(name, cands);
    if (!best.empty())
      diags.report(diag::err_unknown_member_suggest, e->nameRange).fixit(e->nameRange, best) << owner << name << best;
    else
      diags.report(diag::err_unknown_member, e->nameRange) << owner << name;
    return T.error();
  };
  std::string prefix;
  bool isNs = false;
  if (b->kind == TypeKind::Namespace) {
    prefix = b->name;
    isNs = true;
  } else if (b->kind == TypeKind::Builtin && b->builtin && isBuiltinNamespace(b->builtin->name) && !b->typeArg) {
    prefix = b->builtin->name;
    isNs = true;
  }
  if (isNs) {
    std::string q = prefix.empty() ? name : prefix + "." + name;
    if (const BuiltinInfo* bi = lookupBuiltin(q)) {
      if (bi->sig.isValue) {
        checkBuiltinUse(*bi, e->range);
        return valueBuiltinType(*bi);
      }
      return T.builtin(bi);
    }
    if (isBuiltinNamespace(q)) return T.ns(q);
    if (prefix.empty())
      if (auto d = lookupDType(name)) return T.dtypeValue(*d);
    std::vector<std::string> cands = builtinMembers(prefix);
    if (prefix.empty())
      for (auto& [sp, d] : allDTypeSpellings()) cands.push_back(sp);
    return unknownMember(prefix.empty() ? "tessera" : prefix, cands);
  }
  switch (b->kind) {
    case TypeKind::Builtin: return unknownMember(b->builtin ? b->builtin->name : "?", {});
    case TypeKind::Module: {
      if (b->module && b->module->scope)
        if (Symbol* s = b->module->scope->lookupLocal(name)) return s->type ? s->type : T.dynamic();
      std::vector<std::string> cands;
      if (b->module && b->module->scope)
        for (auto& [n, s] : b->module->scope->symbols()) cands.push_back(n);
      return unknownMember(b->name, cands);
    }
    case TypeKind::Tensor:
    case TypeKind::Tile:
    case TypeKind::Shared:
    case TypeKind::Fragment: {
      if (name == "shape") {
        if (!b->rankKnown) return T.dynamic();
        std::vector<const Type*> elems(b->dims.size(), T.scalar(DType::INT64));
        return T.tuple(std::move(elems));
      }
      if (name == "ndim") return T.scalar(DType::INT64);
      if (name == "dtype") return b->dtypeKnown ? T.dtypeValue(b->dtype, b->policy) : T.dynamic();
      if (name == "T") {
        std::vector<Extent> d = b->dims;
        std::reverse(d.begin(), d.end());
        if (b->kind == TypeKind::Tensor)
          return T.tensor(b->dtype, b->dtypeKnown, b->policy, d, b->rankKnown, false, Privilege::None);
        return T.tile(b->dtype, b->dtypeKnown, d, b->rankKnown || !d.empty(), b->policy);
      }
      if (b->kind == TypeKind::Tensor)
        if (const BuiltinInfo* m = lookupMethod("Tensor", name)) return T.builtin(m);
      diags.report(diag::err_no_attribute, e->nameRange) << b->str() << name;
      return T.error();
    }
    case TypeKind::Opaque: {
      if (const BuiltinInfo* m = lookupMethod(b->name, name)) return T.builtin(m);
      if (b->name != "Group") return T.dynamic();
      diags.report(diag::err_no_attribute, e->nameRange) << b->str() << name;
      return T.error();
    }
    case TypeKind::Function:
      if (const BuiltinInfo* m = lookupMethod("KernelFn", name)) return T.builtin(m);
      diags.report(diag::err_no_attribute, e->nameRange) << b->str() << name;
      return T.error();
    case TypeKind::Slice:
      // A block of a `tile.range(T, axis=, step=)` loop (or any slice): its bounds as indices.
      if (name == "start" || name == "stop") return T.scalar(DType::INT64);
      diags.report(diag::err_no_attribute, e->nameRange) << b->str() << name;
      return T.error();
    case TypeKind::Dict:
    case TypeKind::List:
    case TypeKind::Str: return T.dynamic();  // host containers: methods are the host language's
    default: diags.report(diag::err_no_attribute, e->nameRange) << b->str() << name; return T.error();
  }
}

bool Checker::checkConstantIndex(Expr* ix, const Extent& extent, unsigned dim, Expr* base, bool element) {
  if (!ix) return true;
  auto c = evalConst(ix, nullptr);
  if (!c || c->kind != ConstValue::Int) return true;
  std::string name = base ? text(base->range) : "?";
  if (c->i < 0) {
    // Decision (docs/language.md): no Python wrap-around. Suggest the index from the start.
    auto d = diags.report(diag::err_negative_index, ix->range);
    d << c->i << name;
    if (!extent.isUnknown()) {
      std::string fixed =
          extent.isConst() ? std::to_string(extent.value() + c->i) : extent.str() + " - " + std::to_string(-c->i);
      if (!extent.isConst() || extent.value() + c->i >= 0) d.fixit(ix->range, fixed);
    }
    return false;
  }
  if (element && extent.isConst() && c->i >= extent.value()) {
    diags.report(diag::err_index_out_of_range, ix->range) << c->i << dim << name << extent.value();
    return false;
  }
  return true;
}

Extent Checker::sliceExtent(SliceExpr* s, const Extent& full) {
  if (!s->lower && !s->upper) return full;
  auto lo = s->lower ? evalConst(s->lower, nullptr) : std::optional(ConstValue::ofInt(0));
  auto hi = s->upper ? evalConst(s->upper, nullptr) : std::nullopt;
  long long step = 1;
  if (s->step)
    if (auto st = evalConst(s->step, nullptr); st && st->kind == ConstValue::Int && st->i > 0) step = st->i;
  auto fin = [&](long long n) { return std::to_string(n <= 0 ? 0 : (n + step - 1) / step); };
  if (lo && hi && lo->kind == ConstValue::Int && hi->kind == ConstValue::Int) return fin(hi->i - lo->i);
  if (s->lower && s->upper)
    if (auto* add = dyn_cast<BinaryExpr>(s->upper); add && add->op == BinaryOp::Add) {
      std::string l = text(s->lower->range);
      if (text(add->lhs->range) == l)
        if (auto c = evalConst(add->rhs, nullptr); c && c->kind == ConstValue::Int) return fin(c->i);
      if (text(add->rhs->range) == l)
        if (auto c = evalConst(add->lhs, nullptr); c && c->kind == ConstValue::Int) return fin(c->i);
    }
  if (!s->upper && lo && lo->kind == ConstValue::Int && extentIsConst(full)) return fin(extentValue(full) - lo->i);
  return "?";
}

const Type* Checker::checkSubscript(SubscriptExpr* e) {
  const Type* b = check(e->base);
  auto checkIndices = [&] {
    for (Argument& a : e->indices) check(a.value);
  };
  if (b->isError()) {
    checkIndices();
    return T.error();
  }
  switch (b->kind) {
    case TypeKind::Dynamic: checkIndices(); return T.dynamic();
    case TypeKind::Builtin: {
      const BuiltinInfo* bi = b->builtin;
      if (bi && bi->sig.hasTypeParam && !bi->sig.isTypeConstructor && e->indices.size() == 1) {
        DType d;
        NumericPolicy p;
        if (!dtypeFromExpr(e->indices[0].value, d, p, true)) return T.error();
        e->indices[0].value->type = T.dtypeValue(d, p);
        return T.builtin(bi, T.scalar(d, p));
      }
      if (bi && bi->sig.isTypeConstructor) return T.dynamic();
      diags.report(diag::err_not_subscriptable, e->base->range) << b->str();
      checkIndices();
      return T.error();
    }
    case TypeKind::DTypeValue: return T.dynamic();  // a tensor type written as a value
    case TypeKind::Function:                        // kernel[grid, block, stream=s]: a launch configuration
      checkIndices();
      return b;
    case TypeKind::Tuple: {
      checkIndices();
      if (e->indices.size() == 1)
        if (auto c = evalConst(e->indices[0].value, nullptr); c && c->kind == ConstValue::Int) {
          long long i = c->i < 0 ? c->i + static_cast<long long>(b->elems.size()) : c->i;
          if (i >= 0 && i < static_cast<long long>(b->elems.size())) return b->elems[i];
        }
      return T.dynamic();
    }
    case TypeKind::List: checkIndices(); return b->elems.empty() ? T.dynamic() : b->elems[0];
    case TypeKind::Dict: checkIndices(); return T.dynamic();
    case TypeKind::Str: checkIndices(); return T.str();
    case TypeKind::Tensor:
    case TypeKind::Shared:
    case TypeKind::Tile:
    case TypeKind::Fragment: {
      std::vector<Extent> dims;
      bool anySlice = false, bad = false;
      unsigned count = 0;
      bool rankKnown = b->rankKnown && (b->kind != TypeKind::Shared || !b->dims.empty());
      for (Argument& a : e->indices) {
        Expr* ix = a.value;
        if (!ix) continue;
        if (a.kind != Argument::Positional) {
          check(ix);
          continue;
        }
        Extent full = rankKnown && count < b->dims.size() ? b->dims[count] : "?";
        // `t[:, None]` (numpy's newaxis) inserts an extent of 1 into a tile value.
        if (isa<NoneLiteralExpr>(ix) && b->kind == TypeKind::Tile) {
          dims.push_back("1");
          anySlice = true;
          continue;
        }
        if (auto* sl = dyn_cast<SliceExpr>(ix)) {
          check(sl);
          if (!checkConstantIndex(sl->lower, full, count, e->base) ||
              !checkConstantIndex(sl->upper, full, count, e->base))
            bad = true;
          dims.push_back(sliceExtent(sl, full));
          anySlice = true;
        } else if (auto* tup = dyn_cast<TupleExpr>(ix); tup && !tup->parenthesized) {
          check(tup);
        } else {
          const Type* it = check(ix);
          if (it->kind == TypeKind::Slice) {
            dims.push_back(it->dims.empty() ? Extent("?") : it->dims[0]);
            anySlice = true;
          } else if (!it->isLenient() && !it->isIntegral()) {
            diags.report(diag::err_index_not_integer, ix->range) << it->str();
            bad = true;
          } else if (!checkConstantIndex(ix, full, count, e->base, true)) {
            bad = true;
          }
        }
        ++count;
      }
      if (rankKnown && count > b->dims.size()) {
        diags.report(diag::err_too_many_indices, e->range) << b->str() << b->dims.size() << count;
        return T.error();
      }
      if (bad) return T.error();
      if (!anySlice && (!rankKnown || count == b->dims.size())) return T.elementOf(b);
      if (rankKnown)
        for (size_t i = count; i < b->dims.size(); ++i) dims.push_back(b->dims[i]);
      return T.tile(b->dtype, b->dtypeKnown, dims, rankKnown, b->policy);
    }
    default:
      diags.report(diag::err_not_subscriptable, e->base->range) << b->str();
      checkIndices();
      return T.error();
  }
}

const Type* Checker::checkUnary(UnaryExpr* e) {
  const Type* t = check(e->operand);
  if (t->isLenient()) return t;
  switch (e->op) {
    case UnaryOp::Not: return T.boolType();
    case UnaryOp::Neg:
    case UnaryOp::Pos:
      if (t->kind == TypeKind::Scalar || t->isTileLike())
        return t->kind == TypeKind::Shared ? T.withElement(t, t->dtype) : t;
      break;
    case UnaryOp::Invert:
      if (t->isIntegral()) return t;
      break;
  }
  diags.report(diag::err_unary_operand, e->opRange.valid() ? e->opRange : e->range)
      << unaryOpSpelling(e->op) << t->str();
  return T.error();
}

const Type* Checker::checkBinary(BinaryExpr* e) {
  const Type* l = check(e->lhs);
  // `dtype @policy`: a numeric policy attached to a dtype used as a value.
  if (e->op == BinaryOp::MatMul && l->kind == TypeKind::DTypeValue) {
    NumericPolicy p = l->policy;
    applyPolicy(e->rhs, l->dtype, p);
    return T.dtypeValue(l->dtype, p);
  }
  const Type* r = check(e->rhs);
  if (e->op == BinaryOp::MatMul && !checkInnerExtents("@", e->lhs, l, e->rhs, r, e->range)) return T.error();
  const Type* result = binaryResult(e->op, l, r, e->opRange.valid() ? e->opRange : e->range, e->range);
  return checkIntegerBinary(e, l, r, result);
}

bool Checker::checkInnerExtents(const char* op, Expr* lhs, const Type* l, Expr* rhs, const Type* r, SourceRange at) {
  if (!l || !r || !l->isTileLike() || !r->isTileLike() || !l->rankKnown || !r->rankKnown) return true;
  if (l->dims.size() != 2 || r->dims.size() != 2) return true;
  const Extent &k1 = l->dims[1], &k2 = r->dims[0];
  if (k1 == k2 || k1.isUnknown() || k2.isUnknown()) return true;
  if (unifying && !extentIsConst(k1) && !extentIsConst(k2)) {
    unifying->unite(k1, k2);
    return true;
  }
  // Two different shape symbols (`D` and `E`) may be equal at launch, but tile code is laid out
  // for one extent: in a kernel they must be one symbol (the lowering would read one as the other).
  if (!(extentIsConst(k1) && extentIsConst(k2)) && !(inKernel() && !extentIsConst(k1) && !extentIsConst(k2)))
    return true;
  auto name = [&](Expr* e) { return e ? text(e->range) : std::string("?"); };
  diags.report(diag::err_matmul_inner_mismatch, at)
      << op << k1.str() << name(lhs) << l->str() << k2.str() << name(rhs) << r->str();
  return false;
}

// In a kernel, the extents that meet in an elementwise operation must agree at compile time:
// tile code is laid out by its static shape, so a shape symbol (`D`) against a constant other
// than 1 (`64`) cannot be compiled either way round (the Tile IR verifier refused one order;
// the other would have been laid out by the constant whatever D is at launch).
bool Checker::extentsAgreeStatically(BinaryOp op, const Extent& a, const Extent& b, const Type* l, const Type* r,
                                     SourceRange opRange) {
  if (!inKernel()) return true;
  auto symbolic = [](const Extent& e) { return !e.isConst() && !e.isUnknown(); };
  auto wide = [](const Extent& e) { return e.isConst() && e.value() != 1; };
  // Two different shape symbols: the launch could bind them to different sizes, and the tile is
  // laid out by one of them (the other operand would be read with the wrong extent).
  if (symbolic(a) && symbolic(b) && a != b && unifying) {
    unifying->unite(a, b);
    return true;
  }
  if (symbolic(a) && symbolic(b) && a != b) {
    diags.report(diag::err_extent_symbols_differ, opRange)
        << binaryOpSpelling(op) << l->str() << r->str() << a.str() << b.str();
    return false;
  }
  if (!(symbolic(a) && wide(b)) && !(wide(a) && symbolic(b))) return true;
  const Extent& sym = symbolic(a) ? a : b;
  const Extent& num = symbolic(a) ? b : a;
  diags.report(diag::err_extent_not_static, opRange)
      << binaryOpSpelling(op) << l->str() << r->str() << sym.str() << num.str();
  return false;
}

const Type* Checker::binaryResult(BinaryOp op, const Type* l, const Type* r, SourceRange opRange, SourceRange whole) {
  if (l->isError() || r->isError()) return T.error();
  auto bad = [&] {
    diags.report(diag::err_binary_operands, opRange) << binaryOpSpelling(op) << l->str() << r->str();
    return T.error();
  };
  if (op == BinaryOp::And || op == BinaryOp::Or) {
    if (l == r) return l;
    return l->isScalar() && r->isScalar() ? T.boolType() : T.dynamic();
  }
  if (op == BinaryOp::In || op == BinaryOp::NotIn || op == BinaryOp::Is || op == BinaryOp::IsNot) return T.boolType();
  if (l->isDynamic() || r->isDynamic()) {
    const Type* other = l->isDynamic() ? r : l;
    if (other->kind == TypeKind::Tile || other->kind == TypeKind::Fragment)
      return T.tile(other->dtype, false, other->dims, other->rankKnown);
    return isComparison(op) ? T.boolType() : T.dynamic();
  }
  // Strings and host containers.
  if (l->kind == TypeKind::Str || r->kind == TypeKind::Str) {
    if (op == BinaryOp::Eq || op == BinaryOp::Ne) return T.boolType();
    if (l->kind == TypeKind::Str && r->kind == TypeKind::Str && (op == BinaryOp::Add || isComparison(op)))
      return isComparison(op) ? T.boolType() : T.str();
    if (l->kind == TypeKind::Str && (op == BinaryOp::Mod || (op == BinaryOp::Mul && r->isIntegral()))) return T.str();
    return bad();
  }
  if (l->kind == TypeKind::List || l->kind == TypeKind::Tuple || r->kind == TypeKind::List ||
      r->kind == TypeKind::Tuple) {
    if (op == BinaryOp::Eq || op == BinaryOp::Ne) return T.boolType();
    if (op == BinaryOp::Add && l->kind == r->kind) return l->kind == TypeKind::List ? l : T.dynamic();
    if (op == BinaryOp::Mul && (l->isIntegral() || r->isIntegral())) return l->isIntegral() ? r : l;
    return bad();
  }
  DType dl, dr;
  bool kl, kr;
  if (!elementDType(l, dl, kl) || !elementDType(r, dr, kr)) {
    if (op == BinaryOp::Eq || op == BinaryOp::Ne) return T.boolType();
    return bad();
  }
  bool tileL = l->isTileLike(), tileR = r->isTileLike();
  if (op == BinaryOp::MatMul) {
    if (!tileL || !tileR) return bad();
    if (l->kind == TypeKind::Tensor && r->kind == TypeKind::Tensor && !inKernel())
      return T.tensor(DType::FP32, kl && kr, {}, {}, false, false);
    Extent m = l->rankKnown && !l->dims.empty() ? l->dims.front() : "?";
    Extent n = r->rankKnown && !r->dims.empty() ? r->dims.back() : "?";
    return T.tile(DType::FP32, true, {m, n}, true);
  }
  if (isBitwise(op)) {
    bool intL = !isFloat(dl) || !kl, intR = !isFloat(dr) || !kr;
    if (!intL || !intR) return bad();
  }
  // The element dtype: literals take the other side's dtype; otherwise the wider one.
  bool wl = l->kind == TypeKind::Scalar && l->weak, wr = r->kind == TypeKind::Scalar && r->weak;
  DType d;
  NumericPolicy p;
  bool weak = false;
  if (wl && wr) {
    d = isFloat(dl) || isFloat(dr) ? DType::FP32 : DType::INT32;
    weak = true;
  } else if (wl || wr) {
    const Type* s = wl ? r : l;
    DType w = wl ? dl : dr;
    d = s->dtype;
    p = s->policy;
    if (isFloat(w) && !isFloat(d)) {
      d = DType::FP32;
      p = {};
    }
  } else {
    d = promote(dl, dr);
    p = d == dl ? l->policy : r->policy;
  }
  if (op == BinaryOp::Div && !isFloat(d)) {
    d = DType::FP32;
    p = {};
  }
  if (isComparison(op)) {
    d = DType::BOOL;
    p = {};
    weak = false;
  }
  if (!tileL && !tileR) return T.scalar(d, p, weak);
  // Shapes: elementwise with broadcasting of size-1 and scalar operands.
  std::vector<Extent> dims;
  bool rankKnown = true;
  if (tileL && tileR) {
    if (l->rankKnown && r->rankKnown && l->dims.size() == r->dims.size()) {
      for (size_t i = 0; i < l->dims.size(); ++i) {
        const Extent &a = l->dims[i], &b = r->dims[i];
        if (extentIsConst(a) && extentIsConst(b) && a != b && a != "1" && b != "1") {
          diags.report(diag::err_shape_mismatch, opRange) << binaryOpSpelling(op) << l->str() << r->str();
          return T.error();
        }
        if (!extentsAgreeStatically(op, a, b, l, r, opRange)) return T.error();
        dims.push_back(a == "1" || a == "?" ? b : a);
      }
    } else if (l->rankKnown && r->rankKnown && !(l->kind == TypeKind::Shared && l->dims.empty()) &&
               !(r->kind == TypeKind::Shared && r->dims.empty())) {
      // Ranks differ: the shorter shape lines up with the end of the longer one (NumPy).
      dims = l->dims.size() >= r->dims.size() ? l->dims : r->dims;
      const std::vector<Extent>& shorter = l->dims.size() >= r->dims.size() ? r->dims : l->dims;
      for (size_t i = 0; i < shorter.size(); ++i) {
        Extent& a = dims[dims.size() - shorter.size() + i];
        const Extent& b = shorter[i];
        if (extentIsConst(a) && extentIsConst(b) && a != b && a != "1" && b != "1") {
          diags.report(diag::err_shape_mismatch, opRange) << binaryOpSpelling(op) << l->str() << r->str();
          return T.error();
        }
        if (!extentsAgreeStatically(op, a, b, l, r, opRange)) return T.error();
        if (a == "1" || a == "?") a = b;
      }
    } else if (l->rankKnown && r->rankKnown) {
      dims = l->dims.size() >= r->dims.size() ? l->dims : r->dims;
    } else {
      rankKnown = l->rankKnown ? true : r->rankKnown;
      dims = l->rankKnown ? l->dims : r->dims;
    }
  } else {
    const Type* t = tileL ? l : r;
    dims = t->dims;
    rankKnown = t->rankKnown && (t->kind != TypeKind::Shared || !t->dims.empty());
  }
  bool known = (kl || !tileL) && (kr || !tileR);
  if (!inKernel() && (l->kind == TypeKind::Tensor || r->kind == TypeKind::Tensor))
    return T.tensor(d, known, p, dims, rankKnown, false);
  return T.tile(d, known, dims, rankKnown, p);
}

const Type* Checker::checkConditional(ConditionalExpr* e) {
  check(e->cond);
  const Type* a = check(e->thenExpr);
  const Type* b = check(e->elseExpr);
  if (a->isError() || b->isError()) return T.error();
  if (a == b) return a;
  if (a->kind == TypeKind::Scalar && b->kind == TypeKind::Scalar) {
    if (a->weak) return b;
    if (b->weak) return a;
    return T.scalar(promote(a->dtype, b->dtype));
  }
  return T.dynamic();
}

const Type* Checker::checkComprehension(ComprehensionExpr* e) {
  Scope* outer = scope;
  scope = sc.symbols.makeScope(Scope::Comprehension, outer);
  for (ComprehensionClause& c : e->clauses) {
    const Type* it = check(c.iter);
    assignTo(c.target, iterationElement(it, c.iter ? c.iter->range : c.range), nullptr);
    for (Expr* cond : c.conditions) check(cond);
  }
  const Type* elem = check(e->element);
  scope = outer;
  if (e->comprehensionKind == ComprehensionExpr::Generator) return T.dynamic();
  if (elem->kind == TypeKind::Scalar && elem->weak) elem = T.scalar(elem->dtype);
  return T.list(elem);
}

const Type* Checker::iterationElement(const Type* t, SourceRange at) {
  switch (t->kind) {
    case TypeKind::Error: return T.error();
    case TypeKind::Range:
    case TypeKind::List: return t->elems.empty() ? T.dynamic() : t->elems[0];
    case TypeKind::Tuple: {
      if (t->elems.empty()) return T.dynamic();
      for (const Type* e : t->elems)
        if (e != t->elems[0]) return T.dynamic();
      const Type* e0 = t->elems[0];
      return e0->kind == TypeKind::Scalar && e0->weak ? T.scalar(e0->dtype) : e0;
    }
    case TypeKind::Str: return T.str();
    case TypeKind::Dynamic:
    case TypeKind::Dict:
    case TypeKind::Opaque:
    case TypeKind::Tensor:
    case TypeKind::Tile: return T.dynamic();
    default: diags.report(diag::err_not_iterable, at) << t->str(); return T.error();
  }
}

void Checker::checkConversion(const Type* from, const Type* to, SourceRange at, bool isStore, Expr* value) {
  DType fd, td;
  bool fk, tk;
  if (!elementDType(from, fd, fk) || !elementDType(to, td, tk) || !fk || !tk) return;
  if (value && isInteger(fd) && from->kind == TypeKind::Scalar && !checkConstantFits(value, td, at)) return;
  if (from->kind == TypeKind::Scalar && from->weak) {
    if (isFloat(fd) && !isFloat(td))
      diags.report(diag::err_implicit_narrowing, at)
          << from->str() << dtypeInfo(td).shortName << dtypeInfo(td).shortName;
    return;
  }
  if (widensTo(fd, td)) return;
  // Integers convert to fp32 and fp64 implicitly, as in C.
  if (isInteger(fd) && isFloat(td) && dtypeInfo(td).bits >= 32) return;
  // A store rounds a value of the storage type's accumulation type (DESIGN.md: "stores round as
  // the policy says").
  if (isStore && isFloat(td)) {
    DType accum = to->policy.accum ? *to->policy.accum : DType::FP32;
    if (fd == accum || widensTo(fd, accum)) return;
  }
  diags.report(diag::err_implicit_narrowing, at)
      << std::string(dtypeInfo(fd).shortName) << std::string(dtypeInfo(td).shortName) << dtypeInfo(td).shortName;
}

}  // namespace tessera
