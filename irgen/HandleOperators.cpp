// Operators: unary, arithmetic (in the compute type of the result), comparisons, `and`/`or`
// (short-circuit when the right side has effects) and conditional expressions.
#include <algorithm>

#include "irgen/FunctionContext.h"

namespace tessera::irgen {

Lowered FunctionContext::lowerUnary(UnaryExpr* e, I::Type want) {
  if (e->op == UnaryOp::Not) {
    I::Value* v = toBool(value(lower(e->operand), e->operand->range), e->range);
    loc(e);
    return Lowered::val(op1(I::OpId::ArithXOrI, {v, b_->constInt(1, ctx().i1())}, ctx().i1()));
  }
  I::Value* v = value(lower(e->operand, want), e->operand->range);
  loc(e);
  if (I::isView(v->type)) v = asTile(v, e->range);
  if (e->op == UnaryOp::Pos) return Lowered::val(v);
  I::Type c = computeType(v->type);
  v = coerce(v, c, e->range);
  if (e->op == UnaryOp::Neg) {
    if (I::isFloatLike(c)) return Lowered::val(op1(I::OpId::ArithNegF, {v}, c));
    return Lowered::val(op1(I::OpId::ArithSubI, {constant(0, c), v}, c));
  }
  return Lowered::val(op1(I::OpId::ArithXOrI, {v, constant(-1, c)}, c));  // ~x
}

// numpy broadcasting: trailing extents line up; an extent of 1 takes the other side's.
std::vector<I::Dim> FunctionContext::broadcastShape(const std::vector<I::Dim>& x, const std::vector<I::Dim>& y) {
  std::vector<I::Dim> shape;
  size_t n = std::max(x.size(), y.size());
  for (size_t i = 0; i < n; ++i) {
    const I::Dim* dx = i + x.size() >= n ? &x[i + x.size() - n] : nullptr;
    const I::Dim* dy = i + y.size() >= n ? &y[i + y.size() - n] : nullptr;
    if (dx && dy) {
      unify(*dx, *dy);
      shape.push_back(dx->isStatic() && dx->size == 1 ? *dy : *dx);
    } else {
      shape.push_back(dx ? *dx : *dy);
    }
  }
  return shape;
}

I::Value* FunctionContext::compare(BinaryOp bop, I::Value* a, I::Value* b, SourceRange at) {
  bool tiles = isShapedValue(a->type) || isShapedValue(b->type) || I::isView(a->type) || I::isView(b->type);
  I::Type t;
  if (tiles) {
    if (I::isView(a->type)) a = asTile(a, at);
    if (I::isView(b->type)) b = asTile(b, at);
    std::vector<I::Dim> shape = isShapedValue(a->type) && isShapedValue(b->type)
                                    ? broadcastShape(a->type->shape, b->type->shape)
                                    : (isShapedValue(a->type) ? a->type : b->type)->shape;
    t = ctx().tile(promote(elemOf(a->type), elemOf(b->type)), shape);
  } else {
    t = promote(a->type, b->type);
  }
  a = coerce(a, t, at);
  b = coerce(b, t, at);
  I::ScalarKind k = I::baseScalar(elemOf(t));
  I::Type rt = tiles ? ctx().tile(ctx().i1(), t->shape) : ctx().i1();
  // Comparison predicates: ordered for floats (unordered `une` for !=, so NaN != NaN), signed or
  // unsigned for integers.
  struct Predicates {
    BinaryOp op;
    const char *f, *s, *u;
  };
  static const Predicates kPredicates[] = {
      {BinaryOp::Eq, "oeq", "eq", "eq"},   {BinaryOp::Ne, "une", "ne", "ne"},   {BinaryOp::Lt, "olt", "slt", "ult"},
      {BinaryOp::Le, "ole", "sle", "ule"}, {BinaryOp::Gt, "ogt", "sgt", "ugt"}, {BinaryOp::Ge, "oge", "sge", "uge"},
  };
  const Predicates* p = nullptr;
  for (const Predicates& row : kPredicates)
    if (row.op == bop) p = &row;
  if (!p) unsupported(at, std::string("the operator '") + binaryOpSpelling(bop) + "'");
  bool isFloat = isFloatKind(k);
  const char* pred = isFloat ? p->f : isUnsignedKind(k) ? p->u : p->s;
  return op1(isFloat ? I::OpId::ArithCmpF : I::OpId::ArithCmpI, {a, b}, rt,
             {{I::AttrId::Pred, I::Attribute::string(pred)}});
}

// Arithmetic in the compute type of the result; `semaResult` (may be null) is sema's scalar type.
I::Value* FunctionContext::arith(BinaryOp bop, I::Value* a, I::Value* b, I::Type semaResult, SourceRange at) {
  if (bop == BinaryOp::MatMul) {
    if (I::isView(a->type)) knownView(a, at, text(at));
    if (I::isView(b->type)) knownView(b, at, text(at));
    unify(a->type->shape[1], b->type->shape[0]);
    if (a->type->shape.size() != 2 || b->type->shape.size() != 2)
      unsupported(at, "'@' on operands that are not rank-2 tiles");
    I::Type r = ctx().tile(ctx().scalar(I::ScalarKind::F32), {a->type->shape[0], b->type->shape[1]});
    waitFor(a, true);
    waitFor(b, true);
    return op1(I::OpId::TileDot, {a, b}, r);
  }
  bool tiles = isShapedValue(a->type) || isShapedValue(b->type) || I::isView(a->type) || I::isView(b->type);
  I::Type t;
  if (tiles) {
    if (I::isView(a->type)) a = asTile(a, at);
    if (I::isView(b->type)) b = asTile(b, at);
    I::Type e = promote(elemOf(a->type), elemOf(b->type));
    I::Type sa = a->type, sb = b->type;
    if (isShapedValue(sa) && isShapedValue(sb)) {
      std::vector<I::Dim> shape = broadcastShape(sa->shape, sb->shape);
      if (sa->kind == I::TypeKind::Frag && sb->kind == I::TypeKind::Frag && sa->shape == sb->shape) {
        t = ctx().frag(e, shape, sa->role);
      } else {
        t = ctx().tile(e, shape);
      }
    } else {
      I::Type s = isShapedValue(sa) ? sa : sb;
      t = s->kind == I::TypeKind::Frag ? ctx().frag(e, s->shape, s->role) : ctx().tile(e, s->shape);
    }
  } else {
    t = semaResult ? computeType(semaResult) : promote(a->type, b->type);
  }
  I::Type et = elemOf(t);
  bool isF = isFloatKind(I::baseScalar(et));
  bool isU = isUnsignedKind(I::baseScalar(et));
  if (bop == BinaryOp::Div && !isF) {
    t = tiles ? ctx().tile(ctx().scalar(I::ScalarKind::F32), t->shape) : ctx().scalar(I::ScalarKind::F32);
    isF = true;
  }
  a = coerce(a, t, at);
  b = coerce(b, t, at);
  auto bin = [&](I::OpId id, I::Value* x, I::Value* y) { return op1(id, {x, y}, t); };
  switch (bop) {
    case BinaryOp::Add: return bin(isF ? I::OpId::ArithAddF : I::OpId::ArithAddI, a, b);
    case BinaryOp::Sub: return bin(isF ? I::OpId::ArithSubF : I::OpId::ArithSubI, a, b);
    case BinaryOp::Mul: return bin(isF ? I::OpId::ArithMulF : I::OpId::ArithMulI, a, b);
    case BinaryOp::Div: return bin(I::OpId::ArithDivF, a, b);
    case BinaryOp::FloorDiv:
    case BinaryOp::Mod: {
      if (isF) {
        I::Value* q = op1(I::OpId::MathFloor, {bin(I::OpId::ArithDivF, a, b)}, t);
        if (bop == BinaryOp::FloorDiv) return q;
        return bin(I::OpId::ArithSubF, a, bin(I::OpId::ArithMulF, q, b));
      }
      if (isU) return bin(bop == BinaryOp::FloorDiv ? I::OpId::ArithDivUI : I::OpId::ArithRemUI, a, b);
      // Python floors: adjust truncating division when the remainder's sign differs from b's
      // (never when b is 0: x // 0 is -1 and x % 0 is x, docs/language.md "Integer semantics").
      I::Value* q = bin(I::OpId::ArithDivSI, a, b);
      I::Value* r = bin(I::OpId::ArithRemSI, a, b);
      I::Value* zero = constant(0, t);
      I::Type bt = tiles ? ctx().tile(ctx().i1(), t->shape) : ctx().i1();
      I::Value* rnz = op1(I::OpId::ArithCmpI, {r, zero}, bt, {{I::AttrId::Pred, I::Attribute::string("ne")}});
      I::Value* rneg = op1(I::OpId::ArithCmpI, {r, zero}, bt, {{I::AttrId::Pred, I::Attribute::string("slt")}});
      I::Value* bneg = op1(I::OpId::ArithCmpI, {b, zero}, bt, {{I::AttrId::Pred, I::Attribute::string("slt")}});
      I::Value* diff = op1(I::OpId::ArithXOrI, {rneg, bneg}, bt);
      I::Value* adj = op1(I::OpId::ArithAndI, {rnz, diff}, bt);
      I::Value* bnz = op1(I::OpId::ArithCmpI, {b, zero}, bt, {{I::AttrId::Pred, I::Attribute::string("ne")}});
      adj = op1(I::OpId::ArithAndI, {adj, bnz}, bt);
      if (bop == BinaryOp::FloorDiv)
        return op1(I::OpId::ArithSelect, {adj, bin(I::OpId::ArithSubI, q, constant(1, t)), q}, t);
      return op1(I::OpId::ArithSelect, {adj, bin(I::OpId::ArithAddI, r, b), r}, t);
    }
    case BinaryOp::Pow: {
      if (isF) return bin(I::OpId::MathPow, a, b);
      // Integers: a constant exponent in [0, 64] multiplies by squaring.
      if (b->defOp && b->defOp->id == I::OpId::ArithConstant && !tiles) {
        const I::Attribute* c = b->defOp->attr(I::AttrId::Value);
        if (c && c->kind == I::AttrKind::Int && c->i >= 0 && c->i <= 64) {
          I::Value* result = constant(1, t);
          I::Value* base = a;
          for (int64_t e = c->i; e > 0; e >>= 1) {
            if (e & 1) result = bin(I::OpId::ArithMulI, result, base);
            if (e > 1) base = bin(I::OpId::ArithMulI, base, base);
          }
          return result;
        }
      }
      unsupported(at, "'**' on integers with an exponent that is not a constant in [0, 64]",
                  "convert to a float first (f32(x) ** y)");
    }
    case BinaryOp::BitAnd: return bin(I::OpId::ArithAndI, a, b);
    case BinaryOp::BitOr: return bin(I::OpId::ArithOrI, a, b);
    case BinaryOp::BitXor: return bin(I::OpId::ArithXOrI, a, b);
    case BinaryOp::Shl: return bin(I::OpId::ArithShLI, a, b);
    case BinaryOp::Shr: return bin(isU ? I::OpId::ArithShRUI : I::OpId::ArithShRSI, a, b);
    default: unsupported(at, std::string("the operator '") + binaryOpSpelling(bop) + "'");
  }
}

Lowered FunctionContext::lowerShortCircuit(BinaryExpr* e) {
  bool isAnd = e->op == BinaryOp::And;
  I::Value* l = toBool(value(lower(e->lhs), e->lhs->range), e->lhs->range);
  if (isPure(e->rhs)) {
    I::Value* r = toBool(value(lower(e->rhs), e->rhs->range), e->rhs->range);
    loc(e);
    return Lowered::val(op1(isAnd ? I::OpId::ArithAndI : I::OpId::ArithOrI, {l, r}, ctx().i1()));
  }
  // The right side reads memory or has effects: evaluate it only when needed.
  loc(e);
  I::Operation* ifOp = op(I::OpId::ScfIf, {l}, {ctx().i1()});
  I::Block& thenB = ifOp->body(0);
  I::Block& elseB = ifOp->body(1);
  ++depth_;
  b_->setInsertionPointToEnd(isAnd ? thenB : elseB);
  I::Value* r = toBool(value(lower(e->rhs), e->rhs->range), e->rhs->range);
  flushRegion();
  op(I::OpId::ScfYield, {r}, {});
  b_->setInsertionPointToEnd(isAnd ? elseB : thenB);
  op(I::OpId::ScfYield, {b_->constInt(isAnd ? 0 : 1, ctx().i1())}, {});
  --depth_;
  b_->setInsertionPointAfter(ifOp);
  return Lowered::val(ifOp->result());
}

Lowered FunctionContext::lowerBinary(BinaryExpr* e, I::Type want) {
  if (e->op == BinaryOp::And || e->op == BinaryOp::Or) return lowerShortCircuit(e);
  if (e->op == BinaryOp::In || e->op == BinaryOp::NotIn || e->op == BinaryOp::Is || e->op == BinaryOp::IsNot)
    unsupported(e->opRange, std::string("the operator '") + binaryOpSpelling(e->op) + "'");
  // A literal operand takes the other operand's type: lower the typed side first.
  bool weakL = e->lhs->type && e->lhs->type->kind == TypeKind::Scalar && e->lhs->type->weak;
  I::Value *a, *b;
  // With sema's (strong) scalar result type known, literals are made in its compute type.
  I::Type target = nullptr;
  if (!isComparison(e->op) && e->op != BinaryOp::Shl && e->op != BinaryOp::Shr && e->op != BinaryOp::Pow && e->type &&
      e->type->kind == TypeKind::Scalar && !e->type->weak) {
    target = computeType(scalarType(e->type->dtype, e->type->policy));
    if (e->op == BinaryOp::Div && !isFloatKind(I::baseScalar(target))) target = ctx().scalar(I::ScalarKind::F32);
  }
  if (target) {
    a = value(lower(e->lhs, target), e->lhs->range);
    b = value(lower(e->rhs, target), e->rhs->range);
  } else if (weakL) {
    b = value(lower(e->rhs), e->rhs->range);
    a = value(lower(e->lhs, b->type), e->lhs->range);
  } else {
    a = value(lower(e->lhs), e->lhs->range);
    b = value(lower(e->rhs, a->type), e->rhs->range);
  }
  loc(e);
  SourceRange at = e->opRange.valid() ? e->opRange : e->range;
  if (isComparison(e->op)) return Lowered::val(compare(e->op, a, b, at));
  I::Type semaT = nullptr;
  if (e->type && e->type->kind == TypeKind::Scalar && !e->type->weak)
    semaT = scalarType(e->type->dtype, e->type->policy);
  if (e->type && e->type->kind == TypeKind::Scalar && e->type->weak) semaT = promote(a->type, b->type);
  return Lowered::val(arith(e->op, a, b, semaT, at));
}

Lowered FunctionContext::lowerConditional(ConditionalExpr* e, I::Type want) {
  I::Value* c = toBool(value(lower(e->cond), e->cond->range), e->cond->range);
  I::Type semaT = e->type && e->type->kind == TypeKind::Scalar && !e->type->weak
                      ? scalarType(e->type->dtype, e->type->policy)
                      : want;
  if (isPure(e->thenExpr) && isPure(e->elseExpr)) {
    I::Value* a = value(lower(e->thenExpr, semaT), e->thenExpr->range);
    I::Value* b = value(lower(e->elseExpr, semaT ? semaT : a->type), e->elseExpr->range);
    loc(e);
    I::Type t = semaT ? semaT : a->type;
    if (I::isScalar(a->type) && I::isScalar(b->type) && !semaT) t = promote(a->type, b->type);
    a = coerce(a, t, e->thenExpr->range);
    b = coerce(b, t, e->elseExpr->range);
    return Lowered::val(op1(I::OpId::ArithSelect, {c, a, b}, t));
  }
  loc(e);
  I::Operation* ifOp = op(I::OpId::ScfIf, {c}, {});
  ++depth_;
  b_->setInsertionPointToEnd(ifOp->body(0));
  I::Value* a = value(lower(e->thenExpr, semaT), e->thenExpr->range);
  I::Type t = semaT ? semaT : a->type;
  a = coerce(a, t, e->thenExpr->range);
  flushRegion();
  op(I::OpId::ScfYield, {a}, {});
  b_->setInsertionPointToEnd(ifOp->body(1));
  I::Value* b = coerce(value(lower(e->elseExpr, t), e->elseExpr->range), t, e->elseExpr->range);
  flushRegion();
  op(I::OpId::ScfYield, {b}, {});
  --depth_;
  ifOp->addResult(t);
  b_->setInsertionPointAfter(ifOp);
  return Lowered::val(ifOp->result());
}

}  // namespace tessera::irgen
