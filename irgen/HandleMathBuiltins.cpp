// Math builtins of scalars and tile values (abs, min, max, exp, ..., fma, pow, ceil_div) and
// the reduction of a tile value along an axis.
#include "irgen/FunctionContext.h"

namespace tessera::irgen {

I::Value* FunctionContext::unaryMath(I::OpId id, I::Value* v, SourceRange at) {
  if (I::isView(v->type)) v = asTile(v, at);
  I::Type c = floatComputeType(v->type);
  v = coerce(v, c, at);
  return op1(id, {v}, c);
}

// A math builtin of one argument that maps straight onto a Tile IR op.
Lowered FunctionContext::lowerUnaryMath(const BuiltinCall& c, I::OpId id) {
  Expr* x = c.positional[0];
  return Lowered::val(unaryMath(id, value(lower(x), x->range), c.range()));
}

Lowered FunctionContext::handleExp(const BuiltinCall& c) { return lowerUnaryMath(c, I::OpId::MathExp); }
Lowered FunctionContext::handleExp2(const BuiltinCall& c) { return lowerUnaryMath(c, I::OpId::MathExp2); }
Lowered FunctionContext::handleLog(const BuiltinCall& c) { return lowerUnaryMath(c, I::OpId::MathLog); }
Lowered FunctionContext::handleLog2(const BuiltinCall& c) { return lowerUnaryMath(c, I::OpId::MathLog2); }
Lowered FunctionContext::handleSqrt(const BuiltinCall& c) { return lowerUnaryMath(c, I::OpId::MathSqrt); }
Lowered FunctionContext::handleRsqrt(const BuiltinCall& c) { return lowerUnaryMath(c, I::OpId::MathRsqrt); }
Lowered FunctionContext::handleTanh(const BuiltinCall& c) { return lowerUnaryMath(c, I::OpId::MathTanh); }
Lowered FunctionContext::handleErf(const BuiltinCall& c) { return lowerUnaryMath(c, I::OpId::MathErf); }
Lowered FunctionContext::handleSin(const BuiltinCall& c) { return lowerUnaryMath(c, I::OpId::MathSin); }
Lowered FunctionContext::handleCos(const BuiltinCall& c) { return lowerUnaryMath(c, I::OpId::MathCos); }

// floor and ceil: integers are already integral.
static bool isFloor(const BuiltinCall& c) { return c.info.id == BuiltinId::Floor; }
Lowered FunctionContext::handleFloor(const BuiltinCall& c) {
  SourceRange at = c.range();
  Expr* x = c.positional[0];
  I::Value* v = value(lower(x), x->range);
  if (I::isView(v->type)) v = asTile(v, at);
  if (!I::isFloatLike(v->type)) return Lowered::val(v);
  I::Type t = computeType(v->type);
  return Lowered::val(op1(isFloor(c) ? I::OpId::MathFloor : I::OpId::MathCeil, {coerce(v, t, at)}, t));
}
Lowered FunctionContext::handleCeil(const BuiltinCall& c) { return handleFloor(c); }

Lowered FunctionContext::handleAbs(const BuiltinCall& c) {
  SourceRange at = c.range();
  Expr* x = c.positional[0];
  I::Value* v = value(lower(x), x->range);
  if (I::isView(v->type)) v = asTile(v, at);
  I::Type t = computeType(v->type);
  return Lowered::val(op1(I::OpId::MathAbs, {coerce(v, t, at)}, t));
}

// Lowers all arguments; literals take the type of the first typed argument.
std::vector<I::Value*> FunctionContext::typedArgs(const std::vector<Expr*>& args) {
  auto lowerArg = [&](size_t i, I::Type want) { return value(lower(args[i], want), args[i]->range); };
  std::vector<I::Value*> vs(args.size(), nullptr);
  I::Type hint = nullptr;
  for (size_t i = 0; i < args.size(); ++i)
    if (!(args[i]->type && args[i]->type->kind == TypeKind::Scalar && args[i]->type->weak)) {
      vs[i] = lowerArg(i, nullptr);
      if (!hint) hint = vs[i]->type;
    }
  for (size_t i = 0; i < args.size(); ++i)
    if (!vs[i]) vs[i] = lowerArg(i, hint);
  return vs;
}

// min / max of any number of scalars or tiles, folded left to right in the promoted type.
Lowered FunctionContext::lowerMinMax(const BuiltinCall& c, bool isMin) {
  SourceRange at = c.range();
  std::vector<I::Value*> vs = typedArgs(c.positional);
  loc(c.expr);
  I::Value* acc = vs[0];
  for (size_t i = 1; i < vs.size(); ++i) {
    I::Value* x = acc;
    I::Value* y = vs[i];
    if (I::isView(x->type)) x = asTile(x, at);
    if (I::isView(y->type)) y = asTile(y, at);
    I::Type t =
        isShapedValue(x->type) || isShapedValue(y->type)
            ? ctx().tile(promote(elemOf(x->type), elemOf(y->type)), (isShapedValue(x->type) ? x : y)->type->shape)
            : promote(x->type, y->type);
    x = coerce(x, t, at);
    y = coerce(y, t, at);
    I::ScalarKind k = I::baseScalar(elemOf(t));
    if (isFloatKind(k)) {
      acc = op1(isMin ? I::OpId::ArithMinF : I::OpId::ArithMaxF, {x, y}, t);
    } else if (!isUnsignedKind(k)) {
      acc = op1(isMin ? I::OpId::ArithMinSI : I::OpId::ArithMaxSI, {x, y}, t);
    } else {
      I::Type bt = isShapedValue(t) ? ctx().tile(ctx().i1(), t->shape) : ctx().i1();
      I::Value* lt =
          op1(I::OpId::ArithCmpI, {x, y}, bt, {{I::AttrId::Pred, I::Attribute::string(isMin ? "ult" : "ugt")}});
      acc = op1(I::OpId::ArithSelect, {lt, x, y}, t);
    }
  }
  return Lowered::val(acc);
}

Lowered FunctionContext::handleMin(const BuiltinCall& c) { return lowerMinMax(c, true); }
Lowered FunctionContext::handleMax(const BuiltinCall& c) { return lowerMinMax(c, false); }

Lowered FunctionContext::handleFma(const BuiltinCall& c) {
  SourceRange at = c.range();
  std::vector<I::Value*> vs = typedArgs(c.positional);
  loc(c.expr);
  I::Type t = computeType(promote(promote(vs[0]->type, vs[1]->type), vs[2]->type));
  if (!I::isFloatLike(t)) {
    I::Value* m = op1(I::OpId::ArithMulI, {coerce(vs[0], t, at), coerce(vs[1], t, at)}, t);
    return Lowered::val(op1(I::OpId::ArithAddI, {m, coerce(vs[2], t, at)}, t));
  }
  return Lowered::val(op1(I::OpId::MathFma, {coerce(vs[0], t, at), coerce(vs[1], t, at), coerce(vs[2], t, at)}, t));
}

Lowered FunctionContext::handlePow(const BuiltinCall& c) {
  std::vector<I::Value*> vs = typedArgs(c.positional);
  loc(c.expr);
  const CallExpr* e = c.expr;
  I::Type semaT = e->type && e->type->kind == TypeKind::Scalar ? scalarType(e->type->dtype) : nullptr;
  return Lowered::val(arith(BinaryOp::Pow, vs[0], vs[1], semaT, c.range()));
}

// mulhi(a, b): both operands in their common integer compute type (i32 at least), then the high
// half of their double-width product.
Lowered FunctionContext::handleMulhi(const BuiltinCall& c) {
  SourceRange at = c.range();
  std::vector<I::Value*> vs = typedArgs(c.positional);
  loc(c.expr);
  I::Type t = computeType(promote(vs[0]->type, vs[1]->type));
  if (!I::isScalar(t) || I::scalarClass(I::baseScalar(t)) == I::ScalarClass::Float ||
      I::baseScalar(t) == I::ScalarKind::I1)
    unsupported(at, "mulhi of " + I::printType(t), "pass integers");
  if (I::baseScalar(t) == I::ScalarKind::Index) t = ctx().scalar(I::ScalarKind::I64);
  return Lowered::val(op1(I::OpId::ArithMulHi, {coerce(vs[0], t, at), coerce(vs[1], t, at)}, t));
}

// bitcast(v, T): v rounded to its static dtype (arithmetic on narrow floats happens in f32),
// then its bits read as T (arith.bitcast).
Lowered FunctionContext::handleBitcast(const BuiltinCall& c) {
  Expr* vE = arg(c, "value");
  I::Value* v = value(lower(vE), vE->range);
  if (vE->type && vE->type->kind == TypeKind::Scalar) v = coerce(v, scalarType(vE->type->dtype), vE->range);
  if (!c.expr->type || c.expr->type->kind != TypeKind::Scalar) unsupported(c.range(), "this bitcast");
  loc(c.expr);
  return Lowered::val(op1(I::OpId::ArithBitcast, {v}, scalarType(c.expr->type->dtype)));
}

// ceil_div(a, d) = (a + d - 1) // d in i64.
// `inf` is a value (lowerName); a call of it never reaches here past sema.
Lowered FunctionContext::handleInf(const BuiltinCall& c) { return unsupportedBuiltin(c); }

Lowered FunctionContext::handleCeilDiv(const BuiltinCall& c) {
  SourceRange at = c.range();
  I::Type i64 = ctx().scalar(I::ScalarKind::I64);
  Expr* aE = c.positional[0];
  Expr* dE = c.positional[1];
  I::Value* a = coerce(value(lower(aE, i64), aE->range), i64, at);
  I::Value* d = coerce(value(lower(dE, i64), dE->range), i64, at);
  loc(c.expr);
  I::Value* s = op1(I::OpId::ArithSubI, {op1(I::OpId::ArithAddI, {a, d}, i64), b_->constInt(1, i64)}, i64);
  return Lowered::val(arith(BinaryOp::FloorDiv, s, d, i64, at));
}

I::Value* FunctionContext::reduceTile(I::Value* t, const std::string& kind, std::optional<int64_t> axis,
                                      SourceRange at) {
  t = asTile(t, at);
  if (t->type->kind != I::TypeKind::Tile) unsupported(at, "reducing a value of type " + I::printType(t->type));
  t = coerce(t, computeType(t->type), at);
  auto once = [&](I::Value* x, int64_t ax) {
    std::vector<I::Dim> shape = x->type->shape;
    int64_t rank = static_cast<int64_t>(shape.size());
    if (ax < -rank || ax >= rank)
      unsupported(at, "reducing along axis " + std::to_string(ax) + " of a rank-" + std::to_string(rank) + " tile");
    shape.erase(shape.begin() + (ax < 0 ? ax + rank : ax));
    I::Type rt = shape.empty() ? x->type->elem : ctx().tile(x->type->elem, shape);
    return op1(I::OpId::TileReduce, {x}, rt,
               {{I::AttrId::Kind, I::Attribute::string(kind)}, {I::AttrId::Axis, I::Attribute::integer(ax)}});
  };
  if (axis) return once(t, *axis);
  while (isShapedValue(t->type)) t = once(t, 0);
  return t;
}

}  // namespace tessera::irgen
