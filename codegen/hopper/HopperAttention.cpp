// The sm_90a form of online-softmax attention. Every CTA of a persistent grid runs three
// warpgroups (384 threads) over units (batch, head, block of 128 query rows):
//   - warpgroup 0, the producer: one thread loads the unit's Q block once (TMA, D/64 boxes of
//     128 rows x 64 columns) and then each key/value block of 128 rows into a ring of stages, K
//     and V on separate `full` mbarriers so that Q K^T starts before V has landed;
//   - warpgroups 1 and 2, the consumers: each owns 64 query rows. Per key block: S = Q K^T by
//     wgmma m64n128k16 (both operands from shared memory, K K-major), the online softmax on the
//     accumulator registers (scores scaled by scale * log2(e), row maxima and sums over the 4
//     lanes of a quad by shuffles, exp2), P converted to bf16/f16 in place and fed as the
//     register A operand of O += P V (wgmma m64nDk16, V MN-major), O rescaled in registers;
//     after the last block O / l is stored (bounds-checked) and, when asked, the log-sum-exp;
//   - setmaxnreg gives the consumers 240 registers a thread and leaves the producer 24.
// Causal kernels stop at the diagonal block and mask it; the last block of a sequence that is
// not a multiple of 128 masks keys >= S (TMA zero-fills rows past S, so no other head's data is
// read). docs/codegen.md ("Hopper form of attention") has the layouts and the schedule.
#include <cmath>
#include <functional>
#include <optional>

#include "codegen/hopper/HeadDimVariants.h"
#include "codegen/hopper/HopperForms.h"
#include "codegen/hopper/HopperKernel.h"
#include "codegen/hopper/HopperPtx.h"
#include "ir/IR.h"
#include "llvm/IR/IRBuilder.h"
#include "llvm/IR/Module.h"

namespace tessera::codegen {

namespace {

// 128 query rows (two consumers of 64) and 128 keys per block; TMA boxes of 64 columns (128
// bytes: the 128-byte swizzle's row) by 128 rows.
constexpr unsigned kBM = 128, kBN = 128, kBox = 64, kThreads = 384;
constexpr unsigned kProducerRegs = 24, kConsumerRegs = 240;  // 24 * 128 + 240 * 256 = 168 * 384
constexpr unsigned kBarrierBytes = 256;

struct Form {
  int q = 0, k = 0, v = 0, o = 0, scale = 0, lse = -1;
  bool causal = false;
  ir::ScalarKind in = ir::ScalarKind::BF16, out = ir::ScalarKind::BF16;
};

std::optional<Form> formOf(ir::Operation* f) {
  const ir::Attribute* at = f->attr(ir::AttrId::AttentionForm);
  if (!at || at->kind != ir::AttrKind::Array || at->array.size() != 7 || f->regions.empty()) return std::nullopt;
  Form form;
  form.q = static_cast<int>(at->array[0].i);
  form.k = static_cast<int>(at->array[1].i);
  form.v = static_cast<int>(at->array[2].i);
  form.o = static_cast<int>(at->array[3].i);
  form.scale = static_cast<int>(at->array[4].i);
  form.lse = static_cast<int>(at->array[5].i);
  form.causal = at->array[6].i != 0;
  ir::Block& body = f->body();
  auto tensor = [&](int i, size_t rank) {
    if (i < 0 || i >= static_cast<int>(body.numArgs())) return false;
    ir::Type t = body.arg(i)->type;
    return t->kind == ir::TypeKind::Tensor && t->shape.size() == rank && t->elem;
  };
  if (!tensor(form.q, 4) || !tensor(form.k, 4) || !tensor(form.v, 4) || !tensor(form.o, 4) ||
      (form.lse >= 0 && !tensor(form.lse, 3)) || form.scale < 0 || form.scale >= static_cast<int>(body.numArgs()))
    return std::nullopt;
  form.in = ir::baseScalar(body.arg(form.q)->type->elem);
  form.out = ir::baseScalar(body.arg(form.o)->type->elem);
  if (form.in != ir::ScalarKind::BF16 && form.in != ir::ScalarKind::F16) return std::nullopt;
  return form;
}

// Shared memory: Q (128 x D), then per stage K and V (128 x D each), then the barriers; every
// buffer a whole number of 1 KiB (the swizzle's period).
struct Layout {
  unsigned d, stages;
  unsigned qBytes() const { return kBM * d * 2; }
  unsigned kvBytes() const { return kBN * d * 2; }
  unsigned k(unsigned s) const { return qBytes() + s * 2 * kvBytes(); }
  unsigned v(unsigned s) const { return k(s) + kvBytes(); }
  unsigned barriers() const { return qBytes() + stages * 2 * kvBytes(); }
  unsigned sharedBytes() const { return barriers() + kBarrierBytes + 1024; }  // + alignment slack
};
Layout layoutFor(unsigned d) { return {d, d == 64 ? 4u : 2u}; }

class Emitter : HopperKernelBuilder {
 public:
  Emitter(llvm::Module& out, ir::Operation& func, const Form& form, unsigned d)
      : HopperKernelBuilder(out, func), form_(form), lay_(layoutFor(d)) {}

  bool emit();

 private:
  // Barrier i: 0 Q full, 1 Q empty, then per stage K full, V full, K empty and V empty (K is
  // released once Q K^T has completed, V once P V has: a stage's K slot refills a block earlier).
  llvm::Value* barrier(unsigned i) { return b_.CreateAdd(bars_, i32(8 * i)); }
  llvm::Value* barrier(unsigned first, llvm::Value* s) {
    return b_.CreateAdd(bars_, b_.CreateMul(b_.CreateAdd(s, i32(first)), i32(8)));
  }
  llvm::Value* fullK(llvm::Value* s) { return barrier(2, s); }
  llvm::Value* fullV(llvm::Value* s) { return barrier(2 + lay_.stages, s); }
  llvm::Value* emptyK(llvm::Value* s) { return barrier(2 + 2 * lay_.stages, s); }
  llvm::Value* emptyV(llvm::Value* s) { return barrier(2 + 3 * lay_.stages, s); }
  llvm::Value* slot(unsigned (Layout::*at)(unsigned) const, llvm::Value* s) {
    return b_.CreateAdd(smem_, b_.CreateAdd(i32((lay_.*at)(0)), b_.CreateMul(s, i32(2 * lay_.kvBytes()))));
  }
  llvm::Value* load(llvm::Value* p) { return b_.CreateLoad(b_.getInt32Ty(), p); }
  void advance();
  // (b, h, query block) of unit u: the units of one head in a row (CTAs running together share
  // its K and V in L2), causal blocks from the last (the longest) down.
  void unitOf(llvm::Value* u, llvm::Value*& b, llvm::Value*& h, llvm::Value*& qblk);
  llvm::Value* blocksOf(llvm::Value* qblk);
  void producer();
  void loadBlock(llvm::Value* at, llvm::Value* map, llvm::Value* bar, llvm::Value* row, llvm::Value* b, llvm::Value* h,
                 unsigned rows);
  void consumer(llvm::Value* c);
  void keyBlocks(llvm::Value* c, llvm::Value* qblk);
  // One thread of the consumer warpgroup arrives on `bar` (its reads of that slot are complete).
  void release(llvm::Value* bar) {
    ifThen(b_.CreateICmpEQ(tid_, i32(0)), [&] { ptx::mbarrierArrive(b_, bar); });
  }
  std::vector<llvm::Value*> issueScores(llvm::Value* c, llvm::Value* s);
  std::vector<llvm::Value*> vDescriptors(llvm::Value* s);
  std::vector<llvm::Value*> issuePV(const std::vector<llvm::Value*>& o, const std::vector<llvm::Value*>& p,
                                    const std::vector<llvm::Value*>& db);
  std::pair<std::vector<llvm::Value*>, std::vector<llvm::Value*>> softmax(std::vector<llvm::Value*> t, llvm::Value* j,
                                                                          llvm::Value* qblk, llvm::Value* c);
  void mask(std::vector<llvm::Value*>& t, llvm::Value* j, llvm::Value* qblk, llvm::Value* c);
  llvm::Value* quadReduce(llvm::Value* v, bool max);
  void epilogue(llvm::Value* c, llvm::Value* b, llvm::Value* h, llvm::Value* qblk);
  llvm::Value* rowOf(llvm::Value* c, llvm::Value* qblk, unsigned half);

  Form form_;
  Layout lay_;
  llvm::Value *smem_ = nullptr, *bars_ = nullptr, *tid_ = nullptr;
  llvm::Value *S_ = nullptr, *H_ = nullptr, *nq_ = nullptr, *nkv_ = nullptr, *units_ = nullptr;
  llvm::Value* scaleLog2_ = nullptr;
  llvm::Value *stage_ = nullptr, *phase_ = nullptr, *qPhase_ = nullptr;  // allocas (i32)
  llvm::Value *o_ = nullptr, *m_ = nullptr, *l_ = nullptr;               // allocas (f32 arrays)
  llvm::Value* p_ = nullptr;  // alloca: the previous block's packed P (i32 array)
};

void Emitter::advance() {
  llvm::Value* s = b_.CreateAdd(load(stage_), i32(1));
  llvm::Value* wrap = b_.CreateICmpEQ(s, i32(lay_.stages));
  llvm::Value* ph = load(phase_);
  b_.CreateStore(b_.CreateSelect(wrap, i32(0), s), stage_);
  b_.CreateStore(b_.CreateSelect(wrap, b_.CreateXor(ph, i32(1)), ph), phase_);
}

void Emitter::unitOf(llvm::Value* u, llvm::Value*& b, llvm::Value*& h, llvm::Value*& qblk) {
  llvm::Value* bh = b_.CreateUDiv(u, nq_);
  llvm::Value* r = b_.CreateURem(u, nq_);
  qblk = form_.causal ? b_.CreateSub(b_.CreateSub(nq_, i32(1)), r) : r;
  b = b_.CreateUDiv(bh, H_);
  h = b_.CreateURem(bh, H_);
}

// Key blocks of a unit: all, or up to the diagonal (kBN == kBM: block qblk holds it).
llvm::Value* Emitter::blocksOf(llvm::Value* qblk) {
  if (!form_.causal) return nkv_;
  llvm::Value* diag = b_.CreateAdd(qblk, i32(1));
  return b_.CreateSelect(b_.CreateICmpULT(diag, nkv_), diag, nkv_);
}

// `rows` x D of a [B, H, S, D] tensor from row `row` of (b, h), in D / 64 boxes.
void Emitter::loadBlock(llvm::Value* at, llvm::Value* map, llvm::Value* bar, llvm::Value* row, llvm::Value* b,
                        llvm::Value* h, unsigned rows) {
  for (unsigned box = 0; box < lay_.d / kBox; ++box)
    ptx::tmaLoad4d(b_, b_.CreateAdd(at, i32(box * rows * 128)), map, bar, {i32(box * kBox), row, h, b});
}

void Emitter::producer() {
  ptx::setMaxRegisters(b_, false, kProducerRegs);
  llvm::Value *mapQ = tensorMap(0), *mapK = tensorMap(1), *mapV = tensorMap(2);
  ifThen(b_.CreateICmpEQ(tid_, i32(0)), [&] {
    forLoop(ptx::blockIdX(b_), units_, ptx::gridDimX(b_), "units", [&](llvm::Value* u) {
      llvm::Value *b, *h, *qblk;
      unitOf(u, b, h, qblk);
      // The consumers are done with the previous unit's Q (the first wait passes).
      ptx::mbarrierWait(b_, barrier(1), b_.CreateXor(load(qPhase_), i32(1)));
      ptx::mbarrierArriveExpectTx(b_, barrier(0), lay_.qBytes());
      loadBlock(smem_, mapQ, barrier(0), b_.CreateMul(qblk, i32(kBM)), b, h, kBM);
      b_.CreateStore(b_.CreateXor(load(qPhase_), i32(1)), qPhase_);
      forLoop(i32(0), blocksOf(qblk), i32(1), "kv", [&](llvm::Value* j) {
        llvm::Value* s = load(stage_);
        llvm::Value* free = b_.CreateXor(load(phase_), i32(1));
        llvm::Value* row = b_.CreateMul(j, i32(kBN));
        ptx::mbarrierWait(b_, emptyK(s), free);
        ptx::mbarrierArriveExpectTx(b_, fullK(s), lay_.kvBytes());
        loadBlock(slot(&Layout::k, s), mapK, fullK(s), row, b, h, kBN);
        ptx::mbarrierWait(b_, emptyV(s), free);
        ptx::mbarrierArriveExpectTx(b_, fullV(s), lay_.kvBytes());
        loadBlock(slot(&Layout::v, s), mapV, fullV(s), row, b, h, kBN);
        advance();
      });
    });
  });
}

// Issues S = Q K^T for consumer c's 64 rows and the 128 keys of stage s (64 f32 a thread, valid
// after the group completes) and commits it as one wgmma group.
std::vector<llvm::Value*> Emitter::issueScores(llvm::Value* c, llvm::Value* s) {
  const char* type = form_.in == ir::ScalarKind::BF16 ? "bf16" : "f16";
  std::vector<llvm::Value*> acc(kBN / 2, llvm::ConstantFP::get(b_.getFloatTy(), 0.0));
  llvm::Value* q0 = b_.CreateAdd(smem_, b_.CreateMul(c, i32(64 * 128)));
  llvm::Value* k0 = slot(&Layout::k, s);
  for (unsigned kk = 0; kk < lay_.d / 16; ++kk) {
    // Both K-major: box kk / 4 (64 columns of D), 32 bytes per k16 step inside it.
    unsigned within = (kk % 4) * 32;
    llvm::Value* da = ptx::wgmmaDescriptor(b_, b_.CreateAdd(q0, i32((kk / 4) * kBM * 128 + within)), 16, 1024);
    llvm::Value* db = ptx::wgmmaDescriptor(b_, b_.CreateAdd(k0, i32((kk / 4) * kBN * 128 + within)), 16, 1024);
    acc = ptx::wgmma(b_, kBN, type, acc, da, db, /*transB=*/false, /*accumulate=*/kk > 0);
  }
  ptx::wgmmaCommit(b_);
  return acc;
}

// Issues O += P V (P: 32 packed registers, the register A fragments of the 8 k16 steps; db: the
// V block's descriptors, vDescriptors) and commits it. The descriptors are computed first: with only wgmmas between
// the caller's fence and the commit, ptxas inserts no warpgroup.arrive (C7519).
std::vector<llvm::Value*> Emitter::issuePV(const std::vector<llvm::Value*>& o, const std::vector<llvm::Value*>& p,
                                           const std::vector<llvm::Value*>& db) {
  const char* type = form_.in == ir::ScalarKind::BF16 ? "bf16" : "f16";
  std::vector<llvm::Value*> acc = o;
  for (unsigned kk = 0; kk < kBN / 16; ++kk)
    acc = ptx::wgmmaRegA(b_, lay_.d, type, acc, {p[4 * kk], p[4 * kk + 1], p[4 * kk + 2], p[4 * kk + 3]}, db[kk],
                         /*transB=*/true);
  ptx::wgmmaCommit(b_);
  return acc;
}

// V MN-major: 16 key rows (2 KiB) per k16 step, 64-column boxes kBN * 128 bytes apart.
std::vector<llvm::Value*> Emitter::vDescriptors(llvm::Value* s) {
  llvm::Value* v0 = slot(&Layout::v, s);
  std::vector<llvm::Value*> db(kBN / 16);
  for (unsigned kk = 0; kk < kBN / 16; ++kk)
    db[kk] = ptx::wgmmaDescriptor(b_, b_.CreateAdd(v0, i32(kk * 16 * 128)), kBN * 128, 1024);
  return db;
}

// Query row of accumulator half `half` (0: registers 4i, 4i+1; 1: 4i+2, 4i+3) of this thread.
llvm::Value* Emitter::rowOf(llvm::Value* c, llvm::Value* qblk, unsigned half) {
  llvm::Value* warp = b_.CreateLShr(tid_, 5);
  llvm::Value* lane = b_.CreateAnd(tid_, i32(31));
  llvm::Value* r = b_.CreateAdd(b_.CreateMul(warp, i32(16)), b_.CreateAdd(b_.CreateLShr(lane, 2), i32(8 * half)));
  return b_.CreateAdd(b_.CreateAdd(b_.CreateMul(qblk, i32(kBM)), b_.CreateMul(c, i32(64))), r);
}

// Keys at or past S, and (causal) keys after the query row, get -inf.
void Emitter::mask(std::vector<llvm::Value*>& t, llvm::Value* j, llvm::Value* qblk, llvm::Value* c) {
  llvm::Value* lane = b_.CreateAnd(tid_, i32(31));
  llvm::Value* col0 = b_.CreateAdd(b_.CreateMul(j, i32(kBN)), b_.CreateMul(b_.CreateAnd(lane, i32(3)), i32(2)));
  llvm::Value* ninf = llvm::ConstantFP::getInfinity(b_.getFloatTy(), true);
  for (unsigned half = 0; half < 2; ++half) {
    llvm::Value* limit = S_;  // keys < limit survive
    if (form_.causal) {
      llvm::Value* next = b_.CreateAdd(rowOf(c, qblk, half), i32(1));
      limit = b_.CreateSelect(b_.CreateICmpULT(next, S_), next, S_);
    }
    for (unsigned i = 0; i < kBN / 8; ++i)
      for (unsigned e = 0; e < 2; ++e) {
        unsigned reg = 4 * i + 2 * half + e;
        llvm::Value* key = b_.CreateAdd(col0, i32(8 * i + e));
        t[reg] = b_.CreateSelect(b_.CreateICmpULT(key, limit), t[reg], ninf);
      }
  }
}

// The maxima use llvm.maxnum (one max.f32) rather than the language's maximumNumber selects:
// they differ only in the sign of a zero result, and a running max of +-0 changes no result bit
// (it enters exact differences that feed 2^x, and m + log2 l; docs/codegen.md says why).
llvm::Value* Emitter::quadReduce(llvm::Value* v, bool max) {
  for (unsigned lanes : {1u, 2u}) {
    llvm::Value* other = ptx::shuffleXor(b_, v, lanes);
    v = max ? b_.CreateMaxNum(v, other) : b_.CreateFAdd(v, other);
  }
  return v;
}

// The online softmax of block j's scores t (64 f32 a thread, overwritten): scale, mask, row
// maxima and the thread's partial row sums (m_, l_ updated). Returns alpha for the thread's two
// rows and P rounded to the 16-bit type, packed in pairs (32 i32): k16 step kk is accumulator
// columns 16kk .. 16kk + 15, which are the register A fragment of that step as they lie.
std::pair<std::vector<llvm::Value*>, std::vector<llvm::Value*>> Emitter::softmax(std::vector<llvm::Value*> t,
                                                                                 llvm::Value* j, llvm::Value* qblk,
                                                                                 llvm::Value* c) {
  auto* f32 = b_.getFloatTy();
  auto at = [&](llvm::Value* arr, unsigned i) {
    return b_.CreateConstGEP2_32(llvm::ArrayType::get(f32, 2), arr, 0, i);
  };
  for (auto& x : t) x = b_.CreateFMul(x, scaleLog2_);
  // Mask the blocks that reach past S or (causal) the diagonal; the branch is uniform.
  llvm::Value* end = b_.CreateMul(b_.CreateAdd(j, i32(1)), i32(kBN));
  llvm::Value* partial = b_.CreateICmpUGT(end, S_);
  if (form_.causal) partial = b_.CreateOr(partial, b_.CreateICmpEQ(j, qblk));
  llvm::BasicBlock* pre = b_.GetInsertBlock();
  auto* masked = block("mask");
  auto* join = block("mask.done");
  b_.CreateCondBr(partial, masked, join);
  b_.SetInsertPoint(masked);
  std::vector<llvm::Value*> mt = t;
  mask(mt, j, qblk, c);
  llvm::BasicBlock* maskedEnd = b_.GetInsertBlock();
  b_.CreateBr(join);
  b_.SetInsertPoint(join);
  for (size_t i = 0; i < t.size(); ++i) {
    llvm::PHINode* phi = b_.CreatePHI(f32, 2);
    phi->addIncoming(t[i], pre);
    phi->addIncoming(mt[i], maskedEnd);
    t[i] = phi;
  }
  llvm::Value* ninf = llvm::ConstantFP::getInfinity(f32, true);
  std::vector<llvm::Value*> alpha(2);
  for (unsigned half = 0; half < 2; ++half) {
    llvm::Value* mx = ninf;
    for (unsigned i = 0; i < kBN / 8; ++i)
      for (unsigned e = 0; e < 2; ++e) mx = b_.CreateMaxNum(mx, t[4 * i + 2 * half + e]);
    mx = quadReduce(mx, true);
    llvm::Value* mOld = b_.CreateLoad(f32, at(m_, half));
    llvm::Value* mNew = b_.CreateMaxNum(mOld, mx);
    // A row with every key masked so far keeps m = -inf; subtract 0 instead (p = 0, no NaN).
    llvm::Value* mUse = b_.CreateSelect(b_.CreateFCmpOEQ(mNew, ninf), llvm::ConstantFP::get(f32, 0.0), mNew);
    alpha[half] = ptx::exp2Approx(b_, b_.CreateFSub(mOld, mUse));
    b_.CreateStore(mNew, at(m_, half));
    llvm::Value* sum = llvm::ConstantFP::get(f32, 0.0);
    for (unsigned i = 0; i < kBN / 8; ++i)
      for (unsigned e = 0; e < 2; ++e) {
        unsigned reg = 4 * i + 2 * half + e;
        t[reg] = ptx::exp2Approx(b_, b_.CreateFSub(t[reg], mUse));
        sum = b_.CreateFAdd(sum, t[reg]);
      }
    // This thread's part of the row sum; the quad's parts are added in the epilogue.
    llvm::Value* l = b_.CreateLoad(f32, at(l_, half));
    b_.CreateStore(b_.CreateFAdd(b_.CreateFMul(l, alpha[half]), sum), at(l_, half));
  }
  llvm::Type* half16 = form_.in == ir::ScalarKind::BF16 ? b_.getBFloatTy() : b_.getHalfTy();
  auto* pairTy = llvm::FixedVectorType::get(half16, 2);
  std::vector<llvm::Value*> p;
  for (unsigned r = 0; r < kBN / 4; ++r) {
    llvm::Value* v = llvm::PoisonValue::get(llvm::FixedVectorType::get(f32, 2));
    v = b_.CreateInsertElement(b_.CreateInsertElement(v, t[2 * r], uint64_t(0)), t[2 * r + 1], uint64_t(1));
    p.push_back(b_.CreateBitCast(b_.CreateFPTrunc(v, pairTy), b_.getInt32Ty()));
  }
  return {alpha, p};
}

// The key blocks of a unit, two products in flight: block j's Q K^T is issued together with block
// j - 1's P V, so that the softmax of block j runs while the tensor cores compute P V
// (FlashAttention-3's intra-warpgroup pipeline). O is rescaled by block j's alpha once that
// P V has completed; the last block's P V follows the loop.
void Emitter::keyBlocks(llvm::Value* c, llvm::Value* qblk) {
  auto* f32 = b_.getFloatTy();
  const unsigned nO = lay_.d / 2, nP = kBN / 4;
  auto oAt = [&](unsigned i) { return b_.CreateConstGEP2_32(llvm::ArrayType::get(f32, nO), o_, 0, i); };
  auto pAt = [&](unsigned i) { return b_.CreateConstGEP2_32(llvm::ArrayType::get(b_.getInt32Ty(), nP), p_, 0, i); };
  auto loadAll = [&](llvm::Type* t, const std::function<llvm::Value*(unsigned)>& at, unsigned n) {
    std::vector<llvm::Value*> v(n);
    for (unsigned i = 0; i < n; ++i) v[i] = b_.CreateLoad(t, at(i));
    return v;
  };
  auto storeP = [&](const std::vector<llvm::Value*>& p) {
    for (unsigned i = 0; i < nP; ++i) b_.CreateStore(p[i], pAt(i));
  };
  // Block 0: its scores alone (O is zero: no rescale).
  llvm::Value* s = load(stage_);
  ptx::mbarrierWait(b_, fullK(s), load(phase_));
  ptx::wgmmaFence(b_);
  std::vector<llvm::Value*> t = issueScores(c, s);
  ptx::wgmmaWait(b_, 0);
  release(emptyK(s));
  storeP(softmax(t, i32(0), qblk, c).second);
  forLoop(i32(1), blocksOf(qblk), i32(1), "kv", [&](llvm::Value* j) {
    llvm::Value* prev = load(stage_);
    llvm::Value* prevPhase = load(phase_);
    advance();
    llvm::Value* cur = load(stage_);
    ptx::mbarrierWait(b_, fullK(cur), load(phase_));
    // V of the previous block landed long ago; waiting here keeps every operand register's
    // definition before the fence (no warpgroup.arrive between the two products).
    ptx::mbarrierWait(b_, fullV(prev), prevPhase);
    std::vector<llvm::Value*> o = loadAll(f32, oAt, nO), p = loadAll(b_.getInt32Ty(), pAt, nP);
    std::vector<llvm::Value*> db = vDescriptors(prev);
    ptx::wgmmaFence(b_);
    std::vector<llvm::Value*> sc = issueScores(c, cur);
    o = issuePV(o, p, db);
    ptx::wgmmaWait(b_, 1);  // the scores are in: this block's K is free
    release(emptyK(cur));
    auto [alpha, pNext] = softmax(sc, j, qblk, c);
    ptx::wgmmaWait(b_, 0);  // P V is done: the previous block's V is free, O may be rescaled
    release(emptyV(prev));
    for (unsigned i = 0; i < nO; ++i) b_.CreateStore(b_.CreateFMul(o[i], alpha[(i / 2) % 2]), oAt(i));
    storeP(pNext);
  });
  llvm::Value* last = load(stage_);
  std::vector<llvm::Value*> o = loadAll(f32, oAt, nO), p = loadAll(b_.getInt32Ty(), pAt, nP);
  std::vector<llvm::Value*> db = vDescriptors(last);
  ptx::mbarrierWait(b_, fullV(last), load(phase_));
  ptx::wgmmaFence(b_);
  o = issuePV(o, p, db);
  ptx::wgmmaWait(b_, 0);
  for (unsigned i = 0; i < nO; ++i) b_.CreateStore(o[i], oAt(i));
  release(emptyV(last));
  advance();
}

void Emitter::consumer(llvm::Value* wg) {
  ptx::setMaxRegisters(b_, true, kConsumerRegs);
  llvm::Value* c = b_.CreateSub(wg, i32(1));  // rows 64c .. 64c + 63 of the query block
  const unsigned nO = lay_.d / 2;
  forLoop(ptx::blockIdX(b_), units_, ptx::gridDimX(b_), "units", [&](llvm::Value* u) {
    llvm::Value *b, *h, *qblk;
    unitOf(u, b, h, qblk);
    auto* f32 = b_.getFloatTy();
    for (unsigned i = 0; i < nO; ++i)
      b_.CreateStore(llvm::ConstantFP::get(f32, 0.0), b_.CreateConstGEP2_32(llvm::ArrayType::get(f32, nO), o_, 0, i));
    for (unsigned i = 0; i < 2; ++i) {
      b_.CreateStore(llvm::ConstantFP::getInfinity(f32, true),
                     b_.CreateConstGEP2_32(llvm::ArrayType::get(f32, 2), m_, 0, i));
      b_.CreateStore(llvm::ConstantFP::get(f32, 0.0), b_.CreateConstGEP2_32(llvm::ArrayType::get(f32, 2), l_, 0, i));
    }
    ptx::mbarrierWait(b_, barrier(0), load(qPhase_));
    keyBlocks(c, qblk);
    // Q is read (every wgmma of this warpgroup has completed): the producer may load the next.
    ifThen(b_.CreateICmpEQ(tid_, i32(0)), [&] { ptx::mbarrierArrive(b_, barrier(1)); });
    b_.CreateStore(b_.CreateXor(load(qPhase_), i32(1)), qPhase_);
    epilogue(c, b, h, qblk);
  });
}

// O = acc / l converted to O's type, rows < S only; LSE = (m + log2 l) ln 2 from one lane a quad.
void Emitter::epilogue(llvm::Value* c, llvm::Value* b, llvm::Value* h, llvm::Value* qblk) {
  auto* f32 = b_.getFloatTy();
  const unsigned nO = lay_.d / 2;
  llvm::Type* outTy = paramType(func_.body().arg(form_.o)->type->elem);
  llvm::Value* lane = b_.CreateAnd(tid_, i32(31));
  llvm::Value* col0 = b_.CreateMul(b_.CreateAnd(lane, i32(3)), i32(2));
  auto i64 = [&](llvm::Value* v) { return b_.CreateZExt(v, b_.getInt64Ty()); };
  // (data, element offset of (b, h)) of a [B, H, S, ...] parameter.
  auto base = [&](int param) {
    llvm::Value* off =
        b_.CreateAdd(b_.CreateMul(i64(b), tensorField(param, 2, 0)), b_.CreateMul(i64(h), tensorField(param, 2, 1)));
    return std::make_pair(b_.CreateAddrSpaceCast(tensorField(param, 0, 0), b_.getPtrTy(1)), off);
  };
  auto [oData, oOff] = base(form_.o);
  llvm::Value* oRow = tensorField(form_.o, 2, 2);
  llvm::Value* oCol = tensorField(form_.o, 2, 3);
  for (unsigned half = 0; half < 2; ++half) {
    llvm::Value* row = rowOf(c, qblk, half);
    llvm::Value* l =
        quadReduce(b_.CreateLoad(f32, b_.CreateConstGEP2_32(llvm::ArrayType::get(f32, 2), l_, 0, half)), false);
    llvm::Value* inv = b_.CreateFDiv(llvm::ConstantFP::get(f32, 1.0), l);
    ifThen(b_.CreateICmpULT(row, S_), [&] {
      llvm::Value* rowOff = b_.CreateAdd(oOff, b_.CreateMul(i64(row), oRow));
      for (unsigned i = 0; i < lay_.d / 8; ++i)
        for (unsigned e = 0; e < 2; ++e) {
          unsigned reg = 4 * i + 2 * half + e;
          llvm::Value* x =
              b_.CreateFMul(b_.CreateLoad(f32, b_.CreateConstGEP2_32(llvm::ArrayType::get(f32, nO), o_, 0, reg)), inv);
          if (!outTy->isFloatTy()) x = b_.CreateFPTrunc(x, outTy);
          llvm::Value* col = b_.CreateAdd(col0, i32(8 * i + e));
          b_.CreateStore(x, b_.CreateGEP(outTy, oData, b_.CreateAdd(rowOff, b_.CreateMul(i64(col), oCol))));
        }
      if (form_.lse < 0) return;
      ifThen(b_.CreateICmpEQ(b_.CreateAnd(lane, i32(3)), i32(0)), [&] {
        auto [lData, lOff] = base(form_.lse);
        llvm::Value* m = b_.CreateLoad(f32, b_.CreateConstGEP2_32(llvm::ArrayType::get(f32, 2), m_, 0, half));
        llvm::Value* log2l = ptx::log2Approx(b_, l);
        llvm::Value* lse = b_.CreateFMul(b_.CreateFAdd(m, log2l), llvm::ConstantFP::get(f32, std::log(2.0)));
        // m is max(s) * scale * log2(e) (0 for an all-masked row, which has none here).
        llvm::Value* at = b_.CreateAdd(lOff, b_.CreateMul(i64(row), tensorField(form_.lse, 2, 2)));
        b_.CreateStore(lse, b_.CreateGEP(f32, lData, at));
      });
    });
  }
}

bool Emitter::emit() {
  declare(headDimEntry(func_.funcName(), lay_.d), 3, kThreads);
  b_.SetInsertPoint(block("entry"));
  auto* f32 = b_.getFloatTy();
  stage_ = b_.CreateAlloca(b_.getInt32Ty(), nullptr, "stage");
  phase_ = b_.CreateAlloca(b_.getInt32Ty(), nullptr, "phase");
  qPhase_ = b_.CreateAlloca(b_.getInt32Ty(), nullptr, "qphase");
  o_ = b_.CreateAlloca(llvm::ArrayType::get(f32, lay_.d / 2), nullptr, "o");
  m_ = b_.CreateAlloca(llvm::ArrayType::get(f32, 2), nullptr, "m");
  l_ = b_.CreateAlloca(llvm::ArrayType::get(f32, 2), nullptr, "l");
  p_ = b_.CreateAlloca(llvm::ArrayType::get(b_.getInt32Ty(), kBN / 4), nullptr, "p");
  for (llvm::Value* a : {stage_, phase_, qPhase_}) b_.CreateStore(i32(0), a);
  llvm::Value* tid = ptx::threadIdX(b_);
  llvm::Value* wg = b_.CreateLShr(tid, 7);
  tid_ = b_.CreateAnd(tid, i32(127));  // thread in its warpgroup
  smem_ = sharedBase();
  bars_ = b_.CreateAdd(smem_, i32(lay_.barriers()));
  ifThen(b_.CreateICmpEQ(tid, i32(0)), [&] {
    ptx::mbarrierInit(b_, barrier(0), 1);  // Q full: the producer's arrive (plus the TMA bytes)
    ptx::mbarrierInit(b_, barrier(1), 2);  // Q empty: one arrive per consumer warpgroup
    for (unsigned s = 0; s < lay_.stages; ++s) {
      ptx::mbarrierInit(b_, fullK(i32(s)), 1);
      ptx::mbarrierInit(b_, fullV(i32(s)), 1);
      ptx::mbarrierInit(b_, emptyK(i32(s)), 2);  // one arrive per consumer warpgroup
      ptx::mbarrierInit(b_, emptyV(i32(s)), 2);
    }
    ptx::fenceMbarrierInit(b_);
  });
  ptx::blockBarrier(b_);
  // Extents of Q (K and V have the same: the launch checks compare the kernel's symbols), in 32
  // bits (TMA maps need extents below 2^31).
  llvm::Value* B = b_.CreateTrunc(tensorField(form_.q, 1, 0), b_.getInt32Ty());
  H_ = b_.CreateTrunc(tensorField(form_.q, 1, 1), b_.getInt32Ty());
  S_ = b_.CreateTrunc(tensorField(form_.q, 1, 2), b_.getInt32Ty());
  nq_ = b_.CreateUDiv(b_.CreateAdd(S_, i32(kBM - 1)), i32(kBM));
  nkv_ = b_.CreateUDiv(b_.CreateAdd(S_, i32(kBN - 1)), i32(kBN));
  units_ = b_.CreateMul(b_.CreateMul(B, H_), nq_);
  scaleLog2_ = b_.CreateFMul(fn_->getArg(form_.scale), llvm::ConstantFP::get(f32, 1.4426950408889634));
  roles(wg, [&] { producer(); }, [&](llvm::Value* w) { consumer(w); });
  return true;
}

// One variant per head dimension: Q, K, V by boxes of 64 columns x 128 rows of the [B, H, S, D]
// view, for exactly this D.
const HeadDimForm<Form> kForm{
    .name = "attention form",
    .formOf = formOf,
    .missed = ir::AttrId::AttentionFormMissed,
    .missedRemark = diag::remark_no_attention_form,
    .plannedRemark = diag::remark_attention_wgmma,
    .remarkArgs = [](const Form&) { return std::vector<std::string>{std::to_string(kBM), std::to_string(kBN)}; },
    .threads = kThreads,
    .boxColumns = kBox,
    .sharedBytes = [](const Form&, unsigned d) -> uint64_t { return layoutFor(d).sharedBytes(); },
    .maps = [](const Form& form,
               unsigned) { return std::vector<std::pair<int, unsigned>>{{form.q, kBM}, {form.k, kBN}, {form.v, kBN}}; },
    .emit = [](llvm::Module& out, ir::Operation& f, const Form& form,
               unsigned d) { return Emitter(out, f, form, d).emit(); },
};

}  // namespace

void planAttentionVariants(ir::Module& m, std::vector<KernelInterface>& kernels) {
  planHeadDimVariants(m, kernels, kForm);
}

bool emitAttentionVariants(ir::Module& m, const std::vector<KernelInterface>& kernels, llvm::Module& out,
                           std::string& error) {
  return emitHeadDimVariants(m, kernels, out, error, kForm);
}

}  // namespace tessera::codegen
