#include "codegen/hopper/HopperPtx.h"

#include "llvm/IR/InlineAsm.h"
#include "llvm/IR/Intrinsics.h"
#include "llvm/IR/IntrinsicsNVPTX.h"
#include "llvm/IR/Module.h"

namespace tessera::codegen::ptx {

namespace {

llvm::Module& module(llvm::IRBuilder<>& b) { return *b.GetInsertBlock()->getModule(); }

llvm::Value* intrinsic(llvm::IRBuilder<>& b, llvm::Intrinsic::ID id, const std::vector<llvm::Value*>& args,
                       llvm::ArrayRef<llvm::Type*> overloads = {}) {
  return b.CreateCall(llvm::Intrinsic::getDeclaration(&module(b), id, overloads), args);
}

llvm::Value* sharedPtr(llvm::IRBuilder<>& b, llvm::Value* addr) {
  return b.CreateIntToPtr(b.CreateZExt(addr, b.getInt64Ty()), llvm::PointerType::get(b.getContext(), 3));
}

}  // namespace

llvm::Value* inlineAsm(llvm::IRBuilder<>& b, llvm::Type* ret, const std::string& text, const std::string& constraints,
                       const std::vector<llvm::Value*>& args, bool memory) {
  std::vector<llvm::Type*> types;
  for (llvm::Value* v : args) types.push_back(v->getType());
  auto* fnTy = llvm::FunctionType::get(ret, types, false);
  std::string c = constraints;
  if (memory) c += c.empty() ? "~{memory}" : ",~{memory}";
  return b.CreateCall(llvm::InlineAsm::get(fnTy, text, c, /*hasSideEffects=*/true), args);
}

llvm::Value* threadIdX(llvm::IRBuilder<>& b) { return intrinsic(b, llvm::Intrinsic::nvvm_read_ptx_sreg_tid_x, {}); }
llvm::Value* blockIdX(llvm::IRBuilder<>& b) { return intrinsic(b, llvm::Intrinsic::nvvm_read_ptx_sreg_ctaid_x, {}); }
llvm::Value* gridDimX(llvm::IRBuilder<>& b) { return intrinsic(b, llvm::Intrinsic::nvvm_read_ptx_sreg_nctaid_x, {}); }
void blockBarrier(llvm::IRBuilder<>& b) { intrinsic(b, llvm::Intrinsic::nvvm_barrier0, {}); }

llvm::Value* clusterRank(llvm::IRBuilder<>& b) {
  return intrinsic(b, llvm::Intrinsic::nvvm_read_ptx_sreg_cluster_ctarank, {});
}

void clusterBarrier(llvm::IRBuilder<>& b) {
  intrinsic(b, llvm::Intrinsic::nvvm_barrier_cluster_arrive, {});
  intrinsic(b, llvm::Intrinsic::nvvm_barrier_cluster_wait, {});
}

void setMaxRegisters(llvm::IRBuilder<>& b, bool increase, unsigned n) {
  intrinsic(b,
            increase ? llvm::Intrinsic::nvvm_setmaxnreg_inc_sync_aligned_u32
                     : llvm::Intrinsic::nvvm_setmaxnreg_dec_sync_aligned_u32,
            {b.getInt32(n)});
}

void mbarrierInit(llvm::IRBuilder<>& b, llvm::Value* bar, unsigned count) {
  intrinsic(b, llvm::Intrinsic::nvvm_mbarrier_init_shared, {sharedPtr(b, bar), b.getInt32(count)});
}

void fenceMbarrierInit(llvm::IRBuilder<>& b) {
  inlineAsm(b, b.getVoidTy(), "fence.mbarrier_init.release.cluster;", "", {});
}

void mbarrierArrive(llvm::IRBuilder<>& b, llvm::Value* bar) {
  intrinsic(b, llvm::Intrinsic::nvvm_mbarrier_arrive_shared, {sharedPtr(b, bar)});
}

void mbarrierArriveRemote(llvm::IRBuilder<>& b, llvm::Value* bar, llvm::Value* rank) {
  // Release at CTA scope (the default): the arriving warpgroup's wgmma reads of the slot are
  // complete (wait_group), so no cluster-wide fence is needed, and a .release.cluster arrive per
  // k block halved the throughput of a prototype.
  inlineAsm(b, b.getVoidTy(),
            "{\n.reg .b32 remote;\nmapa.shared::cluster.u32 remote, $0, $1;\n"
            "mbarrier.arrive.shared::cluster.b64 _, [remote];\n}",
            "r,r", {bar, rank});
}

void mbarrierArriveExpectTx(llvm::IRBuilder<>& b, llvm::Value* bar, unsigned bytes) {
  inlineAsm(b, b.getVoidTy(), "mbarrier.arrive.expect_tx.shared::cta.b64 _, [$0], $1;", "r,r",
            {bar, b.getInt32(bytes)});
}

void mbarrierWait(llvm::IRBuilder<>& b, llvm::Value* bar, llvm::Value* parity) {
  llvm::Function* f = b.GetInsertBlock()->getParent();
  auto* loop = llvm::BasicBlock::Create(b.getContext(), "mbar.wait", f);
  auto* done = llvm::BasicBlock::Create(b.getContext(), "mbar.done", f);
  b.CreateBr(loop);
  b.SetInsertPoint(loop);
  llvm::Value* ok = inlineAsm(b, b.getInt32Ty(),
                              "{\n.reg .pred p;\nmbarrier.try_wait.parity.shared::cta.b64 p, [$1], $2;\n"
                              "selp.u32 $0, 1, 0, p;\n}",
                              "=r,r,r", {bar, parity});
  b.CreateCondBr(b.CreateICmpNE(ok, b.getInt32(0)), done, loop);
  b.SetInsertPoint(done);
}

void tmaLoad2d(llvm::IRBuilder<>& b, llvm::Value* dst, llvm::Value* map, llvm::Value* bar, llvm::Value* c0,
               llvm::Value* c1) {
  inlineAsm(b, b.getVoidTy(),
            "cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes [$0], [$1, {$2, $3}], [$4];",
            "r,l,r,r,r", {dst, map, c0, c1, bar});
}

void tmaLoad2dMulticast(llvm::IRBuilder<>& b, llvm::Value* dst, llvm::Value* map, llvm::Value* bar, llvm::Value* c0,
                        llvm::Value* c1, llvm::Value* mask) {
  inlineAsm(b, b.getVoidTy(),
            "cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes.multicast::cluster"
            " [$0], [$1, {$2, $3}], [$4], $5;",
            "r,l,r,r,r,h", {dst, map, c0, c1, bar, mask});
}

llvm::Value* wgmmaDescriptor(llvm::IRBuilder<>& b, llvm::Value* addr, unsigned leadingBytes, unsigned strideBytes) {
  llvm::Value* start = b.CreateZExt(b.CreateLShr(b.CreateAnd(addr, b.getInt32(0x3FFFF)), 4), b.getInt64Ty());
  uint64_t fixed = (uint64_t(leadingBytes >> 4) << 16) | (uint64_t(strideBytes >> 4) << 32) | (1ull << 62);
  return b.CreateOr(start, b.getInt64(fixed));
}

void wgmmaFence(llvm::IRBuilder<>& b) { inlineAsm(b, b.getVoidTy(), "wgmma.fence.sync.aligned;", "", {}); }
void wgmmaCommit(llvm::IRBuilder<>& b) { inlineAsm(b, b.getVoidTy(), "wgmma.commit_group.sync.aligned;", "", {}); }
void wgmmaWait(llvm::IRBuilder<>& b, unsigned pending) {
  inlineAsm(b, b.getVoidTy(), "wgmma.wait_group.sync.aligned " + std::to_string(pending) + ";", "", {});
}

namespace {

// wgmma.mma_async with `regs` f32 accumulators tied in and out; `aOperand` is "$k" (a
// descriptor) or "{$k, ..}" (registers), `args` what the operands name, before the accumulators.
std::vector<llvm::Value*> wgmmaCall(llvm::IRBuilder<>& b, unsigned regs, const std::string& head,
                                    const std::string& operands, const std::string& argConstraints,
                                    std::vector<llvm::Value*> args, const std::vector<llvm::Value*>& acc) {
  std::string list, constraints;
  for (unsigned i = 0; i < regs; ++i) {
    list += (i ? ", $" : "$") + std::to_string(i);
    constraints += (i ? ",=f" : "=f");
  }
  constraints += argConstraints;
  for (unsigned i = 0; i < regs; ++i) constraints += "," + std::to_string(i);  // tied: acc in = acc out
  std::string text = head + " {" + list + "}, " + operands + ";";
  args.insert(args.end(), acc.begin(), acc.end());
  std::vector<llvm::Type*> fields(regs, b.getFloatTy());
  auto* ret = llvm::StructType::get(b.getContext(), fields);
  llvm::Value* r = inlineAsm(b, ret, text, constraints, args, /*memory=*/false);
  std::vector<llvm::Value*> out(regs);
  for (unsigned i = 0; i < regs; ++i) out[i] = b.CreateExtractValue(r, i);
  return out;
}

}  // namespace

std::vector<llvm::Value*> wgmma(llvm::IRBuilder<>& b, unsigned n, const char* type,
                                const std::vector<llvm::Value*>& acc, llvm::Value* descA, llvm::Value* descB,
                                bool transB, bool accumulate) {
  unsigned regs = n / 2;  // f32 accumulators per thread of m64nNk16 / m64nNk32
  // 8-bit operands: k32, and no transpose immediates (both operands K-major).
  bool fp8 = std::string(type) == "e4m3" || std::string(type) == "e5m2";
  std::string head =
      "wgmma.mma_async.sync.aligned.m64n" + std::to_string(n) + (fp8 ? "k32" : "k16") + ".f32." + type + "." + type;
  std::string ops = "$" + std::to_string(regs) + ", $" + std::to_string(regs + 1) + (accumulate ? ", 1" : ", 0") +
                    ", 1, 1" +
                    (fp8      ? ""
                     : transB ? ", 0, 1"
                              : ", 0, 0");
  return wgmmaCall(b, regs, head, ops, ",l,l", {descA, descB}, acc);
}

std::vector<llvm::Value*> wgmmaRegA(llvm::IRBuilder<>& b, unsigned n, const char* type,
                                    const std::vector<llvm::Value*>& acc, const std::vector<llvm::Value*>& a,
                                    llvm::Value* descB, bool transB) {
  unsigned regs = n / 2;
  std::string head = "wgmma.mma_async.sync.aligned.m64n" + std::to_string(n) + "k16.f32." + type + "." + type;
  std::string r = std::to_string(regs);
  std::string ops = "{$" + r + ", $" + std::to_string(regs + 1) + ", $" + std::to_string(regs + 2) + ", $" +
                    std::to_string(regs + 3) + "}, $" + std::to_string(regs + 4) + ", 1, 1, 1" +
                    (transB ? ", 1" : ", 0");
  return wgmmaCall(b, regs, head, ops, ",r,r,r,r,l", {a[0], a[1], a[2], a[3], descB}, acc);
}

void tmaLoad4d(llvm::IRBuilder<>& b, llvm::Value* dst, llvm::Value* map, llvm::Value* bar,
               const std::vector<llvm::Value*>& c) {
  inlineAsm(b, b.getVoidTy(),
            "cp.async.bulk.tensor.4d.shared::cluster.global.mbarrier::complete_tx::bytes"
            " [$0], [$1, {$2, $3, $4, $5}], [$6];",
            "r,l,r,r,r,r,r", {dst, map, c[0], c[1], c[2], c[3], bar});
}

llvm::Value* shuffleXor(llvm::IRBuilder<>& b, llvm::Value* v, unsigned laneMask) {
  return intrinsic(b, llvm::Intrinsic::nvvm_shfl_sync_bfly_f32,
                   {b.getInt32(~0u), v, b.getInt32(laneMask), b.getInt32(31)});
}

llvm::Value* exp2Approx(llvm::IRBuilder<>& b, llvm::Value* v) {
  return intrinsic(b, llvm::Intrinsic::nvvm_ex2_approx_ftz_f, {v});
}

llvm::Value* log2Approx(llvm::IRBuilder<>& b, llvm::Value* v) {
  return intrinsic(b, llvm::Intrinsic::nvvm_lg2_approx_f, {v});
}

void namedBarrier(llvm::IRBuilder<>& b, unsigned id, unsigned threads) {
  intrinsic(b, llvm::Intrinsic::nvvm_barrier_sync_cnt, {b.getInt32(id), b.getInt32(threads)});
}

}  // namespace tessera::codegen::ptx
