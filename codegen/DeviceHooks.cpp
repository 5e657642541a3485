#include "codegen/DeviceHooks.h"

#include "llvm/IR/IntrinsicsNVPTX.h"
#include "llvm/IR/Module.h"

namespace tessera::codegen {

llvm::Value* DeviceHooks::laneId(llvm::IRBuilder<>& b) { return b.CreateAnd(tileLinear(b), b.getInt64(31)); }

namespace {

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
  llvm::Value* tileLinear(llvm::IRBuilder<>& b) override {
    return shape_.grouped ? tid(b) : globalLinear(b);
  }
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

  llvm::Value* shuffle(llvm::IRBuilder<>& b, llvm::Value* v, int mode, llvm::Value* x) override {
    llvm::Type* ty = v->getType();
    unsigned bits = ty->getPrimitiveSizeInBits();
    llvm::Value* mask = b.CreateIntrinsic(llvm::Intrinsic::nvvm_activemask, {}, {});
    llvm::Value* delta = b.CreateTrunc(x, b.getInt32Ty());
    static const llvm::Intrinsic::ID ids[4] = {llvm::Intrinsic::nvvm_shfl_sync_idx_i32,
                                               llvm::Intrinsic::nvvm_shfl_sync_up_i32,
                                               llvm::Intrinsic::nvvm_shfl_sync_down_i32,
                                               llvm::Intrinsic::nvvm_shfl_sync_bfly_i32};
    // c operand: clamp 31 (0 for up), segment mask 0 (whole warp).
    llvm::Value* c = b.getInt32(mode == 1 ? 0 : 31);
    auto shfl32 = [&](llvm::Value* w) {
      return b.CreateIntrinsic(ids[mode], {}, {mask, w, delta, c});
    };
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
    // The source lane must exist and be live; otherwise the caller keeps its value (what the
    // CPU executor does, and what CUDA does for out-of-range lanes).
    llvm::Value* lane = b.CreateTrunc(laneId(b), b.getInt32Ty());
    llvm::Value* src = mode == 0 ? delta : mode == 1 ? b.CreateSub(lane, delta)
                     : mode == 2 ? b.CreateAdd(lane, delta) : b.CreateXor(lane, delta);
    llvm::Value* inRange = b.CreateICmpULT(src, b.getInt32(32));
    llvm::Value* live = b.CreateICmpNE(
        b.CreateAnd(b.CreateLShr(mask, b.CreateAnd(src, b.getInt32(31))), b.getInt32(1)), b.getInt32(0));
    return b.CreateSelect(b.CreateAnd(inRange, live), result, v);
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
  kTileId, kTileLinear, kGroupShape, kGroupTiles, kGroupId, kGridShape, kGroupLinear, kGridGroups,
  kGlobalLinear, kLaunchTiles, kShared, kSharedBytes, kOps, kRuntime
};
enum OpsField { kBarrier, kPartitionSync, kWarpShuffle, kWarpVote, kFault };

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
    b.CreateCall(llvm::FunctionType::get(b.getVoidTy(), {b.getPtrTy(), b.getInt32Ty()}, false),
                 op(b, kPartitionSync), {ctx_, b.getInt32(size)});
  }
  llvm::Value* shuffle(llvm::IRBuilder<>& b, llvm::Value* v, int mode, llvm::Value* x) override {
    llvm::Type* ty = v->getType();
    unsigned bits = ty->getPrimitiveSizeInBits();
    llvm::Value* raw = b.CreateZExt(b.CreateBitCast(v, b.getIntNTy(bits)), b.getInt64Ty());
    auto* fnTy = llvm::FunctionType::get(b.getInt64Ty(),
                                         {b.getPtrTy(), b.getInt64Ty(), b.getInt32Ty(), b.getInt32Ty(), b.getInt32Ty()},
                                         false);
    llvm::Value* r = b.CreateCall(fnTy, op(b, kWarpShuffle),
                                  {ctx_, raw, b.getInt32(mode), b.CreateTrunc(x, b.getInt32Ty()), b.getInt32(32)});
    return b.CreateBitCast(b.CreateTrunc(r, b.getIntNTy(bits)), ty);
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

void defineCpuLibcalls(llvm::Module& m) {
  llvm::LLVMContext& c = m.getContext();
  if (m.getFunction("__truncsfbf2")) return;
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
  return llvm::StructType::create(c, {ptr, ptr, ptr, ptr, ptr}, "tessera_cpu_ops");
}

}  // namespace tessera::codegen
