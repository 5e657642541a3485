// Compile-time integer constants meeting fixed-width integer types (docs/language.md, "Integer
// arithmetic"). Constants fold in 64 bits; where a constant becomes a value of a fixed-width
// type (stored, assigned, passed, returned, or combined with a typed operand) it must fit, and a
// constant shift count must lie below the operand's width. Run-time arithmetic wraps; these
// diagnostics catch the cases a compiler can see, as clang's -Wconstant-conversion and rustc's
// overflowing_literals do.
#include <limits>

#include "sema/Checker.h"
#include "sema/SemaDiagnostics.h"

namespace tessera {

namespace {

struct IntRange {
  long long lo;
  unsigned long long hi;
};

IntRange rangeOf(DType d) {
  const DTypeInfo& info = dtypeInfo(d);
  unsigned bits = info.bits;
  if (info.kind == DTypeKind::UInt)
    return {0, bits >= 64 ? std::numeric_limits<unsigned long long>::max() : (1ull << bits) - 1};
  if (bits >= 64)
    return {std::numeric_limits<long long>::min(),
            static_cast<unsigned long long>(std::numeric_limits<long long>::max())};
  return {-(1ll << (bits - 1)), (1ull << (bits - 1)) - 1};
}

bool fits(long long v, IntRange r) { return v >= r.lo && (v < 0 || static_cast<unsigned long long>(v) <= r.hi); }

// The integer dtype of a typed (not literal) integer scalar, or nullopt.
std::optional<DType> typedInteger(const Type* t) {
  if (!t || t->kind != TypeKind::Scalar || t->weak || !isInteger(t->dtype)) return std::nullopt;
  return t->dtype;
}

bool isIntegerConstant(const std::optional<ConstValue>& c) { return c && c->kind == ConstValue::Int; }

}  // namespace

bool Checker::checkConstantFits(Expr* value, DType target, SourceRange at) {
  if (!value || !isInteger(target)) return true;
  auto c = evalConst(value, nullptr);
  if (!isIntegerConstant(c)) return true;
  IntRange r = rangeOf(target);
  if (fits(c->i, r)) return true;
  diags.report(diag::err_const_out_of_range, at) << c->i << dtypeInfo(target).shortName << r.lo << r.hi;
  return false;
}

const Type* Checker::checkIntegerBinary(BinaryExpr* e, const Type* l, const Type* r, const Type* result) {
  if (!result || result->kind != TypeKind::Scalar || !isInteger(result->dtype)) return result;
  // Literal arithmetic folds in 64 bits; a result that leaves i32 is an i64 literal (`1 << 40`),
  // so that the code computing it at run time computes in 64 bits too.
  if (result->weak) {
    auto c = evalConst(e, nullptr);
    if (result->dtype == DType::INT32 && isIntegerConstant(c) && !fits(c->i, rangeOf(DType::INT32)))
      return T.scalar(DType::INT64, result->policy, true);
    return result;
  }
  bool shift = e->op == BinaryOp::Shl || e->op == BinaryOp::Shr;
  // A constant shift count must be below the width of the shifted type (run-time shifts by the
  // width or more give 0, or -1 for a negative value shifted right; a constant count like that
  // is a mistake).
  if (shift) {
    if (auto width = typedInteger(l)) {
      auto count = evalConst(e->rhs, nullptr);
      unsigned bits = dtypeInfo(*width).bits;
      if (isIntegerConstant(count) && (count->i < 0 || count->i >= static_cast<long long>(bits))) {
        diags.report(diag::err_shift_count_range, e->rhs->range) << count->i << dtypeInfo(*width).shortName << bits - 1;
        return T.error();
      }
    }
  }
  auto dt = typedInteger(result);
  if (!dt) return result;  // literal arithmetic folds in 64 bits; it is checked where it is used
  // A literal operand takes the other operand's type: it must fit it (`x + 3000000000`, x: i32).
  if (!shift) {
    if (l->kind == TypeKind::Scalar && l->weak && !checkConstantFits(e->lhs, *dt, e->lhs->range)) return T.error();
    if (r->kind == TypeKind::Scalar && r->weak && !checkConstantFits(e->rhs, *dt, e->rhs->range)) return T.error();
  }
  // Arithmetic on typed constants (`A * 2`, A: i32 = 2_000_000_000) must not leave the type.
  // Only when both operands are constants, so that ordinary arithmetic costs nothing here.
  if (!isIntegerConstant(evalConst(e->lhs, nullptr)) || !isIntegerConstant(evalConst(e->rhs, nullptr))) return result;
  if (!checkConstantFits(e, *dt, e->range)) return T.error();
  return result;
}

}  // namespace tessera
