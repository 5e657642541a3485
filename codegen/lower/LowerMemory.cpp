// Tile IR -> LLVM IR: memory. Addresses of view elements (swizzled shared buffers included),
// element loads and stores, cooperative and async copies, tree reductions over memory, and the
// mem.* / smem.* / async.* ops.
#include <algorithm>

#include "codegen/lower/Lowering.h"
#include "codegen/lower/MiniFloat.h"
#include "llvm/IR/Intrinsics.h"
#include "llvm/IR/IntrinsicsNVPTX.h"

namespace tessera::codegen::detail {

using ir::OpId;

llvm::Value* Lowering::address(View& v, const std::vector<llvm::Value*>& idx) {
  llvm::Value* off = b_.getInt64(0);
  for (size_t d = 0; d < idx.size() && d < v.strides.size(); ++d)
    off = b_.CreateAdd(off, b_.CreateMul(idx[d], v.strides[d]));
  if (v.swizzle) {
    uint64_t esz = v.elem->getPrimitiveSizeInBits() / 8;
    return b_.CreateGEP(b_.getInt8Ty(), v.ptr, swizzledOffset(v, b_.CreateMul(off, b_.getInt64(esz))));
  }
  return b_.CreateGEP(v.elem, v.ptr, off);
}

// XOR swizzles (the Tile IR's xor32/64/128; CUTLASS's Swizzle<1|2|3, 4, 3> for rows of 32, 64 or
// 128 bytes): the 16-byte chunk index within a row is XORed with (row / 4) % 2, (row / 2) % 4
// or row % 8, so 8 consecutive rows of one column of chunks fall in 8 different bank groups.
llvm::Value* Lowering::swizzledOffset(const View& v, llvm::Value* linear) {
  llvm::Value* row = b_.CreateUDiv(linear, b_.getInt64(v.rowBytes));
  llvm::Value* phase = v.swizzle == 128  ? b_.CreateAnd(row, b_.getInt64(7))
                       : v.swizzle == 64 ? b_.CreateAnd(b_.CreateLShr(row, 1), b_.getInt64(3))
                                         : b_.CreateAnd(b_.CreateLShr(row, 2), b_.getInt64(1));
  return b_.CreateXor(linear, b_.CreateShl(phase, 4));
}

llvm::Value* Lowering::checkedAccess(const View& v, const std::vector<llvm::Value*>& idx, llvm::Type* resultType,
                                     const std::function<llvm::Value*()>& access) {
  if (!boundsCheck_ || v.splat) return access();
  auto* join = llvm::BasicBlock::Create(c_, "bounds.join", fn_);
  std::vector<llvm::BasicBlock*> faults;
  for (size_t d = 0; d < idx.size() && d < v.shape.size(); ++d) {
    auto* ok = llvm::BasicBlock::Create(c_, "bounds.ok", fn_);
    auto* bad = llvm::BasicBlock::Create(c_, "bounds.fault", fn_);
    // Unsigned: a negative index is out of range too.
    b_.CreateCondBr(b_.CreateICmpULT(idx[d], v.shape[d]), ok, bad);
    b_.SetInsertPoint(bad);
    hooks_->boundsFault(b_, (v.name.empty() ? std::string("a view") : v.name) + ", dimension " + std::to_string(d),
                        idx[d], v.shape[d]);
    b_.CreateBr(join);
    faults.push_back(bad);
    b_.SetInsertPoint(ok);
  }
  llvm::Value* r = access();
  llvm::BasicBlock* done = b_.GetInsertBlock();
  b_.CreateBr(join);
  b_.SetInsertPoint(join);
  if (!resultType || !r) return r;
  llvm::PHINode* phi = b_.CreatePHI(r->getType(), static_cast<unsigned>(faults.size() + 1));
  phi->addIncoming(r, done);
  for (llvm::BasicBlock* f : faults) phi->addIncoming(llvm::Constant::getNullValue(r->getType()), f);
  return phi;
}

void Lowering::checkSliceStart(const View& src, const std::vector<llvm::Value*>& at) {
  if (!boundsCheck_ || src.splat) return;
  for (size_t d = 0; d < at.size() && d < src.shape.size(); ++d) {
    auto* ok = llvm::BasicBlock::Create(c_, "slice.ok", fn_);
    auto* bad = llvm::BasicBlock::Create(c_, "slice.fault", fn_);
    b_.CreateCondBr(b_.CreateICmpSGE(at[d], b_.getInt64(0)), ok, bad);
    b_.SetInsertPoint(bad);
    hooks_->boundsFault(b_,
                        "the start of a slice of " + (src.name.empty() ? std::string("a view") : src.name) +
                            ", dimension " + std::to_string(d),
                        at[d], src.shape[d]);
    b_.CreateBr(ok);
    b_.SetInsertPoint(ok);
  }
}

llvm::Value* Lowering::loadElem(View& v, const std::vector<llvm::Value*>& idx, ir::Type elem) {
  if (v.splat) return v.splat;
  if (v.packedBits) return loadPacked(v, idx, elem);
  llvm::LoadInst* x = b_.CreateLoad(v.elem, address(v, idx));
  noalias(v, x);
  llvm::Type* want = scalarType(elem);
  return want->isIntegerTy(1) ? b_.CreateICmpNE(x, b_.getInt8(0)) : x;
}

void Lowering::storeElem(View& v, const std::vector<llvm::Value*>& idx, llvm::Value* value, ir::Type elem) {
  if (v.packedBits) return storePacked(v, idx, value);
  if (value->getType()->isIntegerTy(1)) value = b_.CreateZExt(value, b_.getInt8Ty());
  noalias(v, b_.CreateStore(value, address(v, idx)));
}

// Relaxed (monotonic) ordering, as CUDA's atomicAdd: atom.global / atom.shared on the GPU (the
// view's address space), lock-prefixed instructions or compare-exchange loops on the CPU, where
// groups run on several threads. Signed or unsigned min/max by the element type.
llvm::Value* Lowering::atomicElem(View& v, const std::vector<llvm::Value*>& idx, const ir::Operation& op,
                                  llvm::Value* value, llvm::Value* compare) {
  llvm::Value* p = address(v, idx);
  llvm::MaybeAlign align(v.elem->getPrimitiveSizeInBits() / 8);
  constexpr auto kOrder = llvm::AtomicOrdering::Monotonic;
  if (compare) return b_.CreateExtractValue(b_.CreateAtomicCmpXchg(p, compare, value, align, kOrder, kOrder), 0);
  using RMW = llvm::AtomicRMWInst;
  bool fp = value->getType()->isFloatingPointTy();
  bool uns = ir::scalarClass(ir::baseScalar(op.result()->type)) == ir::ScalarClass::UInt;
  std::string kind = op.strAttr(ir::AttrId::Kind);
  RMW::BinOp rmw = kind == "add"   ? (fp ? RMW::FAdd : RMW::Add)
                   : kind == "sub" ? (fp ? RMW::FSub : RMW::Sub)
                   : kind == "min" ? (uns ? RMW::UMin : RMW::Min)
                   : kind == "max" ? (uns ? RMW::UMax : RMW::Max)
                                   : RMW::Xchg;
  return b_.CreateAtomicRMW(rmw, p, value, align, kOrder);
}

// A copy that the tiles of a group share: tile t moves elements t, t + n, t + 2n, ... in
// row-major order of both views.
// On the GPU, a whole (unclipped) block of rank 1 or 2 whose rows are contiguous and 16-byte
// aligned at both ends moves in 16-byte chunks, chunk c on tile c % n; anything else (and the
// CPU) goes element by element with zero fill. The test is uniform across the group.
void Lowering::copyCooperative(View& dst, View& src, ir::Type elem, bool async) {
  size_t rank = dst.shape.size();
  unsigned esz = dst.elem && dst.elem == src.elem && !dst.packedBits && !src.packedBits
                     ? dst.elem->getPrimitiveSizeInBits() / 8
                     : 0;
  if (!hooks_->isGpu() || src.splat || !esz || !(rank == 1 || rank == 2) || src.shape.size() != rank) {
    copyElements(dst, src, elem);
    return;
  }
  auto* i64 = b_.getInt64Ty();
  llvm::Value* rows = rank == 2 ? dst.shape[0] : b_.getInt64(1);
  llvm::Value* cols = dst.shape[rank - 1];
  llvm::Value* rowBytes = b_.CreateMul(cols, b_.getInt64(esz));
  auto aligned16 = [&](llvm::Value* v) { return b_.CreateICmpEQ(b_.CreateAnd(v, b_.getInt64(15)), b_.getInt64(0)); };
  llvm::Value* fast = b_.CreateAnd(aligned16(rowBytes), b_.CreateICmpEQ(src.strides[rank - 1], b_.getInt64(1)));
  fast = b_.CreateAnd(fast, b_.CreateICmpEQ(dst.strides[rank - 1], b_.getInt64(1)));
  for (size_t d = 0; d < rank; ++d) fast = b_.CreateAnd(fast, b_.CreateICmpEQ(src.shape[d], dst.shape[d]));
  fast = b_.CreateAnd(fast, aligned16(b_.CreatePtrToInt(src.ptr, i64)));
  fast = b_.CreateAnd(fast, aligned16(b_.CreatePtrToInt(dst.ptr, i64)));
  llvm::Value* srcRow = rank == 2 ? b_.CreateMul(src.strides[0], b_.getInt64(esz)) : b_.getInt64(0);
  llvm::Value* dstRow = rank == 2 ? b_.CreateMul(dst.strides[0], b_.getInt64(esz)) : b_.getInt64(0);
  fast = b_.CreateAnd(fast, b_.CreateAnd(aligned16(srcRow), aligned16(dstRow)));
  auto* vecBB = llvm::BasicBlock::Create(c_, "copy.vector", fn_);
  auto* slowBB = llvm::BasicBlock::Create(c_, "copy.scalar", fn_);
  auto* done = llvm::BasicBlock::Create(c_, "copy.end", fn_);
  b_.CreateCondBr(fast, vecBB, slowBB);

  b_.SetInsertPoint(vecBB);
  llvm::Value* perRow = b_.CreateLShr(rowBytes, 4);
  llvm::Value* chunks = b_.CreateMul(rows, perRow);
  auto* v4 = llvm::FixedVectorType::get(b_.getInt32Ty(), 4);
  bool globalToShared = llvm::cast<llvm::PointerType>(src.ptr->getType())->getAddressSpace() == 1 &&
                        llvm::cast<llvm::PointerType>(dst.ptr->getType())->getAddressSpace() == 3;
  forEachIndex(
      chunks,
      [&](llvm::Value* c) {
        llvm::Value* r = b_.CreateUDiv(c, perRow);
        llvm::Value* q = b_.CreateShl(b_.CreateURem(c, perRow), 4);
        llvm::Value* fromOff = b_.CreateAdd(b_.CreateMul(r, srcRow), q);
        llvm::Value* toOff = b_.CreateAdd(b_.CreateMul(r, dstRow), q);
        // A 16-byte chunk stays whole under a swizzle (it moves as a unit within its row).
        if (src.swizzle) fromOff = swizzledOffset(src, fromOff);
        if (dst.swizzle) toOff = swizzledOffset(dst, toOff);
        llvm::Value* from = b_.CreateGEP(b_.getInt8Ty(), src.ptr, fromOff);
        llvm::Value* to = b_.CreateGEP(b_.getInt8Ty(), dst.ptr, toOff);
        if (async && globalToShared) {
          // cp.async.cg: the chunk lands in shared memory once a later cp.async.wait_group /
          // wait_all (async.wait_pending / async.wait) and a barrier have run.
          b_.CreateIntrinsic(llvm::Intrinsic::nvvm_cp_async_cg_shared_global_16, {}, {to, from});
        } else {
          llvm::LoadInst* x = b_.CreateAlignedLoad(v4, from, llvm::Align(16));
          noalias(src, x);
          noalias(dst, b_.CreateAlignedStore(x, to, llvm::Align(16)));
        }
      },
      /*barrier=*/false);
  b_.CreateBr(done);

  b_.SetInsertPoint(slowBB);
  copyElements(dst, src, elem);
  b_.CreateBr(done);
  b_.SetInsertPoint(done);
}

void Lowering::copyElements(View& dst, View& src, ir::Type elem) {
  llvm::Value* count = b_.getInt64(1);
  for (llvm::Value* s : dst.shape) count = b_.CreateMul(count, s);
  forEachIndex(
      count,
      [&](llvm::Value* e) {
        if (dst.shape.size() != src.shape.size()) {
          storeElem(dst, unflatten(e, dst.shape), loadElem(src, unflatten(e, src.shape), elem), elem);
          return;
        }
        // Same rank: the source may be a block clipped at a tensor's edge; the rest of the
        // destination is zero-filled (as cp.async does with a short source), so products and
        // sums over a buffer see zeros past the edge.
        std::vector<llvm::Value*> idx = unflatten(e, dst.shape);
        llvm::Value* inside = b_.getTrue();
        for (size_t d = 0; d < idx.size(); ++d) inside = b_.CreateAnd(inside, b_.CreateICmpULT(idx[d], src.shape[d]));
        auto* load = llvm::BasicBlock::Create(c_, "copy.load", fn_);
        auto* zero = llvm::BasicBlock::Create(c_, "copy.zero", fn_);
        auto* join = llvm::BasicBlock::Create(c_, "copy.next", fn_);
        b_.CreateCondBr(inside, load, zero);
        b_.SetInsertPoint(load);
        storeElem(dst, idx, loadElem(src, idx, elem), elem);
        b_.CreateBr(join);
        b_.SetInsertPoint(zero);
        storeElem(dst, idx, llvm::Constant::getNullValue(dst.elem), elem);
        b_.CreateBr(join);
        b_.SetInsertPoint(join);
      },
      /*barrier=*/false);
}

// Dimensions indexed by an integer (`Q[b, h, rows]`) leave the view: the address already points
// at their index. An index past the end (a dimension clipped to nothing) empties the whole view.
void Lowering::squeezeView(View& r, const ir::Attribute& squeeze) {
  llvm::Value* empty = b_.getFalse();
  for (size_t i = squeeze.array.size(); i-- > 0;) {
    size_t d = static_cast<size_t>(squeeze.array[i].i);
    empty = b_.CreateOr(empty, b_.CreateICmpEQ(r.shape[d], b_.getInt64(0)));
    r.shape.erase(r.shape.begin() + d);
    r.strides.erase(r.strides.begin() + d);
  }
  for (llvm::Value*& e : r.shape) e = b_.CreateSelect(empty, b_.getInt64(0), e);
}

// The value a mem.store stores: a deferred stochastic conversion is rounded here, keyed by the
// element stored to (parameter, element offset).
llvm::Value* Lowering::storedValue(ir::Value* stored, View& v, const std::vector<llvm::Value*>& idx) {
  auto d = deferred_.find(stored);
  if (d == deferred_.end()) return get(stored);
  const ir::Operation* cvt = d->second;
  stochasticKey_ = b_.CreateXor(linearOffset(v, idx), b_.getInt64(static_cast<uint64_t>(v.root + 1) << 56));
  llvm::Value* value =
      convertScalar(get(cvt->operand(0)), cvt->operand(0)->type, cvt->result()->type, "stochastic", cvt);
  stochasticKey_ = nullptr;
  deferred_.erase(d);
  return value;
}

// A shared buffer placed by smem-plan: a view at its offset in the group's shared memory, with
// static row-major (or column-major) strides and its swizzle.
bool Lowering::lowerSharedAlloc(ir::Operation& op) {
  if (!op.hasAttr(ir::AttrId::Offset))
    return fail(op, "shared buffers must be placed by the smem-plan pass before code generation");
  ir::Type t = op.result()->type;
  View v;
  v.elem = storageType(t->elem);
  v.name =
      op.result()->nameHint.empty() ? std::string("a shared array") : "shared array '" + op.result()->nameHint + "'";
  v.packedBits = packedBitsOf(t->elem);
  if (!v.elem) return fail(op, "shared buffers of " + ir::printType(t->elem) + " are not supported yet");
  if (t->swizzle != ir::Swizzle::None) {
    v.swizzle = t->swizzle == ir::Swizzle::Xor128 ? 128 : t->swizzle == ir::Swizzle::Xor64 ? 64 : 32;
    v.rowBytes = t->shape.back().size * static_cast<int64_t>(v.elem->getPrimitiveSizeInBits() / 8);
    if (t->swizzle == ir::Swizzle::Auto || t->layout != ir::Layout::Row || v.rowBytes % v.swizzle != 0 ||
        v.elem->getPrimitiveSizeInBits() % 8 != 0)
      return fail(op, "this swizzled shared buffer (" + ir::printType(t) + ") is not supported by code generation");
  }
  v.ptr = b_.CreateConstGEP1_64(b_.getInt8Ty(), hooks_->sharedBase(b_), op.intAttr(ir::AttrId::Offset, 0));
  // Row-major (or column-major) static strides.
  int64_t stride = 1;
  v.shape.resize(t->shape.size());
  v.strides.resize(t->shape.size());
  for (size_t d = t->shape.size(); d-- > 0;) {
    size_t dim = t->layout == ir::Layout::Col ? t->shape.size() - 1 - d : d;
    v.shape[dim] = b_.getInt64(t->shape[dim].size);
    v.strides[dim] = b_.getInt64(stride);
    stride *= t->shape[dim].size;
  }
  views_[op.result()] = v;
  return true;
}

bool Lowering::lowerMemory(ir::Operation& op) {
  auto indices = [&](unsigned from) {
    std::vector<llvm::Value*> idx;
    for (unsigned i = from; i < op.numOperands(); ++i)
      idx.push_back(asI64(get(op.operand(i)), isUnsigned(op.operand(i)->type)));
    return idx;
  };
  switch (op.id) {
    case OpId::MemDim: {
      View* v = view(op.operand(0));
      if (!v) return fail(op, "dimensions of tile values are not supported by code generation yet");
      set(op.result(), v->shape[static_cast<size_t>(op.intAttr(ir::AttrId::Axis, 0))]);
      return true;
    }
    case OpId::MemLoad: {
      View* v = view(op.operand(0));
      if (!v->elem) return fail(op, "loads of " + ir::printType(op.result()->type) + " are not supported yet");
      std::vector<llvm::Value*> idx = indices(1);
      set(op.result(),
          checkedAccess(*v, idx, scalarType(op.result()->type), [&] { return loadElem(*v, idx, op.result()->type); }));
      return true;
    }
    case OpId::MemStore: {
      View* v = view(op.operand(1));
      if (!v->elem) return fail(op, "stores of " + ir::printType(op.operand(0)->type) + " are not supported yet");
      std::vector<llvm::Value*> idx = indices(2);
      llvm::Value* value = storedValue(op.operand(0), *v, idx);
      checkedAccess(*v, idx, nullptr, [&]() -> llvm::Value* {
        storeElem(*v, idx, value, op.operand(0)->type);
        return nullptr;
      });
      return true;
    }
    case OpId::MemAtomic:
    case OpId::MemAtomicCas: {
      bool cas = op.id == OpId::MemAtomicCas;
      unsigned at = cas ? 2 : 1;
      View* v = view(op.operand(at));
      if (!v->elem || v->splat || v->packedBits)
        return fail(op, "atomics on " + ir::printType(op.operand(at)->type) + " are not supported by code generation");
      std::vector<llvm::Value*> idx = indices(at + 1);
      llvm::Value* value = get(op.operand(at - 1));
      llvm::Value* compare = cas ? get(op.operand(0)) : nullptr;
      set(op.result(), checkedAccess(*v, idx, scalarType(op.result()->type),
                                     [&] { return atomicElem(*v, idx, op, value, compare); }));
      return true;
    }
    case OpId::MemSlice: {
      View src = *view(op.operand(0));
      if (src.swizzle) return fail(op, "slices of swizzled shared buffers are not supported by code generation yet");
      View r = src;
      std::vector<llvm::Value*> at = indices(1);
      checkSliceStart(src, at);
      if (r.name.rfind("a view of ", 0) != 0) r.name = "a view of " + r.name;
      // Packed: the slice starts at an element, not a byte.
      (src.packedBits ? r.elemOffset : r.ptr) = src.packedBits ? linearOffset(src, at)
                                                : src.splat    ? nullptr
                                                               : address(src, at);
      // A slice that runs past the end of its source is clipped there (to nothing when it starts
      // past the end), so blocks at the edge of a tensor see only its elements.
      const ir::Attribute* sizes = op.attr(ir::AttrId::Sizes);
      for (size_t d = 0; d < r.shape.size(); ++d) {
        // A size is a constant or the name of an extent of the parameters (`"D"`).
        const ir::Attribute& sa = sizes->array[d];
        llvm::Value* size = nullptr;
        if (sa.kind == ir::AttrKind::Int) {
          size = b_.getInt64(sa.i);
        } else if (auto it = symbolValue_.find(sa.s); it != symbolValue_.end()) {
          size = it->second;
        } else {
          return fail(op, "slice size '" + sa.s + "' is not an extent of the kernel's parameters");
        }
        if (d >= at.size()) {
          r.shape[d] = size;
          continue;
        }
        llvm::Value* left = b_.CreateSub(src.shape[d], at[d]);
        left = b_.CreateSelect(b_.CreateICmpSLT(left, b_.getInt64(0)), b_.getInt64(0), left);
        r.shape[d] = b_.CreateSelect(b_.CreateICmpSLT(left, size), left, size);
      }
      if (const ir::Attribute* sq = op.attr(ir::AttrId::Squeeze)) squeezeView(r, *sq);
      views_[op.result()] = r;
      return true;
    }
    case OpId::MemReduce: {
      View* v = view(op.operand(0));
      set(op.result(), reduceTree(*v, op.result()->type, op.strAttr(ir::AttrId::Kind)));
      return true;
    }
    case OpId::SmemAlloc: return lowerSharedAlloc(op);
    case OpId::SmemStage: {
      View src = *view(op.operand(0));
      View r;
      r.elem = src.elem;
      r.name = src.name;
      llvm::Value* first = b_.CreateMul(asI64(get(op.operand(1)), isUnsigned(op.operand(1)->type)), src.strides[0]);
      if (src.packedBits) {
        r.ptr = src.ptr;
        r.packedBits = src.packedBits;
        r.elemOffset = src.elemOffset ? b_.CreateAdd(src.elemOffset, first) : first;
      } else {
        r.ptr = b_.CreateGEP(src.elem, src.ptr, first);
      }
      r.shape.assign(src.shape.begin() + 1, src.shape.end());
      r.strides.assign(src.strides.begin() + 1, src.strides.end());
      // A stage of a swizzled buffer swizzles from its own start.
      r.swizzle = src.swizzle;
      r.rowBytes = src.rowBytes;
      views_[op.result()] = r;
      return true;
    }
    case OpId::AsyncCopy: {
      // Synchronous and cooperative for now: the copy is complete when every tile has done its
      // share, which the program's next barrier (required before reading) guarantees.
      View* dst = view(op.operand(0));
      View* src = view(op.operand(1));
      copyCooperative(*dst, *src, op.operand(0)->type->elem, /*async=*/true);
      set(op.result(), b_.getInt32(0));
      return true;
    }
    // On the GPU whole aligned blocks move with cp.async (groups of copies committed and waited
    // for as the IR says); on the CPU, and for other blocks, copies are complete when made.
    case OpId::AsyncCommit:
      if (hooks_->isGpu()) b_.CreateIntrinsic(llvm::Intrinsic::nvvm_cp_async_commit_group, {}, {});
      return true;
    case OpId::AsyncWait:
      if (hooks_->isGpu()) b_.CreateIntrinsic(llvm::Intrinsic::nvvm_cp_async_wait_all, {}, {});
      return true;
    case OpId::AsyncWaitPending:
      if (hooks_->isGpu())
        b_.CreateIntrinsic(llvm::Intrinsic::nvvm_cp_async_wait_group, {},
                           {b_.getInt32(static_cast<uint32_t>(op.intAttr(ir::AttrId::Pending, 0)))});
      return true;
    default: break;
  }
  return fail(op, "not supported by code generation yet");
}

}  // namespace tessera::codegen::detail
