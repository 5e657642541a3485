// canonicalize: constant folding and local simplifications, to a fixed point; dead pure ops
// are dropped along the way (as dce does).
//   - arith ops on constant scalars (integers wrap at their width; f32/f64 only for floats,
//     with IEEE results computed exactly as the device would: +, -, *, /, min, max, neg, sqrt,
//     floor, ceil, abs), comparisons, selects, conversions, mem.dim of static extents;
//   - identities: x+0, x-0, x*1, x*0 (integers), x/1, x-x, x^x, x&x, x|x, select c,x,x,
//     cmpi x,x; constants move to the right of commutative ops;
//   - scf.if on a constant condition is replaced by the taken region; scf.for / tile.range with
//     constant bounds running zero times is replaced by its inits, once: by its body.
#include <cmath>

#include "ir/Pass.h"
#include "ir/passes/PassUtils.h"

namespace tessera::ir {

namespace {

bool isIntScalar(Type t) {
  return isScalar(t) && scalarClass(baseScalar(t)) != ScalarClass::Float && t->kind == TypeKind::Scalar;
}
bool isExactFloat(Type t) {
  return t->kind == TypeKind::Scalar && (t->scalar == ScalarKind::F32 || t->scalar == ScalarKind::F64);
}

// max()/min() as code generation computes them (IEEE 754-2019 maximumNumber/minimumNumber: NaN
// ignored, -0 < +0; docs/language.md); std::fmax leaves the sign of a zero result open.
double minMaxNumber(bool isMax, double a, double b) {
  if (std::isnan(b)) return a;
  if (std::isnan(a)) return b;
  if (a == b) return std::signbit(a) == isMax ? b : a;
  return (a > b) == isMax ? a : b;
}

// Wraps `v` to the width and signedness of integer type `t`.
int64_t wrapInt(int64_t v, Type t) {
  unsigned bits = scalarBits(t->scalar);
  if (bits >= 64) return v;
  uint64_t mask = (uint64_t(1) << bits) - 1;
  uint64_t u = static_cast<uint64_t>(v) & mask;
  ScalarClass c = scalarClass(t->scalar);
  if (c == ScalarClass::UInt || c == ScalarClass::Bool) return static_cast<int64_t>(u);
  if (u >> (bits - 1)) u |= ~mask;  // sign-extend
  return static_cast<int64_t>(u);
}
uint64_t asUnsigned(int64_t v, Type t) {
  unsigned bits = scalarBits(t->scalar);
  if (bits >= 64) return static_cast<uint64_t>(v);
  return static_cast<uint64_t>(v) & ((uint64_t(1) << bits) - 1);
}
double roundFloat(double v, Type t) {
  return t->scalar == ScalarKind::F32 ? static_cast<double>(static_cast<float>(v)) : v;
}

class Canonicalizer {
 public:
  explicit Canonicalizer(Module& m) : m_(m), b_(m.ctx()) {}

  bool run() {
    for (int round = 0; round < 32; ++round) {
      changed_ = false;
      for (Operation* f : m_.funcs())
        if (!f->regions.empty()) {
          block(f->body());
          changed_ |= eraseDeadOps(f->body());
        }
      if (!changed_) break;
    }
    return true;
  }

 private:
  Module& m_;
  Builder b_;
  bool changed_ = false;

  void block(Block& blk) {
    for (auto it = blk.ops.begin(); it != blk.ops.end();) {
      Operation* op = it->get();
      ++it;
      for (auto& r : op->regions) block(r->block());
      simplify(op);
    }
  }

  Value* constInt(Operation* at, int64_t v, Type t) {
    b_.setInsertionPoint(at);
    b_.setLoc(at->loc);
    Value* c = b_.constInt(wrapInt(v, t), t);
    if (at->numResults() == 1) c->nameHint = at->result(0)->nameHint;
    return c;
  }
  Value* constFloat(Operation* at, double v, Type t) {
    b_.setInsertionPoint(at);
    b_.setLoc(at->loc);
    Value* c = b_.constFloat(roundFloat(v, t), t);
    if (at->numResults() == 1) c->nameHint = at->result(0)->nameHint;
    return c;
  }
  void replace(Operation* op, Value* v) {
    replaceOp(op, {v});
    changed_ = true;
  }
  static bool isIntConst(const Value* v, int64_t c) {
    const Attribute* a = constantOf(v);
    return a && a->kind == AttrKind::Int && a->i == c;
  }
  static bool isFloatConst(const Value* v, double c, bool checkSign = false) {
    const Attribute* a = constantOf(v);
    return a && a->kind == AttrKind::Float && a->f == c && (!checkSign || std::signbit(a->f) == std::signbit(c));
  }

  void simplify(Operation* op) {
    if (op->has(T_Commutative) && op->numOperands() == 2 && constantOf(op->operand(0)) && !constantOf(op->operand(1))) {
      Value* a = op->operand(0);
      Value* c = op->operand(1);
      op->setOperand(0, c);
      op->setOperand(1, a);
      changed_ = true;
    }
    switch (op->id) {
      case OpId::ArithAddI:
      case OpId::ArithSubI:
      case OpId::ArithMulI:
      case OpId::ArithDivSI:
      case OpId::ArithDivUI:
      case OpId::ArithRemSI:
      case OpId::ArithRemUI:
      case OpId::ArithAndI:
      case OpId::ArithOrI:
      case OpId::ArithXOrI:
      case OpId::ArithShLI:
      case OpId::ArithShRSI:
      case OpId::ArithShRUI:
      case OpId::ArithMinSI:
      case OpId::ArithMaxSI: return intBinary(op);
      case OpId::ArithAddF:
      case OpId::ArithSubF:
      case OpId::ArithMulF:
      case OpId::ArithDivF:
      case OpId::ArithMinF:
      case OpId::ArithMaxF: return floatBinary(op);
      case OpId::ArithNegF:
      case OpId::MathSqrt:
      case OpId::MathFloor:
      case OpId::MathCeil:
      case OpId::MathAbs:
      case OpId::MathRelu: return floatUnary(op);
      case OpId::ArithCmpI: return cmpi(op);
      case OpId::ArithCmpF: return cmpf(op);
      case OpId::ArithSelect: {
        if (op->numOperands() != 3) return;
        if (op->operand(1) == op->operand(2)) return replace(op, op->operand(1));
        if (const Attribute* c = constantOf(op->operand(0)))
          if (c->kind == AttrKind::Int) return replace(op, op->operand(c->i ? 1 : 2));
        return;
      }
      case OpId::ArithConvert: return convert(op);
      case OpId::MemDim: {
        Type t = op->operand(0)->type;
        int64_t axis = op->intAttr(AttrId::Axis, -1);
        if (axis >= 0 && axis < static_cast<int64_t>(t->shape.size()) && t->shape[axis].isStatic())
          return replace(op, constInt(op, t->shape[axis].size, op->result(0)->type));
        return;
      }
      case OpId::ScfIf: return ifOp(op);
      case OpId::ScfFor:
      case OpId::TileRange: return forOp(op);
      default: return;
    }
  }

  void intBinary(Operation* op) {
    if (op->numOperands() != 2 || op->numResults() != 1) return;
    Type t = op->result(0)->type;
    if (!isIntScalar(t)) return;
    Value *x = op->operand(0), *y = op->operand(1);
    const Attribute* ca = constantOf(x);
    const Attribute* cb = constantOf(y);
    if (ca && cb && ca->kind == AttrKind::Int && cb->kind == AttrKind::Int) {
      int64_t a = ca->i, b = cb->i;
      uint64_t ua = asUnsigned(a, t), ub = asUnsigned(b, t);
      unsigned bits = scalarBits(t->scalar);
      int64_t r;
      switch (op->id) {
        case OpId::ArithAddI: r = static_cast<int64_t>(static_cast<uint64_t>(a) + static_cast<uint64_t>(b)); break;
        case OpId::ArithSubI: r = static_cast<int64_t>(static_cast<uint64_t>(a) - static_cast<uint64_t>(b)); break;
        case OpId::ArithMulI: r = static_cast<int64_t>(static_cast<uint64_t>(a) * static_cast<uint64_t>(b)); break;
        // Total division (docs/tile-ir.md): by zero every bit set / the dividend; MIN / -1 is
        // MIN (it wraps at the width) and MIN % -1 is 0, exactly as codegen computes them.
        case OpId::ArithDivSI:
          r = b == 0 ? -1 : b == -1 ? static_cast<int64_t>(0 - static_cast<uint64_t>(a)) : a / b;
          break;
        case OpId::ArithRemSI: r = b == 0 ? a : b == -1 ? 0 : a % b; break;
        case OpId::ArithDivUI: r = ub == 0 ? -1 : static_cast<int64_t>(ua / ub); break;
        case OpId::ArithRemUI: r = ub == 0 ? a : static_cast<int64_t>(ua % ub); break;
        case OpId::ArithAndI: r = a & b; break;
        case OpId::ArithOrI: r = a | b; break;
        case OpId::ArithXOrI: r = a ^ b; break;
        // Shifts by the width or more shift every bit out (0, or the sign fill for signed >>).
        case OpId::ArithShLI: r = ub >= bits ? 0 : static_cast<int64_t>(static_cast<uint64_t>(a) << ub); break;
        case OpId::ArithShRSI: r = ub >= bits ? (a < 0 ? -1 : 0) : a >> ub; break;
        case OpId::ArithShRUI: r = ub >= bits ? 0 : static_cast<int64_t>(ua >> ub); break;
        case OpId::ArithMinSI: r = std::min(a, b); break;
        case OpId::ArithMaxSI: r = std::max(a, b); break;
        default: return;
      }
      return replace(op, constInt(op, r, t));
    }
    switch (op->id) {
      case OpId::ArithAddI:
      case OpId::ArithOrI:
      case OpId::ArithXOrI:
      case OpId::ArithShLI:
      case OpId::ArithShRSI:
      case OpId::ArithShRUI:
        if (isIntConst(y, 0)) return replace(op, x);
        if (op->id == OpId::ArithOrI && x == y) return replace(op, x);
        if (op->id == OpId::ArithXOrI && x == y) return replace(op, constInt(op, 0, t));
        return;
      case OpId::ArithSubI:
        if (isIntConst(y, 0)) return replace(op, x);
        if (x == y) return replace(op, constInt(op, 0, t));
        return;
      case OpId::ArithMulI:
        if (isIntConst(y, 1)) return replace(op, x);
        if (isIntConst(y, 0)) return replace(op, y);
        return;
      case OpId::ArithDivSI:
      case OpId::ArithDivUI:
        if (isIntConst(y, 1)) return replace(op, x);
        return;
      case OpId::ArithAndI:
      case OpId::ArithMinSI:
      case OpId::ArithMaxSI:
        if (x == y) return replace(op, x);
        if (op->id == OpId::ArithAndI && isIntConst(y, 0)) return replace(op, y);
        return;
      default: return;
    }
  }

  void floatBinary(Operation* op) {
    if (op->numOperands() != 2 || op->numResults() != 1) return;
    Type t = op->result(0)->type;
    if (!isExactFloat(t)) return;
    Value *x = op->operand(0), *y = op->operand(1);
    const Attribute* ca = constantOf(x);
    const Attribute* cb = constantOf(y);
    if (ca && cb && ca->kind == AttrKind::Float && cb->kind == AttrKind::Float) {
      double a = ca->f, b = cb->f, r;
      switch (op->id) {
        case OpId::ArithAddF: r = t->scalar == ScalarKind::F32 ? double(float(a) + float(b)) : a + b; break;
        case OpId::ArithSubF: r = t->scalar == ScalarKind::F32 ? double(float(a) - float(b)) : a - b; break;
        case OpId::ArithMulF: r = t->scalar == ScalarKind::F32 ? double(float(a) * float(b)) : a * b; break;
        case OpId::ArithDivF: r = t->scalar == ScalarKind::F32 ? double(float(a) / float(b)) : a / b; break;
        case OpId::ArithMinF: r = minMaxNumber(false, a, b); break;
        case OpId::ArithMaxF: r = minMaxNumber(true, a, b); break;
        default: return;
      }
      return replace(op, constFloat(op, r, t));
    }
    switch (op->id) {
      case OpId::ArithAddF:
        if (isFloatConst(y, -0.0, true)) return replace(op, x);  // x + -0.0 == x for every x
        return;
      case OpId::ArithSubF:
        if (isFloatConst(y, 0.0, true)) return replace(op, x);  // x - +0.0 == x
        return;
      case OpId::ArithMulF:
      case OpId::ArithDivF:
        if (isFloatConst(y, 1.0)) return replace(op, x);
        return;
      default: return;
    }
  }

  void floatUnary(Operation* op) {
    if (op->numOperands() != 1 || op->numResults() != 1) return;
    Type t = op->result(0)->type;
    const Attribute* c = constantOf(op->operand(0));
    if (!c) return;
    if (c->kind == AttrKind::Int && op->id == OpId::MathAbs && isIntScalar(t))
      return replace(op, constInt(op, c->i < 0 ? -static_cast<uint64_t>(c->i) : c->i, t));
    if (!isExactFloat(t) || c->kind != AttrKind::Float) return;
    double a = roundFloat(c->f, t), r;
    switch (op->id) {
      case OpId::ArithNegF: r = -a; break;
      case OpId::MathSqrt: r = t->scalar == ScalarKind::F32 ? double(std::sqrt(float(a))) : std::sqrt(a); break;
      case OpId::MathFloor: r = std::floor(a); break;
      case OpId::MathCeil: r = std::ceil(a); break;
      case OpId::MathAbs: r = std::fabs(a); break;
      case OpId::MathRelu: r = a > 0 ? a : 0.0; break;
      default: return;
    }
    replace(op, constFloat(op, r, t));
  }

  void cmpi(Operation* op) {
    if (op->numOperands() != 2 || op->numResults() != 1) return;
    Type t = op->operand(0)->type;
    std::string pred = op->strAttr(AttrId::Pred);
    if (!isIntScalar(t) || op->result(0)->type != m_.ctx().i1()) return;
    Value *x = op->operand(0), *y = op->operand(1);
    if (x == y) {
      bool r = pred == "eq" || pred == "sle" || pred == "sge" || pred == "ule" || pred == "uge";
      return replace(op, constInt(op, r, m_.ctx().i1()));
    }
    const Attribute* ca = constantOf(x);
    const Attribute* cb = constantOf(y);
    if (!ca || !cb || ca->kind != AttrKind::Int || cb->kind != AttrKind::Int) return;
    int64_t a = ca->i, b = cb->i;
    uint64_t ua = asUnsigned(a, t), ub = asUnsigned(b, t);
    bool r;
    if (pred == "eq")
      r = a == b;
    else if (pred == "ne")
      r = a != b;
    else if (pred == "slt")
      r = a < b;
    else if (pred == "sle")
      r = a <= b;
    else if (pred == "sgt")
      r = a > b;
    else if (pred == "sge")
      r = a >= b;
    else if (pred == "ult")
      r = ua < ub;
    else if (pred == "ule")
      r = ua <= ub;
    else if (pred == "ugt")
      r = ua > ub;
    else if (pred == "uge")
      r = ua >= ub;
    else
      return;
    replace(op, constInt(op, r, m_.ctx().i1()));
  }

  void cmpf(Operation* op) {
    if (op->numOperands() != 2 || op->numResults() != 1 || op->result(0)->type != m_.ctx().i1()) return;
    const Attribute* ca = constantOf(op->operand(0));
    const Attribute* cb = constantOf(op->operand(1));
    if (!ca || !cb || ca->kind != AttrKind::Float || cb->kind != AttrKind::Float) return;
    // Each operand as its type holds it (an f32 constant's attribute may carry the double it was
    // written as: f32(1e-50) is 0).
    double a = roundFloat(ca->f, op->operand(0)->type), b = roundFloat(cb->f, op->operand(1)->type);
    bool unord = std::isnan(a) || std::isnan(b);
    std::string p = op->strAttr(AttrId::Pred);
    bool r;
    if (p == "oeq")
      r = !unord && a == b;
    else if (p == "one")
      r = !unord && a != b;
    else if (p == "olt")
      r = !unord && a < b;
    else if (p == "ole")
      r = !unord && a <= b;
    else if (p == "ogt")
      r = !unord && a > b;
    else if (p == "oge")
      r = !unord && a >= b;
    else if (p == "ord")
      r = !unord;
    else if (p == "uno")
      r = unord;
    else if (p == "ueq")
      r = unord || a == b;
    else if (p == "une")
      r = unord || a != b;
    else
      return;
    replace(op, constInt(op, r, m_.ctx().i1()));
  }

  void convert(Operation* op) {
    if (op->numOperands() != 1 || op->numResults() != 1) return;
    Type from = op->operand(0)->type, to = op->result(0)->type;
    if (from == to && !op->hasAttr(AttrId::Round)) return replace(op, op->operand(0));
    const Attribute* c = constantOf(op->operand(0));
    if (!c || from->kind != TypeKind::Scalar || to->kind != TypeKind::Scalar || op->hasAttr(AttrId::Round)) return;
    if (isIntScalar(from) && isIntScalar(to) && c->kind == AttrKind::Int) {
      int64_t v = scalarClass(from->scalar) == ScalarClass::UInt ? static_cast<int64_t>(asUnsigned(c->i, from)) : c->i;
      if (to->scalar == ScalarKind::I1) v = asUnsigned(c->i, from) != 0;  // bool(x): x != 0, not its low bit
      return replace(op, constInt(op, v, to));
    }
    if (isIntScalar(from) && isExactFloat(to) && c->kind == AttrKind::Int) {
      double v = scalarClass(from->scalar) == ScalarClass::UInt ? double(asUnsigned(c->i, from)) : double(c->i);
      return replace(op, constFloat(op, v, to));
    }
    // A float constant's attribute may hold more precision than its type (an f32 literal keeps
    // the double it was written as): round it to `from` first, as the conversion at run time sees
    // it (f64(f32(0.1)) is 0.100000001490116..., not 0.1; exec_fuzz found -O0 and -O2 differing).
    if (isExactFloat(from) && isExactFloat(to) && c->kind == AttrKind::Float)
      return replace(op, constFloat(op, roundFloat(c->f, from), to));
    if (isExactFloat(from) && to->scalar == ScalarKind::I1 && c->kind == AttrKind::Float)
      return replace(op, constInt(op, roundFloat(c->f, from) != 0.0 || std::isnan(c->f), to));  // bool(x): x != 0
    if (isExactFloat(from) && isIntScalar(to) && c->kind == AttrKind::Float) {
      double v = std::trunc(roundFloat(c->f, from));
      unsigned bits = scalarBits(to->scalar);
      bool isSigned = scalarClass(to->scalar) == ScalarClass::Int || scalarClass(to->scalar) == ScalarClass::Index;
      double lo = isSigned ? -std::ldexp(1.0, bits - 1) : 0.0;
      double hi = isSigned ? std::ldexp(1.0, bits - 1) : std::ldexp(1.0, bits);
      // Saturating, NaN to 0, as codegen converts (docs/language.md "Integer semantics").
      int64_t r;
      if (std::isnan(v))
        r = 0;
      else if (v < lo)
        r = isSigned ? (bits >= 64 ? INT64_MIN : -(int64_t(1) << (bits - 1))) : 0;
      else if (v >= hi)
        r = isSigned ? (bits >= 64 ? INT64_MAX : (int64_t(1) << (bits - 1)) - 1)
                     : (bits >= 64 ? -1 : static_cast<int64_t>((uint64_t(1) << bits) - 1));
      else
        r = isSigned || v < std::ldexp(1.0, 63) ? static_cast<int64_t>(v)
                                                : static_cast<int64_t>(static_cast<uint64_t>(v));
      return replace(op, constInt(op, r, to));
    }
  }

  void ifOp(Operation* op) {
    const Attribute* c = op->numOperands() == 1 ? constantOf(op->operand(0)) : nullptr;
    if (!c || c->kind != AttrKind::Int || op->regions.size() != 2) return;
    Block& taken = op->body(c->i ? 0 : 1);
    if (!taken.terminator() || taken.terminator()->numOperands() != op->numResults()) return;
    std::vector<Value*> ys = inlineBlockBefore(taken, op);
    if (ys.size() != op->numResults()) return;  // invalid IR: leave it for the verifier
    replaceOp(op, ys);
    changed_ = true;
  }

  void forOp(Operation* op) {
    if (op->numOperands() < 3 || op->regions.size() != 1) return;
    const Attribute* lb = constantOf(op->operand(0));
    const Attribute* ub = constantOf(op->operand(1));
    const Attribute* st = constantOf(op->operand(2));
    if (!lb || !ub || !st || lb->kind != AttrKind::Int || ub->kind != AttrKind::Int || st->kind != AttrKind::Int)
      return;
    if (st->i <= 0) return;
    std::vector<Value*> inits(op->operands.begin() + 3, op->operands.end());
    if (inits.size() != op->numResults() || op->body().numArgs() != inits.size() + 1) return;
    if (lb->i >= ub->i) {
      replaceOp(op, inits);
      changed_ = true;
      return;
    }
    // One iteration (and not a pipelined loop): the body, once.
    Operation* yield = op->body().terminator();
    if (!yield || yield->numOperands() != op->numResults()) return;
    if (ub->i - lb->i <= st->i && !op->hasAttr(AttrId::Prefetch)) {
      IRMapping map;
      map[op->body().arg(0)] = op->operand(0);
      for (size_t i = 0; i < inits.size(); ++i) map[op->body().arg(i + 1)] = inits[i];
      std::vector<Value*> ys = inlineBlockBefore(op->body(), op, &map);
      if (ys.size() != op->numResults()) return;
      replaceOp(op, ys);
      changed_ = true;
    }
  }
};

}  // namespace

bool runCanonicalize(Module& m, DiagnosticEngine&) { return Canonicalizer(m).run(); }

}  // namespace tessera::ir
