// Scalar arithmetic that needs more than one LLVM instruction: math functions, total integer
// division and shifts (docs/language.md "Integer semantics"), and conversions between every
// pair of dtypes, including the software formats (MiniFloat.h), scales and rounding policies.
#include <cmath>
#include <optional>
#include <string>

#include "codegen/lower/Lowering.h"
#include "codegen/lower/MiniFloat.h"
#include "llvm/IR/Intrinsics.h"
#include "llvm/IR/IntrinsicsNVPTX.h"

namespace tessera::codegen::detail {

using ir::OpId;

namespace {

// The GPU's IEEE square root (sqrt.rn.f32) is MUFU.RSQ and one Newton step, behind a test of the
// argument's range and a branch to a slow path for zero, subnormals, arguments below 2^-101,
// infinities and negatives: about ten instructions where the arithmetic is five. When the
// argument is clamped in the source, min(max(y, lo), hi) with 2^-100 <= lo <= hi < inf (or
// max(y, lo) alone, where +inf is the one argument left to fix), the range is known and the
// five are emitted without the branch. They round correctly on [2^-100, FLT_MAX]: the same bits
// as sqrt.rn.f32 (checked on an H100 over every f32 from 0 to +inf; docs/codegen.md, "Square
// roots of clamped values") and so as the CPU executor's sqrtf. Returns null where the range is
// not known.
// The constant an operand is, if it is one.
std::optional<double> constantOf(ir::Value* v) {
  if (!v->defOp || v->defOp->id != OpId::ArithConstant) return std::nullopt;
  return v->defOp->attr(ir::AttrId::Value)->f;
}

// [lo, hi] of a Tile IR value min(max(y, lo), hi) (either operand order; hi = +inf for max(y, lo)
// alone), or nullopt.
std::optional<std::pair<double, double>> clampOf(ir::Value* v) {
  double hi = HUGE_VAL;
  ir::Operation* op = v->defOp;
  if (op && op->id == OpId::ArithMinF) {
    auto c0 = constantOf(op->operand(0)), c1 = constantOf(op->operand(1));
    if (!c0 == !c1) return std::nullopt;
    hi = c0 ? *c0 : *c1;
    op = (c0 ? op->operand(1) : op->operand(0))->defOp;
  }
  if (!op || op->id != OpId::ArithMaxF) return std::nullopt;
  auto c0 = constantOf(op->operand(0)), c1 = constantOf(op->operand(1));
  if (!c0 == !c1) return std::nullopt;
  return std::make_pair(c0 ? *c0 : *c1, hi);
}

llvm::Value* sqrtOfClamped(llvm::IRBuilder<>& b, llvm::Value* x, ir::Value* source) {
  auto range = clampOf(source);
  if (!range || !x->getType()->isFloatTy() || range->first < 0x1p-100 || range->second < range->first ||
      (range->second != HUGE_VAL && range->second > 3.4028234663852886e38))
    return nullptr;
  bool twoSided = range->second != HUGE_VAL;
  llvm::Type* t = x->getType();
  llvm::Value* r = b.CreateIntrinsic(llvm::Intrinsic::nvvm_rsqrt_approx_ftz_f, {}, {x});
  llvm::Value* s = b.CreateFMul(x, r);
  llvm::Value* half = b.CreateFMul(r, llvm::ConstantFP::get(t, 0.5));
  llvm::Value* e = b.CreateIntrinsic(llvm::Intrinsic::fma, {t}, {b.CreateFNeg(s), s, x});
  llvm::Value* root = b.CreateIntrinsic(llvm::Intrinsic::fma, {t}, {e, half, s});
  if (twoSided) return root;
  // max(y, lo) may be +inf, where the step gives NaN (inf * 0).
  llvm::Value* inf = llvm::ConstantFP::getInfinity(t);
  return b.CreateSelect(b.CreateFCmpOEQ(x, inf), inf, root);
}

}  // namespace

bool Lowering::lowerMath(ir::Operation& op) {
  ir::Type t = typeOf(op.result());
  if (ir::isValueShaped(t)) return fail(op, "math on tile values is not supported by code generation yet");
  llvm::Value* a = get(op.operand(0));
  llvm::Type* lt = a->getType();
  if (op.id == OpId::MathAbs && lt->isIntegerTy()) {
    // An unsigned value is its own magnitude (u8 141 stays 141, as constant folding says).
    set(op.result(),
        isUnsigned(t) ? a : b_.CreateSelect(b_.CreateICmpSLT(a, llvm::ConstantInt::get(lt, 0)), b_.CreateNeg(a), a));
    return true;
  }
  // Half-precision math runs in f32 and rounds back, as CUDA's half functions do.
  bool widen = lt->isHalfTy() || lt->isBFloatTy();
  auto in = [&](llvm::Value* v) { return widen ? b_.CreateFPExt(v, b_.getFloatTy()) : v; };
  llvm::Type* ct = widen ? b_.getFloatTy() : lt;
  llvm::Value* x = in(a);
  auto unary = [&](llvm::Intrinsic::ID id) { return b_.CreateUnaryIntrinsic(id, x); };
  auto lib = [&](const char* name, std::vector<llvm::Value*> args) {
    return b_.CreateCall(hooks_->mathFunction(out_, name, ct, static_cast<unsigned>(args.size())), args);
  };
  llvm::Value* r = nullptr;
  switch (op.id) {
    case OpId::MathSqrt:
      if (hooks_->isGpu() && !widen) r = sqrtOfClamped(b_, x, op.operand(0));
      if (!r) r = unary(llvm::Intrinsic::sqrt);
      break;
    case OpId::MathRsqrt: r = b_.CreateFDiv(llvm::ConstantFP::get(ct, 1.0), unary(llvm::Intrinsic::sqrt)); break;
    case OpId::MathFloor: r = unary(llvm::Intrinsic::floor); break;
    case OpId::MathCeil: r = unary(llvm::Intrinsic::ceil); break;
    case OpId::MathAbs: r = unary(llvm::Intrinsic::fabs); break;
    case OpId::MathRelu: r = floatMinMax(true, x, llvm::ConstantFP::get(ct, 0.0)); break;
    case OpId::MathFma:
      r = b_.CreateIntrinsic(llvm::Intrinsic::fma, {ct}, {x, in(get(op.operand(1))), in(get(op.operand(2)))});
      break;
    case OpId::MathExp: r = lib("exp", {x}); break;
    case OpId::MathExp2: r = lib("exp2", {x}); break;
    case OpId::MathLog: r = lib("log", {x}); break;
    case OpId::MathLog2: r = lib("log2", {x}); break;
    case OpId::MathTanh: r = lib("tanh", {x}); break;
    case OpId::MathErf: r = lib("erf", {x}); break;
    case OpId::MathSin: r = lib("sin", {x}); break;
    case OpId::MathCos: r = lib("cos", {x}); break;
    case OpId::MathPow: r = lib("pow", {x, in(get(op.operand(1)))}); break;
    default: return fail(op, "unexpected op");
  }
  set(op.result(), widen ? b_.CreateFPTrunc(r, lt) : r);
  return true;
}

// Integer division and remainder are total (docs/language.md, "Integer semantics"): by zero the
// quotient has every bit set (-1, or the largest unsigned value) and the remainder is the
// dividend; MIN / -1 is MIN and MIN % -1 is 0. The divisor is replaced by 1 in those cases, so
// the hardware division never traps (x86 raises SIGFPE for both) and both targets agree.
llvm::Value* Lowering::totalDivision(ir::OpId id, llvm::Value* a, llvm::Value* b) {
  llvm::Type* t = a->getType();
  bool isSigned = id == OpId::ArithDivSI || id == OpId::ArithRemSI;
  bool isDiv = id == OpId::ArithDivSI || id == OpId::ArithDivUI;
  llvm::Value* zero = b_.CreateICmpEQ(b, llvm::ConstantInt::get(t, 0));
  llvm::Value* unsafe = zero;
  if (isSigned) {
    unsigned bits = t->getIntegerBitWidth();
    llvm::Value* overflow =
        b_.CreateAnd(b_.CreateICmpEQ(a, llvm::ConstantInt::get(t, llvm::APInt::getSignedMinValue(bits))),
                     b_.CreateICmpEQ(b, llvm::ConstantInt::getSigned(t, -1)));
    unsafe = b_.CreateOr(zero, overflow);
  }
  llvm::Value* safe = b_.CreateSelect(unsafe, llvm::ConstantInt::get(t, 1), b);
  llvm::Value* r = isDiv ? (isSigned ? b_.CreateSDiv(a, safe) : b_.CreateUDiv(a, safe))
                         : (isSigned ? b_.CreateSRem(a, safe) : b_.CreateURem(a, safe));
  // MIN / 1 is MIN and MIN % 1 is 0 already; only division by zero needs its own result.
  return b_.CreateSelect(zero, isDiv ? llvm::Constant::getAllOnesValue(t) : a, r);
}

// Shifts by the bit width or more (or by a negative amount, read as unsigned) shift every bit
// out: 0 for << and unsigned >>, the sign fill (0 or -1) for signed >>, as the arithmetic on an
// unbounded integer would give. LLVM leaves such shifts undefined and x86 masks the amount.
llvm::Value* Lowering::totalShift(ir::OpId id, llvm::Value* a, llvm::Value* b) {
  llvm::Type* t = a->getType();
  unsigned bits = t->getIntegerBitWidth();
  llvm::Value* out = b_.CreateICmpUGE(b, llvm::ConstantInt::get(t, bits));
  llvm::Value* amount = b_.CreateSelect(out, llvm::ConstantInt::get(t, id == OpId::ArithShRSI ? bits - 1 : 0), b);
  if (id == OpId::ArithShRSI) return b_.CreateAShr(a, amount);
  llvm::Value* r = id == OpId::ArithShLI ? b_.CreateShl(a, amount) : b_.CreateLShr(a, amount);
  return b_.CreateSelect(out, llvm::ConstantInt::get(t, 0), r);
}

// Float -> integer conversions truncate toward zero and saturate at the target's range; NaN
// gives 0 (llvm.fpto[su]i.sat: cvt.rzi.sat on the GPU, the same on the CPU), where a plain
// fptosi would be undefined outside the range and differ between the targets.
llvm::Value* Lowering::floatToInt(llvm::Value* v, llvm::Type* to, bool isUnsignedResult) {
  if (to->isIntegerTy(1)) return b_.CreateFCmpUNE(v, llvm::ConstantFP::get(v->getType(), 0.0));
  return b_.CreateIntrinsic(isUnsignedResult ? llvm::Intrinsic::fptoui_sat : llvm::Intrinsic::fptosi_sat,
                            {to, v->getType()}, {v});
}

// Float -> int4 saturates at int4's range [-8, 7], like every float -> integer conversion.
llvm::Value* Lowering::floatToInt4(llvm::Value* f) {
  llvm::Value* v = floatToInt(f, b_.getInt8Ty(), false);
  v = b_.CreateSelect(b_.CreateICmpSLT(v, b_.getInt8(-8)), b_.getInt8(-8), v);
  return b_.CreateSelect(b_.CreateICmpSGT(v, b_.getInt8(7)), b_.getInt8(7), v);
}

bool Lowering::lowerConvert(ir::Operation& op) {
  ir::Type from = typeOf(op.operand(0)), to = typeOf(op.result());
  if (!ir::isScalar(from) || !ir::isScalar(to))
    return fail(op, "conversions of tile values are not supported by code generation yet");
  if (!scalarType(from) || !scalarType(to))
    return fail(op, "conversion from " + ir::printType(from) + " to " + ir::printType(to) +
                        " is not supported by code generation yet");
  std::string round = op.strAttr(ir::AttrId::Round);
  // A stochastic rounding stored at once draws its bits from the element it is stored to.
  if (round == "stochastic" && !stochasticKey_ && op.result()->uses.size() == 1) {
    const ir::Operation* user = op.result()->uses[0].user;
    if (user->id == OpId::MemStore && op.result()->uses[0].index == 0 && user->parent == op.parent) {
      deferred_[op.result()] = &op;
      return true;
    }
  }
  llvm::Value* v = get(op.operand(0));
  // Where the tile index t is below 2^31 (see narrowed_): i32(t) widens back to t exactly.
  llvm::Type* tt = scalarType(to);
  if (auto it = narrowed_.find(v); it != narrowed_.end() && tt->isIntegerTy(64)) {
    set(op.result(), it->second);
    return true;
  }
  bool isTile = false;
  for (auto& fact : facts_) isTile |= fact.first == v;
  if (isTile && tt->isIntegerTy(32)) {
    llvm::Value* r = b_.CreateTrunc(v, tt);
    narrowed_[r] = v;
    narrowedUsed_ = true;
    set(op.result(), r);
    return true;
  }
  set(op.result(), convertScalar(v, from, to, round, &op));
  return true;
}

namespace {
double scaleOf(ir::Type t) { return t->kind == ir::TypeKind::Num ? t->scale : 0; }
ir::Rounding roundingOf(ir::Type t) { return t->kind == ir::TypeKind::Num ? t->round : ir::Rounding::Default; }
}  // namespace

// f32 value of `v`: decoded (software formats), widened or narrowed (f64: rounded to nearest),
// converted (integers), then multiplied by the scale of `from`.
llvm::Value* Lowering::toF32(llvm::Value* v, ir::Type from) {
  ir::ScalarKind fk = ir::baseScalar(from);
  llvm::Type* ft = scalarType(from);
  llvm::Value* f;
  if (isSoftFloat(fk))
    f = decodeSoftFloat(b_, out_, fk, v);
  else if (ft->isFloatTy())
    f = v;
  else if (ft->isDoubleTy())
    f = b_.CreateFPTrunc(v, b_.getFloatTy());
  else if (ft->isFloatingPointTy())
    f = b_.CreateFPExt(v, b_.getFloatTy());
  else
    f = isUnsigned(from) ? b_.CreateUIToFP(v, b_.getFloatTy()) : b_.CreateSIToFP(v, b_.getFloatTy());
  if (double s = scaleOf(from)) f = b_.CreateFMul(f, llvm::ConstantFP::get(b_.getFloatTy(), s));
  return f;
}

llvm::Value* Lowering::stochasticBits(const ir::Operation* site, llvm::Value* f32) {
  auto [it, fresh] = siteSeeds_.emplace(site, 0);
  if (fresh) {
    // Sites are numbered in the order the kernel's ops come, so a seed names the same store on
    // every target and in every form of the kernel body.
    const ir::Operation* top = site;
    while (top->parentOp()) top = top->parentOp();
    uint64_t n = 0, h = std::hash<std::string>()(top->funcName());
    top->walk([&](const ir::Operation* o) {
      if (o == site) it->second = h ^ (0x9e3779b97f4a7c15ull * (n + 1));
      ++n;
    });
  }
  llvm::Value* key = stochasticKey_;
  if (!key)  // a conversion not stored at once: the tile and the value
    key = b_.CreateXor(b_.CreateMul(hooks_->globalLinear(b_), b_.getInt64(0x100000001b3ull)),
                       b_.CreateZExt(b_.CreateBitCast(f32, b_.getInt32Ty()), b_.getInt64Ty()));
  return mixBits(b_, b_.CreateXor(mixBits(b_, key), b_.getInt64(it->second)));
}

llvm::Value* Lowering::convertScalar(llvm::Value* v, ir::Type from, ir::Type to, const std::string& round,
                                     const ir::Operation* site) {
  llvm::Type* ft = scalarType(from);
  llvm::Type* tt = scalarType(to);
  ir::ScalarKind fk = ir::baseScalar(from), tk = ir::baseScalar(to);
  ir::Rounding r = round == "stochastic"    ? ir::Rounding::Stochastic
                   : round == "toward_zero" ? ir::Rounding::TowardZero
                                            : roundingOf(to);
  SoftRound mode = r == ir::Rounding::Stochastic   ? SoftRound::Stochastic
                   : r == ir::Rounding::TowardZero ? SoftRound::TowardZero
                                                   : SoftRound::NearestEven;
  bool toHalf = tk == ir::ScalarKind::F16 || tk == ir::ScalarKind::BF16;
  bool soft = isSoftFloat(fk) || isSoftFloat(tk) || scaleOf(from) != 0 || scaleOf(to) != 0 ||
              (toHalf && mode != SoftRound::NearestEven && !(fk == tk && scaleOf(from) == scaleOf(to)));
  if (fk == tk && scaleOf(from) == scaleOf(to)) return v;  // the same code (policies aside)
  if (soft) {
    llvm::Value* f = toF32(v, from);
    if (double s = scaleOf(to)) f = b_.CreateFDiv(f, llvm::ConstantFP::get(b_.getFloatTy(), s));
    bool saturate = to->kind == ir::TypeKind::Num && to->saturate;
    llvm::Value* random = mode == SoftRound::Stochastic ? stochasticBits(site, f) : nullptr;
    if (isSoftFloat(tk)) return encodeSoftFloat(b_, out_, tk, f, mode, saturate, random);
    if (toHalf && (mode != SoftRound::NearestEven || saturate))
      return b_.CreateBitCast(encodeSoftFloat(b_, out_, tk, f, mode, saturate, random), tt);
    if (tt->isFloatingPointTy())
      return tt->isFloatTy() ? f : tt->isDoubleTy() ? b_.CreateFPExt(f, tt) : b_.CreateFPTrunc(f, tt);
    return tk == ir::ScalarKind::I4 ? floatToInt4(f) : floatToInt(f, tt, isUnsigned(to));
  }
  bool fFloat = ft->isFloatingPointTy(), tFloat = tt->isFloatingPointTy();
  llvm::Value* out;
  if (fFloat && tFloat) {
    // bf16 <-> f16 goes through f32, which holds both exactly (neither is wider than the other,
    // so LLVM has no single cast between them): one rounding, to nearest even.
    if ((ft->isHalfTy() && tt->isBFloatTy()) || (ft->isBFloatTy() && tt->isHalfTy()))
      out = b_.CreateFPTrunc(b_.CreateFPExt(v, b_.getFloatTy()), tt);
    else
      out = ft == tt                                                      ? v
            : ft->getPrimitiveSizeInBits() < tt->getPrimitiveSizeInBits() ? b_.CreateFPExt(v, tt)
                                                                          : b_.CreateFPTrunc(v, tt);
  } else if (fFloat) {
    out = tk == ir::ScalarKind::I4 ? floatToInt4(v) : floatToInt(v, tt, isUnsigned(to));
  } else if (tFloat) {
    out = isUnsigned(from) ? b_.CreateUIToFP(v, tt) : b_.CreateSIToFP(v, tt);
  } else if (tt->isIntegerTy(1)) {
    out = b_.CreateICmpNE(v, llvm::ConstantInt::get(ft, 0));
  } else {
    out = b_.CreateIntCast(v, tt, !isUnsigned(from));
  }
  // int4 lives sign-extended in 8 bits: a conversion to it wraps at 4 bits.
  if (tk == ir::ScalarKind::I4 && !tt->isIntegerTy(1)) out = b_.CreateAShr(b_.CreateShl(out, 4), 4);
  return out;
}

}  // namespace tessera::codegen::detail
