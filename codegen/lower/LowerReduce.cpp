// Fixed-order reductions: `mem.reduce` (reduce_sum/max/min of a shared array or view, computed by
// the calling tile). Every reduction of n values uses one tree, the pairwise tree
//   for (s = 1; s < n; s *= 2) for (i = 0; i + s < n; i += 2s) a[i] = a[i] op a[i + s]
// whose result is a[0], so the bits are the same on every device and run (docs/codegen.md,
// "Reductions").
#include "codegen/lower/Lowering.h"
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
    return isF ? floatMinMax(true, a, b)
               : b_.CreateSelect(isUnsigned(elem) ? b_.CreateICmpUGT(a, b) : b_.CreateICmpSGT(a, b), a, b);
  return isF ? floatMinMax(false, a, b)
             : b_.CreateSelect(isUnsigned(elem) ? b_.CreateICmpULT(a, b) : b_.CreateICmpSLT(a, b), a, b);
}

// A constant (or splat) that is a number other than +-0: max/min against it cannot tie at zero.
static bool isNonzeroNumber(llvm::Value* v) {
  auto* c = llvm::dyn_cast<llvm::Constant>(v);
  if (c && c->getType()->isVectorTy()) c = c->getSplatValue();
  auto* f = llvm::dyn_cast_or_null<llvm::ConstantFP>(c);
  return f && !f->isZero() && !f->isNaN();
}

// IEEE 754-2019 maximumNumber/minimumNumber (docs/language.md). On the GPU that is one
// instruction: NVPTX selects llvm.maxnum/minnum as PTX max/min (f16/bf16 on sm_80+, promoted
// to f32 exactly below), which the PTX ISA defines as the other operand where one is NaN, NaN
// where both are, and "+0.0 > -0.0" where both are zeros (max and min, every float type;
// LLVM 19 folds constant maxnum/minnum with the same order). exec float_minmax checks every
// pair of special values on the device. On the CPU llvm.maxnum leaves the zero sign open (x86
// -O0 and -O2 differed), and llvm.maximumnum is not lowered by every LLVM 19 target, so: the
// larger (smaller) operand, the other one where `a` is NaN (b NaN too: b), and for equal
// operands the AND (OR) of their bits, which is +0 (-0) for zeros of both signs and the value
// itself otherwise. Where both are NaN the GPU gives its canonical NaN and the CPU b: a NaN
// either way, the only bits the two may differ in.
llvm::Value* Lowering::floatMinMax(bool isMax, llvm::Value* a, llvm::Value* b) {
  llvm::Type* t = a->getType();
  // Against a constant that is neither zero nor NaN no zero-sign case and no NaN choice
  // arises, so maxnum/minnum give the same bits as the selects on the CPU too.
  if (target_ == DeviceTarget::Gpu || isNonzeroNumber(a) || isNonzeroNumber(b))
    return isMax ? b_.CreateMaxNum(a, b) : b_.CreateMinNum(a, b);
  llvm::Type* it = t->isVectorTy()
                       ? static_cast<llvm::Type*>(llvm::VectorType::getInteger(llvm::cast<llvm::VectorType>(t)))
                       : b_.getIntNTy(t->getPrimitiveSizeInBits());
  llvm::Value* better = isMax ? b_.CreateFCmpOGT(a, b) : b_.CreateFCmpOLT(a, b);
  llvm::Value* pick = b_.CreateSelect(b_.CreateOr(better, b_.CreateFCmpUNO(b, b)), a, b);
  llvm::Value* ai = b_.CreateBitCast(a, it);
  llvm::Value* bi = b_.CreateBitCast(b, it);
  llvm::Value* same = b_.CreateBitCast(isMax ? b_.CreateAnd(ai, bi) : b_.CreateOr(ai, bi), t);
  return b_.CreateSelect(b_.CreateFCmpOEQ(a, b), same, pick);
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
  return reduceTreeStreaming(v, n, elem, kind);
}

// The same pairwise tree over any number of elements in constant space (no copy of the array,
// no dynamically sized alloca: NVPTX emits those with alignment 0, which ptxas refuses). After
// e elements, blocks[k] holds the tree's value of the complete block of 2^k elements that bit k
// of e stands for; element e merges with the blocks of e's trailing one bits, as a binary
// counter carries. At the end the partial blocks fold from the smallest up: the right half of
// every level of the tree is the fold of the bits below it, so the bits are the tree's.
llvm::Value* Lowering::reduceTreeStreaming(View& v, llvm::Value* n, ir::Type elem, const std::string& kind) {
  llvm::Type* et = scalarType(elem);
  bool isF = et->isFloatingPointTy();
  llvm::Value* zero = isF ? llvm::ConstantFP::get(et, 0.0) : llvm::ConstantInt::get(et, 0);
  auto* blocksTy = llvm::ArrayType::get(et, 65);  // 64 bits of the count, and one for n == 0
  llvm::IRBuilder<> entry(&fn_->getEntryBlock(), fn_->getEntryBlock().begin());
  llvm::AllocaInst* blocks = entry.CreateAlloca(blocksTy, nullptr, "reduce.blocks");
  llvm::AllocaInst* cur = entry.CreateAlloca(et, nullptr, "reduce.value");
  auto block = [&](llvm::Value* k) { return b_.CreateInBoundsGEP(blocksTy, blocks, {b_.getInt64(0), k}); };
  auto bit = [&](llvm::Value* x, llvm::Value* k) {
    return b_.CreateICmpNE(b_.CreateAnd(b_.CreateLShr(x, k), b_.getInt64(1)), b_.getInt64(0));
  };
  loop(b_.getInt64(0), n, b_.getInt64(1), [&](llvm::Value* e) {
    b_.CreateStore(loadElem(v, unflatten(e, v.shape), elem), cur);
    // k runs over e's trailing one bits; the exit leaves it at the first zero bit.
    auto carry = loopWithPhis(
        "reduce.carry", "k", b_.getInt64(0), b_.getInt64(1), {}, "",
        [&](llvm::Value* j, const LoopPhis&) { return bit(e, j); },
        [&](llvm::Value* j, const LoopPhis&) {
          b_.CreateStore(combine(kind, b_.CreateLoad(et, block(j)), b_.CreateLoad(et, cur), elem), cur);
          return std::vector<llvm::Value*>{};
        });
    llvm::Value* k = carry.index;
    b_.CreateStore(b_.CreateLoad(et, cur), block(k));
  });
  // Fold the partial blocks: the lowest set bit of n starts, each higher one combines from the left.
  llvm::Value* low = b_.CreateBinaryIntrinsic(llvm::Intrinsic::cttz, n, b_.getFalse());
  b_.CreateStore(b_.CreateLoad(et, block(low)), cur);
  loop(b_.CreateAdd(low, b_.getInt64(1)), b_.getInt64(64), b_.getInt64(1), [&](llvm::Value* k) {
    auto* take = llvm::BasicBlock::Create(c_, "reduce.fold", fn_);
    auto* skip = llvm::BasicBlock::Create(c_, "reduce.fold.next", fn_);
    b_.CreateCondBr(bit(n, k), take, skip);
    b_.SetInsertPoint(take);
    b_.CreateStore(combine(kind, b_.CreateLoad(et, block(k)), b_.CreateLoad(et, cur), elem), cur);
    b_.CreateBr(skip);
    b_.SetInsertPoint(skip);
  });
  // n == 0 sums to zero.
  return b_.CreateSelect(b_.CreateICmpEQ(n, b_.getInt64(0)), zero, b_.CreateLoad(et, cur));
}

}  // namespace tessera::codegen::detail

namespace tessera::codegen::detail {

// One step of argmax/argmin: (b, ib) wins over (a, ia) when b is NaN and a is not, when b is
// strictly larger (smaller), or on a tie (equal, or both NaN) when its index is smaller. That
// is a total order, so the winner does not depend on the tree, and NaN counts as the extreme
// value as in PyTorch and NumPy.
std::pair<llvm::Value*, llvm::Value*> Lowering::combineArg(bool isMax, llvm::Value* a, llvm::Value* ia, llvm::Value* b,
                                                           llvm::Value* ib, ir::Type valueType, ir::Type indexType) {
  llvm::Value* better;
  llvm::Value* tie;
  if (a->getType()->isFloatingPointTy()) {
    llvm::Value* aNan = b_.CreateFCmpUNO(a, a);
    llvm::Value* bNan = b_.CreateFCmpUNO(b, b);
    better =
        b_.CreateOr(b_.CreateAnd(bNan, b_.CreateNot(aNan)), isMax ? b_.CreateFCmpOGT(b, a) : b_.CreateFCmpOLT(b, a));
    tie = b_.CreateOr(b_.CreateFCmpOEQ(a, b), b_.CreateAnd(aNan, bNan));
  } else {
    bool u = isUnsigned(valueType);
    better = isMax ? (u ? b_.CreateICmpUGT(b, a) : b_.CreateICmpSGT(b, a))
                   : (u ? b_.CreateICmpULT(b, a) : b_.CreateICmpSLT(b, a));
    tie = b_.CreateICmpEQ(a, b);
  }
  llvm::Value* lower = isUnsigned(indexType) ? b_.CreateICmpULT(ib, ia) : b_.CreateICmpSLT(ib, ia);
  llvm::Value* takeB = b_.CreateOr(better, b_.CreateAnd(tie, lower));
  return {b_.CreateSelect(takeB, b, a), b_.CreateSelect(takeB, ib, ia)};
}

// tile.group_reduce: the pairwise tree over the group's tiles in tile order, the same tree as
// reduce_sum of an array holding tile t's value at t (so `group_sum(v)` and `smem[i] = v;
// tbarrier(); reduce_sum(smem)` give the same bits). Level s < 32 runs inside each warp
// (shuffle down by s: lane i combines with lane i + s, which at that point holds the value of
// its span); lane 0 of each warp then holds its 32 tiles' value. Those go to shared memory, one
// barrier, and every warp runs the levels above 32 over them the same way (the same tree, so
// the same bits in every warp) and broadcasts its lane 0's result with a shuffle: one barrier
// per reduction instead of two (a second to publish warp 0's result), which is most of a row
// kernel's fixed cost per row. Back-to-back reductions alternate between two halves of the
// scratch (a parity that every tile flips at each group reduction, so the same in the whole
// group): a warp still reading one reduction's values cannot be overwritten by the next
// reduction's writes, which go to the other half, and the one after that comes behind the next
// reduction's barrier, which the reading warp has not passed yet. Shuffles and barriers go
// through DeviceHooks, so the CPU executor runs the same code (fibers) and gets the same bits.
bool Lowering::lowerGroupReduce(ir::Operation& op) {
  std::string kind = op.strAttr(ir::AttrId::Kind);
  bool arg = kind == "argmax" || kind == "argmin";
  int64_t tiles = groupTiles_;
  if (tiles <= 0 || (tiles > 32 && groupScratch_ < 0))
    return fail(op, "group reductions need a group shape and their shared scratch (run smem-plan)");
  int64_t warps = (tiles + 31) / 32;
  ir::Type vt = op.operand(0)->type;
  ir::Type it = arg ? op.operand(1)->type : nullptr;
  llvm::Value* v = get(op.operand(0));
  llvm::Value* ix = arg ? get(op.operand(1)) : nullptr;
  auto step = [&](llvm::Value* other, llvm::Value* otherIx, llvm::Value* valid) {
    llvm::Value* nv;
    llvm::Value* ni = nullptr;
    if (arg)
      std::tie(nv, ni) = combineArg(kind == "argmax", v, ix, other, otherIx, vt, it);
    else
      nv = combine(kind, v, other, vt);
    v = valid ? b_.CreateSelect(valid, nv, v) : nv;
    if (arg) ix = valid ? b_.CreateSelect(valid, ni, ix) : ni;
  };
  auto shuffleDown = [&](llvm::Value* x, int64_t s) { return hooks_->shuffle(b_, x, 2, b_.getInt32(s), 32); };
  llvm::Value* tid = hooks_->tileLinear(b_);
  for (int64_t s = 1; s < 32 && s < tiles; s *= 2) {
    llvm::Value* o = shuffleDown(v, s);
    llvm::Value* oi = arg ? shuffleDown(ix, s) : nullptr;
    // Only the last, partial warp has lanes whose partner does not exist.
    llvm::Value* valid = tiles % 32 ? b_.CreateICmpULT(b_.CreateAdd(tid, b_.getInt64(s)), b_.getInt64(tiles)) : nullptr;
    step(o, oi, valid);
  }
  // Lane 0 holds the result (of the warp, or, after the levels above 32, of the group).
  auto broadcast = [&] { set(op.result(), hooks_->shuffle(b_, arg ? ix : v, 0, b_.getInt32(0), 32)); };
  if (warps == 1) {
    broadcast();
    return true;
  }
  // This reduction's half of the scratch: warps value slots, then warps index slots.
  llvm::Value* parity = b_.CreateLoad(b_.getInt64Ty(), reduceParity());
  b_.CreateStore(b_.CreateXor(parity, b_.getInt64(1)), reduceParity());
  llvm::Value* half = b_.CreateMul(parity, b_.getInt64(16 * warps));
  llvm::Value* scratch =
      b_.CreateGEP(b_.getInt8Ty(), hooks_->sharedBase(b_), b_.CreateAdd(half, b_.getInt64(groupScratch_)));
  auto valueSlot = [&](llvm::Value* k) {
    return b_.CreateGEP(b_.getInt8Ty(), scratch, b_.CreateMul(k, b_.getInt64(8)));
  };
  auto indexSlot = [&](llvm::Value* k) {
    return b_.CreateGEP(b_.getInt8Ty(), scratch, b_.CreateMul(b_.CreateAdd(k, b_.getInt64(warps)), b_.getInt64(8)));
  };
  llvm::Type* vty = v->getType();
  llvm::Type* ity = arg ? ix->getType() : nullptr;
  llvm::Value* lane = hooks_->laneId(b_);
  llvm::Value* warp = b_.CreateLShr(tid, 5);
  auto* writeBB = llvm::BasicBlock::Create(c_, "group_reduce.warp_value", fn_);
  auto* gatherBB = llvm::BasicBlock::Create(c_, "group_reduce.gather", fn_);
  b_.CreateCondBr(b_.CreateICmpEQ(lane, b_.getInt64(0)), writeBB, gatherBB);
  b_.SetInsertPoint(writeBB);
  b_.CreateStore(v, valueSlot(warp));
  if (arg) b_.CreateStore(ix, indexSlot(warp));
  b_.CreateBr(gatherBB);
  b_.SetInsertPoint(gatherBB);
  hooks_->barrier(b_);
  // Lanes past the last warp read slot 0: their values are never combined into lane 0's.
  llvm::Value* own = b_.CreateSelect(b_.CreateICmpULT(lane, b_.getInt64(warps)), lane, b_.getInt64(0));
  v = b_.CreateLoad(vty, valueSlot(own));
  if (arg) ix = b_.CreateLoad(ity, indexSlot(own));
  for (int64_t s = 1; s < warps; s *= 2) {
    llvm::Value* o = shuffleDown(v, s);
    llvm::Value* oi = arg ? shuffleDown(ix, s) : nullptr;
    step(o, oi, b_.CreateICmpULT(b_.CreateAdd(lane, b_.getInt64(s)), b_.getInt64(warps)));
  }
  broadcast();
  return true;
}

// The group-reduction parity of the function being lowered: an i64 in its entry block, 0 at
// the start (promoted to a register by the optimiser).
llvm::Value* Lowering::reduceParity() {
  if (reduceParity_ && reduceParity_->getFunction() == fn_) return reduceParity_;
  llvm::BasicBlock& entry = fn_->getEntryBlock();
  llvm::IRBuilder<> eb(&entry, entry.getFirstInsertionPt());
  reduceParity_ = eb.CreateAlloca(b_.getInt64Ty(), nullptr, "group_reduce.parity");
  eb.CreateStore(b_.getInt64(0), reduceParity_);
  return reduceParity_;
}

}  // namespace tessera::codegen::detail
