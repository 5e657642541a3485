// Types: dtypes and annotations -> Tile IR types, the compute type of narrow values and the
// type two operands meet in (DESIGN.md, "Numerics").
#include <functional>
#include <iterator>

#include "irgen/FunctionContext.h"

namespace tessera::irgen {

I::ScalarKind scalarKindOf(DType d) {
  static constexpr I::ScalarKind kScalarOf[] = {
#define DTYPE(ID, NAME, SHORT, BITS, KIND, EXP, MANT, ABI, IR, IRNAME, LLVM, CTYPE, DOC) I::ScalarKind::IR,
#include "basic/DTypes.def"
  };
  size_t i = static_cast<size_t>(d);
  return i < std::size(kScalarOf) ? kScalarOf[i] : I::ScalarKind::F32;
}

// Sema's extent -> IR dimension: constants, symbols and unknowns as they are; expressions
// (K/tp) as derived dimensions over the same tree.
I::Dim dimOf(const Extent& e) {
  switch (e.kind()) {
    case Extent::Kind::Unknown: return I::Dim();
    case Extent::Kind::Const: return I::Dim::fixed(e.value());
    case Extent::Kind::Symbol: return I::Dim::symbol(e.str());
    case Extent::Kind::Expr: break;
  }
  I::DimOp op = I::DimOp::Add;
  switch (e.op()) {
    case Extent::Op::Add: op = I::DimOp::Add; break;
    case Extent::Op::Sub: op = I::DimOp::Sub; break;
    case Extent::Op::Mul: op = I::DimOp::Mul; break;
    case Extent::Op::Div: op = I::DimOp::Div; break;
    case Extent::Op::Mod: op = I::DimOp::Mod; break;
    case Extent::Op::CeilDiv: return I::Dim();  // graph-only: sema's annotations never spell it
  }
  I::Dim l = dimOf(e.lhs()), r = dimOf(e.rhs());
  if ((!l.isStatic() && l.sym.empty()) || (!r.isStatic() && r.sym.empty())) return I::Dim();
  return I::Dim::derived(op, l, r);
}

I::Type FunctionContext::scalarType(DType d, const NumericPolicy& p) {
  I::Type base = ctx().scalar(scalarKindOf(d));
  bool hasPolicy = p.accum || (p.round && *p.round != RoundMode::NearestEven) || p.saturate || p.scaleValue != 0;
  if (!hasPolicy) return base;
  I::Type accum = p.accum ? ctx().scalar(scalarKindOf(*p.accum)) : nullptr;
  I::Rounding r = I::Rounding::Default;
  if (p.round) {
    switch (*p.round) {
      case RoundMode::NearestEven: r = I::Rounding::NearestEven; break;
      case RoundMode::TowardZero: r = I::Rounding::TowardZero; break;
      case RoundMode::Stochastic: r = I::Rounding::Stochastic; break;
    }
  }
  return ctx().num(base, accum, r, p.saturate, p.scaleValue);
}

I::Type FunctionContext::paramType(const Param& p, const Type* t) {
  if (t && t->isDynamic() && !p.annotation) return untypedParamType(p);
  // Sema refuses parameters without a dtype (err_untyped_param); a backstop.
  if (!t || t->isLenient()) error(diag::err_untyped_param, p.nameRange, p.name, def_->name);
  if (t->kind == TypeKind::Scalar) return scalarType(t->dtype, t->policy);
  if (t->kind != TypeKind::Tensor) unsupported(p.nameRange, "a parameter of type '" + t->str() + "'");
  if (!t->dtypeKnown) error(diag::err_untyped_param, p.nameRange, p.name, def_->name);
  std::vector<I::Dim> shape;
  if (t->rankKnown) {
    for (const Extent& e : t->dims) shape.push_back(dimOf(e));
  } else {
    // tensor[T] of unknown rank: the rank its uses need, inferred by sema.
    shape.assign(static_cast<size_t>(inferredParam(p).rank), I::Dim{});
  }
  I::Access access = I::Access::Read;
  if (t->mut) access = I::Access::ReadWrite;
  if (t->privilege == Privilege::Write) access = I::Access::Write;
  if (t->privilege == Privilege::ReduceSum || t->privilege == Privilege::ReduceMax ||
      t->privilege == Privilege::ReduceMin)
    access = I::Access::ReadWrite;
  return ctx().tensor(scalarType(t->dtype, t->policy), shape, I::MemSpace::Global, access);
}

// Arithmetic on narrow types happens in the accumulation type (DESIGN.md): fp32 unless a policy
// says otherwise for floats under 32 bits, i32 for integers under 32 bits.
I::Type FunctionContext::computeType(I::Type t) {
  if (isShapedValue(t)) {
    I::Type e = computeType(t->elem);
    if (e == t->elem) return t;
    return t->kind == I::TypeKind::Frag ? ctx().frag(e, t->shape, t->role) : ctx().tile(e, t->shape);
  }
  if (!I::isScalar(t)) return t;
  I::ScalarKind k = I::baseScalar(t);
  if (isFloatKind(k)) {
    if (I::scalarBits(k) < 32)
      return t->kind == I::TypeKind::Num && t->accum ? t->accum : ctx().scalar(I::ScalarKind::F32);
    return ctx().scalar(k);
  }
  // Integers compute at their own width and wrap there, as sema types them (i8 + i8 is i8) and
  // as NumPy and Triton do (docs/language.md "Integer semantics").
  return ctx().scalar(k);
}

// The type two operands meet in (scalars; tiles use their elements).
I::Type FunctionContext::promote(I::Type a, I::Type b) {
  a = computeType(a);
  b = computeType(b);
  if (a == b) return a;
  I::ScalarKind x = I::baseScalar(a), y = I::baseScalar(b);
  bool fx = isFloatKind(x), fy = isFloatKind(y);
  if (fx && fy) {
    if (I::scalarBits(x) == I::scalarBits(y)) return ctx().scalar(I::ScalarKind::F32);
    return I::scalarBits(x) > I::scalarBits(y) ? a : b;
  }
  if (fx) return a;
  if (fy) return b;
  if (x == I::ScalarKind::I1) return b;
  if (y == I::ScalarKind::I1) return a;
  if (x == I::ScalarKind::Index || y == I::ScalarKind::Index) return ctx().index();
  unsigned bx = I::scalarBits(x), by = I::scalarBits(y);
  if (bx != by) return bx > by ? a : b;
  return ctx().scalar(I::ScalarKind::I64);  // same width, mixed signedness
}

I::Type FunctionContext::withElem(I::Type like, I::Type elem) {
  return like->kind == I::TypeKind::Frag ? ctx().frag(elem, like->shape, like->role) : ctx().tile(elem, like->shape);
}

I::Type FunctionContext::floatComputeType(I::Type t) {
  I::Type c = computeType(t);
  if (I::isFloatLike(c)) return c;
  return isShapedValue(c) ? ctx().tile(ctx().scalar(I::ScalarKind::F32), c->shape) : ctx().scalar(I::ScalarKind::F32);
}

}  // namespace tessera::irgen
