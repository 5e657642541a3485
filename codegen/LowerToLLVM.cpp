// Tile IR -> LLVM IR for one target. The same op-by-op lowering serves the GPU and the CPU:
// per-tile (SPMD) code whose ids, barriers, shuffles and shared memory come from DeviceHooks.
// Structured control flow becomes branches and phis; views become (pointer, shape, strides).
#include "codegen/LowerToLLVM.h"

#include <algorithm>

#include "codegen/Lowering.h"
#include "codegen/MiniFloat.h"
#include "llvm/IR/Intrinsics.h"
#include "llvm/IR/IntrinsicsNVPTX.h"
#include "llvm/IR/MDBuilder.h"

namespace tessera::codegen {

namespace detail {

using ir::OpId;


// ------------------------------------------------------------------------------- entries

bool usesGroupSync(ir::Operation& func) {
  bool sync = false;
  func.walk([&](ir::Operation* op) {
    sync |= op->has(ir::T_Barrier) || op->has(ir::T_WarpCollective) || op->id == OpId::AsyncCopy ||
            op->id == OpId::TileCoopSync || Lowering::isTileOp(*op);
  });
  return sync;
}

// Tiles each GPU thread of a kernel without a group shape runs. Running several back to back
// (consecutive global indices) lets LLVM's load/store vectorizer turn their unit-stride accesses
// into vector ones: 4 tiles, or 8 when the narrowest tensor element has 2 bytes or fewer, so
// f32 and f16 tensors move 16 bytes per access. Only kernels whose tiles cannot tell how they
// are mapped to hardware threads qualify: no group or warp ids, no shuffles, votes, barriers,
// shared memory or async copies (an allow-list of ops), and small bodies, since the body is
// emitted V + V times.
constexpr size_t kMaxCoarsenedOps = 256;

unsigned chooseGpuTilesPerThread(ir::Operation& func, const KernelInterface& k) {
  if (k.grouped) return 1;
  bool ok = true;
  size_t ops = 0;
  func.walk([&](ir::Operation* op) {
    ++ops;
    if (op == &func) return;
    bool allowed = (op->id >= OpId::ArithConstant && op->id <= OpId::ArithConvert) ||
                   (op->id >= OpId::MathExp && op->id <= OpId::MathFma);
    switch (op->id) {
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
    ok &= allowed;
  });
  if (!ok || ops > kMaxCoarsenedOps) return 1;
  unsigned narrowest = 64;  // bits
  for (auto& arg : func.body().args)
    if (arg->type->kind == ir::TypeKind::Tensor)
      narrowest = std::min(narrowest, ir::scalarBits(ir::baseScalar(arg->type->elem)));
  if (narrowest < 8) return 1;  // packed elements (int4, fp4, fp6) are not vector-accessed
  return narrowest <= 16 ? 8 : 4;
}

KernelShape shapeOf(const KernelInterface& k) {
  KernelShape s;
  s.grouped = k.grouped;
  s.groupTiles = k.groupShape[0] * k.groupShape[1] * k.groupShape[2];
  return s;
}

void Lowering::bindParams(ir::Operation& func, const std::vector<llvm::Value*>& tensorBlocks,
                          const std::vector<llvm::Value*>& scalars) {
  auto* kt = kernelTensorType(c_);
  size_t ti = 0, si = 0;
  scopes_.clear();
  if (tensorBlocks.size() > 1) {
    llvm::MDBuilder mdb(c_);
    llvm::MDNode* domain = mdb.createAnonymousAliasScopeDomain(func.funcName());
    for (auto& arg : func.body().args)
      if (arg->type->kind == ir::TypeKind::Tensor) scopes_.push_back(mdb.createAnonymousAliasScope(domain, arg->nameHint));
  }
  for (auto& arg : func.body().args) {
    ir::Type t = arg->type;
    if (t->kind == ir::TypeKind::Tensor) {
      View v;
      v.root = static_cast<int>(ti);
      v.name = "tensor '" + arg->nameHint + "'";
      llvm::Value* block = tensorBlocks[ti++];  // pointer to a tessera_kernel_tensor
      v.elem = storageType(t->elem);
      v.packedBits = packedBitsOf(t->elem);
      llvm::Value* data = b_.CreateLoad(b_.getPtrTy(), b_.CreateStructGEP(kt, block, 0), arg->nameHint + ".data");
      if (hooks_->isGpu()) data = b_.CreateAddrSpaceCast(data, b_.getPtrTy(1));
      v.ptr = data;
      for (size_t d = 0; d < t->shape.size(); ++d) {
        v.shape.push_back(b_.CreateLoad(
            b_.getInt64Ty(), b_.CreateGEP(kt, block, {b_.getInt32(0), b_.getInt32(1), b_.getInt32(d)})));
        v.strides.push_back(b_.CreateLoad(
            b_.getInt64Ty(), b_.CreateGEP(kt, block, {b_.getInt32(0), b_.getInt32(2), b_.getInt32(d)})));
      }
      views_[arg.get()] = v;
    } else {
      set(arg.get(), scalars[si++]);
    }
  }
}

bool Lowering::gpuEntry(ir::Operation& func, KernelInterface& k) {
  auto* kt = kernelTensorType(c_);
  std::vector<llvm::Type*> params;
  for (auto& arg : func.body().args)
    params.push_back(arg->type->kind == ir::TypeKind::Tensor ? static_cast<llvm::Type*>(b_.getPtrTy())
                                                             : scalarType(arg->type));
  params.push_back(b_.getInt64Ty());  // launch_tiles
  params.push_back(b_.getPtrTy());    // workspace
  params.push_back(b_.getInt64Ty());  // workspace_group_bytes
  auto* fnTy = llvm::FunctionType::get(b_.getVoidTy(), params, false);
  fn_ = llvm::Function::Create(fnTy, llvm::GlobalValue::ExternalLinkage, k.name, out_);
  fn_->setCallingConv(llvm::CallingConv::PTX_Kernel);
  // Tensor blocks travel by value in the parameter space, as clang passes CUDA structs.
  unsigned i = 0;
  for (auto& arg : func.body().args) {
    if (arg->type->kind == ir::TypeKind::Tensor) {
      fn_->addParamAttr(i, llvm::Attribute::getWithByValType(c_, kt));
      fn_->addParamAttr(i, llvm::Attribute::getWithAlignment(c_, llvm::Align(8)));
    }
    fn_->getArg(i)->setName(arg->nameHint);
    ++i;
  }
  fn_->getArg(static_cast<unsigned>(params.size() - 3))->setName("launch_tiles");
  fn_->getArg(static_cast<unsigned>(params.size() - 2))->setName("workspace_base");
  fn_->getArg(static_cast<unsigned>(params.size() - 1))->setName("workspace_group_bytes");
  auto* md = out_.getOrInsertNamedMetadata("nvvm.annotations");
  auto annotate = [&](const char* key, unsigned v) {
    md->addOperand(llvm::MDNode::get(c_, {llvm::ValueAsMetadata::get(fn_), llvm::MDString::get(c_, key),
                                          llvm::ValueAsMetadata::get(b_.getInt32(v))}));
  };
  annotate("kernel", 1);
  if (k.grouped) {
    annotate("maxntidx", k.groupShape[0]);
    annotate("maxntidy", k.groupShape[1]);
    annotate("maxntidz", k.groupShape[2]);
  }

  hooks_ = makeGpuHooks(shapeOf(k));
  auto* entry = llvm::BasicBlock::Create(c_, "entry", fn_);
  b_.SetInsertPoint(entry);
  std::vector<llvm::Value*> tensors, scalars;
  i = 0;
  for (auto& arg : func.body().args) {
    (arg->type->kind == ir::TypeKind::Tensor ? tensors : scalars).push_back(fn_->getArg(i));
    ++i;
  }
  bindParams(func, tensors, scalars);
  llvm::Value* ws = b_.CreateAddrSpaceCast(fn_->getArg(static_cast<unsigned>(params.size() - 2)), b_.getPtrTy(1));
  wsBase_ = b_.CreateGEP(b_.getInt8Ty(), ws,
                         b_.CreateMul(hooks_->groupLinear(b_), fn_->getArg(static_cast<unsigned>(params.size() - 1))),
                         "workspace");
  bindSymbols(func, k);
  if (!planRegisterFragments(func, k) || !planWorkspace(func, k)) return false;
  if (unsigned tiles = chooseGpuTilesPerThread(func, k); tiles > 1) {
    if (!gpuTilesPerThread(func, k, fn_->getArg(static_cast<unsigned>(params.size() - 3)), tiles)) return false;
    k.gpuEntry = k.name;
    k.gpuTilesPerThread = tiles;
    return true;
  }
  if (!k.grouped) {
    // Ungrouped launches round up to whole hardware groups: tiles past the launch do nothing.
    llvm::Value* launchTiles = fn_->getArg(static_cast<unsigned>(params.size() - 3));
    auto* body = llvm::BasicBlock::Create(c_, "body", fn_);
    auto* done = llvm::BasicBlock::Create(c_, "past_launch", fn_);
    b_.CreateCondBr(b_.CreateICmpULT(hooks_->globalLinear(b_), launchTiles), body, done);
    b_.SetInsertPoint(done);
    b_.CreateRetVoid();
    b_.SetInsertPoint(body);
  }
  ir::Operation* term = nullptr;
  if (!lowerBlock(func.body(), &term)) return false;
  b_.CreateRetVoid();
  k.gpuEntry = k.name;
  return true;
}

// The body of a kernel without a group shape whose threads run V tiles each: hardware group g of
// T threads owns tiles [g*T*V, (g+1)*T*V). A uniform test per group picks one of two forms:
//  - fast: the group's tiles are all in the launch (and inside the rank-1 tensors sized like the
//    launch), every tensor's data is aligned to V elements (at most 16 bytes) and its innermost
//    stride is 1. Thread t runs tiles g*T*V + t*V + j, j = 0..V-1, back to back, with the
//    innermost strides known to be 1, the alignment asserted (llvm.assume) and the bounds
//    checks `tile < n` folded, so consecutive accesses merge into 16-byte vector accesses.
//  - otherwise: thread t runs tiles g*T*V + j*T + t (coalesced scalar accesses), each under its
//    own `tile < launch_tiles` guard.
bool Lowering::gpuTilesPerThread(ir::Operation& func, KernelInterface& k, llvm::Value* launchTiles, unsigned tiles) {
  auto* i64 = b_.getInt64Ty();
  llvm::Value* threads = hooks_->groupTiles(b_);
  llvm::Value* tid = hooks_->threadInGroup(b_);
  llvm::Value* groupSpan = b_.CreateMul(threads, b_.getInt64(tiles), "group.tiles", true, true);
  llvm::Value* first = b_.CreateMul(hooks_->groupLinear(b_), groupSpan, "group.first", true, true);
  llvm::Value* end = b_.CreateAdd(first, groupSpan, "group.end", true, true);
  llvm::Value* fast = b_.CreateICmpULE(end, launchTiles);

  // The launch is sized by the first mut tensor; rank-1 tensors whose extent is the same symbol
  // as its single dimension have that many elements under the default launch.
  int launchSymbol = -1;
  for (const KernelParam& p : k.params)
    if (p.isTensor && p.isMut) {
      if (p.extents.size() == 1 && p.extents[0].kind == Extent::Symbol) launchSymbol = p.extents[0].symbol;
      break;
    }
  std::vector<llvm::Value*> bounds = {launchTiles};
  std::vector<std::pair<View*, unsigned>> tensors;  // view, alignment asserted in the fast path
  size_t pi = 0;
  for (auto& arg : func.body().args) {
    const KernelParam& p = k.params[pi++];
    if (arg->type->kind != ir::TypeKind::Tensor) continue;
    View& v = views_[arg.get()];
    if (v.strides.empty()) continue;  // rank 0
    unsigned bytes = v.elem ? v.elem->getPrimitiveSizeInBits() / 8 : 0;
    unsigned align = std::min(16u, tiles * bytes);
    if (align & (align - 1)) align = 1;
    if (align > 1)
      fast = b_.CreateAnd(fast, b_.CreateICmpEQ(b_.CreateAnd(b_.CreatePtrToInt(v.ptr, i64), b_.getInt64(align - 1)),
                                                b_.getInt64(0)));
    fast = b_.CreateAnd(fast, b_.CreateICmpEQ(v.strides.back(), b_.getInt64(1)));
    if (launchSymbol >= 0 && p.extents.size() == 1 && p.extents[0].kind == Extent::Symbol &&
        p.extents[0].symbol == launchSymbol) {
      fast = b_.CreateAnd(fast, b_.CreateICmpULE(end, v.shape[0]));
      bounds.push_back(v.shape[0]);
    }
    tensors.push_back({&v, align});
  }
  auto* fastBB = llvm::BasicBlock::Create(c_, "tiles.vector", fn_);
  auto* slowBB = llvm::BasicBlock::Create(c_, "tiles.scalar", fn_);
  llvm::BranchInst* pick = b_.CreateCondBr(fast, fastBB, slowBB);
  KernelShape shape = shapeOf(k);
  ir::Operation* term = nullptr;

  b_.SetInsertPoint(fastBB);
  std::vector<llvm::Value*> strides;
  for (auto& [v, align] : tensors) {
    if (align > 1)
      b_.CreateAssumption(b_.getTrue(), {llvm::OperandBundleDef("align", std::vector<llvm::Value*>{
                                                                             v->ptr, b_.getInt64(align)})});
    strides.push_back(v->strides.back());
    v->strides.back() = b_.getInt64(1);
  }
  llvm::Value* base = b_.CreateAdd(first, b_.CreateMul(tid, b_.getInt64(tiles), "", true, true), "tile.first", true, true);
  for (unsigned j = 0; j < tiles; ++j) {
    llvm::Value* t = j ? b_.CreateAdd(base, b_.getInt64(j), "tile", true, true) : base;
    hooks_ = makeGpuHooks(shape, t);
    facts_.clear();
    for (llvm::Value* n : bounds) facts_.push_back({t, n});
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
  for (size_t i = 0; i < tensors.size(); ++i) tensors[i].first->strides.back() = strides[i];

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

bool Lowering::cpuEntry(ir::Operation& func, KernelInterface& k) {
  auto* fnTy = llvm::FunctionType::get(b_.getVoidTy(), {b_.getPtrTy(), b_.getPtrTy()}, false);
  std::string name = k.name + "_cpu";
  fn_ = llvm::Function::Create(fnTy, llvm::GlobalValue::InternalLinkage, name, out_);
  llvm::Value* args = fn_->getArg(0);
  llvm::Value* ctx = fn_->getArg(1);
  args->setName("args");
  ctx->setName("ctx");
  auto* entry = llvm::BasicBlock::Create(c_, "entry", fn_);
  b_.SetInsertPoint(entry);

  std::vector<llvm::Value*> tensors, scalars;
  unsigned i = 0;
  for (auto& arg : func.body().args) {
    llvm::Value* slot = b_.CreateLoad(b_.getPtrTy(), b_.CreateConstGEP1_32(b_.getPtrTy(), args, i));
    if (arg->type->kind == ir::TypeKind::Tensor) tensors.push_back(slot);
    else scalars.push_back(b_.CreateLoad(scalarType(arg->type), slot, arg->nameHint));
    ++i;
  }
  llvm::Value* launchTiles =
      b_.CreateLoad(b_.getInt64Ty(), b_.CreateLoad(b_.getPtrTy(), b_.CreateConstGEP1_32(b_.getPtrTy(), args, i)));

  bool perTile = usesGroupSync(func);
  k.cpuSync = perTile;
  k.cpuPerGroup = !perTile;
  if (perTile) {
    // Barriers and warp operations: the runtime runs each tile as a fiber and calls us per tile.
    hooks_ = makeCpuHooks(shapeOf(k), ctx, nullptr);
    bindParams(func, tensors, scalars);
    auto* ctxTy = cpuCtxType(c_);
    wsBase_ = b_.CreateLoad(b_.getPtrTy(), b_.CreateStructGEP(ctxTy, ctx, 14), "workspace");
    bindSymbols(func, k);
    if (!planWorkspace(func, k)) return false;
    ir::Operation* term = nullptr;
    if (!lowerBlock(func.body(), &term)) return false;
    b_.CreateRetVoid();
  } else {
    // No synchronisation: one call per group runs its tiles in a loop LLVM can vectorise.
    // Parameters are read once, before the loop.
    hooks_ = makeCpuHooks(shapeOf(k), ctx, nullptr);
    bindParams(func, tensors, scalars);
    bindSymbols(func, k);
    auto* ctxTy = cpuCtxType(c_);
    llvm::Value* first = b_.CreateLoad(b_.getInt64Ty(), b_.CreateStructGEP(ctxTy, ctx, 8));
    llvm::Value* groupTiles =
        b_.CreateZExt(b_.CreateLoad(b_.getInt32Ty(), b_.CreateStructGEP(ctxTy, ctx, 3)), b_.getInt64Ty());
    llvm::Value* left = b_.CreateSub(launchTiles, first);
    llvm::Value* tiles = b_.CreateSelect(b_.CreateICmpULT(left, groupTiles), left, groupTiles);
    auto* header = llvm::BasicBlock::Create(c_, "tiles", fn_);
    auto* body = llvm::BasicBlock::Create(c_, "tile", fn_);
    auto* exit = llvm::BasicBlock::Create(c_, "done", fn_);
    llvm::BasicBlock* pre = b_.GetInsertBlock();
    b_.CreateBr(header);
    b_.SetInsertPoint(header);
    llvm::PHINode* t = b_.CreatePHI(b_.getInt64Ty(), 2, "t");
    t->addIncoming(b_.getInt64(0), pre);
    b_.CreateCondBr(b_.CreateICmpULT(t, tiles), body, exit);
    b_.SetInsertPoint(body);
    hooks_ = makeCpuHooks(shapeOf(k), ctx, t);
    ir::Operation* term = nullptr;
    if (!lowerBlock(func.body(), &term)) return false;
    t->addIncoming(b_.CreateAdd(t, b_.getInt64(1)), b_.GetInsertBlock());
    b_.CreateBr(header);
    b_.SetInsertPoint(exit);
    b_.CreateRetVoid();
  }
  k.cpuEntry = name;
  return true;
}

bool Lowering::kernel(ir::Operation& func, KernelInterface& k) {
  vals_.clear();
  views_.clear();
  if (!describeKernel(func, k, error_)) return false;
  return target_ == DeviceTarget::Gpu ? gpuEntry(func, k) : cpuEntry(func, k);
}

// ------------------------------------------------------------------------------- bodies

bool Lowering::lowerBlock(ir::Block& block, ir::Operation** terminator) {
  *terminator = nullptr;
  for (auto& op : block.ops) {
    if (op->has(ir::T_Terminator)) {
      *terminator = op.get();
      return true;
    }
    b_.SetCurrentDebugLocation(llvm::DebugLoc());
    if (!lowerOp(*op)) return false;
  }
  return true;
}

bool Lowering::lowerOp(ir::Operation& op) {
  // Every operand must have been lowered (an op this lowering does not support fails before
  // its users are reached, so this only guards against internal mistakes).
  for (ir::Value* v : op.operands)
    if (!vals_.count(v) && !views_.count(v) && !fragRegs_.count(v) && !deferred_.count(v))
      return fail(op, "internal error: an operand was not lowered");
  if (isTileOp(op)) return lowerTileOp(op);
  if (op.id == OpId::ArithSelect && ir::isView(op.result()->type)) {
    View a = *view(op.operand(1)), b = *view(op.operand(2));
    View r = a;
    r.ptr = b_.CreateSelect(get(op.operand(0)), a.ptr, b.ptr);
    if (a.root != b.root) r.root = -1;
    for (size_t d = 0; d < r.shape.size(); ++d) {
      r.shape[d] = b_.CreateSelect(get(op.operand(0)), a.shape[d], b.shape[d]);
      r.strides[d] = b_.CreateSelect(get(op.operand(0)), a.strides[d], b.strides[d]);
    }
    views_[op.result()] = r;
    return true;
  }
  switch (op.id) {
    case OpId::ArithConstant: {
      ir::Type t = op.result()->type;
      llvm::Type* lt = scalarType(t);
      if (!lt) return fail(op, "constants of type " + ir::printType(t) + " are not supported by code generation yet");
      const ir::Attribute* a = op.attr("value");
      set(op.result(), lt->isFloatingPointTy() ? llvm::ConstantFP::get(lt, a->f)
                                               : llvm::ConstantInt::get(lt, static_cast<uint64_t>(a->i), true));
      return true;
    }
    case OpId::ArithConvert: return lowerConvert(op);
    case OpId::TileLinearId: set(op.result(), hooks_->tileLinear(b_)); return true;
    case OpId::TileThreadId: set(op.result(), hooks_->globalLinear(b_)); return true;
    case OpId::TileLaneId: set(op.result(), hooks_->laneId(b_)); return true;
    case OpId::TileWarpId: set(op.result(), b_.CreateLShr(hooks_->tileLinear(b_), 5)); return true;
    case OpId::TileGroupId: set(op.result(), hooks_->groupLinear(b_)); return true;
    case OpId::TileGroupSize: set(op.result(), hooks_->groupTiles(b_)); return true;
    case OpId::TileNumGroups: set(op.result(), hooks_->numGroups(b_)); return true;
    case OpId::TileBarrier: hooks_->barrier(b_); return true;
    case OpId::TileShuffle: {
      std::string mode = op.strAttr("mode");
      int m = mode == "idx" ? 0 : mode == "up" ? 1 : mode == "down" ? 2 : 3;
      llvm::Value* v = get(op.operand(0));
      unsigned bits = v->getType()->getPrimitiveSizeInBits();
      if (bits != 32 && bits != 64) {
        // Narrow values travel widened to 32 bits.
        llvm::Type* orig = v->getType();
        llvm::Value* w = b_.CreateZExt(b_.CreateBitCast(v, b_.getIntNTy(bits)), b_.getInt32Ty());
        llvm::Value* r = hooks_->shuffle(b_, w, m, get(op.operand(1)));
        set(op.result(), b_.CreateBitCast(b_.CreateTrunc(r, b_.getIntNTy(bits)), orig));
        return true;
      }
      set(op.result(), hooks_->shuffle(b_, v, m, get(op.operand(1))));
      return true;
    }
    case OpId::TileCoopGroup: set(op.result(), b_.getInt64(op.intAttr("size", 1))); return true;
    case OpId::TileCoopSync:
      hooks_->partitionSync(b_, static_cast<unsigned>(op.operand(0)->type->count));
      return true;
    case OpId::TileCoopRank:
      set(op.result(), b_.CreateURem(hooks_->tileLinear(b_), b_.getInt64(op.operand(0)->type->count)));
      return true;
    case OpId::ScfFor:
    case OpId::TileRange: return lowerFor(op);
    case OpId::ScfIf: return lowerIf(op);
    case OpId::ScfWhile: return lowerWhile(op);
    case OpId::FuncCall: return fail(op, "calls must be inlined before code generation (run the `inline` pass)");
    default: break;
  }
  if (op.id >= OpId::MathExp && op.id <= OpId::MathFma) return lowerMath(op);
  if (op.id >= OpId::ArithAddI && op.id <= OpId::ArithSelect) return lowerArith(op);
  return lowerMemory(op);
}

bool Lowering::lowerArith(ir::Operation& op) {
  ir::Type t = op.operand(0)->type;
  for (ir::Value* v : op.operands)
    if (ir::isValueShaped(v->type) || ir::isView(v->type))
      return fail(op, "arithmetic on tile values is not supported by code generation yet");
  if (ir::isValueShaped(op.result()->type))
    return fail(op, "arithmetic on tile values is not supported by code generation yet");
  if (!scalarType(t)) return fail(op, "arithmetic on " + ir::printType(t) + " is not supported by code generation yet");
  llvm::Value* a = get(op.operand(0));
  llvm::Value* b = op.numOperands() > 1 ? get(op.operand(1)) : nullptr;
  llvm::Value* r = nullptr;
  switch (op.id) {
    case OpId::ArithAddI: r = b_.CreateAdd(a, b); break;
    case OpId::ArithSubI: r = b_.CreateSub(a, b); break;
    case OpId::ArithMulI: r = b_.CreateMul(a, b); break;
    case OpId::ArithDivSI:
    case OpId::ArithDivUI:
    case OpId::ArithRemSI:
    case OpId::ArithRemUI: r = totalDivision(op.id, a, b); break;
    case OpId::ArithAndI: r = b_.CreateAnd(a, b); break;
    case OpId::ArithOrI: r = b_.CreateOr(a, b); break;
    case OpId::ArithXOrI: r = b_.CreateXor(a, b); break;
    case OpId::ArithShLI:
    case OpId::ArithShRSI:
    case OpId::ArithShRUI: r = totalShift(op.id, a, b); break;
    case OpId::ArithMinSI: r = b_.CreateSelect(b_.CreateICmpSLT(a, b), a, b); break;
    case OpId::ArithMaxSI: r = b_.CreateSelect(b_.CreateICmpSGT(a, b), a, b); break;
    case OpId::ArithAddF: r = b_.CreateFAdd(a, b); break;
    case OpId::ArithSubF: r = b_.CreateFSub(a, b); break;
    case OpId::ArithMulF: r = b_.CreateFMul(a, b); break;
    case OpId::ArithDivF: r = b_.CreateFDiv(a, b); break;
    case OpId::ArithRemF: r = b_.CreateFRem(a, b); break;
    case OpId::ArithMinF: r = b_.CreateBinaryIntrinsic(llvm::Intrinsic::minnum, a, b); break;
    case OpId::ArithMaxF: r = b_.CreateBinaryIntrinsic(llvm::Intrinsic::maxnum, a, b); break;
    case OpId::ArithNegF: r = b_.CreateFNeg(a); break;
    case OpId::ArithCmpI: {
      static const std::map<std::string, llvm::CmpInst::Predicate> preds = {
          {"eq", llvm::CmpInst::ICMP_EQ},   {"ne", llvm::CmpInst::ICMP_NE},   {"slt", llvm::CmpInst::ICMP_SLT},
          {"sle", llvm::CmpInst::ICMP_SLE}, {"sgt", llvm::CmpInst::ICMP_SGT}, {"sge", llvm::CmpInst::ICMP_SGE},
          {"ult", llvm::CmpInst::ICMP_ULT}, {"ule", llvm::CmpInst::ICMP_ULE}, {"ugt", llvm::CmpInst::ICMP_UGT},
          {"uge", llvm::CmpInst::ICMP_UGE}};
      llvm::CmpInst::Predicate pred = preds.at(op.strAttr("pred"));
      // A known fact `tile < bound` (both non-negative) decides `tile < bound` and its mirror
      // images, so the bounds check of a kernel running several tiles per thread folds away.
      for (auto& [tile, bound] : facts_) {
        using P = llvm::CmpInst;
        bool lt = a == tile && b == bound, gt = a == bound && b == tile;
        if ((lt && (pred == P::ICMP_SLT || pred == P::ICMP_ULT)) || (gt && (pred == P::ICMP_SGT || pred == P::ICMP_UGT)))
          r = b_.getTrue();
        if ((lt && (pred == P::ICMP_SGE || pred == P::ICMP_UGE)) || (gt && (pred == P::ICMP_SLE || pred == P::ICMP_ULE)))
          r = b_.getFalse();
      }
      if (!r) r = b_.CreateICmp(pred, a, b);
      break;
    }
    case OpId::ArithCmpF: {
      static const std::map<std::string, llvm::CmpInst::Predicate> preds = {
          {"oeq", llvm::CmpInst::FCMP_OEQ}, {"one", llvm::CmpInst::FCMP_ONE}, {"olt", llvm::CmpInst::FCMP_OLT},
          {"ole", llvm::CmpInst::FCMP_OLE}, {"ogt", llvm::CmpInst::FCMP_OGT}, {"oge", llvm::CmpInst::FCMP_OGE},
          {"ord", llvm::CmpInst::FCMP_ORD}, {"uno", llvm::CmpInst::FCMP_UNO}, {"ueq", llvm::CmpInst::FCMP_UEQ},
          {"une", llvm::CmpInst::FCMP_UNE}};
      r = b_.CreateFCmp(preds.at(op.strAttr("pred")), a, b);
      break;
    }
    case OpId::ArithSelect: r = b_.CreateSelect(a, b, get(op.operand(2))); break;
    default: return fail(op, "unexpected op");
  }
  // int4 lives sign-extended in 8 bits: integer results wrap at 4 bits.
  if (ir::isScalar(op.result()->type) && ir::baseScalar(op.result()->type) == ir::ScalarKind::I4 &&
      r->getType()->isIntegerTy(8))
    r = b_.CreateAShr(b_.CreateShl(r, 4), 4);
  set(op.result(), r);
  return true;
}

// ------------------------------------------------------------------------------- memory

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
  llvm::Value* phase = v.swizzle == 128 ? b_.CreateAnd(row, b_.getInt64(7))
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
    hooks_->boundsFault(b_, "the start of a slice of " + (src.name.empty() ? std::string("a view") : src.name) +
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

// Sum/max/min of a whole view in a fixed pairwise tree: a[i] op= a[i + s] for s = 1, 2, 4, ...
// over a private copy, so the result has the same bits on every target and run.
llvm::Value* Lowering::reduceTree(View& v, ir::Type elem, const std::string& kind) {
  llvm::Value* n = b_.getInt64(1);
  for (llvm::Value* s : v.shape) n = b_.CreateMul(n, s);
  llvm::Type* et = scalarType(elem);
  // Private scratch (local memory on the GPU): static views get it once in the entry block.
  llvm::Value* scratch;
  if (llvm::isa<llvm::ConstantInt>(n)) {
    llvm::IRBuilder<> entry(&fn_->getEntryBlock(), fn_->getEntryBlock().begin());
    scratch = entry.CreateAlloca(et, n, "reduce.scratch");
  } else {
    scratch = b_.CreateAlloca(et, n, "reduce.scratch");
  }
  View flat{scratch, et, {n}, {b_.getInt64(1)}};
  // Copy in (row-major).
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
  bool isF = et->isFloatingPointTy();
  llvm::Value* r;
  if (kind == "sum") r = isF ? b_.CreateFAdd(a0, a1) : b_.CreateAdd(a0, a1);
  else if (kind == "max")
    r = isF ? b_.CreateBinaryIntrinsic(llvm::Intrinsic::maxnum, a0, a1)
            : b_.CreateSelect(isUnsigned(elem) ? b_.CreateICmpUGT(a0, a1) : b_.CreateICmpSGT(a0, a1), a0, a1);
  else
    r = isF ? b_.CreateBinaryIntrinsic(llvm::Intrinsic::minnum, a0, a1)
            : b_.CreateSelect(isUnsigned(elem) ? b_.CreateICmpULT(a0, a1) : b_.CreateICmpSLT(a0, a1), a0, a1);
  storeElem(flat, {i}, r, elem);
  i->addIncoming(b_.CreateAdd(i, b_.CreateShl(s, 1)), b_.GetInsertBlock());
  b_.CreateBr(innerH);
  b_.SetInsertPoint(next);
  s->addIncoming(b_.CreateShl(s, 1), next);
  b_.CreateBr(outer);
  b_.SetInsertPoint(done);
  // n == 0 sums to zero.
  llvm::Value* result = loadElem(flat, {b_.getInt64(0)}, elem);
  llvm::Value* zero = isF ? llvm::ConstantFP::get(et, 0.0) : llvm::ConstantInt::get(et, 0);
  return b_.CreateSelect(b_.CreateICmpEQ(n, b_.getInt64(0)), zero, result);
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
      set(op.result(), v->shape[static_cast<size_t>(op.intAttr("axis", 0))]);
      return true;
    }
    case OpId::MemLoad: {
      View* v = view(op.operand(0));
      if (!v->elem) return fail(op, "loads of " + ir::printType(op.result()->type) + " are not supported yet");
      std::vector<llvm::Value*> idx = indices(1);
      set(op.result(), checkedAccess(*v, idx, scalarType(op.result()->type),
                                     [&] { return loadElem(*v, idx, op.result()->type); }));
      return true;
    }
    case OpId::MemStore: {
      View* v = view(op.operand(1));
      if (!v->elem) return fail(op, "stores of " + ir::printType(op.operand(0)->type) + " are not supported yet");
      std::vector<llvm::Value*> idx = indices(2);
      llvm::Value* value = get(op.operand(0));
      if (auto d = deferred_.find(op.operand(0)); d != deferred_.end()) {
        // Stochastic rounding keyed by the element stored to: (parameter, element offset).
        const ir::Operation* cvt = d->second;
        stochasticKey_ = b_.CreateXor(linearOffset(*v, idx), b_.getInt64(static_cast<uint64_t>(v->root + 1) << 56));
        value = convertScalar(get(cvt->operand(0)), cvt->operand(0)->type, cvt->result()->type, "stochastic", cvt);
        stochasticKey_ = nullptr;
        deferred_.erase(d);
      }
      checkedAccess(*v, idx, nullptr, [&]() -> llvm::Value* {
        storeElem(*v, idx, value, op.operand(0)->type);
        return nullptr;
      });
      return true;
    }
    case OpId::MemSlice: {
      View src = *view(op.operand(0));
      if (src.swizzle) return fail(op, "slices of swizzled shared buffers are not supported by code generation yet");
      View r = src;
      std::vector<llvm::Value*> at = indices(1);
      checkSliceStart(src, at);
      if (r.name.rfind("a view of ", 0) != 0) r.name = "a view of " + r.name;
      if (src.packedBits)
        r.elemOffset = linearOffset(src, at);  // packed: the slice starts at an element, not a byte
      else
        r.ptr = src.splat ? nullptr : address(src, at);
      // A slice that runs past the end of its source is clipped there (to nothing when it starts
      // past the end), so blocks at the edge of a tensor see only its elements.
      const ir::Attribute* sizes = op.attr("sizes");
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
      views_[op.result()] = r;
      return true;
    }
    case OpId::MemReduce: {
      View* v = view(op.operand(0));
      set(op.result(), reduceTree(*v, op.result()->type, op.strAttr("kind")));
      return true;
    }
    case OpId::SmemAlloc: {
      if (!op.hasAttr("offset"))
        return fail(op, "shared buffers must be placed by the smem-plan pass before code generation");
      ir::Type t = op.result()->type;
      View v;
      v.elem = storageType(t->elem);
      v.name = op.result()->nameHint.empty() ? std::string("a shared array") : "shared array '" + op.result()->nameHint + "'";
      v.packedBits = packedBitsOf(t->elem);
      if (!v.elem) return fail(op, "shared buffers of " + ir::printType(t->elem) + " are not supported yet");
      if (t->swizzle != ir::Swizzle::None) {
        v.swizzle = t->swizzle == ir::Swizzle::Xor128 ? 128 : t->swizzle == ir::Swizzle::Xor64 ? 64 : 32;
        v.rowBytes = t->shape.back().size * static_cast<int64_t>(v.elem->getPrimitiveSizeInBits() / 8);
        if (t->swizzle == ir::Swizzle::Auto || t->layout != ir::Layout::Row || v.rowBytes % v.swizzle != 0 ||
            v.elem->getPrimitiveSizeInBits() % 8 != 0)
          return fail(op, "this swizzled shared buffer (" + ir::printType(t) + ") is not supported by code generation");
      }
      v.ptr = b_.CreateConstGEP1_64(b_.getInt8Ty(), hooks_->sharedBase(b_), op.intAttr("offset", 0));
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
                           {b_.getInt32(static_cast<uint32_t>(op.intAttr("pending", 0)))});
      return true;
    default: break;
  }
  return fail(op, "not supported by code generation yet");
}

}  // namespace detail

bool lowerKernels(ir::Module& m, DeviceTarget target, llvm::Module& out, std::vector<KernelInterface>& kernels,
                  std::string& error, const LowerOptions& opts) {
  if (target == DeviceTarget::Cpu) defineCpuLibcalls(out);
  for (ir::Operation* f : m.funcs()) {
    if (!f->hasAttr("kernel")) continue;
    detail::Lowering l(m, target, out, error, opts.boundsCheck);
    KernelInterface k;
    k.boundsChecked = opts.boundsCheck;
    if (!l.kernel(*f, k)) {
      error = "kernel '" + f->funcName() + "': " + error;
      return false;
    }
    kernels.push_back(std::move(k));
  }
  return true;
}

}  // namespace tessera::codegen
