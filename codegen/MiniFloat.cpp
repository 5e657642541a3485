// fp8 conversions in software, the same LLVM IR on every target, so the GPU and the CPU round
// bit for bit alike (Hopper's cvt instructions only saturate; the language also has the
// non-saturating behaviour, docs/codegen.md). Formats (OCP 8-bit floating point):
//   e4m3 (fn): bias 7, no infinities, S.1111.111 is NaN, largest finite 448 (S.1111.110);
//   e5m2: bias 15, IEEE-like, S.11111.00 is infinity, largest finite 57344 (S.11110.11).
// f32 -> fp8 rounds to nearest, ties to even; NaN stays NaN; beyond the largest finite value
// (after rounding) the result is NaN (e4m3) or infinity (e5m2), or the largest finite value
// with the sign kept under `@saturate`.
#include "codegen/MiniFloat.h"

#include <cmath>

#include "llvm/IR/IRBuilder.h"
#include "llvm/IR/Intrinsics.h"
#include "llvm/IR/Module.h"

namespace tessera::codegen {

namespace {

struct Format {
  const char* name;
  unsigned expBits, mantBits;
  bool hasInf;
  int bias() const { return (1 << (expBits - 1)) - 1; }
  uint32_t maxFinite() const { return hasInf ? ((((1u << expBits) - 2) << mantBits) | ((1u << mantBits) - 1)) : 0x7E; }
  uint32_t nanCode() const { return 0x7F; }
  uint32_t infCode() const { return ((1u << expBits) - 1) << mantBits; }
};

const Format kE4M3{"e4m3", 4, 3, false};
const Format kE5M2{"e5m2", 5, 2, true};

// float -> i8 code; the second argument (i1) asks for saturation.
llvm::Function* defineEncode(llvm::Module& m, const Format& f) {
  std::string name = std::string("__tessera_f32_to_") + f.name;
  if (llvm::Function* fn = m.getFunction(name)) return fn;
  llvm::LLVMContext& c = m.getContext();
  llvm::IRBuilder<> b(c);
  auto* fnTy = llvm::FunctionType::get(b.getInt8Ty(), {b.getFloatTy(), b.getInt1Ty()}, false);
  auto* fn = llvm::Function::Create(fnTy, llvm::GlobalValue::InternalLinkage, name, m);
  fn->addFnAttr(llvm::Attribute::AlwaysInline);
  b.SetInsertPoint(llvm::BasicBlock::Create(c, "entry", fn));
  llvm::Value* x = fn->getArg(0);
  llvm::Value* sat = fn->getArg(1);
  auto i32 = [&](uint32_t v) { return b.getInt32(v); };
  llvm::Value* bits = b.CreateBitCast(x, b.getInt32Ty());
  llvm::Value* sign = b.CreateShl(b.CreateLShr(bits, 31), 7);
  llvm::Value* abs = b.CreateAnd(bits, i32(0x7FFFFFFF));
  int emin = 1 - f.bias();
  // Normal range: round the f32 mantissa to mantBits (nearest even, carries into the exponent),
  // then rebias the exponent.
  unsigned shift = 23 - f.mantBits;
  llvm::Value* lsb = b.CreateAnd(b.CreateLShr(abs, shift), i32(1));
  llvm::Value* rounded = b.CreateLShr(b.CreateAdd(abs, b.CreateAdd(i32((1u << (shift - 1)) - 1), lsb)), shift);
  llvm::Value* normal = b.CreateSub(rounded, i32(static_cast<uint32_t>(127 - f.bias()) << f.mantBits));
  // Below the smallest normal: |x| * 2^(mantBits - emin) is exact; rint rounds it to nearest
  // even (a result of 2^mantBits is the smallest normal's code).
  llvm::Value* absF = b.CreateBitCast(abs, b.getFloatTy());
  llvm::Value* scaled = b.CreateFMul(absF, llvm::ConstantFP::get(b.getFloatTy(), std::ldexp(1.0, f.mantBits - emin)));
  llvm::Value* sub = b.CreateFPToUI(b.CreateUnaryIntrinsic(llvm::Intrinsic::rint, scaled), b.getInt32Ty());
  llvm::Value* isSub = b.CreateICmpULT(abs, i32(static_cast<uint32_t>(emin + 127) << 23));
  llvm::Value* code = b.CreateSelect(isSub, sub, normal);
  // Overflow (including infinite inputs): NaN / infinity, or the largest finite value.
  llvm::Value* over = b.CreateICmpUGT(code, i32(f.maxFinite()));
  over = b.CreateOr(over, b.CreateICmpUGE(abs, i32(0x7F800000)));
  llvm::Value* overCode = b.CreateSelect(sat, i32(f.maxFinite()), i32(f.hasInf ? f.infCode() : f.nanCode()));
  code = b.CreateSelect(over, overCode, code);
  code = b.CreateSelect(b.CreateICmpUGT(abs, i32(0x7F800000)), i32(f.nanCode()), code);  // NaN in, NaN out
  b.CreateRet(b.CreateTrunc(b.CreateOr(code, sign), b.getInt8Ty()));
  return fn;
}

// i8 code -> float (exact).
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
  llvm::Value* v = b.CreateZExt(fn->getArg(0), b.getInt32Ty());
  llvm::Value* sign = b.CreateShl(b.CreateLShr(v, 7), 31);
  llvm::Value* exp = b.CreateAnd(b.CreateLShr(v, f.mantBits), i32((1u << f.expBits) - 1));
  llvm::Value* mant = b.CreateAnd(v, i32((1u << f.mantBits) - 1));
  int emin = 1 - f.bias();
  // Normal: rebias the exponent, widen the mantissa.
  llvm::Value* normal = b.CreateOr(b.CreateShl(b.CreateAdd(exp, i32(static_cast<uint32_t>(127 - f.bias()))), 23),
                                   b.CreateShl(mant, 23 - f.mantBits));
  // Subnormal (and zero): mant * 2^(emin - mantBits).
  llvm::Value* sub = b.CreateBitCast(
      b.CreateFMul(b.CreateUIToFP(mant, b.getFloatTy()),
                   llvm::ConstantFP::get(b.getFloatTy(), std::ldexp(1.0, emin - static_cast<int>(f.mantBits)))),
      b.getInt32Ty());
  llvm::Value* r = b.CreateSelect(b.CreateICmpEQ(exp, i32(0)), sub, normal);
  llvm::Value* allOnes = b.CreateICmpEQ(exp, i32((1u << f.expBits) - 1));
  if (f.hasInf) {
    r = b.CreateSelect(allOnes, b.CreateSelect(b.CreateICmpEQ(mant, i32(0)), i32(0x7F800000), i32(0x7FC00000)), r);
  } else {
    r = b.CreateSelect(b.CreateAnd(allOnes, b.CreateICmpEQ(mant, i32((1u << f.mantBits) - 1))), i32(0x7FC00000), r);
  }
  b.CreateRet(b.CreateBitCast(b.CreateOr(r, sign), b.getFloatTy()));
  return fn;
}

const Format* formatOf(ir::ScalarKind k) {
  if (k == ir::ScalarKind::F8E4M3) return &kE4M3;
  if (k == ir::ScalarKind::F8E5M2) return &kE5M2;
  return nullptr;
}

}  // namespace

bool isSoftFloat8(ir::ScalarKind k) { return formatOf(k) != nullptr; }

llvm::Value* encodeFloat8(llvm::IRBuilder<>& b, llvm::Module& m, ir::ScalarKind to, llvm::Value* f32, bool saturate) {
  return b.CreateCall(defineEncode(m, *formatOf(to)), {f32, b.getInt1(saturate)});
}

llvm::Value* decodeFloat8(llvm::IRBuilder<>& b, llvm::Module& m, ir::ScalarKind from, llvm::Value* code) {
  return b.CreateCall(defineDecode(m, *formatOf(from)), {code});
}

}  // namespace tessera::codegen
