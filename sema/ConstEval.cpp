// Constant folding of compile-time values: literals (8_KiB is already 8192), module constants,
// autotune parameters (the candidate that is compiled: the first), and arithmetic on them.
#include <climits>
#include <cmath>

#include "frontend/ASTVisitor.h"
#include "sema/Sema.h"
#include "sema/SemaDiagnostics.h"

namespace tessera {

namespace {
std::optional<ConstValue> fail(const Expr* e, DiagnosticEngine* diags, DiagID id) {
  if (diags && e) diags->report(id, e->range);
  return std::nullopt;
}
}  // namespace

// One binary operator on two constants, with the language's integer semantics (exact integer
// division when it divides, floor division and modulo toward -inf, overflow an error at `at`).
// Shared by sema's evalConst and the graph builder's constant folding.
std::optional<ConstValue> foldBinaryConst(BinaryOp op, const ConstValue& l, const ConstValue& r, const Expr* at,
                                          DiagnosticEngine* diags) {
  if (l.kind == ConstValue::Str || r.kind == ConstValue::Str) {
    if (op == BinaryOp::Add && l.kind == r.kind) return ConstValue::ofStr(l.s + r.s);
    if (op == BinaryOp::Eq && l.kind == r.kind) return ConstValue::ofBool(l.s == r.s);
    if (op == BinaryOp::Ne && l.kind == r.kind) return ConstValue::ofBool(l.s != r.s);
    return std::nullopt;
  }
  bool isInt = l.kind != ConstValue::Float && r.kind != ConstValue::Float;
  long long a = l.kind == ConstValue::Bool ? l.b : l.i, c = r.kind == ConstValue::Bool ? r.b : r.i;
  double x = l.asDouble(), y = r.asDouble();
  long long out = 0;
  switch (op) {
    case BinaryOp::Add:
      if (!isInt) return ConstValue::ofFloat(x + y);
      if (__builtin_add_overflow(a, c, &out)) return fail(at, diags, diag::err_const_overflow);
      return ConstValue::ofInt(out);
    case BinaryOp::Sub:
      if (!isInt) return ConstValue::ofFloat(x - y);
      if (__builtin_sub_overflow(a, c, &out)) return fail(at, diags, diag::err_const_overflow);
      return ConstValue::ofInt(out);
    case BinaryOp::Mul:
      if (!isInt) return ConstValue::ofFloat(x * y);
      if (__builtin_mul_overflow(a, c, &out)) return fail(at, diags, diag::err_const_overflow);
      return ConstValue::ofInt(out);
    case BinaryOp::Div:
      if (y == 0) return fail(at, diags, diag::err_const_div_zero);
      // Shape arithmetic (K/tp) divides integers exactly; otherwise true division.
      if (isInt && a % c == 0) return ConstValue::ofInt(a / c);
      return ConstValue::ofFloat(x / y);
    case BinaryOp::FloorDiv:
    case BinaryOp::Mod: {
      if (y == 0) return fail(at, diags, diag::err_const_div_zero);
      if (!isInt) {
        double q = std::floor(x / y);
        return ConstValue::ofFloat(op == BinaryOp::FloorDiv ? q : x - q * y);
      }
      if (a == LLONG_MIN && c == -1) return fail(at, diags, diag::err_const_overflow);
      long long q = a / c, m = a % c;
      if (m != 0 && ((m < 0) != (c < 0))) {
        --q;
        m += c;
      }
      return ConstValue::ofInt(op == BinaryOp::FloorDiv ? q : m);
    }
    case BinaryOp::Pow: {
      if (!isInt || c < 0) return ConstValue::ofFloat(std::pow(x, y));
      long long acc = 1;
      for (long long k = 0; k < c; ++k) {
        if (__builtin_mul_overflow(acc, a, &acc)) return fail(at, diags, diag::err_const_overflow);
        if (acc == 0 || acc == 1) break;
      }
      return ConstValue::ofInt(acc);
    }
    case BinaryOp::BitAnd: return isInt ? std::optional(ConstValue::ofInt(a & c)) : std::nullopt;
    case BinaryOp::BitOr: return isInt ? std::optional(ConstValue::ofInt(a | c)) : std::nullopt;
    case BinaryOp::BitXor: return isInt ? std::optional(ConstValue::ofInt(a ^ c)) : std::nullopt;
    case BinaryOp::Shl:
      if (!isInt || c < 0 || c >= 63)
        return isInt && c >= 63 ? fail(at, diags, diag::err_const_overflow) : std::nullopt;
      if (a < 0 || (a >> (62 - c)) != 0) return fail(at, diags, diag::err_const_overflow);
      return ConstValue::ofInt(a << c);
    case BinaryOp::Shr:
      if (!isInt || c < 0) return std::nullopt;
      return ConstValue::ofInt(c >= 63 ? (a < 0 ? -1 : 0) : a >> c);
    case BinaryOp::Eq: return ConstValue::ofBool(x == y);
    case BinaryOp::Ne: return ConstValue::ofBool(x != y);
    case BinaryOp::Lt: return ConstValue::ofBool(x < y);
    case BinaryOp::Le: return ConstValue::ofBool(x <= y);
    case BinaryOp::Gt: return ConstValue::ofBool(x > y);
    case BinaryOp::Ge: return ConstValue::ofBool(x >= y);
    case BinaryOp::And: return ConstValue::ofBool(x != 0 && y != 0);
    case BinaryOp::Or: return ConstValue::ofBool(x != 0 || y != 0);
    default: return std::nullopt;
  }
}

namespace {
// The dispatch of constant evaluation on the expression's kind (frontend/ASTVisitor.h); kinds
// not listed are not constants.
struct ConstEvaluator : ConstASTVisitor<ConstEvaluator, std::optional<ConstValue>> {
  DiagnosticEngine* diags;
  explicit ConstEvaluator(DiagnosticEngine* diags) : diags(diags) {}
  using R = std::optional<ConstValue>;

  R visitIntLiteralExpr(const IntLiteralExpr* e) {
    if (e->value > static_cast<uint64_t>(LLONG_MAX)) return fail(e, diags, diag::err_const_overflow);
    return ConstValue::ofInt(static_cast<long long>(e->value));
  }
  R visitFloatLiteralExpr(const FloatLiteralExpr* e) { return ConstValue::ofFloat(e->value); }
  R visitBoolLiteralExpr(const BoolLiteralExpr* e) { return ConstValue::ofBool(e->value); }
  R visitStringLiteralExpr(const StringLiteralExpr* e) { return ConstValue::ofStr(e->value); }
  R visitNameExpr(const NameExpr* e) {
    const Symbol* s = e->symbol;
    if (s && s->value && (s->kind == SymbolKind::Constant || s->kind == SymbolKind::AutotuneParam)) return s->value;
    if (s && s->kind == SymbolKind::Variable && s->value && s->assignments <= 1) return s->value;
    return std::nullopt;
  }
  R visitAttributeExpr(const AttributeExpr* a) {  // a constant of an imported module: helpers.BLOCK
    auto* base = dyn_cast<NameExpr>(a->base);
    if (!base || !base->symbol || base->symbol->kind != SymbolKind::Module || !base->symbol->type) return std::nullopt;
    const ModuleInfo* m = base->symbol->type->module;
    if (!m || !m->scope) return std::nullopt;
    const Symbol* s = m->scope->lookupLocal(a->name);
    if (s && s->kind == SymbolKind::Constant && s->value) return s->value;
    return std::nullopt;
  }
  R visitUnaryExpr(const UnaryExpr* u) {
    auto v = evalConst(u->operand, diags);
    if (!v || !v->isNumber()) return std::nullopt;
    switch (u->op) {
      case UnaryOp::Neg:
        if (v->kind == ConstValue::Float) return ConstValue::ofFloat(-v->f);
        if (v->kind == ConstValue::Int && v->i == LLONG_MIN) return fail(u, diags, diag::err_const_overflow);
        return ConstValue::ofInt(-(v->kind == ConstValue::Bool ? v->b : v->i));
      case UnaryOp::Pos: return v;
      case UnaryOp::Not: return ConstValue::ofBool(v->asDouble() == 0);
      case UnaryOp::Invert:
        if (v->kind == ConstValue::Float) return std::nullopt;
        return ConstValue::ofInt(~(v->kind == ConstValue::Bool ? (long long)v->b : v->i));
    }
    return std::nullopt;
  }
  R visitBinaryExpr(const BinaryExpr* b) {
    auto l = evalConst(b->lhs, diags);
    if (!l) return std::nullopt;
    auto r = evalConst(b->rhs, diags);
    if (!r) return std::nullopt;
    return foldBinaryConst(b->op, *l, *r, b, diags);
  }
  R visitConditionalExpr(const ConditionalExpr* c) {
    auto cond = evalConst(c->cond, diags);
    if (!cond || !cond->isNumber()) return std::nullopt;
    return evalConst(cond->asDouble() != 0 ? c->thenExpr : c->elseExpr, diags);
  }
};
}  // namespace

std::optional<ConstValue> evalConst(const Expr* e, DiagnosticEngine* diags) {
  if (!e) return std::nullopt;
  return ConstEvaluator(diags).visit(e);
}

}  // namespace tessera
