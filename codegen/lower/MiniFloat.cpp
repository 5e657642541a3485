// Floating-point conversions in software (MiniFloat.h), one routine per format and rounding mode,
// emitted into the module that needs it. Formats (OCP 8-bit floating point, OCP MX for fp6/fp4,
// IEEE binary16 and bfloat16):
//   e4m3 (fn): bias 7, no infinities, S.1111.111 is NaN, largest finite 448;
//   e5m2: bias 15, IEEE-like, S.11111.00 is infinity, largest finite 57344;
//   e2m3 / e3m2 (fp6): bias 1 / 3, no infinities or NaN, largest finite 7.5 / 28;
//   e2m1 (fp4): bias 1, no infinities or NaN, largest finite 6;
//   f16: bias 15; bf16: bias 127 (IEEE-like).
// The value is taken apart exactly as an integer significand and exponent, the significand is
// shifted to the target's precision at the target's exponent (subnormals included), and the
// discarded bits decide rounding: nearest even, toward zero, or stochastic (round up when the
// random bits, read as a number below the spacing, are below the discarded part). A carry out of
// the significand moves into the exponent by itself, since the code is exponent << M + significand.
// Beyond the largest finite value: infinity (e5m2, f16, bf16), NaN (e4m3), or the largest finite
// value with `saturate`, toward zero, and always for fp6/fp4. NaN stays NaN where the format
// has one and becomes 0 otherwise.
#include "codegen/lower/MiniFloat.h"

#include <cmath>

#include "llvm/IR/IRBuilder.h"
#include "llvm/IR/Intrinsics.h"
#include "llvm/IR/Module.h"

namespace tessera::codegen {

namespace {

struct Format {
  const char* name;
  unsigned expBits, mantBits;
  bool hasInf, hasNan;
  uint32_t nanCode;  // without the sign
  int bias() const { return (1 << (expBits - 1)) - 1; }
  unsigned bits() const { return 1 + expBits + mantBits; }
  uint32_t infCode() const { return ((1u << expBits) - 1) << mantBits; }
  uint32_t maxFinite() const {
    if (hasInf) return infCode() - 1;
    if (hasNan) return nanCode - 1;  // e4m3: S.1111.110
    return (1u << (expBits + mantBits)) - 1;
  }
};

const Format kE4M3{"e4m3", 4, 3, false, true, 0x7F};
const Format kE5M2{"e5m2", 5, 2, true, true, 0x7F};
const Format kE2M3{"e2m3", 2, 3, false, false, 0};
const Format kE3M2{"e3m2", 3, 2, false, false, 0};
const Format kE2M1{"e2m1", 2, 1, false, false, 0};
const Format kF16{"f16", 5, 10, true, true, 0x7E00};
const Format kBF16{"bf16", 8, 7, true, true, 0x7FC0};

const Format* formatOf(ir::ScalarKind k) {
  switch (k) {
    case ir::ScalarKind::F8E4M3: return &kE4M3;
    case ir::ScalarKind::F8E5M2: return &kE5M2;
    case ir::ScalarKind::F6E2M3: return &kE2M3;
    case ir::ScalarKind::F6E3M2: return &kE3M2;
    case ir::ScalarKind::F4E2M1: return &kE2M1;
    case ir::ScalarKind::F16: return &kF16;
    case ir::ScalarKind::BF16: return &kBF16;
    default: return nullptr;
  }
}

const char* modeName(SoftRound r) {
  switch (r) {
    case SoftRound::NearestEven: return "rn";
    case SoftRound::TowardZero: return "rz";
    case SoftRound::Stochastic: return "rs";
  }
  return "rn";
}

// float, i1 saturate, i64 random bits -> code (i8, or i16 for f16/bf16).
llvm::Function* defineEncode(llvm::Module& m, const Format& f, SoftRound mode) {
  std::string name = std::string("__tessera_f32_to_") + f.name + "_" + modeName(mode);
  if (llvm::Function* fn = m.getFunction(name)) return fn;
  llvm::LLVMContext& c = m.getContext();
  llvm::IRBuilder<> b(c);
  llvm::Type* codeTy = f.bits() > 8 ? b.getInt16Ty() : b.getInt8Ty();
  auto* fnTy = llvm::FunctionType::get(codeTy, {b.getFloatTy(), b.getInt1Ty(), b.getInt64Ty()}, false);
  auto* fn = llvm::Function::Create(fnTy, llvm::GlobalValue::InternalLinkage, name, m);
  fn->addFnAttr(llvm::Attribute::AlwaysInline);
  b.SetInsertPoint(llvm::BasicBlock::Create(c, "entry", fn));
  llvm::Value* x = fn->getArg(0);
  llvm::Value* sat = fn->getArg(1);
  llvm::Value* random = fn->getArg(2);
  auto i32 = [&](int64_t v) { return b.getInt32(static_cast<uint32_t>(v)); };
  auto i64 = [&](int64_t v) { return b.getInt64(static_cast<uint64_t>(v)); };
  llvm::Value* bits = b.CreateBitCast(x, b.getInt32Ty());
  llvm::Value* sign = b.CreateLShr(bits, 31);
  llvm::Value* abs = b.CreateAnd(bits, i32(0x7FFFFFFF));
  llvm::Value* expF = b.CreateLShr(abs, 23);
  llvm::Value* mant = b.CreateAnd(abs, i32(0x7FFFFF));
  llvm::Value* isNormalIn = b.CreateICmpNE(expF, i32(0));
  llvm::Value* sig = b.CreateZExt(b.CreateSelect(isNormalIn, b.CreateOr(mant, i32(0x800000)), mant), b.getInt64Ty());
  // x = sig * 2^(E - 23), E the unbiased exponent (subnormal inputs: E = -126).
  llvm::Value* E = b.CreateSub(b.CreateSelect(isNormalIn, expF, i32(1)), i32(127));
  int emin = 1 - f.bias();
  llvm::Value* te = b.CreateSelect(b.CreateICmpSLT(E, i32(emin)), i32(emin), E);
  // Bits to drop: 23 - M at the value's own exponent, more below the target's smallest.
  llvm::Value* s = b.CreateAdd(i32(23 - static_cast<int>(f.mantBits)), b.CreateSub(te, E));
  s = b.CreateZExt(b.CreateSelect(b.CreateICmpUGT(s, i32(63)), i32(63), s), b.getInt64Ty());
  llvm::Value* q = b.CreateLShr(sig, s);
  llvm::Value* rem = b.CreateAnd(sig, b.CreateSub(b.CreateShl(i64(1), s), i64(1)));
  llvm::Value* up = b.getFalse();
  switch (mode) {
    case SoftRound::NearestEven: {
      llvm::Value* half = b.CreateShl(i64(1), b.CreateSub(s, i64(1)));
      llvm::Value* odd = b.CreateICmpNE(b.CreateAnd(q, i64(1)), i64(0));
      up = b.CreateOr(b.CreateICmpUGT(rem, half), b.CreateAnd(b.CreateICmpEQ(rem, half), odd));
      break;
    }
    case SoftRound::TowardZero: break;
    case SoftRound::Stochastic:
      // The top s random bits as a number in [0, 2^s): up with probability rem / 2^s.
      up = b.CreateICmpULT(b.CreateLShr(random, b.CreateSub(i64(64), s)), rem);
      break;
  }
  llvm::Value* base = b.CreateShl(b.CreateSExt(b.CreateAdd(te, i32(f.bias() - 1)), b.getInt64Ty()), f.mantBits);
  llvm::Value* code = b.CreateAdd(b.CreateAdd(base, q), b.CreateZExt(up, b.getInt64Ty()));
  // Beyond the largest finite value (infinite inputs too).
  llvm::Value* isInf = b.CreateICmpEQ(abs, i32(0x7F800000));
  llvm::Value* over = b.CreateOr(b.CreateICmpSGT(code, i64(f.maxFinite())), isInf);
  llvm::Value* overCode;
  if (!f.hasInf && !f.hasNan) {
    overCode = i64(f.maxFinite());
  } else {
    llvm::Value* wide = i64(f.hasInf ? f.infCode() : f.nanCode);
    // Toward zero never leaves the finite range from a finite value (IEEE).
    llvm::Value* clamp = mode == SoftRound::TowardZero ? b.CreateOr(sat, b.CreateNot(isInf)) : sat;
    overCode = b.CreateSelect(clamp, i64(f.maxFinite()), wide);
  }
  code = b.CreateSelect(over, overCode, code);
  code = b.CreateOr(code, b.CreateShl(b.CreateZExt(sign, b.getInt64Ty()), f.expBits + f.mantBits));
  llvm::Value* isNan = b.CreateICmpUGT(abs, i32(0x7F800000));
  llvm::Value* nanCode =
      f.hasNan ? b.CreateOr(i64(f.nanCode), b.CreateShl(b.CreateZExt(sign, b.getInt64Ty()), f.expBits + f.mantBits))
               : i64(0);
  code = b.CreateSelect(isNan, nanCode, code);
  b.CreateRet(b.CreateTrunc(code, codeTy));
  return fn;
}

// code (i8) -> float, exact.
llvm::Function* defineDecode(llvm::Module& m, const Format& f) {
  std::string name = std::string("__tessera_") + f.name + "_to_f32";
  if (llvm::Function* fn = m.getFunction(name)) return fn;
  llvm::LLVMContext& c = m.getContext();
  llvm::IRBuilder<> b(c);
  auto* fnTy = llvm::FunctionType::get(b.getFloatTy(), {b.getInt8Ty()}, false);
  auto* fn = llvm::Function::Create(fnTy, llvm::GlobalValue::InternalLinkage, name, m);
  fn->addFnAttr(llvm::Attribute::AlwaysInline);
  b.SetInsertPoint(llvm::BasicBlock::Create(c, "entry", fn));
  auto i32 = [&](uint32_t v) { return b.getInt32(v); };
  llvm::Value* v = b.CreateAnd(b.CreateZExt(fn->getArg(0), b.getInt32Ty()), i32((1u << f.bits()) - 1));
  llvm::Value* sign = b.CreateShl(b.CreateLShr(v, f.expBits + f.mantBits), 31);
  llvm::Value* exp = b.CreateAnd(b.CreateLShr(v, f.mantBits), i32((1u << f.expBits) - 1));
  llvm::Value* mant = b.CreateAnd(v, i32((1u << f.mantBits) - 1));
  int emin = 1 - f.bias();
  // Normal: rebias the exponent, widen the significand.
  llvm::Value* normal = b.CreateOr(b.CreateShl(b.CreateAdd(exp, i32(static_cast<uint32_t>(127 - f.bias()))), 23),
                                   b.CreateShl(mant, 23 - f.mantBits));
  // Subnormal (and zero): mant * 2^(emin - mantBits), exact in f32.
  llvm::Value* sub = b.CreateBitCast(
      b.CreateFMul(b.CreateUIToFP(mant, b.getFloatTy()),
                   llvm::ConstantFP::get(b.getFloatTy(), std::ldexp(1.0, emin - static_cast<int>(f.mantBits)))),
      b.getInt32Ty());
  llvm::Value* r = b.CreateSelect(b.CreateICmpEQ(exp, i32(0)), sub, normal);
  llvm::Value* allOnes = b.CreateICmpEQ(exp, i32((1u << f.expBits) - 1));
  if (f.hasInf) {
    r = b.CreateSelect(allOnes, b.CreateSelect(b.CreateICmpEQ(mant, i32(0)), i32(0x7F800000), i32(0x7FC00000)), r);
  } else if (f.hasNan) {
    r = b.CreateSelect(b.CreateAnd(allOnes, b.CreateICmpEQ(mant, i32((1u << f.mantBits) - 1))), i32(0x7FC00000), r);
  }
  b.CreateRet(b.CreateBitCast(b.CreateOr(r, sign), b.getFloatTy()));
  return fn;
}

}  // namespace

bool isSoftFloat(ir::ScalarKind k) {
  return k == ir::ScalarKind::F8E4M3 || k == ir::ScalarKind::F8E5M2 || k == ir::ScalarKind::F6E2M3 ||
         k == ir::ScalarKind::F6E3M2 || k == ir::ScalarKind::F4E2M1;
}

llvm::Value* encodeSoftFloat(llvm::IRBuilder<>& b, llvm::Module& m, ir::ScalarKind to, llvm::Value* f32, SoftRound mode,
                             bool saturate, llvm::Value* random) {
  if (!random) random = b.getInt64(0);
  return b.CreateCall(defineEncode(m, *formatOf(to), mode), {f32, b.getInt1(saturate), random});
}

llvm::Value* decodeSoftFloat(llvm::IRBuilder<>& b, llvm::Module& m, ir::ScalarKind from, llvm::Value* code) {
  return b.CreateCall(defineDecode(m, *formatOf(from)), {code});
}

llvm::Value* mixBits(llvm::IRBuilder<>& b, llvm::Value* key) {
  llvm::Value* x = key;
  x = b.CreateMul(b.CreateXor(x, b.CreateLShr(x, 30)), b.getInt64(0xbf58476d1ce4e5b9ull));
  x = b.CreateMul(b.CreateXor(x, b.CreateLShr(x, 27)), b.getInt64(0x94d049bb133111ebull));
  return b.CreateXor(x, b.CreateLShr(x, 31));
}

}  // namespace tessera::codegen
