// Tile values in code generation. A tile value (!tile, !frag) is a group-level value: all tiles
// of the group hold it together. Here every tile value lives in memory, in a slot of the
// group's workspace (global memory on the GPU, a per-worker buffer on the CPU) laid out
// row-major at its static capacity; its View carries the run-time extents, which may be smaller
// (a block clipped at a tensor's end) or symbolic (`[128, D]`). Each tile op is a loop in which
// tile t of the group handles elements t, t + n, t + 2n, ..., followed by a group barrier, so
// the next op may read any element. Views that need no memory of their own (transpose,
// broadcast) only rearrange strides. Reductions inside one element (dot products, softmax rows)
// run sequentially in index order, so results have the same bits on every run and target.
#include "codegen/lower/Lowering.h"
#include "llvm/IR/Intrinsics.h"

namespace tessera::codegen::detail {

using ir::OpId;

bool Lowering::isTileOp(const ir::Operation& op) {
  switch (op.id) {
    case OpId::ScfFor:
    case OpId::TileRange:
    case OpId::ScfIf:
    case OpId::ScfWhile: return false;
    case OpId::TileLoad:
    case OpId::TileStore:
    case OpId::TileBroadcast:
    case OpId::TileTranspose:
    case OpId::TileDot:
    case OpId::TileMma:
    case OpId::TileSoftmax:
    case OpId::TileReduce: return true;
    default: break;
  }
  for (const auto& r : op.results)
    if (isTileValue(r->type)) return true;
  return false;
}

void Lowering::bindSymbols(ir::Operation& func, const KernelInterface& k) {
  size_t p = 0;
  for (auto& arg : func.body().args) {
    ir::Type t = arg->type;
    if (t->kind == ir::TypeKind::Tensor) {
      View* v = view(arg.get());
      for (size_t d = 0; d < t->shape.size(); ++d) {
        const ir::Dim& dim = t->shape[d];
        if (dim.isStatic() || dim.sym.empty() || symbolValue_.count(dim.sym)) continue;
        symbolValue_[dim.sym] = v->shape[d];
        if (p < k.params.size() && d < k.params[p].extents.size()) symbolExtent_[dim.sym] = k.params[p].extents[d];
      }
    }
    ++p;
  }
}

std::vector<llvm::Value*> Lowering::capacity(ir::Type t, bool* ok) {
  std::vector<llvm::Value*> shape;
  *ok = true;
  for (const ir::Dim& d : t->shape) {
    if (d.isStatic()) {
      shape.push_back(b_.getInt64(d.size));
    } else if (auto it = symbolValue_.find(d.sym); !d.sym.empty() && it != symbolValue_.end()) {
      shape.push_back(it->second);
    } else {
      *ok = false;
      shape.push_back(b_.getInt64(0));
    }
  }
  return shape;
}

// Slots, in the order the ops appear: every tile-valued result except pure views (transpose,
// broadcast), and the results of loops and branches that carry tile values.
bool Lowering::planWorkspace(ir::Operation& func, KernelInterface& k) {
  std::vector<const ir::Value*> keys;
  bool any = false;
  func.walk([&](ir::Operation* op) {
    for (auto& r : op->results) {
      if (!isTileValue(r->type) || inRegisters(r.get())) continue;
      any = true;
      if (op->id == OpId::TileTranspose || op->id == OpId::TileBroadcast || op->id == OpId::TileReshape) continue;
      keys.push_back(r.get());
    }
    for (unsigned i = 0; i < op->numOperands(); ++i)
      any |= isTileValue(op->operand(i)->type) && !inRegisters(op->operand(i));
  });
  if (!any) return true;
  if (!k.grouped) return fail(func, "tile values need a group shape (tile[(N,)])");
  llvm::Value* offset = b_.getInt64(0);
  for (const ir::Value* key : keys) {
    ir::Type t = key->type;
    bool ok = true;
    std::vector<llvm::Value*> cap = capacity(t, &ok);
    WorkspaceSlot slot;
    slot.elemBytes = static_cast<uint32_t>(out_.getDataLayout().getTypeAllocSize(storageType(t->elem)));
    for (const ir::Dim& d : t->shape) {
      Extent e;
      if (d.isStatic()) {
        e.kind = Extent::Const;
        e.value = d.size;
      } else if (auto it = symbolExtent_.find(d.sym); it != symbolExtent_.end()) {
        e = it->second;
      } else {
        ok = false;
      }
      slot.extents.push_back(e);
    }
    if (!ok)
      return fail(func, "the tile value of type " + ir::printType(t) +
                            " has an extent that no tensor parameter binds, so its memory cannot be sized");
    k.workspaceValues.push_back({key->defOp->name(), ir::printType(t), key->defOp->loc});
    slotOffset_[key] = offset;
    llvm::Value* bytes = b_.getInt64(slot.elemBytes);
    for (llvm::Value* c : cap) bytes = b_.CreateMul(bytes, c);
    // Round each slot up to TESSERA_WORKSPACE_ALIGN, as the runtime does when it sizes the area.
    llvm::Value* aligned = b_.CreateAnd(b_.CreateAdd(bytes, b_.getInt64(TESSERA_WORKSPACE_ALIGN - 1)),
                                        b_.getInt64(~int64_t(TESSERA_WORKSPACE_ALIGN - 1)));
    offset = b_.CreateAdd(offset, aligned);
    k.workspace.push_back(std::move(slot));
  }
  return true;
}

View Lowering::slotView(const ir::Value* key, const std::vector<llvm::Value*>& shape) {
  ir::Type t = key->type;
  bool ok = true;
  std::vector<llvm::Value*> cap = capacity(t, &ok);
  View v;
  v.elem = storageType(t->elem);
  v.ptr = b_.CreateGEP(b_.getInt8Ty(), wsBase_, slotOffset_.at(key));
  v.shape = shape;
  v.strides.assign(cap.size(), nullptr);
  llvm::Value* stride = b_.getInt64(1);
  for (size_t d = cap.size(); d-- > 0;) {
    v.strides[d] = stride;
    stride = b_.CreateMul(stride, cap[d]);
  }
  return v;
}

Lowering::LoopExit Lowering::loopWithPhis(
    const char* name, const char* indexName, llvm::Value* start, llvm::Value* step,
    const std::vector<llvm::Value*>& init, const char* carriedName,
    const std::function<llvm::Value*(llvm::Value*, const LoopPhis&)>& cond,
    const std::function<std::vector<llvm::Value*>(llvm::Value*, const LoopPhis&)>& body) {
  std::string n = name;
  llvm::BasicBlock* pre = b_.GetInsertBlock();
  auto* header = llvm::BasicBlock::Create(c_, n, fn_);
  auto* loopBody = llvm::BasicBlock::Create(c_, n + ".body", fn_);
  auto* exit = llvm::BasicBlock::Create(c_, n + ".done", fn_);
  b_.CreateBr(header);
  b_.SetInsertPoint(header);
  llvm::PHINode* i = b_.CreatePHI(start->getType(), 2, indexName);
  i->addIncoming(start, pre);
  LoopPhis carried;
  for (llvm::Value* v : init) {
    carried.push_back(b_.CreatePHI(v->getType(), 2, carriedName));
    carried.back()->addIncoming(v, pre);
  }
  b_.CreateCondBr(cond(i, carried), loopBody, exit);
  b_.SetInsertPoint(loopBody);
  std::vector<llvm::Value*> next = body(i, carried);
  llvm::BasicBlock* latch = b_.GetInsertBlock();
  i->addIncoming(b_.CreateAdd(i, step), latch);
  for (size_t k = 0; k < carried.size(); ++k) carried[k]->addIncoming(next[k], latch);
  b_.CreateBr(header);
  b_.SetInsertPoint(exit);
  return {i, carried};
}

void Lowering::loop(llvm::Value* start, llvm::Value* end, llvm::Value* step,
                    const std::function<void(llvm::Value*)>& body) {
  loopWithPhis(
      "loop", "i", start, step, {}, "", [&](llvm::Value* i, const LoopPhis&) { return b_.CreateICmpULT(i, end); },
      [&](llvm::Value* i, const LoopPhis&) {
        body(i);
        return std::vector<llvm::Value*>{};
      });
}

std::vector<llvm::Value*> Lowering::unflatten(llvm::Value* flat, const std::vector<llvm::Value*>& shape) {
  std::vector<llvm::Value*> idx(shape.size());
  llvm::Value* rest = flat;
  for (size_t d = shape.size(); d-- > 0;) {
    if (d == 0) {
      idx[d] = rest;
      break;
    }
    idx[d] = b_.CreateURem(rest, shape[d]);
    rest = b_.CreateUDiv(rest, shape[d]);
  }
  return idx;
}

void Lowering::forEachIndex(llvm::Value* n, const std::function<void(llvm::Value*)>& body, bool barrier) {
  loop(hooks_->tileLinear(b_), n, hooks_->groupTiles(b_), body);
  if (barrier) hooks_->barrier(b_);
}

void Lowering::forEachElement(const std::vector<llvm::Value*>& shape,
                              const std::function<void(const std::vector<llvm::Value*>&)>& body) {
  llvm::Value* n = b_.getInt64(1);
  for (llvm::Value* s : shape) n = b_.CreateMul(n, s);
  forEachIndex(n, [&](llvm::Value* e) { body(unflatten(e, shape)); });
}

llvm::Value* Lowering::foldLine(llvm::Value* len, llvm::Value* init,
                                const std::function<llvm::Value*(llvm::Value*, llvm::Value*)>& step) {
  return loopWithPhis(
             "line", "j", b_.getInt64(0), b_.getInt64(1), {init}, "acc",
             [&](llvm::Value* j, const LoopPhis&) { return b_.CreateICmpULT(j, len); },
             [&](llvm::Value* j, const LoopPhis& acc) { return std::vector<llvm::Value*>{step(acc[0], j)}; })
      .carried[0];
}

void Lowering::copyTile(View& dst, const View& src, ir::Type elem) {
  dst.shape = src.shape;
  View s = src;
  forEachElement(src.shape,
                 [&](const std::vector<llvm::Value*>& idx) { storeElem(dst, idx, loadElem(s, idx, elem), elem); });
}

bool Lowering::carryTileInto(const ir::Value* result, const ir::Value* value, View* out) {
  View* src = view(value);
  if (!src) return false;
  View dst = slotView(result, src->shape);
  if (src->ptr != dst.ptr || src->splat) {
    hooks_->barrier(b_);  // every tile is done reading the slot's previous contents
    copyTile(dst, *src, value->type->elem);
  }
  *out = dst;
  return true;
}

// ------------------------------------------------------------------------------- ops

bool Lowering::lowerTileOp(ir::Operation& op) {
  if (regFrags_) {
    bool regs = false;
    for (auto& r : op.results) regs |= inRegisters(r.get());
    for (ir::Value* v : op.operands) regs |= inRegisters(v);
    if (regs) return lowerFragmentOp(op);
  }
  switch (op.id) {
    case OpId::TileLoad: {
      View* src = view(op.operand(0));
      if (!src) return fail(op, "tile.load needs a view operand");
      View dst = slotView(op.result(), src->shape);
      copyTile(dst, *src, op.result()->type->elem);
      views_[op.result()] = dst;
      return true;
    }
    case OpId::TileStore: {
      View t = *view(op.operand(0));
      View dst = *view(op.operand(1));
      std::vector<llvm::Value*> shape = t.shape;
      for (size_t d = 0; d < shape.size() && d < dst.shape.size(); ++d)
        shape[d] = b_.CreateSelect(b_.CreateICmpULT(shape[d], dst.shape[d]), shape[d], dst.shape[d]);
      ir::Type elem = op.operand(0)->type->elem;
      forEachElement(shape,
                     [&](const std::vector<llvm::Value*>& idx) { storeElem(dst, idx, loadElem(t, idx, elem), elem); });
      return true;
    }
    case OpId::TileBroadcast: {
      ir::Type rt = op.result()->type;
      bool ok = true;
      std::vector<llvm::Value*> cap = capacity(rt, &ok);
      if (!ok) return fail(op, "a broadcast to an extent no tensor parameter binds");
      View r;
      r.elem = storageType(rt->elem);
      r.shape = cap;
      r.strides.assign(cap.size(), b_.getInt64(0));
      if (!isTileValue(op.operand(0)->type)) {
        r.splat = get(op.operand(0));
      } else {
        // numpy rules: the operand's extents line up with the trailing ones; extents of 1 repeat.
        View a = *view(op.operand(0));
        r.ptr = a.ptr;
        r.splat = a.splat;
        r.elem = a.elem;
        r.packedBits = a.packedBits;
        r.elemOffset = a.elemOffset;
        r.name = a.name;
        size_t off = cap.size() - a.shape.size();
        const auto& ashape = op.operand(0)->type->shape;
        for (size_t i = 0; i < a.shape.size(); ++i) {
          bool repeat = ashape[i].isStatic() && ashape[i].size == 1 && !(rt->shape[off + i] == ashape[i]);
          if (!repeat) {
            r.shape[off + i] = a.shape[i];
            r.strides[off + i] = a.strides[i];
          }
        }
      }
      views_[op.result()] = r;
      return true;
    }
    case OpId::TileTranspose: {
      View r = *view(op.operand(0));
      std::swap(r.shape[0], r.shape[1]);
      std::swap(r.strides[0], r.strides[1]);
      views_[op.result()] = r;
      return true;
    }
    case OpId::TileReshape: {
      // Extents of 1 come and go; the others keep their run-time extent and stride, in order.
      View a = *view(op.operand(0));
      const auto& ashape = op.operand(0)->type->shape;
      View r = a;
      r.shape.clear();
      r.strides.clear();
      size_t next = 0;
      auto skipOnes = [&] {
        while (next < ashape.size() && ashape[next].isStatic() && ashape[next].size == 1) ++next;
      };
      for (const ir::Dim& d : op.result()->type->shape) {
        if (d.isStatic() && d.size == 1) {
          r.shape.push_back(b_.getInt64(1));
          r.strides.push_back(b_.getInt64(0));
          continue;
        }
        skipOnes();
        r.shape.push_back(a.shape[next]);
        r.strides.push_back(a.strides[next]);
        ++next;
      }
      views_[op.result()] = r;
      return true;
    }
    case OpId::TileIota: {
      ir::Type rt = op.result()->type;
      View dst = slotView(op.result(), {b_.getInt64(rt->shape[0].size)});
      llvm::Type* et = storageType(rt->elem);
      forEachElement(dst.shape, [&](const std::vector<llvm::Value*>& idx) {
        storeElem(dst, idx, b_.CreateIntCast(idx[0], et, true), rt->elem);
      });
      views_[op.result()] = dst;
      return true;
    }
    case OpId::TileDot:
    case OpId::TileMma: return lowerTileDot(op);
    case OpId::TileSoftmax: return lowerTileSoftmax(op);
    case OpId::TileReduce: return lowerTileReduce(op);
    default: break;
  }
  if (op.has(ir::T_Elementwise)) return lowerTileElementwise(op);
  return fail(op, "not supported on tile values by code generation yet");
}

// Elementwise ops apply the scalar lowering to each element: operands that are tile values
// are bound to their element for the duration of one element's code.
bool Lowering::lowerTileElementwise(ir::Operation& op) {
  std::vector<llvm::Value*> shape;
  for (ir::Value* v : op.operands) {
    if (!isTileValue(v->type)) continue;
    View* a = view(v);
    if (shape.empty()) {
      shape = a->shape;
      continue;
    }
    for (size_t d = 0; d < shape.size() && d < a->shape.size(); ++d)
      shape[d] = b_.CreateSelect(b_.CreateICmpULT(shape[d], a->shape[d]), shape[d], a->shape[d]);
  }
  View dst = slotView(op.result(), shape);
  ir::Type relem = op.result()->type->elem;
  bool ok = true;
  forEachElement(shape, [&](const std::vector<llvm::Value*>& idx) {
    for (ir::Value* v : op.operands)
      if (isTileValue(v->type)) set(v, loadElem(*view(v), idx, v->type->elem));
    // A stochastic rounding of a tile element draws from (group, element, how many such
    // roundings this tile has done): the same on every target, different at every execution.
    if (op.id == OpId::ArithConvert && op.strAttr(ir::AttrId::Round) == "stochastic") {
      llvm::Value* flat = b_.getInt64(0);
      for (size_t d = 0; d < idx.size(); ++d) flat = b_.CreateAdd(b_.CreateMul(flat, shape[d]), idx[d]);
      stochasticKey_ = b_.CreateXor(b_.CreateXor(flat, b_.CreateShl(hooks_->groupLinear(b_), 40)),
                                    b_.CreateShl(b_.CreateLoad(b_.getInt64Ty(), roundCounter()), 24));
    }
    // The scalar hook reads the types of the op's values through typeOf: the elements'.
    perElement_ = true;
    ok = lowerThroughTable(op);
    perElement_ = false;
    stochasticKey_ = nullptr;
    if (ok) storeElem(dst, idx, get(op.result()), relem);
  });
  for (ir::Value* v : op.operands)
    if (isTileValue(v->type)) vals_.erase(v);
  vals_.erase(op.result());
  if (!ok) return false;
  if (op.id == OpId::ArithConvert && op.strAttr(ir::AttrId::Round) == "stochastic") {
    llvm::Value* counter = roundCounter();
    b_.CreateStore(b_.CreateAdd(b_.CreateLoad(b_.getInt64Ty(), counter), b_.getInt64(1)), counter);
  }
  views_[op.result()] = dst;
  return true;
}

// The tile's count of stochastic tile conversions: one i64 in the entry block, per tile (per
// GPU thread; per fiber on the CPU, where tile values make every kernel run tile by tile).
llvm::Value* Lowering::roundCounter() {
  if (!tileRoundCounter_) {
    llvm::IRBuilder<> entry(&fn_->getEntryBlock(), fn_->getEntryBlock().begin());
    tileRoundCounter_ = entry.CreateAlloca(b_.getInt64Ty(), nullptr, "round.counter");
    entry.CreateStore(b_.getInt64(0), tileRoundCounter_);
  }
  return tileRoundCounter_;
}

// C[r, c] = (acc[r, c] or 0) + sum over k in order of A[r, k] * B[k, c], in the result's element
// type (f32 for narrow inputs), multiply and add rounded separately on every target. Each tile
// computes blocks of R x R outputs at a time (block b on tile b % group size), so one k step
// loads R elements of A and R of B for R * R products; every output's sum is still sequential
// in k, so the bits do not depend on the blocking. Rows and columns past the edge are computed
// on clamped indices and not stored.
bool Lowering::lowerTileDot(ir::Operation& op) {
  constexpr unsigned R = 4;
  View a = *view(op.operand(0)), bm = *view(op.operand(1));
  if (op.hasAttr(ir::AttrId::TransposeB)) {  // b is [N, K]: read it through its transpose
    std::swap(bm.shape[0], bm.shape[1]);
    std::swap(bm.strides[0], bm.strides[1]);
  }
  View* acc = op.numOperands() > 2 ? view(op.operand(2)) : nullptr;
  ir::Type relem = op.result()->type->elem;
  llvm::Type* ct = scalarType(relem);
  ir::Type aelem = op.operand(0)->type->elem, belem = op.operand(1)->type->elem;
  if (!ct || !scalarType(aelem) || !scalarType(belem))
    return fail(op, "tile products of " + ir::printType(aelem) + " are not supported by code generation yet");
  llvm::Value* rows = a.shape[0];
  llvm::Value* cols = bm.shape[1];
  llvm::Value* kext = b_.CreateSelect(b_.CreateICmpULT(a.shape[1], bm.shape[0]), a.shape[1], bm.shape[0]);
  View dst = slotView(op.result(), {rows, cols});
  bool isF = ct->isFloatingPointTy();
  // Operands into the result's type: fp8/fp6/fp4 codes are decoded and scales applied, like
  // every other conversion (convertScalar).
  auto widen = [&](llvm::Value* v, ir::Type from) -> llvm::Value* {
    if (v->getType() == ct && from == relem) return v;
    return convertScalar(v, from, relem, "", &op);
  };
  auto ceilDiv = [&](llvm::Value* x) { return b_.CreateUDiv(b_.CreateAdd(x, b_.getInt64(R - 1)), b_.getInt64(R)); };
  llvm::Value* colBlocks = ceilDiv(cols);
  llvm::Value* blocks = b_.CreateMul(ceilDiv(rows), colBlocks);
  // An empty side leaves nothing to compute (and nothing to clamp to).
  blocks = b_.CreateSelect(b_.CreateOr(b_.CreateICmpEQ(rows, b_.getInt64(0)), b_.CreateICmpEQ(cols, b_.getInt64(0))),
                           b_.getInt64(0), blocks);
  forEachIndex(blocks, [&](llvm::Value* blk) {
    llvm::Value* r0 = b_.CreateMul(b_.CreateUDiv(blk, colBlocks), b_.getInt64(R));
    llvm::Value* c0 = b_.CreateMul(b_.CreateURem(blk, colBlocks), b_.getInt64(R));
    std::array<llvm::Value*, R> ri, cj, rIn, cIn;
    for (unsigned i = 0; i < R; ++i) {
      llvm::Value* r = b_.CreateAdd(r0, b_.getInt64(i));
      llvm::Value* c = b_.CreateAdd(c0, b_.getInt64(i));
      rIn[i] = b_.CreateICmpULT(r, rows);
      cIn[i] = b_.CreateICmpULT(c, cols);
      ri[i] = b_.CreateSelect(rIn[i], r, b_.CreateSub(rows, b_.getInt64(1)));
      cj[i] = b_.CreateSelect(cIn[i], c, b_.CreateSub(cols, b_.getInt64(1)));
    }
    std::array<llvm::Value*, R * R> init;
    for (unsigned i = 0; i < R; ++i)
      for (unsigned j = 0; j < R; ++j)
        init[i * R + j] = acc ? widen(loadElem(*acc, {ri[i], cj[j]}, relem), relem)
                              : (isF ? llvm::ConstantFP::get(ct, 0.0) : llvm::ConstantInt::get(ct, 0));
    // k runs over the contraction; the R x R sums are carried.
    auto dotK = loopWithPhis(
        "dot.k", "k", b_.getInt64(0), b_.getInt64(1), std::vector<llvm::Value*>(init.begin(), init.end()), "sum",
        [&](llvm::Value* k, const LoopPhis&) { return b_.CreateICmpULT(k, kext); },
        [&](llvm::Value* k, const LoopPhis& sum) {
          std::array<llvm::Value*, R> x, y;
          for (unsigned i = 0; i < R; ++i) {
            x[i] = widen(loadElem(a, {ri[i], k}, aelem), aelem);
            y[i] = widen(loadElem(bm, {k, cj[i]}, belem), belem);
          }
          std::vector<llvm::Value*> next(R * R);
          for (unsigned i = 0; i < R; ++i)
            for (unsigned j = 0; j < R; ++j) {
              llvm::Value* p = isF ? b_.CreateFMul(x[i], y[j]) : b_.CreateMul(x[i], y[j]);
              next[i * R + j] = isF ? b_.CreateFAdd(sum[i * R + j], p) : b_.CreateAdd(sum[i * R + j], p);
            }
          return next;
        });
    const LoopPhis& sum = dotK.carried;
    for (unsigned i = 0; i < R; ++i)
      for (unsigned j = 0; j < R; ++j) {
        auto* store = llvm::BasicBlock::Create(c_, "dot.store", fn_);
        auto* next = llvm::BasicBlock::Create(c_, "dot.next", fn_);
        b_.CreateCondBr(b_.CreateAnd(rIn[i], cIn[j]), store, next);
        b_.SetInsertPoint(store);
        storeElem(dst, {ri[i], cj[j]}, sum[i * R + j], relem);
        b_.CreateBr(next);
        b_.SetInsertPoint(next);
      }
  });
  views_[op.result()] = dst;
  return true;
}

// Softmax along one axis: each line (a row for axis -1) is handled by one tile, in order:
// m = max, e_j = exp(x_j - m), s = sum e_j, y_j = e_j / s.
bool Lowering::lowerTileSoftmax(ir::Operation& op) {
  View x = *view(op.operand(0));
  ir::Type elem = op.result()->type->elem;
  llvm::Type* et = scalarType(elem);
  if (!et || !et->isFloatingPointTy()) return fail(op, "softmax of " + ir::printType(elem) + " is not supported yet");
  int64_t rank = static_cast<int64_t>(x.shape.size());
  int64_t axis = op.intAttr(ir::AttrId::Axis, -1);
  if (axis < 0) axis += rank;
  View dst = slotView(op.result(), x.shape);
  bool widen = et->isHalfTy() || et->isBFloatTy();
  llvm::Type* ct = widen ? b_.getFloatTy() : et;
  auto in = [&](llvm::Value* v) { return widen ? b_.CreateFPExt(v, ct) : v; };
  llvm::FunctionCallee expf = hooks_->mathFunction(out_, "exp", ct, 1);
  // Lines: every index of the other axis (one line for rank 1).
  llvm::Value* lines = rank == 2 ? x.shape[axis == 1 ? 0 : 1] : b_.getInt64(1);
  llvm::Value* len = x.shape[axis];
  auto at = [&](llvm::Value* line, llvm::Value* j) -> std::vector<llvm::Value*> {
    if (rank == 1) return {j};
    return axis == 1 ? std::vector<llvm::Value*>{line, j} : std::vector<llvm::Value*>{j, line};
  };
  // One sequential pass over a line: acc = f(acc, j).
  auto pass = [&](llvm::Value* init, const std::function<llvm::Value*(llvm::Value*, llvm::Value*)>& f) {
    return foldLine(len, init, f);
  };
  forEachIndex(lines, [&](llvm::Value* line) {
    llvm::Value* m = pass(llvm::ConstantFP::getInfinity(ct, true), [&](llvm::Value* acc, llvm::Value* j) {
      return floatMinMax(true, acc, in(loadElem(x, at(line, j), elem)));
    });
    llvm::Value* s = pass(llvm::ConstantFP::get(ct, 0.0), [&](llvm::Value* acc, llvm::Value* j) {
      llvm::Value* e = b_.CreateCall(expf, {b_.CreateFSub(in(loadElem(x, at(line, j), elem)), m)});
      return b_.CreateFAdd(acc, e);
    });
    pass(llvm::ConstantFP::get(ct, 0.0), [&](llvm::Value* acc, llvm::Value* j) {
      llvm::Value* e = b_.CreateCall(expf, {b_.CreateFSub(in(loadElem(x, at(line, j), elem)), m)});
      llvm::Value* y = b_.CreateFDiv(e, s);
      storeElem(dst, at(line, j), widen ? b_.CreateFPTrunc(y, et) : y, elem);
      return acc;
    });
  });
  views_[op.result()] = dst;
  return true;
}

// Sum/max/min along one axis, each line sequentially in index order. Reducing a rank-1 tile
// gives a scalar that every tile computes for itself.
bool Lowering::lowerTileReduce(ir::Operation& op) {
  View x = *view(op.operand(0));
  ir::Type elem = op.operand(0)->type->elem;
  llvm::Type* et = scalarType(elem);
  if (!et) return fail(op, "reductions of " + ir::printType(elem) + " are not supported yet");
  std::string kind = op.strAttr(ir::AttrId::Kind);
  int64_t rank = static_cast<int64_t>(x.shape.size());
  if (rank > 2) return fail(op, "reductions of tiles of rank above 2 are not supported yet");
  int64_t axis = op.intAttr(ir::AttrId::Axis, 0);
  if (axis < 0) axis += rank;
  bool isF = et->isFloatingPointTy();
  auto combine = [&](llvm::Value* a, llvm::Value* v) -> llvm::Value* {
    if (kind == "sum") return isF ? b_.CreateFAdd(a, v) : b_.CreateAdd(a, v);
    bool mx = kind == "max";
    if (isF) return floatMinMax(mx, a, v);
    llvm::Value* c = mx ? (isUnsigned(elem) ? b_.CreateICmpUGT(v, a) : b_.CreateICmpSGT(v, a))
                        : (isUnsigned(elem) ? b_.CreateICmpULT(v, a) : b_.CreateICmpSLT(v, a));
    return b_.CreateSelect(c, v, a);
  };
  auto identity = [&]() -> llvm::Value* {
    if (kind == "sum") return isF ? llvm::ConstantFP::get(et, 0.0) : llvm::ConstantInt::get(et, 0);
    bool mx = kind == "max";
    // NaN, the identity of maximumNumber/minimumNumber: a line of NaN alone gives NaN, as
    // reduce_max's tree does (-inf gave -inf).
    if (isF) return llvm::ConstantFP::getNaN(et);
    unsigned bits = et->getIntegerBitWidth();
    if (isUnsigned(elem))
      return mx ? llvm::ConstantInt::get(et, 0) : llvm::ConstantInt::get(et, llvm::APInt::getMaxValue(bits));
    return llvm::ConstantInt::get(et, mx ? llvm::APInt::getSignedMinValue(bits) : llvm::APInt::getSignedMaxValue(bits));
  };
  auto line = [&](llvm::Value* other) {
    return foldLine(x.shape[axis], identity(), [&](llvm::Value* acc, llvm::Value* j) {
      std::vector<llvm::Value*> idx = rank == 1   ? std::vector<llvm::Value*>{j}
                                      : axis == 1 ? std::vector<llvm::Value*>{other, j}
                                                  : std::vector<llvm::Value*>{j, other};
      return combine(acc, loadElem(x, idx, elem));
    });
  };
  if (rank == 1) {
    set(op.result(), line(nullptr));
    return true;
  }
  llvm::Value* lines = x.shape[axis == 1 ? 0 : 1];
  View dst = slotView(op.result(), {lines});
  forEachIndex(lines, [&](llvm::Value* i) { storeElem(dst, {i}, line(i), elem); });
  views_[op.result()] = dst;
  return true;
}

}  // namespace tessera::codegen::detail
