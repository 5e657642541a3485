#include "codegen/lower/DeviceHooks.h"

#include <functional>

#include "llvm/IR/IntrinsicsNVPTX.h"
#include "llvm/IR/Module.h"
#include "runtime/include/tessera/runtime.h"

namespace tessera::codegen {

llvm::Value* DeviceHooks::laneId(llvm::IRBuilder<>& b) { return b.CreateAnd(tileLinear(b), b.getInt64(31)); }

namespace {

// A constant string in the module (address space `as`), for fault sites; one per text.
llvm::Constant* siteString(llvm::Module& m, const std::string& text, unsigned as) {
  auto* init = llvm::ConstantDataArray::getString(m.getContext(), text, true);
  std::string base = "__tessera_site." + std::to_string(std::hash<std::string>()(text) % 1000000007), name = base;
  for (int i = 1; llvm::GlobalVariable* old = m.getNamedGlobal(name); ++i) {
    if (old->getInitializer() == init && old->getAddressSpace() == as) return old;
    name = base + "." + std::to_string(i);
  }
  auto* gv = new llvm::GlobalVariable(m, init->getType(), true, llvm::GlobalValue::PrivateLinkage, init, name, nullptr,
                                      llvm::GlobalValue::NotThreadLocal, as);
  gv->setUnnamedAddr(llvm::GlobalValue::UnnamedAddr::Global);
  return gv;
}

// __tessera_bounds_fault(site, len, index, extent, group, tile): the first faulting thread of a
// launch claims the record (compare-and-swap on its flag) and fills it in; the runtime reads it
// after the kernel. One definition per module, called from every check.
llvm::Function* gpuFaultFunction(llvm::Module& m) {
  if (llvm::Function* f = m.getFunction("__tessera_bounds_fault")) return f;
  llvm::LLVMContext& c = m.getContext();
  llvm::IRBuilder<> b(c);
  auto* fnTy = llvm::FunctionType::get(
      b.getVoidTy(), {b.getPtrTy(), b.getInt32Ty(), b.getInt64Ty(), b.getInt64Ty(), b.getInt64Ty(), b.getInt64Ty()},
      false);
  auto* f = llvm::Function::Create(fnTy, llvm::GlobalValue::InternalLinkage, "__tessera_bounds_fault", m);
  f->addFnAttr(llvm::Attribute::NoInline);
  auto* entry = llvm::BasicBlock::Create(c, "entry", f);
  auto* fill = llvm::BasicBlock::Create(c, "claimed", f);
  auto* copy = llvm::BasicBlock::Create(c, "copy", f);
  auto* done = llvm::BasicBlock::Create(c, "done", f);
  b.SetInsertPoint(entry);
  llvm::GlobalVariable* rec = gpuFaultRecord(m);
  auto at = [&](size_t offset) { return b.CreateConstGEP1_64(b.getInt8Ty(), rec, offset); };
  llvm::Value* claim =
      b.CreateAtomicCmpXchg(at(offsetof(tessera_fault_record, flag)), b.getInt32(0), b.getInt32(1), llvm::MaybeAlign(4),
                            llvm::AtomicOrdering::Monotonic, llvm::AtomicOrdering::Monotonic);
  b.CreateCondBr(b.CreateExtractValue(claim, 1), fill, done);
  b.SetInsertPoint(fill);
  b.CreateStore(f->getArg(1), at(offsetof(tessera_fault_record, site_len)));
  b.CreateStore(f->getArg(2), at(offsetof(tessera_fault_record, index)));
  b.CreateStore(f->getArg(3), at(offsetof(tessera_fault_record, extent)));
  b.CreateStore(f->getArg(4), at(offsetof(tessera_fault_record, group)));
  b.CreateStore(f->getArg(5), at(offsetof(tessera_fault_record, tile)));
  b.CreateBr(copy);
  b.SetInsertPoint(copy);
  llvm::PHINode* i = b.CreatePHI(b.getInt32Ty(), 2);
  i->addIncoming(b.getInt32(0), fill);
  llvm::Value* ch = b.CreateLoad(b.getInt8Ty(), b.CreateGEP(b.getInt8Ty(), f->getArg(0), i));
  b.CreateStore(ch, b.CreateGEP(b.getInt8Ty(), at(offsetof(tessera_fault_record, site)), i));
  llvm::Value* next = b.CreateAdd(i, b.getInt32(1));
  i->addIncoming(next, copy);
  b.CreateCondBr(b.CreateICmpULT(next, f->getArg(1)), copy, done);
  b.SetInsertPoint(done);
  b.CreateRetVoid();
  return f;
}

// ------------------------------------------------------------------------------------- GPU

class GpuHooks : public DeviceHooks {
 public:
  GpuHooks(const KernelShape& s, llvm::Value* tile) : shape_(s), tile_(tile) {}
  bool isGpu() const override { return true; }

  llvm::Value* sreg(llvm::IRBuilder<>& b, llvm::Intrinsic::ID id) {
    return b.CreateZExt(b.CreateIntrinsic(id, {}, {}), b.getInt64Ty());
  }
  llvm::Value* tid(llvm::IRBuilder<>& b) {
    // x + y*ntid.x + z*ntid.x*ntid.y
    auto* x = sreg(b, llvm::Intrinsic::nvvm_read_ptx_sreg_tid_x);
    auto* y = sreg(b, llvm::Intrinsic::nvvm_read_ptx_sreg_tid_y);
    auto* z = sreg(b, llvm::Intrinsic::nvvm_read_ptx_sreg_tid_z);
    auto* nx = sreg(b, llvm::Intrinsic::nvvm_read_ptx_sreg_ntid_x);
    auto* ny = sreg(b, llvm::Intrinsic::nvvm_read_ptx_sreg_ntid_y);
    return b.CreateAdd(x, b.CreateMul(nx, b.CreateAdd(y, b.CreateMul(ny, z))));
  }
  llvm::Value* groupLinear(llvm::IRBuilder<>& b) override {
    auto* x = sreg(b, llvm::Intrinsic::nvvm_read_ptx_sreg_ctaid_x);
    auto* y = sreg(b, llvm::Intrinsic::nvvm_read_ptx_sreg_ctaid_y);
    auto* z = sreg(b, llvm::Intrinsic::nvvm_read_ptx_sreg_ctaid_z);
    auto* nx = sreg(b, llvm::Intrinsic::nvvm_read_ptx_sreg_nctaid_x);
    auto* ny = sreg(b, llvm::Intrinsic::nvvm_read_ptx_sreg_nctaid_y);
    return b.CreateAdd(x, b.CreateMul(nx, b.CreateAdd(y, b.CreateMul(ny, z))));
  }
  llvm::Value* groupTiles(llvm::IRBuilder<>& b) override {
    if (shape_.grouped) return b.getInt64(shape_.groupTiles);
    auto* nx = sreg(b, llvm::Intrinsic::nvvm_read_ptx_sreg_ntid_x);
    auto* ny = sreg(b, llvm::Intrinsic::nvvm_read_ptx_sreg_ntid_y);
    auto* nz = sreg(b, llvm::Intrinsic::nvvm_read_ptx_sreg_ntid_z);
    return b.CreateMul(nx, b.CreateMul(ny, nz));
  }
  llvm::Value* numGroups(llvm::IRBuilder<>& b) override {
    auto* nx = sreg(b, llvm::Intrinsic::nvvm_read_ptx_sreg_nctaid_x);
    auto* ny = sreg(b, llvm::Intrinsic::nvvm_read_ptx_sreg_nctaid_y);
    auto* nz = sreg(b, llvm::Intrinsic::nvvm_read_ptx_sreg_nctaid_z);
    return b.CreateMul(nx, b.CreateMul(ny, nz));
  }
  llvm::Value* globalLinear(llvm::IRBuilder<>& b) override {
    if (tile_) return tile_;
    return b.CreateAdd(b.CreateMul(groupLinear(b), groupTiles(b)), tid(b));
  }
  llvm::Value* tileLinear(llvm::IRBuilder<>& b) override { return shape_.grouped ? tid(b) : globalLinear(b); }
  llvm::Value* threadInGroup(llvm::IRBuilder<>& b) override { return tid(b); }
  llvm::Value* laneId(llvm::IRBuilder<>& b) override { return sreg(b, llvm::Intrinsic::nvvm_read_ptx_sreg_laneid); }

  unsigned sharedAddressSpace() const override { return 3; }
  llvm::Value* sharedBase(llvm::IRBuilder<>& b) override {
    llvm::Module& m = *b.GetInsertBlock()->getModule();
    // Dynamic shared memory (extern __shared__): the runtime passes the size at launch and opts
    // in above 48 KiB.
    auto* gv = m.getNamedGlobal("__tessera_shared");
    if (!gv) {
      auto* ty = llvm::ArrayType::get(b.getInt8Ty(), 0);
      gv = new llvm::GlobalVariable(m, ty, false, llvm::GlobalValue::ExternalLinkage, nullptr, "__tessera_shared",
                                    nullptr, llvm::GlobalValue::NotThreadLocal, 3);
      gv->setAlignment(llvm::Align(128));
    }
    return gv;
  }

  void barrier(llvm::IRBuilder<>& b) override { b.CreateIntrinsic(llvm::Intrinsic::nvvm_barrier0, {}, {}); }

  void partitionSync(llvm::IRBuilder<>& b, unsigned size) override {
    if (size == 32) {
      b.CreateIntrinsic(llvm::Intrinsic::nvvm_bar_warp_sync, {}, {b.getInt32(0xffffffffu)});
      return;
    }
    if (shape_.grouped && size >= shape_.groupTiles) {
      barrier(b);
      return;
    }
    // Named barrier 1 + partition (barrier 0 is tbarrier's): bar.sync id, size.
    llvm::Value* part = b.CreateTrunc(b.CreateUDiv(tid(b), b.getInt64(size)), b.getInt32Ty());
    b.CreateIntrinsic(llvm::Intrinsic::nvvm_barrier, {}, {b.CreateAdd(part, b.getInt32(1)), b.getInt32(size)});
  }

  llvm::Value* shuffle(llvm::IRBuilder<>& b, llvm::Value* v, int mode, llvm::Value* x, unsigned width) override {
    llvm::Type* ty = v->getType();
    unsigned bits = ty->getPrimitiveSizeInBits();
    llvm::Value* mask = b.CreateIntrinsic(llvm::Intrinsic::nvvm_activemask, {}, {});
    llvm::Value* delta = b.CreateTrunc(x, b.getInt32Ty());
    static const llvm::Intrinsic::ID ids[4] = {
        llvm::Intrinsic::nvvm_shfl_sync_idx_i32, llvm::Intrinsic::nvvm_shfl_sync_up_i32,
        llvm::Intrinsic::nvvm_shfl_sync_down_i32, llvm::Intrinsic::nvvm_shfl_sync_bfly_i32};
    // c operand: the segment mask (32 - width) in bits 8..12, the clamp 31 (0 for up).
    llvm::Value* c = b.getInt32(((32u - width) << 8) | (mode == 1 ? 0u : 31u));
    auto shfl32 = [&](llvm::Value* w) { return b.CreateIntrinsic(ids[mode], {}, {mask, w, delta, c}); };
    llvm::Value* bitsV = bits == 64 ? b.CreateBitCast(v, b.getInt64Ty()) : b.CreateBitCast(v, b.getInt32Ty());
    llvm::Value* result;
    if (bits == 64) {
      llvm::Value* lo = shfl32(b.CreateTrunc(bitsV, b.getInt32Ty()));
      llvm::Value* hi = shfl32(b.CreateTrunc(b.CreateLShr(bitsV, 32), b.getInt32Ty()));
      result = b.CreateOr(b.CreateZExt(lo, b.getInt64Ty()), b.CreateShl(b.CreateZExt(hi, b.getInt64Ty()), 32));
    } else {
      result = shfl32(bitsV);
    }
    result = b.CreateBitCast(result, ty);
    // The source lane must be in the caller's segment (xor: not after it) and live; otherwise
    // the caller keeps its value (what the CPU executor does, and what PTX does for lanes past
    // the segment; this also fixes what PTX leaves undefined).
    llvm::Value* lane = b.CreateTrunc(laneId(b), b.getInt32Ty());
    llvm::Value* seg = b.CreateAnd(lane, b.getInt32(~(width - 1)));
    llvm::Value* src = mode == 0   ? b.CreateOr(seg, b.CreateAnd(delta, b.getInt32(width - 1)))
                       : mode == 1 ? b.CreateSub(lane, delta)
                       : mode == 2 ? b.CreateAdd(lane, delta)
                                   : b.CreateXor(lane, delta);
    llvm::Value* lo = mode == 3 ? b.getInt32(0) : seg;
    llvm::Value* inRange =
        b.CreateAnd(b.CreateICmpSGE(src, lo), b.CreateICmpSLT(src, b.CreateAdd(seg, b.getInt32(width))));
    llvm::Value* live =
        b.CreateICmpNE(b.CreateAnd(b.CreateLShr(mask, b.CreateAnd(src, b.getInt32(31))), b.getInt32(1)), b.getInt32(0));
    return b.CreateSelect(b.CreateAnd(inRange, live), result, v);
  }

  llvm::Value* vote(llvm::IRBuilder<>& b, int mode, llvm::Value* pred) override {
    llvm::Value* mask = b.CreateIntrinsic(llvm::Intrinsic::nvvm_activemask, {}, {});
    static const llvm::Intrinsic::ID ids[3] = {llvm::Intrinsic::nvvm_vote_all_sync, llvm::Intrinsic::nvvm_vote_any_sync,
                                               llvm::Intrinsic::nvvm_vote_ballot_sync};
    return b.CreateIntrinsic(ids[mode], {}, {mask, pred});
  }

  // %clock64, the SM's 64-bit cycle counter (a volatile read: never merged or hoisted).
  llvm::Value* clock(llvm::IRBuilder<>& b) override {
    return b.CreateIntrinsic(llvm::Intrinsic::nvvm_read_ptx_sreg_clock64, {}, {});
  }
  llvm::Value* cString(llvm::IRBuilder<>& b, const std::string& text) override {
    return b.CreateAddrSpaceCast(siteString(*b.GetInsertBlock()->getModule(), text, 1), b.getPtrTy());
  }
  void print(llvm::IRBuilder<>& b, llvm::Value* format, const std::vector<llvm::Value*>& args) override {
    llvm::Module& m = *b.GetInsertBlock()->getModule();
    llvm::FunctionCallee vprintf =
        m.getOrInsertFunction("vprintf", llvm::FunctionType::get(b.getInt32Ty(), {b.getPtrTy(), b.getPtrTy()}, false));
    llvm::Value* buffer = llvm::ConstantPointerNull::get(b.getPtrTy());
    if (!args.empty()) {
      std::vector<llvm::Type*> types;
      for (llvm::Value* a : args) types.push_back(a->getType());
      auto* st = llvm::StructType::get(b.getContext(), types);
      // In the entry block: an alloca inside a loop would grow the stack every iteration.
      llvm::Function* f = b.GetInsertBlock()->getParent();
      llvm::IRBuilder<> entry(&f->getEntryBlock(), f->getEntryBlock().begin());
      llvm::AllocaInst* slot = entry.CreateAlloca(st);
      for (unsigned i = 0; i < args.size(); ++i) b.CreateStore(args[i], b.CreateStructGEP(st, slot, i));
      buffer = slot;
    }
    b.CreateCall(vprintf, {format, buffer});
  }

  void boundsFault(llvm::IRBuilder<>& b, const std::string& site, llvm::Value* index, llvm::Value* extent) override {
    llvm::Module& m = *b.GetInsertBlock()->getModule();
    std::string text = site.substr(0, sizeof(tessera_fault_record::site) - 1);
    llvm::Value* str = b.CreateAddrSpaceCast(siteString(m, text, 1), b.getPtrTy());
    b.CreateCall(gpuFaultFunction(m), {str, b.getInt32(static_cast<uint32_t>(text.size() + 1)), index, extent,
                                       groupLinear(b), tileLinear(b)});
  }

  llvm::FunctionCallee mathFunction(llvm::Module& m, const std::string& name, llvm::Type* type,
                                    unsigned arity) override {
    // libdevice names: __nv_expf / __nv_exp.
    std::string n = "__nv_" + name + (type->isFloatTy() ? "f" : "");
    std::vector<llvm::Type*> params(arity, type);
    return m.getOrInsertFunction(n, llvm::FunctionType::get(type, params, false));
  }

 private:
  KernelShape shape_;
  llvm::Value* tile_;
};

// ------------------------------------------------------------------------------------- CPU

// Field indices of tessera_cpu_ctx.
enum CtxField {
  kTileId,
  kTileLinear,
  kGroupShape,
  kGroupTiles,
  kGroupId,
  kGridShape,
  kGroupLinear,
  kGridGroups,
  kGlobalLinear,
  kLaunchTiles,
  kShared,
  kSharedBytes,
  kOps,
  kRuntime
};
enum OpsField { kBarrier, kPartitionSync, kWarpShuffle, kWarpVote, kFault, kClock };

class CpuHooks : public DeviceHooks {
 public:
  CpuHooks(const KernelShape& s, llvm::Value* ctx, llvm::Value* tile) : shape_(s), ctx_(ctx), tile_(tile) {}
  bool isGpu() const override { return false; }

  llvm::Value* field(llvm::IRBuilder<>& b, CtxField f) {
    llvm::StructType* ty = cpuCtxType(b.getContext());
    llvm::Value* v = b.CreateLoad(ty->getElementType(f), b.CreateStructGEP(ty, ctx_, f));
    return v->getType()->isIntegerTy(32) ? b.CreateZExt(v, b.getInt64Ty()) : v;
  }
  llvm::Value* tileLinear(llvm::IRBuilder<>& b) override {
    if (!shape_.grouped) return globalLinear(b);
    return tile_ ? tile_ : field(b, kTileLinear);
  }
  llvm::Value* globalLinear(llvm::IRBuilder<>& b) override {
    // Per-group entries get the group's first tile in global_linear and loop over the rest.
    if (tile_) return b.CreateAdd(field(b, kGlobalLinear), tile_);
    return field(b, kGlobalLinear);
  }
  llvm::Value* groupLinear(llvm::IRBuilder<>& b) override { return field(b, kGroupLinear); }
  llvm::Value* groupTiles(llvm::IRBuilder<>& b) override { return field(b, kGroupTiles); }
  llvm::Value* numGroups(llvm::IRBuilder<>& b) override { return field(b, kGridGroups); }
  unsigned sharedAddressSpace() const override { return 0; }
  llvm::Value* sharedBase(llvm::IRBuilder<>& b) override { return field(b, kShared); }

  llvm::Value* op(llvm::IRBuilder<>& b, OpsField f) {
    llvm::StructType* ops = cpuOpsType(b.getContext());
    llvm::Value* table = field(b, kOps);
    return b.CreateLoad(b.getPtrTy(), b.CreateStructGEP(ops, table, f));
  }
  void barrier(llvm::IRBuilder<>& b) override {
    b.CreateCall(llvm::FunctionType::get(b.getVoidTy(), {b.getPtrTy()}, false), op(b, kBarrier), {ctx_});
  }
  void partitionSync(llvm::IRBuilder<>& b, unsigned size) override {
    b.CreateCall(llvm::FunctionType::get(b.getVoidTy(), {b.getPtrTy(), b.getInt32Ty()}, false), op(b, kPartitionSync),
                 {ctx_, b.getInt32(size)});
  }
  llvm::Value* shuffle(llvm::IRBuilder<>& b, llvm::Value* v, int mode, llvm::Value* x, unsigned width) override {
    llvm::Type* ty = v->getType();
    unsigned bits = ty->getPrimitiveSizeInBits();
    llvm::Value* raw = b.CreateZExt(b.CreateBitCast(v, b.getIntNTy(bits)), b.getInt64Ty());
    auto* fnTy = llvm::FunctionType::get(
        b.getInt64Ty(), {b.getPtrTy(), b.getInt64Ty(), b.getInt32Ty(), b.getInt32Ty(), b.getInt32Ty()}, false);
    llvm::Value* r = b.CreateCall(fnTy, op(b, kWarpShuffle),
                                  {ctx_, raw, b.getInt32(mode), b.CreateTrunc(x, b.getInt32Ty()), b.getInt32(width)});
    return b.CreateBitCast(b.CreateTrunc(r, b.getIntNTy(bits)), ty);
  }
  llvm::Value* vote(llvm::IRBuilder<>& b, int mode, llvm::Value* pred) override {
    auto* fnTy = llvm::FunctionType::get(b.getInt32Ty(), {b.getPtrTy(), b.getInt32Ty(), b.getInt32Ty()}, false);
    llvm::Value* r = b.CreateCall(fnTy, op(b, kWarpVote), {ctx_, b.getInt32(mode), b.CreateZExt(pred, b.getInt32Ty())});
    return mode == 2 ? r : b.CreateICmpNE(r, b.getInt32(0));
  }
  llvm::Value* clock(llvm::IRBuilder<>& b) override {
    return b.CreateCall(llvm::FunctionType::get(b.getInt64Ty(), {b.getPtrTy()}, false), op(b, kClock), {ctx_});
  }
  llvm::Value* cString(llvm::IRBuilder<>& b, const std::string& text) override {
    return siteString(*b.GetInsertBlock()->getModule(), text, 0);
  }
  void print(llvm::IRBuilder<>& b, llvm::Value* format, const std::vector<llvm::Value*>& args) override {
    llvm::Module& m = *b.GetInsertBlock()->getModule();
    llvm::FunctionCallee printf =
        m.getOrInsertFunction("printf", llvm::FunctionType::get(b.getInt32Ty(), {b.getPtrTy()}, true));
    std::vector<llvm::Value*> all = {format};
    all.insert(all.end(), args.begin(), args.end());
    b.CreateCall(printf, all);
  }
  // The message is formatted here with snprintf (the host object links against libc) and
  // handed to ctx->ops->fault; the runtime keeps the first fault of the lowest faulting group.
  void boundsFault(llvm::IRBuilder<>& b, const std::string& site, llvm::Value* index, llvm::Value* extent) override {
    llvm::Module& m = *b.GetInsertBlock()->getModule();
    llvm::Function* fn = m.getFunction("__tessera_bounds_fault_cpu");
    if (!fn) fn = cpuFaultFunction(m);
    b.CreateCall(fn, {ctx_, siteString(m, site, 0), index, extent, tileLinear(b)});
  }

  // __tessera_bounds_fault_cpu(ctx, site, index, extent, tile): formats the message and calls
  // ctx->ops->fault.
  llvm::Function* cpuFaultFunction(llvm::Module& m) {
    llvm::LLVMContext& c = m.getContext();
    llvm::IRBuilder<> b(c);
    auto* fnTy = llvm::FunctionType::get(
        b.getVoidTy(), {b.getPtrTy(), b.getPtrTy(), b.getInt64Ty(), b.getInt64Ty(), b.getInt64Ty()}, false);
    auto* f = llvm::Function::Create(fnTy, llvm::GlobalValue::InternalLinkage, "__tessera_bounds_fault_cpu", m);
    f->addFnAttr(llvm::Attribute::NoInline);
    f->addFnAttr(llvm::Attribute::Cold);
    b.SetInsertPoint(llvm::BasicBlock::Create(c, "entry", f));
    auto* buf = b.CreateAlloca(llvm::ArrayType::get(b.getInt8Ty(), 512));
    llvm::FunctionCallee snprintf = m.getOrInsertFunction(
        "snprintf", llvm::FunctionType::get(b.getInt32Ty(), {b.getPtrTy(), b.getInt64Ty(), b.getPtrTy()}, true));
    b.CreateCall(snprintf, {buf, b.getInt64(512), siteString(m, TESSERA_BOUNDS_FAULT_FORMAT, 0), f->getArg(1),
                            f->getArg(2), f->getArg(3), f->getArg(4)});
    llvm::Value* ctx = f->getArg(0);
    llvm::StructType* ctxTy = cpuCtxType(c);
    llvm::Value* table = b.CreateLoad(b.getPtrTy(), b.CreateStructGEP(ctxTy, ctx, kOps));
    llvm::Value* fault = b.CreateLoad(b.getPtrTy(), b.CreateStructGEP(cpuOpsType(c), table, kFault));
    b.CreateCall(llvm::FunctionType::get(b.getVoidTy(), {b.getPtrTy(), b.getPtrTy()}, false), fault, {ctx, buf});
    b.CreateRetVoid();
    return f;
  }

  llvm::FunctionCallee mathFunction(llvm::Module& m, const std::string& name, llvm::Type* type,
                                    unsigned arity) override {
    std::string n = name + (type->isFloatTy() ? "f" : "");
    std::vector<llvm::Type*> params(arity, type);
    return m.getOrInsertFunction(n, llvm::FunctionType::get(type, params, false));
  }

 private:
  KernelShape shape_;
  llvm::Value* ctx_;
  llvm::Value* tile_;
};

}  // namespace

std::unique_ptr<DeviceHooks> makeGpuHooks(const KernelShape& shape, llvm::Value* tileOverride) {
  return std::make_unique<GpuHooks>(shape, tileOverride);
}

std::unique_ptr<DeviceHooks> makeCpuHooks(const KernelShape& shape, llvm::Value* ctx, llvm::Value* tileOverride) {
  return std::make_unique<CpuHooks>(shape, ctx, tileOverride);
}

namespace {

// __truncdfbf2: f64 -> bf16 rounded once, to nearest even. The f64 is first rounded to f32 to
// odd (truncate, then set the last bit when inexact), which keeps enough bits for the second
// rounding to be exact (f32 has 16 more than bf16); a direct cast to f32 first would round
// twice (a value just above a bf16 tie would become the tie, then go to even). NaN stays NaN.
void defineTruncDfBf2(llvm::Module& m, llvm::Function* truncSf) {
  llvm::LLVMContext& c = m.getContext();
  if (m.getFunction("__truncdfbf2")) return;
  auto* fnTy = llvm::FunctionType::get(llvm::Type::getBFloatTy(c), {llvm::Type::getDoubleTy(c)}, false);
  auto* f = llvm::Function::Create(fnTy, llvm::GlobalValue::WeakODRLinkage, "__truncdfbf2", m);
  f->setVisibility(llvm::GlobalValue::HiddenVisibility);
  llvm::IRBuilder<> b(llvm::BasicBlock::Create(c, "entry", f));
  llvm::Value* x = f->getArg(0);
  llvm::Value* near = b.CreateFPTrunc(x, b.getFloatTy());
  llvm::Value* back = b.CreateFPExt(near, b.getDoubleTy());
  llvm::Value* inexact = b.CreateFCmpONE(back, x);
  llvm::Value* awayFromZero = b.CreateFCmpOGT(b.CreateUnaryIntrinsic(llvm::Intrinsic::fabs, back),
                                              b.CreateUnaryIntrinsic(llvm::Intrinsic::fabs, x));
  llvm::Value* bits = b.CreateBitCast(near, b.getInt32Ty());
  llvm::Value* toward = b.CreateSelect(awayFromZero, b.CreateSub(bits, b.getInt32(1)), bits);
  llvm::Value* odd = b.CreateSelect(inexact, b.CreateOr(toward, b.getInt32(1)), bits);
  b.CreateRet(b.CreateCall(truncSf, {b.CreateBitCast(odd, b.getFloatTy())}));
}

}  // namespace

void defineCpuLibcalls(llvm::Module& m) {
  llvm::LLVMContext& c = m.getContext();
  if (llvm::Function* existing = m.getFunction("__truncsfbf2")) {
    defineTruncDfBf2(m, existing);
    return;
  }
  auto* fnTy = llvm::FunctionType::get(llvm::Type::getBFloatTy(c), {llvm::Type::getFloatTy(c)}, false);
  auto* f = llvm::Function::Create(fnTy, llvm::GlobalValue::WeakODRLinkage, "__truncsfbf2", m);
  f->setVisibility(llvm::GlobalValue::HiddenVisibility);
  llvm::IRBuilder<> b(llvm::BasicBlock::Create(c, "entry", f));
  llvm::Value* x = f->getArg(0);
  llvm::Value* bits = b.CreateBitCast(x, b.getInt32Ty());
  // Round to nearest even on the upper 16 bits; NaNs stay NaN (quieted).
  llvm::Value* lsb = b.CreateAnd(b.CreateLShr(bits, 16), 1);
  llvm::Value* rounded = b.CreateLShr(b.CreateAdd(bits, b.CreateAdd(b.getInt32(0x7FFF), lsb)), 16);
  llvm::Value* nan = b.CreateOr(b.CreateLShr(bits, 16), b.getInt32(0x40));
  llvm::Value* r = b.CreateSelect(b.CreateFCmpUNO(x, x), nan, rounded);
  b.CreateRet(b.CreateBitCast(b.CreateTrunc(r, b.getInt16Ty()), b.getBFloatTy()));
  defineTruncDfBf2(m, f);
}

llvm::GlobalVariable* gpuFaultRecord(llvm::Module& m) {
  if (auto* gv = m.getNamedGlobal(TESSERA_FAULT_RECORD)) return gv;
  auto* ty = llvm::ArrayType::get(llvm::Type::getInt8Ty(m.getContext()), sizeof(tessera_fault_record));
  // Visible, so the runtime finds it with cuModuleGetGlobal; zero until a check fails.
  auto* gv =
      new llvm::GlobalVariable(m, ty, false, llvm::GlobalValue::ExternalLinkage, llvm::Constant::getNullValue(ty),
                               TESSERA_FAULT_RECORD, nullptr, llvm::GlobalValue::NotThreadLocal, 1);
  gv->setAlignment(llvm::Align(8));
  return gv;
}

llvm::StructType* cpuCtxType(llvm::LLVMContext& c) {
  if (auto* t = llvm::StructType::getTypeByName(c, "tessera_cpu_ctx")) return t;
  auto* i32 = llvm::Type::getInt32Ty(c);
  auto* i64 = llvm::Type::getInt64Ty(c);
  auto* a3 = llvm::ArrayType::get(i32, 3);
  auto* ptr = llvm::PointerType::get(c, 0);
  return llvm::StructType::create(c, {a3, i32, a3, i32, a3, a3, i64, i64, i64, i64, ptr, i64, ptr, ptr, ptr, i64},
                                  "tessera_cpu_ctx");
}

llvm::StructType* cpuOpsType(llvm::LLVMContext& c) {
  if (auto* t = llvm::StructType::getTypeByName(c, "tessera_cpu_ops")) return t;
  auto* ptr = llvm::PointerType::get(c, 0);
  return llvm::StructType::create(c, {ptr, ptr, ptr, ptr, ptr, ptr}, "tessera_cpu_ops");
}

}  // namespace tessera::codegen
