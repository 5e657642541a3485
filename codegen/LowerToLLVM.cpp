// Tile IR -> LLVM IR for one target. The same op-by-op lowering serves the GPU and the CPU:
// per-tile (SPMD) code whose ids, barriers, shuffles and shared memory come from DeviceHooks.
// Structured control flow becomes branches and phis; views become (pointer, shape, strides).
#include "codegen/LowerToLLVM.h"

#include <algorithm>
#include <iterator>

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
    // Memory-bound groups want occupancy more than registers: ask for enough groups per SM
    // for 768 threads, which caps ptxas at 80 registers a thread (it takes up to 255 for a
    // group of 256 otherwise, and then runs two groups per SM; at 64 the library's row kernels
    // spill).
    unsigned tiles = k.groupShape[0] * k.groupShape[1] * k.groupShape[2];
    if (isScalarBody(func) && tiles > 0 && tiles < 768) annotate("minctasm", (768 + tiles - 1) / tiles);
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
  if (!lowerBodyVersioned(func, k)) return false;
  k.gpuEntry = k.name;
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
  groupTiles_ = k.grouped ? int64_t(k.groupShape[0]) * k.groupShape[1] * k.groupShape[2] : 0;
  groupScratch_ = func.hasAttr("group_scratch") ? func.intAttr("group_scratch", 0) : -1;
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
    if (!vals_.count(v) && !views_.count(v) && !fragRegs_.count(v)) return fail(op, "internal error: an operand was not lowered");
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
  return lowerThroughTable(op);
}

bool Lowering::lowerThroughTable(ir::Operation& op) {
  using Hook = bool (Lowering::*)(ir::Operation&);
  static constexpr Hook kHooks[] = {
#define OP(ID, NAME, MINOPS, MAXOPS, MINRES, MAXRES, REGIONS, TRAITS, VERIFY, LOWER) &Lowering::lower##LOWER,
#include "ir/Ops.def"
  };
  static_assert(std::size(kHooks) == static_cast<size_t>(OpId::NumOps));
  return (this->*kHooks[static_cast<size_t>(op.id)])(op);
}

bool Lowering::lowerConstant(ir::Operation& op) {
  ir::Type t = op.result()->type;
  llvm::Type* lt = scalarType(t);
  if (!lt) return fail(op, "constants of type " + ir::printType(t) + " are not supported by code generation yet");
  const ir::Attribute* a = op.attr("value");
  set(op.result(), lt->isFloatingPointTy() ? llvm::ConstantFP::get(lt, a->f)
                                           : llvm::ConstantInt::get(lt, static_cast<uint64_t>(a->i), true));
  return true;
}

bool Lowering::lowerBitcast(ir::Operation& op) {
  llvm::Type* to = scalarType(op.result()->type);
  if (!to) return fail(op, "bitcasts to " + ir::printType(op.result()->type) + " are not supported yet");
  set(op.result(), b_.CreateBitCast(get(op.operand(0)), to));
  return true;
}

bool Lowering::lowerGroup(ir::Operation& op) {
  switch (op.id) {
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
    default: break;
  }
  return fail(op, "unexpected op");
}

bool Lowering::lowerCall(ir::Operation& op) {
  return fail(op, "calls must be inlined before code generation (run the `inline` pass)");
}

bool Lowering::lowerByParent(ir::Operation& op) {
  return fail(op, "internal error: lowered by the op that holds it, not on its own");
}

// The high half of a * b: mul.hi on the GPU (its instruction), the double-width product's top
// half elsewhere; the same value on both.
llvm::Value* Lowering::mulHigh(llvm::Value* a, llvm::Value* b, bool isUnsignedValue) {
  unsigned bits = a->getType()->getIntegerBitWidth();
  if (hooks_->isGpu() && (bits == 32 || bits == 64)) {
    llvm::Intrinsic::ID id = bits == 32 ? (isUnsignedValue ? llvm::Intrinsic::nvvm_mulhi_ui : llvm::Intrinsic::nvvm_mulhi_i)
                                        : (isUnsignedValue ? llvm::Intrinsic::nvvm_mulhi_ull : llvm::Intrinsic::nvvm_mulhi_ll);
    return b_.CreateIntrinsic(id, {}, {a, b});
  }
  llvm::Type* wide = b_.getIntNTy(2 * bits);
  auto ext = [&](llvm::Value* v) { return isUnsignedValue ? b_.CreateZExt(v, wide) : b_.CreateSExt(v, wide); };
  return b_.CreateTrunc(b_.CreateLShr(b_.CreateMul(ext(a), ext(b)), bits), a->getType());
}

bool Lowering::lowerArith(ir::Operation& op) {
  ir::Type t = typeOf(op.operand(0));
  for (ir::Value* v : op.operands)
    if (ir::isValueShaped(typeOf(v)) || ir::isView(typeOf(v)))
      return fail(op, "arithmetic on tile values is not supported by code generation yet");
  if (ir::isValueShaped(typeOf(op.result())))
    return fail(op, "arithmetic on tile values is not supported by code generation yet");
  if (!scalarType(t)) return fail(op, "arithmetic on " + ir::printType(t) + " is not supported by code generation yet");
  llvm::Value* a = get(op.operand(0));
  llvm::Value* b = op.numOperands() > 1 ? get(op.operand(1)) : nullptr;
  llvm::Value* r = nullptr;
  switch (op.id) {
    case OpId::ArithAddI: r = b_.CreateAdd(a, b); break;
    case OpId::ArithSubI: r = b_.CreateSub(a, b); break;
    case OpId::ArithMulI: r = b_.CreateMul(a, b); break;
    case OpId::ArithMulHi: r = mulHigh(a, b, isUnsigned(t)); break;
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
  set(op.result(), r);
  return true;
}

bool Lowering::lowerMath(ir::Operation& op) {
  ir::Type t = typeOf(op.result());
  if (ir::isValueShaped(t)) return fail(op, "math on tile values is not supported by code generation yet");
  llvm::Value* a = get(op.operand(0));
  llvm::Type* lt = a->getType();
  if (op.id == OpId::MathAbs && lt->isIntegerTy()) {
    set(op.result(), b_.CreateSelect(b_.CreateICmpSLT(a, llvm::ConstantInt::get(lt, 0)), b_.CreateNeg(a), a));
    return true;
  }
  // Half-precision math runs in f32 and rounds back, as CUDA's half functions do.
  bool widen = lt->isHalfTy() || lt->isBFloatTy();
  auto in = [&](llvm::Value* v) { return widen ? b_.CreateFPExt(v, b_.getFloatTy()) : v; };
  llvm::Type* ct = widen ? b_.getFloatTy() : lt;
  llvm::Value* x = in(a);
  auto unary = [&](llvm::Intrinsic::ID id) { return b_.CreateUnaryIntrinsic(id, x); };
  auto lib = [&](const char* name, std::vector<llvm::Value*> args) {
    return b_.CreateCall(hooks_->mathFunction(out_, name, ct, static_cast<unsigned>(args.size())), args);
  };
  llvm::Value* r = nullptr;
  switch (op.id) {
    case OpId::MathSqrt: r = unary(llvm::Intrinsic::sqrt); break;
    case OpId::MathRsqrt: r = b_.CreateFDiv(llvm::ConstantFP::get(ct, 1.0), unary(llvm::Intrinsic::sqrt)); break;
    case OpId::MathFloor: r = unary(llvm::Intrinsic::floor); break;
    case OpId::MathCeil: r = unary(llvm::Intrinsic::ceil); break;
    case OpId::MathAbs: r = unary(llvm::Intrinsic::fabs); break;
    case OpId::MathRelu: r = b_.CreateBinaryIntrinsic(llvm::Intrinsic::maxnum, x, llvm::ConstantFP::get(ct, 0.0)); break;
    case OpId::MathFma:
      r = b_.CreateIntrinsic(llvm::Intrinsic::fma, {ct}, {x, in(get(op.operand(1))), in(get(op.operand(2)))});
      break;
    case OpId::MathExp: r = lib("exp", {x}); break;
    case OpId::MathExp2: r = lib("exp2", {x}); break;
    case OpId::MathLog: r = lib("log", {x}); break;
    case OpId::MathLog2: r = lib("log2", {x}); break;
    case OpId::MathTanh: r = lib("tanh", {x}); break;
    case OpId::MathErf: r = lib("erf", {x}); break;
    case OpId::MathSin: r = lib("sin", {x}); break;
    case OpId::MathCos: r = lib("cos", {x}); break;
    case OpId::MathPow: r = lib("pow", {x, in(get(op.operand(1)))}); break;
    default: return fail(op, "unexpected op");
  }
  set(op.result(), widen ? b_.CreateFPTrunc(r, lt) : r);
  return true;
}

// Integer division and remainder are total (docs/language.md, "Integer semantics"): by zero the
// quotient has every bit set (-1, or the largest unsigned value) and the remainder is the
// dividend; MIN / -1 is MIN and MIN % -1 is 0. The divisor is replaced by 1 in those cases, so
// the hardware division never traps (x86 raises SIGFPE for both) and both targets agree.
llvm::Value* Lowering::totalDivision(ir::OpId id, llvm::Value* a, llvm::Value* b) {
  llvm::Type* t = a->getType();
  bool isSigned = id == OpId::ArithDivSI || id == OpId::ArithRemSI;
  bool isDiv = id == OpId::ArithDivSI || id == OpId::ArithDivUI;
  llvm::Value* zero = b_.CreateICmpEQ(b, llvm::ConstantInt::get(t, 0));
  llvm::Value* unsafe = zero;
  if (isSigned) {
    unsigned bits = t->getIntegerBitWidth();
    llvm::Value* overflow = b_.CreateAnd(b_.CreateICmpEQ(a, llvm::ConstantInt::get(t, llvm::APInt::getSignedMinValue(bits))),
                                         b_.CreateICmpEQ(b, llvm::ConstantInt::getSigned(t, -1)));
    unsafe = b_.CreateOr(zero, overflow);
  }
  llvm::Value* safe = b_.CreateSelect(unsafe, llvm::ConstantInt::get(t, 1), b);
  llvm::Value* r = isDiv ? (isSigned ? b_.CreateSDiv(a, safe) : b_.CreateUDiv(a, safe))
                         : (isSigned ? b_.CreateSRem(a, safe) : b_.CreateURem(a, safe));
  // MIN / 1 is MIN and MIN % 1 is 0 already; only division by zero needs its own result.
  return b_.CreateSelect(zero, isDiv ? llvm::Constant::getAllOnesValue(t) : a, r);
}

// Shifts by the bit width or more (or by a negative amount, read as unsigned) shift every bit
// out: 0 for << and unsigned >>, the sign fill (0 or -1) for signed >>, as the arithmetic on an
// unbounded integer would give. LLVM leaves such shifts undefined and x86 masks the amount.
llvm::Value* Lowering::totalShift(ir::OpId id, llvm::Value* a, llvm::Value* b) {
  llvm::Type* t = a->getType();
  unsigned bits = t->getIntegerBitWidth();
  llvm::Value* out = b_.CreateICmpUGE(b, llvm::ConstantInt::get(t, bits));
  llvm::Value* amount = b_.CreateSelect(out, llvm::ConstantInt::get(t, id == OpId::ArithShRSI ? bits - 1 : 0), b);
  if (id == OpId::ArithShRSI) return b_.CreateAShr(a, amount);
  llvm::Value* r = id == OpId::ArithShLI ? b_.CreateShl(a, amount) : b_.CreateLShr(a, amount);
  return b_.CreateSelect(out, llvm::ConstantInt::get(t, 0), r);
}

// Float -> integer conversions truncate toward zero and saturate at the target's range; NaN
// gives 0 (llvm.fpto[su]i.sat: cvt.rzi.sat on the GPU, the same on the CPU), where a plain
// fptosi would be undefined outside the range and differ between the targets.
llvm::Value* Lowering::floatToInt(llvm::Value* v, llvm::Type* to, bool isUnsignedResult) {
  if (to->isIntegerTy(1)) return b_.CreateFCmpUNE(v, llvm::ConstantFP::get(v->getType(), 0.0));
  return b_.CreateIntrinsic(isUnsignedResult ? llvm::Intrinsic::fptoui_sat : llvm::Intrinsic::fptosi_sat, {to, v->getType()},
                            {v});
}

bool Lowering::lowerConvert(ir::Operation& op) {
  ir::Type from = typeOf(op.operand(0)), to = typeOf(op.result());
  if (!ir::isScalar(from) || !ir::isScalar(to))
    return fail(op, "conversions of tile values are not supported by code generation yet");
  llvm::Type* ft = scalarType(from);
  llvm::Type* tt = scalarType(to);
  if (!ft || !tt)
    return fail(op, "conversion from " + ir::printType(from) + " to " + ir::printType(to) +
                        " is not supported by code generation yet (fp6/fp4)");
  std::string round = op.strAttr("round");
  if (round == "stochastic" || round == "toward_zero")
    return fail(op, "rounding '" + round + "' is not supported by code generation yet");
  llvm::Value* v = get(op.operand(0));
  // fp8 codes go through f32 in software (MiniFloat.cpp): the same bits on every target.
  ir::ScalarKind fk = ir::baseScalar(from), tk = ir::baseScalar(to);
  if (isSoftFloat8(fk) || isSoftFloat8(tk)) {
    if (isSoftFloat8(fk) && isSoftFloat8(tk) && fk == tk) {
      set(op.result(), v);
      return true;
    }
    llvm::Value* f = v;
    if (isSoftFloat8(fk)) {
      f = decodeFloat8(b_, out_, fk, v);
    } else if (ft->isFloatingPointTy()) {
      f = ft == b_.getFloatTy() ? v : ft->isDoubleTy() ? b_.CreateFPTrunc(v, b_.getFloatTy()) : b_.CreateFPExt(v, b_.getFloatTy());
    } else {
      f = isUnsigned(from) ? b_.CreateUIToFP(v, b_.getFloatTy()) : b_.CreateSIToFP(v, b_.getFloatTy());
    }
    llvm::Value* r;
    if (isSoftFloat8(tk)) {
      bool saturate = to->kind == ir::TypeKind::Num && to->saturate;
      r = encodeFloat8(b_, out_, tk, f, saturate);
    } else if (tt->isFloatingPointTy()) {
      r = tt == b_.getFloatTy() ? f : tt->isDoubleTy() ? b_.CreateFPExt(f, tt) : b_.CreateFPTrunc(f, tt);
    } else {
      r = floatToInt(f, tt, isUnsigned(to));
    }
    set(op.result(), r);
    return true;
  }
  bool fFloat = ft->isFloatingPointTy(), tFloat = tt->isFloatingPointTy();
  llvm::Value* r;
  // Where the tile index t is below 2^31 (see narrowed_): i32(t) widens back to t exactly.
  if (auto it = narrowed_.find(v); it != narrowed_.end() && tt->isIntegerTy(64)) {
    set(op.result(), it->second);
    return true;
  }
  bool isTile = false;
  for (auto& fact : facts_) isTile |= fact.first == v;
  if (isTile && tt->isIntegerTy(32)) {
    r = b_.CreateTrunc(v, tt);
    narrowed_[r] = v;
    narrowedUsed_ = true;
    set(op.result(), r);
    return true;
  }
  if (fFloat && tFloat) {
    // bf16 <-> f16 goes through f32, which holds both exactly (neither is wider than the other,
    // so LLVM has no single cast between them): one rounding, to nearest even.
    if ((ft->isHalfTy() && tt->isBFloatTy()) || (ft->isBFloatTy() && tt->isHalfTy()))
      r = b_.CreateFPTrunc(b_.CreateFPExt(v, b_.getFloatTy()), tt);
    else
      r = ft == tt ? v : ft->getPrimitiveSizeInBits() < tt->getPrimitiveSizeInBits() ? b_.CreateFPExt(v, tt)
                                                                                     : b_.CreateFPTrunc(v, tt);
  } else if (fFloat) {
    r = floatToInt(v, tt, isUnsigned(to));
  } else if (tFloat) {
    r = isUnsigned(from) ? b_.CreateUIToFP(v, tt) : b_.CreateSIToFP(v, tt);
  } else if (tt->isIntegerTy(1)) {
    r = b_.CreateICmpNE(v, llvm::ConstantInt::get(ft, 0));
  } else {
    r = b_.CreateIntCast(v, tt, !isUnsigned(from));
  }
  set(op.result(), r);
  return true;
}

// ------------------------------------------------------------------------------- control flow

bool Lowering::lowerFor(ir::Operation& op) {
  llvm::Value* lb = get(op.operand(0));
  llvm::Value* ub = get(op.operand(1));
  llvm::Value* step = get(op.operand(2));
  bool uns = isUnsigned(op.operand(0)->type);
  auto* cstep = llvm::dyn_cast<llvm::ConstantInt>(step);
  // Python range semantics. With a step of unknown sign the loop runs a trip count computed
  // once before it (a counted loop LLVM can unroll and pipeline):
  //   step > 0: max(0, ceil((ub - lb) / step)); step < 0: max(0, ceil((lb - ub) / -step)).
  llvm::Value* trips = nullptr;
  if (!uns && !(cstep && !cstep->isNegative())) {
    llvm::Type* t = step->getType();
    llvm::Value* zero = llvm::ConstantInt::get(t, 0);
    llvm::Value* one = llvm::ConstantInt::get(t, 1);
    llvm::Value* up = b_.CreateICmpSGT(step, zero);
    llvm::Value* dist = b_.CreateSelect(up, b_.CreateSub(ub, lb), b_.CreateSub(lb, ub));
    llvm::Value* mag = b_.CreateSelect(up, step, b_.CreateNeg(step));
    llvm::Value* safeMag = b_.CreateSelect(b_.CreateICmpEQ(mag, zero), one, mag);
    llvm::Value* count = b_.CreateSDiv(b_.CreateSub(b_.CreateAdd(dist, safeMag), one), safeMag);
    trips = b_.CreateSelect(b_.CreateOr(b_.CreateICmpSLE(dist, zero), b_.CreateICmpEQ(step, zero)), zero, count);
  }
  // Tile values are carried in the slot of the loop's result: copied in here and at each yield.
  std::vector<View> tileSlots(op.numOperands());
  for (unsigned i = 3; i < op.numOperands(); ++i)
    if (isTileValue(op.operand(i)->type) && !inRegisters(op.operand(i)) &&
        !carryTileInto(op.result(i - 3), op.operand(i), &tileSlots[i]))
      return fail(op, "internal error: a carried tile value has no storage");
  llvm::BasicBlock* pre = b_.GetInsertBlock();
  auto* header = llvm::BasicBlock::Create(c_, "for", fn_);
  auto* body = llvm::BasicBlock::Create(c_, "for.body", fn_);
  auto* exit = llvm::BasicBlock::Create(c_, "for.done", fn_);
  b_.CreateBr(header);
  b_.SetInsertPoint(header);
  ir::Block& blk = op.body();
  llvm::PHINode* iv = b_.CreatePHI(lb->getType(), 2, "iv");
  iv->addIncoming(lb, pre);
  llvm::PHINode* trip = nullptr;
  if (trips) {
    trip = b_.CreatePHI(trips->getType(), 2, "trip");
    trip->addIncoming(llvm::ConstantInt::get(trips->getType(), 0), pre);
  }
  std::vector<llvm::PHINode*> phis;  // null for tile values
  std::vector<std::vector<llvm::PHINode*>> fragPhis(op.numOperands());  // fragments in registers
  for (unsigned i = 3; i < op.numOperands(); ++i) {
    if (inRegisters(op.operand(i))) {
      for (llvm::Value* v : fragRegs_.at(op.operand(i))) {
        llvm::PHINode* p = b_.CreatePHI(v->getType(), 2);
        p->addIncoming(v, pre);
        fragPhis[i - 3].push_back(p);
      }
      phis.push_back(nullptr);
      continue;
    }
    if (isTileValue(op.operand(i)->type)) {
      phis.push_back(nullptr);
      continue;
    }
    llvm::Value* init = carried(op.operand(i));
    llvm::PHINode* p = b_.CreatePHI(init->getType(), 2);
    p->addIncoming(init, pre);
    phis.push_back(p);
  }
  llvm::Value* cond = trip ? b_.CreateICmpSLT(trip, trips) : uns ? b_.CreateICmpULT(iv, ub) : b_.CreateICmpSLT(iv, ub);
  b_.CreateCondBr(cond, body, exit);
  b_.SetInsertPoint(body);
  set(blk.arg(0), iv);
  for (size_t i = 0; i < phis.size(); ++i) {
    if (!fragPhis[i].empty()) fragRegs_[blk.arg(static_cast<unsigned>(i + 1))].assign(fragPhis[i].begin(), fragPhis[i].end());
    else if (!phis[i]) views_[blk.arg(static_cast<unsigned>(i + 1))] = tileSlots[i + 3];
    else bindCarried(blk.arg(static_cast<unsigned>(i + 1)), phis[i], op.operand(static_cast<unsigned>(i + 3)));
  }
  ir::Operation* yield = nullptr;
  if (!lowerBlock(blk, &yield)) return false;
  for (size_t i = 0; i < phis.size(); ++i) {
    View ignored;
    if (!phis[i] && fragPhis[i].empty() && !carryTileInto(op.result(static_cast<unsigned>(i)), yield->operand(static_cast<unsigned>(i)), &ignored))
      return fail(op, "internal error: a carried tile value has no storage");
  }
  llvm::BasicBlock* latch = b_.GetInsertBlock();
  iv->addIncoming(b_.CreateAdd(iv, step), latch);
  if (trip) trip->addIncoming(b_.CreateAdd(trip, llvm::ConstantInt::get(trips->getType(), 1)), latch);
  for (size_t i = 0; i < phis.size(); ++i)
    if (phis[i]) phis[i]->addIncoming(carried(yield->operand(static_cast<unsigned>(i))), latch);
  for (size_t i = 0; i < fragPhis.size(); ++i)
    for (size_t j = 0; j < fragPhis[i].size(); ++j)
      fragPhis[i][j]->addIncoming(fragRegs_.at(yield->operand(static_cast<unsigned>(i)))[j], latch);
  b_.CreateBr(header);
  b_.SetInsertPoint(exit);
  for (size_t i = 0; i < phis.size(); ++i) {
    if (!fragPhis[i].empty()) fragRegs_[op.result(static_cast<unsigned>(i))].assign(fragPhis[i].begin(), fragPhis[i].end());
    else if (!phis[i]) views_[op.result(static_cast<unsigned>(i))] = tileSlots[i + 3];
    else bindCarried(op.result(static_cast<unsigned>(i)), phis[i], op.operand(static_cast<unsigned>(i + 3)));
  }
  return true;
}

bool Lowering::lowerIf(ir::Operation& op) {
  auto* thenBB = llvm::BasicBlock::Create(c_, "then", fn_);
  auto* elseBB = llvm::BasicBlock::Create(c_, "else", fn_);
  auto* merge = llvm::BasicBlock::Create(c_, "endif", fn_);
  b_.CreateCondBr(get(op.operand(0)), thenBB, elseBB);
  std::vector<std::pair<llvm::BasicBlock*, ir::Operation*>> arms;
  std::vector<std::vector<std::vector<llvm::Value*>>> tileShapes(op.numResults());
  for (unsigned r = 0; r < 2; ++r) {
    b_.SetInsertPoint(r == 0 ? thenBB : elseBB);
    ir::Operation* yield = nullptr;
    if (!lowerBlock(op.region(r).block(), &yield)) return false;
    // Tile results: each arm copies its value into the result's slot.
    for (unsigned i = 0; i < op.numResults(); ++i) {
      if (!isTileValue(op.result(i)->type) || inRegisters(op.result(i))) continue;
      View v;
      if (!carryTileInto(op.result(i), yield->operand(i), &v))
        return fail(op, "internal error: a tile result has no storage");
      tileShapes[i].push_back(v.shape);
    }
    arms.push_back({b_.GetInsertBlock(), yield});
    b_.CreateBr(merge);
  }
  b_.SetInsertPoint(merge);
  for (unsigned i = 0; i < op.numResults(); ++i) {
    if (inRegisters(op.result(i))) {
      const auto& x = fragRegs_.at(arms[0].second->operand(i));
      const auto& y = fragRegs_.at(arms[1].second->operand(i));
      std::vector<llvm::Value*> r;
      for (size_t j = 0; j < x.size(); ++j) {
        llvm::PHINode* p = b_.CreatePHI(x[j]->getType(), 2);
        p->addIncoming(x[j], arms[0].first);
        p->addIncoming(y[j], arms[1].first);
        r.push_back(p);
      }
      fragRegs_[op.result(i)] = r;
      continue;
    }
    if (isTileValue(op.result(i)->type)) {
      std::vector<llvm::Value*> shape;
      for (size_t d = 0; d < tileShapes[i][0].size(); ++d) {
        llvm::PHINode* p = b_.CreatePHI(b_.getInt64Ty(), 2);
        p->addIncoming(tileShapes[i][0][d], arms[0].first);
        p->addIncoming(tileShapes[i][1][d], arms[1].first);
        shape.push_back(p);
      }
      views_[op.result(i)] = slotView(op.result(i), shape);
      continue;
    }
    llvm::Value* a = carried(arms[0].second->operand(i));
    llvm::PHINode* p = b_.CreatePHI(a->getType(), 2);
    p->addIncoming(a, arms[0].first);
    p->addIncoming(carried(arms[1].second->operand(i)), arms[1].first);
    bindCarried(op.result(i), p, arms[0].second->operand(i));
  }
  return true;
}

bool Lowering::lowerWhile(ir::Operation& op) {
  for (ir::Value* v : op.operands)
    if (isTileValue(v->type)) return fail(op, "while loops that carry tile values are not supported by code generation yet");
  llvm::BasicBlock* pre = b_.GetInsertBlock();
  auto* before = llvm::BasicBlock::Create(c_, "while", fn_);
  auto* after = llvm::BasicBlock::Create(c_, "while.body", fn_);
  auto* exit = llvm::BasicBlock::Create(c_, "while.done", fn_);
  b_.CreateBr(before);
  b_.SetInsertPoint(before);
  ir::Block& cb = op.region(0).block();
  ir::Block& bb = op.region(1).block();
  std::vector<llvm::PHINode*> args;
  for (unsigned i = 0; i < op.numOperands(); ++i) {
    llvm::Value* init = carried(op.operand(i));
    llvm::PHINode* p = b_.CreatePHI(init->getType(), 2);
    p->addIncoming(init, pre);
    args.push_back(p);
    bindCarried(cb.arg(i), p, op.operand(i));
  }
  ir::Operation* condition = nullptr;
  if (!lowerBlock(cb, &condition)) return false;
  llvm::BasicBlock* condEnd = b_.GetInsertBlock();
  std::vector<llvm::Value*> forwarded;
  for (unsigned i = 1; i < condition->numOperands(); ++i) forwarded.push_back(carried(condition->operand(i)));
  b_.CreateCondBr(get(condition->operand(0)), after, exit);
  b_.SetInsertPoint(after);
  for (unsigned i = 0; i < bb.numArgs(); ++i) bindCarried(bb.arg(i), forwarded[i], condition->operand(i + 1));
  ir::Operation* yield = nullptr;
  if (!lowerBlock(bb, &yield)) return false;
  for (size_t i = 0; i < args.size(); ++i)
    args[i]->addIncoming(carried(yield->operand(static_cast<unsigned>(i))), b_.GetInsertBlock());
  b_.CreateBr(before);
  b_.SetInsertPoint(exit);
  for (unsigned i = 0; i < op.numResults(); ++i) bindCarried(op.result(i), forwarded[i], condition->operand(i + 1));
  (void)condEnd;
  return true;
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
