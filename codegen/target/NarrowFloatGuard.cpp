#include "codegen/target/NarrowFloatGuard.h"

#include <vector>

#include "llvm/ADT/SmallPtrSet.h"
#include "llvm/IR/IRBuilder.h"
#include "llvm/IR/Instructions.h"
#include "llvm/IR/Module.h"

namespace tessera::codegen {

namespace {
// The bf16 widenings among the floating-point values `root` is computed from (through
// arithmetic, selects, phis and intrinsic calls: what InstCombine may shrink through).
void collectBFloatWidenings(llvm::Value* root, std::vector<llvm::FPExtInst*>& out) {
  llvm::SmallPtrSet<llvm::Value*, 16> seen;
  std::vector<llvm::Value*> work{root};
  while (!work.empty()) {
    llvm::Value* v = work.back();
    work.pop_back();
    auto* inst = llvm::dyn_cast<llvm::Instruction>(v);
    if (!inst || !inst->getType()->isFPOrFPVectorTy() || !seen.insert(v).second) continue;
    if (auto* ext = llvm::dyn_cast<llvm::FPExtInst>(inst)) {
      if (ext->getSrcTy()->getScalarType()->isBFloatTy()) out.push_back(ext);
      continue;
    }
    if (llvm::isa<llvm::LoadInst>(inst)) continue;
    if (auto* call = llvm::dyn_cast<llvm::CallInst>(inst); call && !call->getCalledFunction()) continue;
    for (llvm::Value* op : inst->operands())
      if (op->getType()->isFPOrFPVectorTy()) work.push_back(op);
  }
}

// `fpext bfloat %x to T` as the bits of %x in the top half of an f32 (exact), then widened to T.
void rewriteAsBits(llvm::FPExtInst* ext) {
  llvm::IRBuilder<> b(ext);
  llvm::Type* src = ext->getSrcTy();
  llvm::Type* i16 = b.getInt16Ty();
  llvm::Type* i32 = b.getInt32Ty();
  llvm::Type* f32 = b.getFloatTy();
  if (auto* vt = llvm::dyn_cast<llvm::VectorType>(src)) {
    i16 = llvm::VectorType::get(i16, vt->getElementCount());
    i32 = llvm::VectorType::get(i32, vt->getElementCount());
    f32 = llvm::VectorType::get(f32, vt->getElementCount());
  }
  llvm::Value* bits = b.CreateZExt(b.CreateBitCast(ext->getOperand(0), i16), i32);
  llvm::Value* wide = b.CreateBitCast(b.CreateShl(bits, 16), f32);
  if (wide->getType() != ext->getType()) wide = b.CreateFPExt(wide, ext->getType());
  ext->replaceAllUsesWith(wide);
  ext->eraseFromParent();
}
}  // namespace

unsigned guardBFloatToHalfShrinking(llvm::Module& module) {
  llvm::SmallPtrSet<llvm::FPExtInst*, 16> found;
  std::vector<llvm::FPExtInst*> order;
  for (llvm::Function& f : module)
    for (llvm::BasicBlock& bb : f)
      for (llvm::Instruction& inst : bb) {
        auto* trunc = llvm::dyn_cast<llvm::FPTruncInst>(&inst);
        if (!trunc || !trunc->getDestTy()->getScalarType()->isHalfTy()) continue;
        std::vector<llvm::FPExtInst*> exts;
        collectBFloatWidenings(trunc->getOperand(0), exts);
        for (llvm::FPExtInst* e : exts)
          if (found.insert(e).second) order.push_back(e);
      }
  for (llvm::FPExtInst* e : order) rewriteAsBits(e);
  return static_cast<unsigned>(order.size());
}

}  // namespace tessera::codegen
