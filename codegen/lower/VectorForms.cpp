// Forms of a GPU kernel body that let LLVM's load/store vectorizer turn unit-stride accesses into
// 16-byte ones (docs/codegen.md, "Several tiles per GPU thread" and "Aligned form"). Each is
// chosen by a test that is uniform over the hardware group, with a general form beside it, so
// the kernel stays correct for any view.
#include <algorithm>

#include "codegen/lower/Lowering.h"
#include "llvm/IR/Intrinsics.h"
#include "llvm/IR/IntrinsicsNVPTX.h"

namespace tessera::codegen::detail {

using ir::OpId;

namespace {
// Bodies emitted several times stay small: a coarsened body is emitted V + V + 1 times, an
// aligned-form body twice.
constexpr size_t kMaxCoarsenedOps = 256;
constexpr size_t kMaxAlignedFormOps = 4000;

unsigned elemBytes(const View& v) { return v.elem ? v.elem->getPrimitiveSizeInBits() / 8 : 0; }
}  // namespace

// Tiles each GPU thread of a kernel without a group shape runs. Running several back to back
// (consecutive global indices) lets LLVM's load/store vectorizer turn their unit-stride accesses
// into vector ones: V = 16 / (narrowest tensor element), at least 4, so that every tensor moves
// 16 bytes per access. Only kernels whose tiles cannot tell how they are mapped to hardware
// threads qualify: no group or warp ids, no shuffles, votes, barriers, shared memory or async
// copies (an allow-list of ops), and small bodies, since the body is emitted V + V + 1 times.
unsigned chooseGpuTilesPerThread(ir::Operation& func, const KernelInterface& k, std::string* why,
                                 const ir::Operation** at) {
  if (k.grouped) {
    if (why) *why = "the kernel has a group shape, so its tiles cannot run several per thread";
    return 1;
  }
  bool ok = true;
  size_t ops = 0;
  func.walk([&](ir::Operation* op) {
    ++ops;
    if (op == &func) return;
    bool allowed = op->has(ir::T_Elementwise);
    switch (op->id) {
      case OpId::ArithConstant:
      case OpId::ArithBitcast:
      case OpId::TileLinearId:  // the global index in a kernel without a group shape
      case OpId::TileThreadId:
      case OpId::MemDim:
      case OpId::MemLoad:
      case OpId::MemStore:
      case OpId::MemSlice:
      case OpId::ScfFor:
      case OpId::ScfIf:
      case OpId::ScfWhile:
      case OpId::ScfYield:
      case OpId::ScfCondition:
      case OpId::FuncReturn: allowed = true; break;
      default: break;
    }
    if (!allowed && ok && why) {
      *why = "'" + std::string(op->name()) + "' depends on how tiles map to hardware threads";
      if (at) *at = op;
    }
    ok &= allowed;
  });
  if (ok && ops > kMaxCoarsenedOps && why)
    *why = "its body has " + std::to_string(ops) + " operations (several tiles per thread: up to " +
           std::to_string(kMaxCoarsenedOps) + ")";
  if (!ok || ops > kMaxCoarsenedOps) return 1;
  unsigned narrowest = 64;  // bits
  for (auto& arg : func.body().args)
    if (arg->type->kind == ir::TypeKind::Tensor)
      narrowest = std::min(narrowest, ir::scalarBits(ir::baseScalar(arg->type->elem)));
  if (narrowest < 8) return 1;  // packed elements (int4, fp4, fp6) are not vector-accessed
  if (narrowest <= 8) return 16;
  return narrowest <= 16 ? 8 : 4;
}

// The body of a kernel without a group shape whose threads run V tiles each. The launch's tiles
// are cut at a shift s in [0, V) that every group agrees on (it depends only on the tensors'
// addresses): tiles [0, s) form a prologue that group 0 runs one per thread, and hardware group
// g of T threads owns tiles [s + g*T*V, s + (g+1)*T*V). s makes the tensors' element s aligned
// to V elements (at most 16 bytes) when all tensors are misaligned alike (views that start one
// element into their buffers), else s = 0. A uniform test per group then picks one of two forms:
//  - vector: the group's tiles are all in the launch (and inside the rank-1 tensors sized like
//    the launch), every tensor is aligned at tile s, and its innermost stride is 1. Thread t runs
//    tiles s + g*T*V + t*V + j, j = 0..V-1, back to back, with the innermost strides known to be
//    1, the alignment asserted (llvm.assume on the data pointer advanced by s) and the bounds
//    checks `tile < n` folded, so consecutive accesses merge into 16-byte vector accesses.
//  - scalar: thread t runs tiles s + g*T*V + j*T + t (coalesced scalar accesses), each under its
//    own `tile < launch_tiles` guard.
bool Lowering::gpuTilesPerThread(ir::Operation& func, KernelInterface& k, llvm::Value* launchTiles, unsigned tiles) {
  k.remarks.push_back({diag::remark_vectorized_tiles, func.loc, {k.name, std::to_string(tiles)}});
  k.remarks.push_back({diag::remark_vector_test,
                       func.loc,
                       {k.name,
                        "a group's tiles are all in the launch, every tensor is unit-stride and all "
                        "are equally far from 16-byte alignment"}});
  auto* i64 = b_.getInt64Ty();
  llvm::Value* threads = hooks_->groupTiles(b_);
  llvm::Value* tid = hooks_->threadInGroup(b_);
  llvm::Value* group = hooks_->groupLinear(b_);

  // The launch is sized by the first mut tensor; rank-1 tensors whose extent is the same symbol
  // as its single dimension have that many elements under the default launch.
  int launchSymbol = -1;
  for (const KernelParam& p : k.params)
    if (p.isTensor && p.isMut) {
      if (p.extents.size() == 1 && p.extents[0].kind == Extent::Symbol) launchSymbol = p.extents[0].symbol;
      break;
    }
  struct Tensor {
    View* view;
    unsigned align;      // bytes asserted at element `shift` in the vector form
    llvm::Value* lead;   // (address / element size) mod V: the element offset from alignment
    bool sizedByLaunch;  // rank 1, extent = the launch symbol
  };
  std::vector<Tensor> tensors;
  size_t pi = 0;
  for (auto& arg : func.body().args) {
    const KernelParam& p = k.params[pi++];
    if (arg->type->kind != ir::TypeKind::Tensor) continue;
    View& v = views_[arg.get()];
    if (v.strides.empty()) continue;  // rank 0
    unsigned bytes = elemBytes(v);
    unsigned align = std::min(16u, tiles * bytes);
    if (align & (align - 1)) align = 1;
    Tensor t{&v, align, nullptr, false};
    if (align > 1) {
      // Elements this tensor's data lies past the previous `align` boundary (exact when the
      // address is a multiple of the element size, which the test below also requires).
      llvm::Value* addr = b_.CreatePtrToInt(v.ptr, i64);
      t.lead = b_.CreateUDiv(b_.CreateAnd(addr, b_.getInt64(align - 1)), b_.getInt64(bytes));
    }
    t.sizedByLaunch = launchSymbol >= 0 && p.extents.size() == 1 && p.extents[0].kind == Extent::Symbol &&
                      p.extents[0].symbol == launchSymbol;
    tensors.push_back(t);
  }
  // The shift: the first aligned tensor's lead decides; every other must lead by as much.
  llvm::Value* shift = b_.getInt64(0);
  llvm::Value* alike = b_.getTrue();
  llvm::Value* lead0 = nullptr;
  for (Tensor& t : tensors) {
    if (!t.lead) continue;
    llvm::Value* addr = b_.CreatePtrToInt(t.view->ptr, i64);
    alike = b_.CreateAnd(alike, b_.CreateICmpEQ(b_.CreateURem(addr, b_.getInt64(elemBytes(*t.view))), b_.getInt64(0)));
    if (!lead0)
      lead0 = t.lead;
    else
      alike = b_.CreateAnd(alike, b_.CreateICmpEQ(t.lead, lead0));
  }
  if (lead0) {
    llvm::Value* s = b_.CreateURem(b_.CreateSub(b_.getInt64(tiles), lead0), b_.getInt64(tiles));
    shift = b_.CreateSelect(alike, s, b_.getInt64(0), "tiles.shift");
  }
  KernelShape shape = shapeOf(k);
  ir::Operation* term = nullptr;

  // Prologue: tiles [0, shift) on the first threads of group 0.
  {
    auto* body = llvm::BasicBlock::Create(c_, "tiles.prologue", fn_);
    auto* next = llvm::BasicBlock::Create(c_, "tiles.groups", fn_);
    llvm::Value* mine = b_.CreateAnd(b_.CreateICmpEQ(group, b_.getInt64(0)),
                                     b_.CreateAnd(b_.CreateICmpULT(tid, shift), b_.CreateICmpULT(tid, launchTiles)));
    b_.CreateCondBr(mine, body, next);
    b_.SetInsertPoint(body);
    hooks_ = makeGpuHooks(shape, tid);
    if (!lowerBlock(func.body(), &term)) return false;
    b_.CreateBr(next);
    b_.SetInsertPoint(next);
  }

  llvm::Value* groupSpan = b_.CreateMul(threads, b_.getInt64(tiles), "group.tiles", true, true);
  llvm::Value* first = b_.CreateAdd(shift, b_.CreateMul(group, groupSpan, "", true, true), "group.first", true, true);
  llvm::Value* end = b_.CreateAdd(first, groupSpan, "group.end", true, true);
  llvm::Value* fast = b_.CreateAnd(alike, b_.CreateICmpULE(end, launchTiles));
  std::vector<llvm::Value*> bounds = {launchTiles};
  for (Tensor& t : tensors) {
    fast = b_.CreateAnd(fast, b_.CreateICmpEQ(t.view->strides.back(), b_.getInt64(1)));
    if (t.sizedByLaunch) {
      fast = b_.CreateAnd(fast, b_.CreateICmpULE(end, t.view->shape[0]));
      bounds.push_back(t.view->shape[0]);
    }
  }
  auto* fastBB = llvm::BasicBlock::Create(c_, "tiles.vector", fn_);
  auto* slowBB = llvm::BasicBlock::Create(c_, "tiles.scalar", fn_);
  llvm::BranchInst* pick = b_.CreateCondBr(fast, fastBB, slowBB);

  b_.SetInsertPoint(fastBB);
  llvm::Value* base =
      b_.CreateAdd(first, b_.CreateMul(tid, b_.getInt64(tiles), "", true, true), "tile.first", true, true);
  std::vector<View> saved;
  for (Tensor& t : tensors) {
    saved.push_back(*t.view);
    t.view->strides.back() = b_.getInt64(1);
  }
  for (unsigned j = 0; j < tiles; ++j) {
    llvm::Value* tile = j ? b_.CreateAdd(base, b_.getInt64(j), "tile", true, true) : base;
    // Past the shift, the thread's tiles start V-aligned, so tile j's element of a tensor is
    // aligned wherever j * (element size) is a multiple of the alignment. The vectorizer reads
    // that off the address the body computes for the tile (the same GEP, after CSE).
    for (Tensor& t : tensors)
      if (t.align > 1 && (j * elemBytes(*t.view)) % t.align == 0)
        b_.CreateAssumption(
            b_.getTrue(),
            {llvm::OperandBundleDef("align", std::vector<llvm::Value*>{b_.CreateGEP(t.view->elem, t.view->ptr, tile),
                                                                       b_.getInt64(t.align)})});
    hooks_ = makeGpuHooks(shape, tile);
    facts_.clear();
    for (llvm::Value* n : bounds) facts_.push_back({tile, n});
    if (!lowerBlock(func.body(), &term)) return false;
  }
  facts_.clear();
  narrowed_.clear();
  // The thread ends here with PTX `exit`, not a return: SimplifyCFG merges returns and then
  // sinks the identical code before them (this last tile's and the scalar form's) into the
  // merged block, out of the load/store vectorizer's reach.
  b_.CreateIntrinsic(llvm::Intrinsic::nvvm_exit, {}, {});
  b_.CreateUnreachable();
  if (narrowedUsed_) {
    // 32-bit tile indices equal the 64-bit ones only below 2^31.
    llvm::IRBuilder<> at(pick);
    pick->setCondition(at.CreateAnd(fast, at.CreateICmpULE(end, at.getInt64(int64_t(1) << 31))));
  }
  for (size_t i = 0; i < tensors.size(); ++i) *tensors[i].view = saved[i];

  b_.SetInsertPoint(slowBB);
  for (unsigned j = 0; j < tiles; ++j) {
    llvm::Value* t = b_.CreateAdd(b_.CreateAdd(first, b_.CreateMul(threads, b_.getInt64(j))), tid, "tile");
    auto* body = llvm::BasicBlock::Create(c_, "tile.body", fn_);
    auto* next = llvm::BasicBlock::Create(c_, "tile.next", fn_);
    b_.CreateCondBr(b_.CreateICmpULT(t, launchTiles), body, next);
    b_.SetInsertPoint(body);
    hooks_ = makeGpuHooks(shape, t);
    if (!lowerBlock(func.body(), &term)) return false;
    b_.CreateBr(next);
    b_.SetInsertPoint(next);
  }
  b_.CreateRetVoid();
  return true;
}

// Any other GPU kernel body without tile values: a test that is uniform over the launch picks an
// aligned form when every tensor is unit-stride in its innermost dimension, its data is 16-byte
// aligned and each outer stride is a whole number of 16-byte chunks. There the innermost strides
// are the constant 1, the data pointers are asserted aligned and the outer strides are masked to
// their known multiple, so that LLVM can prove `x[r, j + u]`, u = 0..7 (j a multiple of 8) to be
// one aligned 16-byte chunk and merge the accesses. The general form serves every other view.
bool Lowering::isScalarBody(ir::Operation& func) {
  bool scalar = true;
  func.walk([&](ir::Operation* op) { scalar &= !isTileOp(*op) && op->id != OpId::AsyncCopy; });
  return scalar;
}

// Remarks on the choice above (-Rpass=vectorize and its -missed and -analysis forms).
void Lowering::remarkAlignedForm(ir::Operation& func, KernelInterface& k, bool eligible, size_t ops, bool noTensors) {
  std::string coarse;
  const ir::Operation* at = nullptr;
  chooseGpuTilesPerThread(func, k, &coarse, &at);
  if (regFrags_ || !eligible) {
    // Tile values and async copies move through cooperative copies (copyCooperative).
    k.remarks.push_back({diag::remark_vector_test,
                         func.loc,
                         {k.name,
                          "a tile copy's block is whole, its rows contiguous and 16-byte aligned at both "
                          "ends (16-byte chunks, cp.async for async copies)"}});
    return;
  }
  std::string why = noTensors ? "no tensor parameter has elements of 1, 2, 4, 8 or 16 bytes"
                    : ops > kMaxAlignedFormOps
                        ? "its body has " + std::to_string(ops) + " operations (the aligned form: up to " +
                              std::to_string(kMaxAlignedFormOps) + ")"
                        : "";
  if (!why.empty()) {
    k.remarks.push_back({diag::remark_not_vectorized, func.loc, {k.name, why}});
    return;
  }
  // One tile per thread: the aligned form merges accesses only within a tile's own code, and
  // here each tile is one thread's element.
  if (!k.grouped) {
    k.remarks.push_back(
        {diag::remark_not_vectorized, at ? at->loc : func.loc, {k.name, "one tile per thread, since " + coarse}});
    return;
  }
  k.remarks.push_back({diag::remark_vectorized_aligned, func.loc, {k.name}});
  k.remarks.push_back({diag::remark_vector_test,
                       func.loc,
                       {k.name,
                        "every tensor is 16-byte aligned, unit-stride in its innermost dimension and its "
                        "rows are whole 16-byte chunks"}});
}

bool Lowering::lowerBodyVersioned(ir::Operation& func, KernelInterface& k) {
  ir::Operation* term = nullptr;
  bool eligible = hooks_->isGpu() && !regFrags_ && isScalarBody(func);
  size_t ops = 0;
  func.walk([&](ir::Operation*) { ++ops; });
  std::vector<View*> tensors;
  for (auto& arg : func.body().args)
    if (arg->type->kind == ir::TypeKind::Tensor) {
      View& v = views_[arg.get()];
      unsigned bytes = elemBytes(v);
      if (v.strides.empty() || !bytes || bytes > 16 || (bytes & (bytes - 1))) continue;
      tensors.push_back(&v);
    }
  if (hooks_->isGpu()) remarkAlignedForm(func, k, eligible, ops, tensors.empty());
  if (!eligible || ops > kMaxAlignedFormOps || tensors.empty()) {
    if (!lowerBlock(func.body(), &term)) return false;
    b_.CreateRetVoid();
    return true;
  }
  auto* i64 = b_.getInt64Ty();
  llvm::Value* aligned = b_.getTrue();
  for (View* v : tensors) {
    int64_t chunk = 16 / elemBytes(*v);  // elements per 16 bytes
    auto multiple = [&](llvm::Value* x, int64_t m) {
      return b_.CreateICmpEQ(b_.CreateAnd(x, b_.getInt64(m - 1)), b_.getInt64(0));
    };
    aligned = b_.CreateAnd(aligned, b_.CreateICmpEQ(v->strides.back(), b_.getInt64(1)));
    aligned = b_.CreateAnd(aligned, multiple(b_.CreatePtrToInt(v->ptr, i64), 16));
    for (size_t d = 0; d + 1 < v->strides.size(); ++d) aligned = b_.CreateAnd(aligned, multiple(v->strides[d], chunk));
  }
  auto* alignedBB = llvm::BasicBlock::Create(c_, "body.aligned", fn_);
  auto* generalBB = llvm::BasicBlock::Create(c_, "body.general", fn_);
  b_.CreateCondBr(aligned, alignedBB, generalBB);

  b_.SetInsertPoint(alignedBB);
  std::vector<View> saved;
  for (View* v : tensors) {
    saved.push_back(*v);
    int64_t chunk = 16 / elemBytes(*v);
    v->strides.back() = b_.getInt64(1);
    b_.CreateAssumption(b_.getTrue(),
                        {llvm::OperandBundleDef("align", std::vector<llvm::Value*>{v->ptr, b_.getInt64(16)})});
    for (size_t d = 0; d + 1 < v->strides.size(); ++d)
      v->strides[d] = b_.CreateAnd(v->strides[d], b_.getInt64(~(chunk - 1)), "stride.chunks");
  }
  if (!lowerBlock(func.body(), &term)) return false;
  b_.CreateRetVoid();
  for (size_t i = 0; i < tensors.size(); ++i) *tensors[i] = saved[i];

  // Unit-stride views that are not aligned (rows of an odd length): scalar accesses at constant
  // offsets from each other; the general copy serves strided views.
  b_.SetInsertPoint(generalBB);
  llvm::Value* unitStride = b_.getTrue();
  for (View* v : tensors) unitStride = b_.CreateAnd(unitStride, b_.CreateICmpEQ(v->strides.back(), b_.getInt64(1)));
  auto* contiguousBB = llvm::BasicBlock::Create(c_, "body.unit_stride", fn_);
  auto* stridedBB = llvm::BasicBlock::Create(c_, "body.strided", fn_);
  b_.CreateCondBr(unitStride, contiguousBB, stridedBB);
  b_.SetInsertPoint(contiguousBB);
  for (View* v : tensors) v->strides.back() = b_.getInt64(1);
  if (!lowerBlock(func.body(), &term)) return false;
  b_.CreateRetVoid();
  for (size_t i = 0; i < tensors.size(); ++i) *tensors[i] = saved[i];
  b_.SetInsertPoint(stridedBB);
  if (!lowerBlock(func.body(), &term)) return false;
  b_.CreateRetVoid();
  return true;
}

}  // namespace tessera::codegen::detail
