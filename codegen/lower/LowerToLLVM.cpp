// Tile IR -> LLVM IR for one target. The same op-by-op lowering serves the GPU and the CPU:
// per-tile (SPMD) code whose ids, barriers, shuffles and shared memory come from DeviceHooks.
// Structured control flow becomes branches and phis; views become (pointer, shape, strides).
#include "codegen/lower/LowerToLLVM.h"

#include <algorithm>
#include <iterator>

#include "codegen/lower/Lowering.h"
#include "codegen/lower/MiniFloat.h"
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
      if (arg->type->kind == ir::TypeKind::Tensor)
        scopes_.push_back(mdb.createAnonymousAliasScope(domain, arg->nameHint));
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
        v.shape.push_back(
            b_.CreateLoad(b_.getInt64Ty(), b_.CreateGEP(kt, block, {b_.getInt32(0), b_.getInt32(1), b_.getInt32(d)})));
        v.strides.push_back(
            b_.CreateLoad(b_.getInt64Ty(), b_.CreateGEP(kt, block, {b_.getInt32(0), b_.getInt32(2), b_.getInt32(d)})));
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
    if (arg->type->kind == ir::TypeKind::Tensor)
      tensors.push_back(slot);
    else
      scalars.push_back(b_.CreateLoad(scalarType(arg->type), slot, arg->nameHint));
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
  // A custom --passes list without row-partition leaves a whole-tensor program unsplit: every
  // group would compute the whole tensor, so refuse rather than emit it.
  if (func.hasAttr(ir::AttrId::WholeTensor))
    return fail(func,
                "a whole-tensor program reaches code generation unsplit; the pass list must include "
                "row-partition (the default pipelines do)");
  if (!describeKernel(func, k, error_)) return false;
  groupTiles_ = k.grouped ? int64_t(k.groupShape[0]) * k.groupShape[1] * k.groupShape[2] : 0;
  groupScratch_ = func.hasAttr(ir::AttrId::GroupScratch) ? func.intAttr(ir::AttrId::GroupScratch, 0) : -1;
  reduceParity_ = nullptr;
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
  const ir::Attribute* a = op.attr(ir::AttrId::Value);
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
      std::string mode = op.strAttr(ir::AttrId::Mode);
      int m = mode == "idx" ? 0 : mode == "up" ? 1 : mode == "down" ? 2 : 3;
      unsigned width = static_cast<unsigned>(op.intAttr(ir::AttrId::Width, 32));
      llvm::Value* v = get(op.operand(0));
      unsigned bits = v->getType()->getPrimitiveSizeInBits();
      if (bits != 32 && bits != 64) {
        // Narrow values travel widened to 32 bits.
        llvm::Type* orig = v->getType();
        llvm::Value* w = b_.CreateZExt(b_.CreateBitCast(v, b_.getIntNTy(bits)), b_.getInt32Ty());
        llvm::Value* r = hooks_->shuffle(b_, w, m, get(op.operand(1)), width);
        set(op.result(), b_.CreateBitCast(b_.CreateTrunc(r, b_.getIntNTy(bits)), orig));
        return true;
      }
      set(op.result(), hooks_->shuffle(b_, v, m, get(op.operand(1)), width));
      return true;
    }
    case OpId::TileVote: {
      std::string mode = op.strAttr(ir::AttrId::Mode);
      set(op.result(), hooks_->vote(b_, mode == "all" ? 0 : mode == "any" ? 1 : 2, get(op.operand(0))));
      return true;
    }
    case OpId::TileCoopGroup: set(op.result(), b_.getInt64(op.intAttr(ir::AttrId::Size, 1))); return true;
    case OpId::TileCoopSync: hooks_->partitionSync(b_, static_cast<unsigned>(op.operand(0)->type->count)); return true;
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
    llvm::Intrinsic::ID id = bits == 32
                                 ? (isUnsignedValue ? llvm::Intrinsic::nvvm_mulhi_ui : llvm::Intrinsic::nvvm_mulhi_i)
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
    case OpId::ArithMinF: r = floatMinMax(false, a, b); break;
    case OpId::ArithMaxF: r = floatMinMax(true, a, b); break;
    case OpId::ArithNegF: r = b_.CreateFNeg(a); break;
    case OpId::ArithCmpI: {
      static const std::map<std::string, llvm::CmpInst::Predicate> preds = {
          {"eq", llvm::CmpInst::ICMP_EQ},   {"ne", llvm::CmpInst::ICMP_NE},   {"slt", llvm::CmpInst::ICMP_SLT},
          {"sle", llvm::CmpInst::ICMP_SLE}, {"sgt", llvm::CmpInst::ICMP_SGT}, {"sge", llvm::CmpInst::ICMP_SGE},
          {"ult", llvm::CmpInst::ICMP_ULT}, {"ule", llvm::CmpInst::ICMP_ULE}, {"ugt", llvm::CmpInst::ICMP_UGT},
          {"uge", llvm::CmpInst::ICMP_UGE}};
      llvm::CmpInst::Predicate pred = preds.at(op.strAttr(ir::AttrId::Pred));
      // A known fact `tile < bound` (both non-negative) decides `tile < bound` and its mirror
      // images, so the bounds check of a kernel running several tiles per thread folds away.
      for (auto& [tile, bound] : facts_) {
        using P = llvm::CmpInst;
        bool lt = a == tile && b == bound, gt = a == bound && b == tile;
        if ((lt && (pred == P::ICMP_SLT || pred == P::ICMP_ULT)) ||
            (gt && (pred == P::ICMP_SGT || pred == P::ICMP_UGT)))
          r = b_.getTrue();
        if ((lt && (pred == P::ICMP_SGE || pred == P::ICMP_UGE)) ||
            (gt && (pred == P::ICMP_SLE || pred == P::ICMP_ULE)))
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
      r = b_.CreateFCmp(preds.at(op.strAttr(ir::AttrId::Pred)), a, b);
      break;
    }
    case OpId::ArithSelect: r = b_.CreateSelect(a, b, get(op.operand(2))); break;
    default: return fail(op, "unexpected op");
  }
  // int4 lives sign-extended in 8 bits: integer results wrap at 4 bits.
  if (ir::isScalar(typeOf(op.result())) && ir::baseScalar(typeOf(op.result())) == ir::ScalarKind::I4 &&
      r->getType()->isIntegerTy(8))
    r = b_.CreateAShr(b_.CreateShl(r, 4), 4);
  set(op.result(), r);
  return true;
}

}  // namespace detail

bool lowerKernels(ir::Module& m, DeviceTarget target, llvm::Module& out, std::vector<KernelInterface>& kernels,
                  std::string& error, const LowerOptions& opts) {
  if (target == DeviceTarget::Cpu) defineCpuLibcalls(out);
  for (ir::Operation* f : m.funcs()) {
    if (!f->hasAttr(ir::AttrId::Kernel)) continue;
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
