// Packed elements (int4, fp4: two per byte; fp6: four in three bytes), docs/abi.md 1: loads read
// the bytes an element occupies, stores change only its bits.
#include "codegen/lower/Lowering.h"

namespace tessera::codegen::detail {

unsigned Lowering::packedBitsOf(ir::Type elem) {
  switch (ir::baseScalar(elem)) {
    case ir::ScalarKind::I4:
    case ir::ScalarKind::F4E2M1: return 4;
    case ir::ScalarKind::F6E2M3:
    case ir::ScalarKind::F6E3M2: return 6;
    default: return 0;
  }
}

llvm::Value* Lowering::linearOffset(const View& v, const std::vector<llvm::Value*>& idx) {
  llvm::Value* off = v.elemOffset ? v.elemOffset : b_.getInt64(0);
  for (size_t d = 0; d < idx.size() && d < v.strides.size(); ++d)
    off = b_.CreateAdd(off, b_.CreateMul(idx[d], v.strides[d]));
  return off;
}

// Packed elements (docs/abi.md 1): element e occupies bits [e * w, e * w + w) of the buffer,
// little-endian, so int4/fp4 take the low nibble for even e and fp6 may straddle two bytes.
// Loads read the one or two bytes; an int4 is sign-extended into its i8.
llvm::Value* Lowering::loadPacked(View& v, const std::vector<llvm::Value*>& idx, ir::Type elem) {
  llvm::Value* bit = b_.CreateMul(linearOffset(v, idx), b_.getInt64(v.packedBits));
  llvm::Value* byte = b_.CreateLShr(bit, 3);
  llvm::Value* shift = b_.CreateTrunc(b_.CreateAnd(bit, b_.getInt64(7)), b_.getInt16Ty());
  llvm::Value* lo = b_.CreateLoad(b_.getInt8Ty(), b_.CreateGEP(b_.getInt8Ty(), v.ptr, byte));
  noalias(v, llvm::cast<llvm::Instruction>(lo));
  llvm::Value* word = b_.CreateZExt(lo, b_.getInt16Ty());
  if (v.packedBits == 6) {
    // The second byte only when the element straddles it (never past the buffer's last byte).
    llvm::Value* straddles = b_.CreateICmpUGT(shift, b_.getInt16(2));
    llvm::Value* next = b_.CreateSelect(straddles, b_.CreateAdd(byte, b_.getInt64(1)), byte);
    llvm::LoadInst* hi = b_.CreateLoad(b_.getInt8Ty(), b_.CreateGEP(b_.getInt8Ty(), v.ptr, next));
    noalias(v, hi);
    word = b_.CreateOr(word,
                       b_.CreateSelect(straddles, b_.CreateShl(b_.CreateZExt(hi, b_.getInt16Ty()), 8), b_.getInt16(0)));
  }
  llvm::Value* code = b_.CreateTrunc(b_.CreateLShr(word, shift), b_.getInt8Ty());
  code = b_.CreateAnd(code, b_.getInt8(static_cast<uint8_t>((1u << v.packedBits) - 1)));
  if (ir::baseScalar(elem) == ir::ScalarKind::I4) code = b_.CreateAShr(b_.CreateShl(code, 4), 4);
  return code;
}

// Stores change only the element's bits, with atomic and/or on the bytes it occupies: tiles
// (threads, CPU workers) that store neighbouring elements of one byte do not lose each other's.
void Lowering::storePacked(View& v, const std::vector<llvm::Value*>& idx, llvm::Value* value) {
  llvm::Value* bit = b_.CreateMul(linearOffset(v, idx), b_.getInt64(v.packedBits));
  llvm::Value* byte = b_.CreateLShr(bit, 3);
  llvm::Value* shift = b_.CreateTrunc(b_.CreateAnd(bit, b_.getInt64(7)), b_.getInt16Ty());
  llvm::Value* mask = b_.CreateShl(b_.getInt16(static_cast<uint16_t>((1u << v.packedBits) - 1)), shift);
  llvm::Value* bits = b_.CreateAnd(b_.CreateShl(b_.CreateZExt(value, b_.getInt16Ty()), shift), mask);
  auto update = [&](llvm::Value* at, llvm::Value* clear, llvm::Value* set) {
    llvm::Value* p = b_.CreateGEP(b_.getInt8Ty(), v.ptr, at);
    noalias(v, b_.CreateAtomicRMW(llvm::AtomicRMWInst::And, p, b_.CreateNot(clear), llvm::MaybeAlign(1),
                                  llvm::AtomicOrdering::Monotonic));
    noalias(v,
            b_.CreateAtomicRMW(llvm::AtomicRMWInst::Or, p, set, llvm::MaybeAlign(1), llvm::AtomicOrdering::Monotonic));
  };
  update(byte, b_.CreateTrunc(mask, b_.getInt8Ty()), b_.CreateTrunc(bits, b_.getInt8Ty()));
  if (v.packedBits == 6) {
    // The byte it straddles into, if any (else the same byte again, with nothing to change).
    llvm::Value* hiMask = b_.CreateTrunc(b_.CreateLShr(mask, 8), b_.getInt8Ty());
    llvm::Value* straddles = b_.CreateICmpNE(hiMask, b_.getInt8(0));
    update(b_.CreateSelect(straddles, b_.CreateAdd(byte, b_.getInt64(1)), byte), hiMask,
           b_.CreateTrunc(b_.CreateLShr(bits, 8), b_.getInt8Ty()));
  }
}

}  // namespace tessera::codegen::detail
