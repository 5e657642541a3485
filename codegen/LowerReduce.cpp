// Fixed-order reductions: `mem.reduce` (reduce_sum/max/min of a shared array or view, computed by
// the calling tile). Every reduction of n values uses one tree, the pairwise tree
//   for (s = 1; s < n; s *= 2) for (i = 0; i + s < n; i += 2s) a[i] = a[i] op a[i + s]
// whose result is a[0], so the bits are the same on every device and run (docs/codegen.md,
// "Reductions").
#include "codegen/Lowering.h"

#include "llvm/IR/Intrinsics.h"

namespace tessera::codegen::detail {

namespace {
// Arrays up to this many elements are reduced in registers, straight-line code with one load
// per element; larger or dynamically sized ones through a private copy.
constexpr int64_t kMaxRegisterReduce = 4096;
}  // namespace

llvm::Value* Lowering::combine(const std::string& kind, llvm::Value* a, llvm::Value* b, ir::Type elem) {
  bool isF = a->getType()->isFloatingPointTy();
  if (kind == "sum") return isF ? b_.CreateFAdd(a, b) : b_.CreateAdd(a, b);
  if (kind == "max")
    return isF ? b_.CreateBinaryIntrinsic(llvm::Intrinsic::maxnum, a, b)
               : b_.CreateSelect(isUnsigned(elem) ? b_.CreateICmpUGT(a, b) : b_.CreateICmpSGT(a, b), a, b);
  return isF ? b_.CreateBinaryIntrinsic(llvm::Intrinsic::minnum, a, b)
             : b_.CreateSelect(isUnsigned(elem) ? b_.CreateICmpULT(a, b) : b_.CreateICmpSLT(a, b), a, b);
}

// The pairwise tree without a copy: the value a[lo] holds once the levels below `len` are done
// (len a power of two) is a[lo] for len 1, else the left half's value combined with the right
// half's when the right half starts inside the array. Straight-line code: n loads, n - 1 ops.
llvm::Value* Lowering::reduceTreeInRegisters(View& v, int64_t n, ir::Type elem, const std::string& kind) {
  std::vector<llvm::Value*> shape = v.shape;
  std::function<llvm::Value*(int64_t, int64_t)> tree = [&](int64_t lo, int64_t len) -> llvm::Value* {
    if (len == 1) {
      std::vector<llvm::Value*> idx(shape.size());
      int64_t rest = lo;
      for (size_t d = shape.size(); d-- > 0;) {
        int64_t extent = llvm::cast<llvm::ConstantInt>(shape[d])->getSExtValue();
        idx[d] = b_.getInt64(d == 0 ? rest : rest % extent);
        rest /= extent;
      }
      return loadElem(v, idx, elem);
    }
    int64_t half = len / 2;
    llvm::Value* left = tree(lo, half);
    if (lo + half >= n) return left;
    return combine(kind, left, tree(lo + half, half), elem);
  };
  int64_t len = 1;
  while (len < n) len *= 2;
  return tree(0, len);
}

llvm::Value* Lowering::reduceTree(View& v, ir::Type elem, const std::string& kind) {
  llvm::Value* n = b_.getInt64(1);
  bool staticShape = true;
  for (llvm::Value* s : v.shape) {
    n = b_.CreateMul(n, s);
    staticShape &= llvm::isa<llvm::ConstantInt>(s);
  }
  llvm::Type* et = scalarType(elem);
  bool isF = et->isFloatingPointTy();
  llvm::Value* zero = isF ? llvm::ConstantFP::get(et, 0.0) : llvm::ConstantInt::get(et, 0);
  if (auto* cn = llvm::dyn_cast<llvm::ConstantInt>(n); cn && staticShape && cn->getSExtValue() <= kMaxRegisterReduce) {
    int64_t count = cn->getSExtValue();
    return count == 0 ? zero : reduceTreeInRegisters(v, count, elem, kind);
  }
  // Private scratch (local memory on the GPU): static views get it once in the entry block.
  llvm::Value* scratch;
  if (llvm::isa<llvm::ConstantInt>(n)) {
    llvm::IRBuilder<> entry(&fn_->getEntryBlock(), fn_->getEntryBlock().begin());
    scratch = entry.CreateAlloca(et, n, "reduce.scratch");
  } else {
    scratch = b_.CreateAlloca(et, n, "reduce.scratch");
  }
  View flat{scratch, et, {n}, {b_.getInt64(1)}};
  loop(b_.getInt64(0), n, b_.getInt64(1),
       [&](llvm::Value* e) { storeElem(flat, {e}, loadElem(v, unflatten(e, v.shape), elem), elem); });
  // for (s = 1; s < n; s *= 2) for (i = 0; i + s < n; i += 2s) a[i] = a[i] op a[i+s]
  llvm::BasicBlock* pre = b_.GetInsertBlock();
  auto* outer = llvm::BasicBlock::Create(c_, "reduce.level", fn_);
  auto* innerH = llvm::BasicBlock::Create(c_, "reduce.pair", fn_);
  auto* innerB = llvm::BasicBlock::Create(c_, "reduce.pair.body", fn_);
  auto* next = llvm::BasicBlock::Create(c_, "reduce.level.next", fn_);
  auto* done = llvm::BasicBlock::Create(c_, "reduce.done", fn_);
  b_.CreateBr(outer);
  b_.SetInsertPoint(outer);
  llvm::PHINode* s = b_.CreatePHI(b_.getInt64Ty(), 2);
  s->addIncoming(b_.getInt64(1), pre);
  llvm::BasicBlock* outerEntry = b_.GetInsertBlock();
  b_.CreateCondBr(b_.CreateICmpULT(s, n), innerH, done);
  b_.SetInsertPoint(innerH);
  llvm::PHINode* i = b_.CreatePHI(b_.getInt64Ty(), 2);
  i->addIncoming(b_.getInt64(0), outerEntry);
  b_.CreateCondBr(b_.CreateICmpULT(b_.CreateAdd(i, s), n), innerB, next);
  b_.SetInsertPoint(innerB);
  llvm::Value* a0 = loadElem(flat, {i}, elem);
  llvm::Value* a1 = loadElem(flat, {b_.CreateAdd(i, s)}, elem);
  storeElem(flat, {i}, combine(kind, a0, a1, elem), elem);
  i->addIncoming(b_.CreateAdd(i, b_.CreateShl(s, 1)), b_.GetInsertBlock());
  b_.CreateBr(innerH);
  b_.SetInsertPoint(next);
  s->addIncoming(b_.CreateShl(s, 1), next);
  b_.CreateBr(outer);
  b_.SetInsertPoint(done);
  // n == 0 sums to zero.
  llvm::Value* result = loadElem(flat, {b_.getInt64(0)}, elem);
  return b_.CreateSelect(b_.CreateICmpEQ(n, b_.getInt64(0)), zero, result);
}

}  // namespace tessera::codegen::detail
