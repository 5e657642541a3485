// The sm_90a instructions the Hopper forms use, as LLVM IR: NVVM intrinsics where LLVM 19 has
// them (mbarrier.init, mbarrier.arrive, setmaxnreg, special registers) and inline PTX where it
// has none (wgmma.mma_async, wgmma.fence/commit_group/wait_group, cp.async.bulk.tensor,
// mbarrier.arrive.expect_tx, mbarrier.try_wait.parity, fence.mbarrier_init). Shared-memory
// addresses are 32-bit offsets in the shared window (what PTX's [r] operands take).
// docs/codegen.md ("Hopper form of tile.mma") describes layouts, descriptors and barriers.
#pragma once

#include <vector>

#include "llvm/IR/IRBuilder.h"

namespace tessera::codegen::ptx {

// A call of inline PTX (side effects; `memory` adds a memory clobber).
llvm::Value* inlineAsm(llvm::IRBuilder<>& b, llvm::Type* ret, const std::string& text, const std::string& constraints,
                       const std::vector<llvm::Value*>& args, bool memory = true);

llvm::Value* threadIdX(llvm::IRBuilder<>& b);
llvm::Value* blockIdX(llvm::IRBuilder<>& b);
llvm::Value* gridDimX(llvm::IRBuilder<>& b);
// bar.sync 0 over the whole block.
void blockBarrier(llvm::IRBuilder<>& b);
// The block's rank in its cluster, and barrier.cluster.arrive + wait over the whole cluster.
llvm::Value* clusterRank(llvm::IRBuilder<>& b);
void clusterBarrier(llvm::IRBuilder<>& b);
// setmaxnreg.{inc,dec}.sync.aligned.u32 n (the whole warpgroup must execute it).
void setMaxRegisters(llvm::IRBuilder<>& b, bool increase, unsigned n);

// ---- mbarrier (64-bit barrier objects in shared memory)
void mbarrierInit(llvm::IRBuilder<>& b, llvm::Value* bar, unsigned count);
// Makes initialised barriers visible to the async proxy (TMA) and the cluster.
void fenceMbarrierInit(llvm::IRBuilder<>& b);
void mbarrierArrive(llvm::IRBuilder<>& b, llvm::Value* bar);
// Arrives on the barrier at the same shared offset in block `rank` of the cluster (mapa).
void mbarrierArriveRemote(llvm::IRBuilder<>& b, llvm::Value* bar, llvm::Value* rank);
// Arrives and adds `bytes` to the transaction count the current phase waits for.
void mbarrierArriveExpectTx(llvm::IRBuilder<>& b, llvm::Value* bar, unsigned bytes);
// Spins until the phase of parity `parity` (i32 0/1) has completed.
void mbarrierWait(llvm::IRBuilder<>& b, llvm::Value* bar, llvm::Value* parity);

// ---- TMA: box at coordinates (c0 innermost, c1) of the tensor map at generic address `map`
// into shared memory at `dst`, completing `bytes` on barrier `bar`.
void tmaLoad2d(llvm::IRBuilder<>& b, llvm::Value* dst, llvm::Value* map, llvm::Value* bar, llvm::Value* c0,
               llvm::Value* c1);
// The same box into `dst` of every block of the cluster in `mask` (i16), completing on each
// block's barrier at `bar`'s offset.
void tmaLoad2dMulticast(llvm::IRBuilder<>& b, llvm::Value* dst, llvm::Value* map, llvm::Value* bar, llvm::Value* c0,
                        llvm::Value* c1, llvm::Value* mask);

// The same box of a tensor map of rank 4 (coordinates innermost first: c[0] contiguous, c[1] the
// rows, c[2], c[3] the outer dimensions, which the box covers with extent 1).
void tmaLoad4d(llvm::IRBuilder<>& b, llvm::Value* dst, llvm::Value* map, llvm::Value* bar,
               const std::vector<llvm::Value*>& c);

// ---- warp and math
// shfl.sync.bfly over the whole warp: `v` of the lane whose index is this lane's XOR `laneMask`.
llvm::Value* shuffleXor(llvm::IRBuilder<>& b, llvm::Value* v, unsigned laneMask);
// ex2.approx.ftz.f32 (relative error about 2^-22; 2^-inf = 0).
llvm::Value* exp2Approx(llvm::IRBuilder<>& b, llvm::Value* v);
// lg2.approx.f32 (absolute error about 2^-22 near 1).
llvm::Value* log2Approx(llvm::IRBuilder<>& b, llvm::Value* v);
// bar.sync `id`, `threads` over the threads that reach it (named barriers: warpgroups of a CTA).
void namedBarrier(llvm::IRBuilder<>& b, unsigned id, unsigned threads);

// ---- wgmma
// Matrix descriptor of a shared-memory operand in the 128-byte swizzled layout: start address,
// leading and stride byte offsets (PTX ISA "matrix descriptor format").
llvm::Value* wgmmaDescriptor(llvm::IRBuilder<>& b, llvm::Value* addr, unsigned leadingBytes, unsigned strideBytes);
void wgmmaFence(llvm::IRBuilder<>& b);
void wgmmaCommit(llvm::IRBuilder<>& b);
void wgmmaWait(llvm::IRBuilder<>& b, unsigned pending);
// wgmma.mma_async.sync.aligned.m64n{n}k16.f32.{type}.{type} (k32 for e4m3/e5m2): acc (n/2 f32
// per thread) += A * B, both operands from shared memory; `transB`: B is MN-major (N contiguous),
// which 16-bit types only allow (8-bit operands are K-major, and `transB` must be false).
// `accumulate` false: scale-d = 0, acc's values are ignored (D = A*B).
std::vector<llvm::Value*> wgmma(llvm::IRBuilder<>& b, unsigned n, const char* type,
                                const std::vector<llvm::Value*>& acc, llvm::Value* descA, llvm::Value* descB,
                                bool transB, bool accumulate = true);
// The same with A (64 x 16, 16-bit) from registers: four i32 a thread, each two elements of the
// accumulator layout of a k16 column pair (PTX ISA "wgmma register fragment A"), so that an f32
// accumulator of one wgmma, converted in place, is the A operand of the next.
std::vector<llvm::Value*> wgmmaRegA(llvm::IRBuilder<>& b, unsigned n, const char* type,
                                    const std::vector<llvm::Value*>& acc, const std::vector<llvm::Value*>& a,
                                    llvm::Value* descB, bool transB);

}  // namespace tessera::codegen::ptx
