// The sm_90a form of the FlashAttention backward. Both kernels of FlashAttention-2's two-kernel
// backward share one schedule: a unit is (batch, head, block of 128 "fixed" rows) whose two tiles
// F1, F2 stay in shared memory while blocks of `rows` "streamed" rows T1, T2 pass through a ring
// of stages:
//   key/value kernel: F = K, V (keys), T = Q, dO (queries); per block X = K Q^T (= S^T),
//     Y = V dO^T (= dP^T), P^T = exp(X * scale - LSE), dS^T = P^T (Y - Delta), then
//     dV += P^T dO and dK += dS^T Q with P^T and dS^T as register A operands; dK *= scale;
//   query kernel: F = Q, dO (queries), T = K, V (keys); per block X = Q K^T, Y = dO V^T,
//     P = exp(X * scale - LSE), dS = P (Y - Delta), dQ += dS K (dS the register A operand);
//     dQ *= scale.
// Every CTA of a persistent grid runs three warpgroups (384 threads):
//   - warpgroup 0, the producers: thread 0 loads F1, F2 once per unit and T1, T2 per block (TMA,
//     boxes of 64 columns); warps 1 to 3 compute the statistics of the unit's query rows
//     (LSE * log2(e) and Delta = rowsum(dO * O), +inf and 0 past S) into shared memory: per block
//     in the key/value kernel, per unit in the query kernel;
//   - warpgroups 1 and 2, the consumers: 64 fixed rows each, every accumulator in registers.
// Causal kernels skip the blocks above the diagonal and mask the blocks that cross it; keys or
// queries at or past S are masked too (TMA zero-fills rows past S). docs/codegen.md ("Hopper form
// of the attention backward") has the layouts and the schedule.
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

// 128 fixed rows (two consumers of 64); TMA boxes of 64 columns (128 bytes, the swizzle's row).
constexpr unsigned kFixed = 128, kBox = 64, kThreads = 384, kStatWarps = 3;
constexpr unsigned kBarrierBytes = 256;

struct Form {
  bool kv = true;  // the key/value kernel (dK, dV) or the query kernel (dQ)
  int q = 0, k = 0, v = 0, o = 0, dO = 0, lse = 0, out1 = 0, out2 = -1, scale = 0;
  bool causal = false;
  ir::ScalarKind in = ir::ScalarKind::BF16;
  // F1, F2, T1, T2 as parameter indices.
  int f1() const { return kv ? k : q; }
  int f2() const { return kv ? v : dO; }
  int t1() const { return kv ? q : k; }
  int t2() const { return kv ? dO : v; }
};

std::optional<Form> formOf(ir::Operation* f) {
  const ir::Attribute* at = f->attr(ir::AttrId::AttentionBwdForm);
  if (!at || at->kind != ir::AttrKind::Array || at->array.size() != 11 || f->regions.empty()) return std::nullopt;
  auto i = [&](unsigned n) { return static_cast<int>(at->array[n].i); };
  Form form;
  form.kv = i(0) == 0;
  form.q = i(1);
  form.k = i(2);
  form.v = i(3);
  form.o = i(4);
  form.dO = i(5);
  form.lse = i(6);
  form.out1 = i(7);
  form.out2 = i(8);
  form.scale = i(9);
  form.causal = i(10) != 0;
  ir::Block& body = f->body();
  auto tensor = [&](int p, size_t rank) {
    if (p < 0 || p >= static_cast<int>(body.numArgs())) return false;
    ir::Type t = body.arg(p)->type;
    return t->kind == ir::TypeKind::Tensor && t->shape.size() == rank && t->elem;
  };
  for (int p : {form.q, form.k, form.v, form.o, form.dO, form.out1})
    if (!tensor(p, 4)) return std::nullopt;
  if (!tensor(form.lse, 3) || (form.kv && !tensor(form.out2, 4)) || form.scale < 0 ||
      form.scale >= static_cast<int>(body.numArgs()))
    return std::nullopt;
  form.in = ir::baseScalar(body.arg(form.q)->type->elem);
  if (form.in != ir::ScalarKind::BF16 && form.in != ir::ScalarKind::F16) return std::nullopt;
  return form;
}

// Shared memory: the fixed tiles (128 x D each: F1, F2 and, in the query kernel, O), per stage the
// streamed tiles (rows x D each: T1, T2 and, in the key/value kernel, O), the fixed rows'
// statistics (128 x 2 f32), each stage's statistics (rows x 2 f32), the barriers. O's tile rides
// with the query rows, whose Delta = rowsum(dO O) the statistics warps compute from the two tiles.
struct Layout {
  unsigned d, rows, stages;
  unsigned nFixed, nStream;  // tiles of the fixed and of the streamed rows
  // setmaxnreg: producer * 128 + consumer * 256 = 168 * 384, the registers the CTA starts with.
  unsigned producerRegs, consumerRegs;
  unsigned fixedBytes() const { return kFixed * d * 2; }
  unsigned streamBytes() const { return rows * d * 2; }
  unsigned stageBytes() const { return nStream * streamBytes(); }
  unsigned f(unsigned i) const { return i * fixedBytes(); }
  unsigned t(unsigned s, unsigned i) const { return nFixed * fixedBytes() + s * stageBytes() + i * streamBytes(); }
  unsigned fixedStats() const { return t(stages, 0); }
  unsigned streamStats(unsigned s) const { return fixedStats() + kFixed * 8 + s * rows * 8; }
  unsigned barriers() const { return streamStats(stages); }
  unsigned sharedBytes() const { return barriers() + kBarrierBytes + 1024; }  // + alignment slack
};
// D = 64: blocks of 128 streamed rows; D = 128: 64 (the accumulators X, Y, and two of 64 x D
// for the key/value kernel, in the consumers' registers). As many stages (up to 4) as fit in
// 227 KiB. Register split (ptxas -v): the key/value consumers hold two accumulators of 64 x D and
// get 240, the query consumers 232; the producers the rest (24 or 40).
Layout layoutFor(const Form& form, unsigned d) {
  unsigned consumer = form.kv ? 240 : 232;
  Layout lay{d,       d == 64 ? 128u : 64u, 4, form.kv ? 2u : 3u, form.kv ? 3u : 2u, (168 * 384 - consumer * 256) / 128,
             consumer};
  while (lay.stages > 2 && lay.sharedBytes() > 227 * 1024) --lay.stages;
  return lay;
}

class Emitter : HopperKernelBuilder {
 public:
  Emitter(llvm::Module& out, ir::Operation& func, const Form& form, unsigned d)
      : HopperKernelBuilder(out, func), form_(form), lay_(layoutFor(form, d)) {}

  bool emit();

 private:
  // Barriers: 0 fixed full, 1 fixed empty, 2 fixed statistics, then per stage: full,
  // statistics, empty.
  llvm::Value* barrier(unsigned i) { return b_.CreateAdd(bars_, i32(8 * i)); }
  llvm::Value* barrier(unsigned first, llvm::Value* s) {
    return b_.CreateAdd(bars_, b_.CreateMul(b_.CreateAdd(s, i32(first)), i32(8)));
  }
  llvm::Value* fullT(llvm::Value* s) { return barrier(3, s); }
  llvm::Value* statsT(llvm::Value* s) { return barrier(3 + lay_.stages, s); }
  llvm::Value* emptyT(llvm::Value* s) { return barrier(3 + 2 * lay_.stages, s); }
  llvm::Value* tile(llvm::Value* s, unsigned i) {
    return b_.CreateAdd(smem_, b_.CreateAdd(i32(lay_.t(0, i)), b_.CreateMul(s, i32(lay_.stageBytes()))));
  }
  llvm::Value* streamStats(llvm::Value* s) {
    return b_.CreateAdd(smem_, b_.CreateAdd(i32(lay_.streamStats(0)), b_.CreateMul(s, i32(lay_.rows * 8))));
  }
  llvm::Value* load(llvm::Value* p) { return b_.CreateLoad(b_.getInt32Ty(), p); }
  llvm::Value* sharedF32(llvm::Value* addr) { return b_.CreateLoad(b_.getFloatTy(), toShared(addr)); }
  void advance();
  void unitOf(llvm::Value* u, llvm::Value*& b, llvm::Value*& h, llvm::Value*& fb);
  void streamRange(llvm::Value* fb, llvm::Value*& start, llvm::Value*& end);
  void forUnits(const std::function<void(llvm::Value*, llvm::Value*, llvm::Value*)>& body);
  void producer();
  void loadTiles();
  void loadBox(llvm::Value* at, llvm::Value* map, llvm::Value* bar, llvm::Value* row, llvm::Value* b, llvm::Value* h,
               unsigned rows);
  void statistics(llvm::Value* t);
  void rowStats(llvm::Value* at, llvm::Value* dO, llvm::Value* o, unsigned tileRows, llvm::Value* first, llvm::Value* b,
                llvm::Value* h, llvm::Value* t);
  struct View {
    llvm::Type* type;
    llvm::Value *base, *rowStride, *colStride;
  };
  View view(int param, llvm::Value* b, llvm::Value* h);
  llvm::Value* element(const View& v, llvm::Value* row, llvm::Value* col);
  void consumer(llvm::Value* wg);
  void streamBlock(llvm::Value* c, llvm::Value* j, llvm::Value* fb, const std::vector<llvm::Value*>& fixedStats);
  std::vector<llvm::Value*> scores(llvm::Value* c, unsigned fixedTile, llvm::Value* s, unsigned streamTile,
                                   const std::vector<llvm::Value*>* init = nullptr);
  void statsOf(llvm::Value* statsAt, const std::vector<llvm::Value*>& fixed, std::vector<llvm::Value*>& lse,
               std::vector<llvm::Value*>& delta);
  std::vector<llvm::Value*> mnDescriptors(llvm::Value* s, unsigned streamTile);
  std::vector<llvm::Value*> issueRegA(std::vector<llvm::Value*> acc, const std::vector<llvm::Value*>& a,
                                      const std::vector<llvm::Value*>& db);
  std::pair<std::vector<llvm::Value*>, std::vector<llvm::Value*>> gradients(std::vector<llvm::Value*> x,
                                                                            const std::vector<llvm::Value*>& y,
                                                                            llvm::Value* c, llvm::Value* j,
                                                                            llvm::Value* fb,
                                                                            const std::vector<llvm::Value*>& lse);
  std::vector<llvm::Value*> loadAcc(llvm::Value* acc);
  void storeAcc(llvm::Value* acc, const std::vector<llvm::Value*>& v);
  void mask(std::vector<llvm::Value*>& t, llvm::Value* c, llvm::Value* j, llvm::Value* fb);
  std::vector<llvm::Value*> pack(const std::vector<llvm::Value*>& t);
  llvm::Value* fixedRow(llvm::Value* c, llvm::Value* fb, unsigned half);
  llvm::Value* streamCol(unsigned i, unsigned e);
  void epilogue(llvm::Value* c, llvm::Value* b, llvm::Value* h, llvm::Value* fb);
  void storeRows(int param, llvm::Value* acc, llvm::Value* factor, llvm::Value* c, llvm::Value* b, llvm::Value* h,
                 llvm::Value* fb);
  llvm::Value* accAt(llvm::Value* acc, unsigned i) {
    return b_.CreateConstGEP2_32(llvm::ArrayType::get(b_.getFloatTy(), lay_.d / 2), acc, 0, i);
  }
  const char* type() const { return form_.in == ir::ScalarKind::BF16 ? "bf16" : "f16"; }

  Form form_;
  Layout lay_;
  llvm::Value *smem_ = nullptr, *bars_ = nullptr, *tid_ = nullptr;
  llvm::Value *S_ = nullptr, *H_ = nullptr, *nf_ = nullptr, *ns_ = nullptr, *units_ = nullptr;
  llvm::Value* scaleLog2_ = nullptr;
  llvm::Value *stage_ = nullptr, *phase_ = nullptr, *fPhase_ = nullptr;  // allocas (i32)
  llvm::Value *accP_ = nullptr, *accDS_ = nullptr;                       // allocas (f32 arrays)
};

void Emitter::advance() {
  llvm::Value* s = b_.CreateAdd(load(stage_), i32(1));
  llvm::Value* wrap = b_.CreateICmpEQ(s, i32(lay_.stages));
  llvm::Value* ph = load(phase_);
  b_.CreateStore(b_.CreateSelect(wrap, i32(0), s), stage_);
  b_.CreateStore(b_.CreateSelect(wrap, b_.CreateXor(ph, i32(1)), ph), phase_);
}

// (b, h, fixed block) of unit u, the blocks of one head in a row (CTAs running together share its
// streamed tensors in L2). Causal: the longest units first (the key/value kernel's first key
// blocks see every query block; the query kernel's last query blocks see every key block).
void Emitter::unitOf(llvm::Value* u, llvm::Value*& b, llvm::Value*& h, llvm::Value*& fb) {
  llvm::Value* bh = b_.CreateUDiv(u, nf_);
  llvm::Value* r = b_.CreateURem(u, nf_);
  fb = form_.causal && !form_.kv ? b_.CreateSub(b_.CreateSub(nf_, i32(1)), r) : r;
  b = b_.CreateUDiv(bh, H_);
  h = b_.CreateURem(bh, H_);
}

// The streamed blocks of a unit: all, or (causal) those on or below the diagonal.
void Emitter::streamRange(llvm::Value* fb, llvm::Value*& start, llvm::Value*& end) {
  start = i32(0);
  end = ns_;
  if (!form_.causal) return;
  llvm::Value* first = b_.CreateMul(fb, i32(kFixed / lay_.rows));  // the block holding key fb * 128
  if (form_.kv) {
    start = first;  // queries before the unit's first key see none of its keys
  } else {
    llvm::Value* past = b_.CreateAdd(first, i32(kFixed / lay_.rows));
    end = b_.CreateSelect(b_.CreateICmpULT(past, ns_), past, ns_);
  }
}

void Emitter::forUnits(const std::function<void(llvm::Value*, llvm::Value*, llvm::Value*)>& body) {
  forLoop(ptx::blockIdX(b_), units_, ptx::gridDimX(b_), "units", [&](llvm::Value* u) {
    llvm::Value *b, *h, *fb;
    unitOf(u, b, h, fb);
    body(b, h, fb);
  });
}

// `rows` x D of a [B, H, S, D] tensor from row `row` of (b, h), in D / 64 boxes.
void Emitter::loadBox(llvm::Value* at, llvm::Value* map, llvm::Value* bar, llvm::Value* row, llvm::Value* b,
                      llvm::Value* h, unsigned rows) {
  for (unsigned box = 0; box < lay_.d / kBox; ++box)
    ptx::tmaLoad4d(b_, b_.CreateAdd(at, i32(box * rows * 128)), map, bar, {i32(box * kBox), row, h, b});
}

void Emitter::loadTiles() {
  llvm::Value *mapF1 = tensorMap(0), *mapF2 = tensorMap(1), *mapT1 = tensorMap(2), *mapT2 = tensorMap(3);
  llvm::Value* mapO = tensorMap(4);
  forUnits([&](llvm::Value* b, llvm::Value* h, llvm::Value* fb) {
    // The consumers are done with the previous unit's fixed tiles (the first wait passes).
    ptx::mbarrierWait(b_, barrier(1), b_.CreateXor(load(fPhase_), i32(1)));
    ptx::mbarrierArriveExpectTx(b_, barrier(0), lay_.nFixed * lay_.fixedBytes());
    llvm::Value* row = b_.CreateMul(fb, i32(kFixed));
    loadBox(b_.CreateAdd(smem_, i32(lay_.f(0))), mapF1, barrier(0), row, b, h, kFixed);
    loadBox(b_.CreateAdd(smem_, i32(lay_.f(1))), mapF2, barrier(0), row, b, h, kFixed);
    if (!form_.kv) loadBox(b_.CreateAdd(smem_, i32(lay_.f(2))), mapO, barrier(0), row, b, h, kFixed);
    b_.CreateStore(b_.CreateXor(load(fPhase_), i32(1)), fPhase_);
    llvm::Value *start, *end;
    streamRange(fb, start, end);
    forLoop(start, end, i32(1), "blocks", [&](llvm::Value* j) {
      llvm::Value* s = load(stage_);
      ptx::mbarrierWait(b_, emptyT(s), b_.CreateXor(load(phase_), i32(1)));
      ptx::mbarrierArriveExpectTx(b_, fullT(s), lay_.stageBytes());
      llvm::Value* r = b_.CreateMul(j, i32(lay_.rows));
      loadBox(tile(s, 0), mapT1, fullT(s), r, b, h, lay_.rows);
      loadBox(tile(s, 1), mapT2, fullT(s), r, b, h, lay_.rows);
      if (form_.kv) loadBox(tile(s, 2), mapO, fullT(s), r, b, h, lay_.rows);
      advance();
    });
  });
}

// Element pointer of tensor parameter `param` at [b, h] (rank 3 or 4), and its row and column
// strides in elements (the column stride 0 for rank 3).
Emitter::View Emitter::view(int param, llvm::Value* b, llvm::Value* h) {
  auto i64 = [&](llvm::Value* v) { return b_.CreateZExt(v, b_.getInt64Ty()); };
  llvm::Type* t = paramType(func_.body().arg(param)->type->elem);
  llvm::Value* off =
      b_.CreateAdd(b_.CreateMul(i64(b), tensorField(param, 2, 0)), b_.CreateMul(i64(h), tensorField(param, 2, 1)));
  llvm::Value* data = b_.CreateAddrSpaceCast(tensorField(param, 0, 0), b_.getPtrTy(1));
  bool rank4 = func_.body().arg(param)->type->shape.size() == 4;
  return {t, b_.CreateGEP(t, data, off), tensorField(param, 2, 2), rank4 ? tensorField(param, 2, 3) : nullptr};
}

// Element [row, col] of a view, as f32.
llvm::Value* Emitter::element(const View& v, llvm::Value* row, llvm::Value* col) {
  auto i64 = [&](llvm::Value* x) { return b_.CreateZExt(x, b_.getInt64Ty()); };
  llvm::Value* off = b_.CreateMul(i64(row), v.rowStride);
  if (col) off = b_.CreateAdd(off, b_.CreateMul(i64(col), v.colStride));
  llvm::Value* x = b_.CreateLoad(v.type, b_.CreateGEP(v.type, v.base, off));
  return v.type->isFloatTy() ? x : b_.CreateFPExt(x, b_.getFloatTy());
}

// Statistics of the query rows first .. first + tileRows - 1 into shared memory at `at` (two f32
// a row): LSE log2(e) and Delta = rowsum(dO O) from the rows' dO and O tiles in shared memory
// (128-byte swizzle: 16-byte chunk c of row r at r * 128 + ((c ^ r % 8) * 16) in its box), the
// products in column order (the same order every run); +inf and 0 for rows at or past S (P = 0
// there). Thread t of the 96 takes rows t, t + 96, ...
void Emitter::rowStats(llvm::Value* at, llvm::Value* dO, llvm::Value* o, unsigned tileRows, llvm::Value* first,
                       llvm::Value* b, llvm::Value* h, llvm::Value* t) {
  auto* f32 = b_.getFloatTy();
  llvm::Type* half16 = form_.in == ir::ScalarKind::BF16 ? b_.getBFloatTy() : b_.getHalfTy();
  auto* chunkTy = llvm::FixedVectorType::get(half16, 8);
  auto* wideTy = llvm::FixedVectorType::get(f32, 8);
  View lse = view(form_.lse, b, h);
  forLoop(
      t, i32(tileRows), i32(kStatWarps * 32), "stats",
      [&](llvm::Value* r) {
        llvm::Value* g = b_.CreateAdd(first, r);
        llvm::Value* valid = b_.CreateICmpULT(g, S_);
        llvm::Value* sum = llvm::ConstantFP::get(f32, 0.0);
        llvm::Value* rowAt = b_.CreateMul(r, i32(128));
        llvm::Value* swz = b_.CreateAnd(r, i32(7));
        for (unsigned c = 0; c < lay_.d / 8; ++c) {
          llvm::Value* off = b_.CreateAdd(b_.CreateAdd(i32((c / 8) * tileRows * 128), rowAt),
                                          b_.CreateShl(b_.CreateXor(swz, i32(c % 8)), 4));
          auto chunk = [&](llvm::Value* tile) {
            return b_.CreateFPExt(b_.CreateAlignedLoad(chunkTy, toShared(b_.CreateAdd(tile, off)), llvm::Align(16)),
                                  wideTy);
          };
          llvm::Value *x = chunk(dO), *y = chunk(o);
          for (unsigned e = 0; e < 8; ++e)
            sum = b_.CreateFAdd(
                sum, b_.CreateFMul(b_.CreateExtractElement(x, uint64_t(e)), b_.CreateExtractElement(y, uint64_t(e))));
        }
        llvm::Value* l = b_.CreateFMul(element(lse, b_.CreateSelect(valid, g, i32(0)), nullptr),
                                       llvm::ConstantFP::get(f32, 1.4426950408889634));
        llvm::Value* slot = b_.CreateAdd(at, b_.CreateMul(r, i32(8)));
        b_.CreateStore(b_.CreateSelect(valid, l, llvm::ConstantFP::getInfinity(f32)), toShared(slot));
        b_.CreateStore(b_.CreateSelect(valid, sum, llvm::ConstantFP::get(f32, 0.0)),
                       toShared(b_.CreateAdd(slot, i32(4))));
      },
      /*rolled=*/true);
}

// Warps 1 to 3 of the producer warpgroup: the statistics of the query rows once their tiles have
// landed, per streamed block (key/value kernel) or per unit (query kernel), each completing on
// its barrier (96 arrivals).
void Emitter::statistics(llvm::Value* t) {
  forUnits([&](llvm::Value* b, llvm::Value* h, llvm::Value* fb) {
    if (!form_.kv) {
      ptx::mbarrierWait(b_, barrier(0), load(fPhase_));
      rowStats(b_.CreateAdd(smem_, i32(lay_.fixedStats())), b_.CreateAdd(smem_, i32(lay_.f(1))),
               b_.CreateAdd(smem_, i32(lay_.f(2))), kFixed, b_.CreateMul(fb, i32(kFixed)), b, h, t);
      ptx::mbarrierArrive(b_, barrier(2));
      b_.CreateStore(b_.CreateXor(load(fPhase_), i32(1)), fPhase_);
      return;
    }
    llvm::Value *start, *end;
    streamRange(fb, start, end);
    forLoop(
        start, end, i32(1), "blocks",
        [&](llvm::Value* j) {
          llvm::Value* s = load(stage_);
          ptx::mbarrierWait(b_, fullT(s), load(phase_));
          rowStats(streamStats(s), tile(s, 1), tile(s, 2), lay_.rows, b_.CreateMul(j, i32(lay_.rows)), b, h, t);
          ptx::mbarrierArrive(b_, statsT(s));
          advance();
        },
        /*rolled=*/true);
  });
}

void Emitter::producer() {
  ptx::setMaxRegisters(b_, false, lay_.producerRegs);
  llvm::Value* warp = b_.CreateLShr(tid_, 5);
  auto* tma = block("tma");
  auto* other = block("producer.other");
  auto* stats = block("stats");
  auto* done = block("producer.done");
  b_.CreateCondBr(b_.CreateICmpEQ(tid_, i32(0)), tma, other);
  b_.SetInsertPoint(tma);
  loadTiles();
  b_.CreateBr(done);
  b_.SetInsertPoint(other);
  b_.CreateCondBr(b_.CreateICmpNE(warp, i32(0)), stats, done);
  b_.SetInsertPoint(stats);
  statistics(b_.CreateSub(tid_, i32(32)));
  b_.CreateBr(done);
  b_.SetInsertPoint(done);
}

// X = init + F_c T^T (init null: 0) for consumer c's 64 fixed rows of tile `fixedTile` and the
// streamed rows of tile `streamTile` of stage s (rows / 2 f32 a thread; both K-major), issued,
// not committed.
std::vector<llvm::Value*> Emitter::scores(llvm::Value* c, unsigned fixedTile, llvm::Value* s, unsigned streamTile,
                                          const std::vector<llvm::Value*>* init) {
  std::vector<llvm::Value*> acc(lay_.rows / 2, llvm::ConstantFP::get(b_.getFloatTy(), 0.0));
  if (init) acc = *init;
  llvm::Value* f0 = b_.CreateAdd(smem_, b_.CreateAdd(i32(lay_.f(fixedTile)), b_.CreateMul(c, i32(64 * 128))));
  llvm::Value* t0 = tile(s, streamTile);
  for (unsigned kk = 0; kk < lay_.d / 16; ++kk) {
    unsigned within = (kk % 4) * 32;  // box kk / 4 (64 columns of D), 32 bytes per k16 step
    llvm::Value* da = ptx::wgmmaDescriptor(b_, b_.CreateAdd(f0, i32((kk / 4) * kFixed * 128 + within)), 16, 1024);
    llvm::Value* db = ptx::wgmmaDescriptor(b_, b_.CreateAdd(t0, i32((kk / 4) * lay_.rows * 128 + within)), 16, 1024);
    acc = ptx::wgmma(b_, lay_.rows, type(), acc, da, db, /*transB=*/false, /*accumulate=*/kk > 0 || init);
  }
  return acc;
}

// Descriptors of streamed tile `streamTile` of stage s as an MN-major B operand (D contiguous):
// 16 rows (2 KiB) a k16 step, 64-column boxes rows * 128 bytes apart.
std::vector<llvm::Value*> Emitter::mnDescriptors(llvm::Value* s, unsigned streamTile) {
  llvm::Value* t0 = tile(s, streamTile);
  std::vector<llvm::Value*> db(lay_.rows / 16);
  for (unsigned kk = 0; kk < lay_.rows / 16; ++kk)
    db[kk] = ptx::wgmmaDescriptor(b_, b_.CreateAdd(t0, i32(kk * 16 * 128)), lay_.rows * 128, 1024);
  return db;
}

// acc (64 x D, f32) += A T: A the packed register fragments (k16 step kk is a[4kk .. 4kk + 3]),
// T's descriptors from mnDescriptors. Issued, not committed; every operand register is defined
// before the caller's fence (no warpgroup.arrive between the wgmmas, ptxas C7519).
std::vector<llvm::Value*> Emitter::issueRegA(std::vector<llvm::Value*> acc, const std::vector<llvm::Value*>& a,
                                             const std::vector<llvm::Value*>& db) {
  for (unsigned kk = 0; kk < lay_.rows / 16; ++kk)
    acc = ptx::wgmmaRegA(b_, lay_.d, type(), acc, {a[4 * kk], a[4 * kk + 1], a[4 * kk + 2], a[4 * kk + 3]}, db[kk],
                         /*transB=*/true);
  return acc;
}

std::vector<llvm::Value*> Emitter::loadAcc(llvm::Value* acc) {
  std::vector<llvm::Value*> v(lay_.d / 2);
  for (unsigned i = 0; i < v.size(); ++i) v[i] = b_.CreateLoad(b_.getFloatTy(), accAt(acc, i));
  return v;
}

void Emitter::storeAcc(llvm::Value* acc, const std::vector<llvm::Value*>& v) {
  for (unsigned i = 0; i < v.size(); ++i) b_.CreateStore(v[i], accAt(acc, i));
}

// Fixed row (absolute) of accumulator half `half` (0: registers 4i, 4i+1; 1: 4i+2, 4i+3).
llvm::Value* Emitter::fixedRow(llvm::Value* c, llvm::Value* fb, unsigned half) {
  llvm::Value* warp = b_.CreateLShr(tid_, 5);
  llvm::Value* lane = b_.CreateAnd(tid_, i32(31));
  llvm::Value* r = b_.CreateAdd(b_.CreateMul(warp, i32(16)), b_.CreateAdd(b_.CreateLShr(lane, 2), i32(8 * half)));
  return b_.CreateAdd(b_.CreateAdd(b_.CreateMul(fb, i32(kFixed)), b_.CreateMul(c, i32(64))), r);
}

// Streamed column (within the block) of accumulator registers 4i + 2 half + e.
llvm::Value* Emitter::streamCol(unsigned i, unsigned e) {
  llvm::Value* lane = b_.CreateAnd(tid_, i32(31));
  return b_.CreateAdd(b_.CreateMul(b_.CreateAnd(lane, i32(3)), i32(2)), i32(8 * i + e));
}

// Streamed index at or past S, and (causal) a key after its query, get -inf.
void Emitter::mask(std::vector<llvm::Value*>& t, llvm::Value* c, llvm::Value* j, llvm::Value* fb) {
  llvm::Value* ninf = llvm::ConstantFP::getInfinity(b_.getFloatTy(), true);
  llvm::Value* base = b_.CreateMul(j, i32(lay_.rows));
  for (unsigned half = 0; half < 2; ++half) {
    llvm::Value* fi = fixedRow(c, fb, half);
    for (unsigned i = 0; i < lay_.rows / 8; ++i)
      for (unsigned e = 0; e < 2; ++e) {
        unsigned reg = 4 * i + 2 * half + e;
        llvm::Value* si = b_.CreateAdd(base, streamCol(i, e));
        llvm::Value* valid = b_.CreateICmpULT(si, S_);
        if (form_.causal)  // key <= query
          valid = b_.CreateAnd(valid, form_.kv ? b_.CreateICmpULE(fi, si) : b_.CreateICmpULE(si, fi));
        t[reg] = b_.CreateSelect(valid, t[reg], ninf);
      }
  }
}

// Pairs of f32 rounded to the 16-bit type and packed (the register A fragments of wgmma).
std::vector<llvm::Value*> Emitter::pack(const std::vector<llvm::Value*>& t) {
  auto* f32 = b_.getFloatTy();
  llvm::Type* half16 = form_.in == ir::ScalarKind::BF16 ? b_.getBFloatTy() : b_.getHalfTy();
  auto* pairTy = llvm::FixedVectorType::get(half16, 2);
  std::vector<llvm::Value*> p;
  for (unsigned r = 0; r < t.size() / 2; ++r) {
    llvm::Value* v = llvm::PoisonValue::get(llvm::FixedVectorType::get(f32, 2));
    v = b_.CreateInsertElement(b_.CreateInsertElement(v, t[2 * r], uint64_t(0)), t[2 * r + 1], uint64_t(1));
    p.push_back(b_.CreateBitCast(b_.CreateFPTrunc(v, pairTy), b_.getInt32Ty()));
  }
  return p;
}

// LSE log2(e) and Delta of each accumulator register: per streamed column (key/value kernel,
// from the stage's statistics at statsAt) or per fixed row (query kernel, `fixed`: those of the
// thread's two rows).
void Emitter::statsOf(llvm::Value* statsAt, const std::vector<llvm::Value*>& fixed, std::vector<llvm::Value*>& lse,
                      std::vector<llvm::Value*>& delta) {
  lse.assign(lay_.rows / 2, nullptr);
  delta.assign(lay_.rows / 2, nullptr);
  for (unsigned i = 0; i < lay_.rows / 8; ++i)
    for (unsigned e = 0; e < 2; ++e) {
      llvm::Value *l = nullptr, *d = nullptr;
      if (form_.kv) {
        llvm::Value* at = b_.CreateAdd(statsAt, b_.CreateMul(streamCol(i, e), i32(8)));
        l = sharedF32(at);
        d = sharedF32(b_.CreateAdd(at, i32(4)));
      }
      for (unsigned half = 0; half < 2; ++half) {
        unsigned reg = 4 * i + 2 * half + e;
        lse[reg] = form_.kv ? l : fixed[2 * half];
        delta[reg] = form_.kv ? d : fixed[2 * half + 1];
      }
    }
}

// P = 2^(X scale log2(e) - LSE log2(e)) (masked: 0) and dS = P Y, packed; Y already holds
// dP - Delta (its accumulators start at -Delta).
std::pair<std::vector<llvm::Value*>, std::vector<llvm::Value*>> Emitter::gradients(
    std::vector<llvm::Value*> x, const std::vector<llvm::Value*>& y, llvm::Value* c, llvm::Value* j, llvm::Value* fb,
    const std::vector<llvm::Value*>& lse) {
  auto* f32 = b_.getFloatTy();
  const unsigned n = lay_.rows / 2;
  for (unsigned r = 0; r < n; ++r)
    x[r] = b_.CreateIntrinsic(llvm::Intrinsic::fma, {f32}, {x[r], scaleLog2_, b_.CreateFNeg(lse[r])});
  // Mask the blocks that reach past S or (causal) cross the diagonal; the branch is uniform.
  llvm::Value* rowsBefore = b_.CreateMul(j, i32(lay_.rows));
  llvm::Value* partial = b_.CreateICmpUGT(b_.CreateAdd(rowsBefore, i32(lay_.rows)), S_);
  if (form_.causal) {
    llvm::Value* fixed0 = b_.CreateMul(fb, i32(kFixed));
    partial = b_.CreateOr(partial, form_.kv ? b_.CreateICmpUGT(b_.CreateAdd(fixed0, i32(kFixed - 1)), rowsBefore)
                                            : b_.CreateICmpUGT(b_.CreateAdd(rowsBefore, i32(lay_.rows - 1)), fixed0));
  }
  llvm::BasicBlock* pre = b_.GetInsertBlock();
  auto* masked = block("mask");
  auto* join = block("mask.done");
  b_.CreateCondBr(partial, masked, join);
  b_.SetInsertPoint(masked);
  std::vector<llvm::Value*> mx = x;
  mask(mx, c, j, fb);
  llvm::BasicBlock* maskedEnd = b_.GetInsertBlock();
  b_.CreateBr(join);
  b_.SetInsertPoint(join);
  std::vector<llvm::Value*> p(n), ds(n);
  for (unsigned r = 0; r < n; ++r) {
    llvm::PHINode* phi = b_.CreatePHI(f32, 2);
    phi->addIncoming(x[r], pre);
    phi->addIncoming(mx[r], maskedEnd);
    x[r] = phi;
  }
  for (unsigned r = 0; r < n; ++r) {
    p[r] = ptx::exp2Approx(b_, x[r]);
    ds[r] = b_.CreateFMul(p[r], y[r]);
  }
  return {pack(p), pack(ds)};
}

// One streamed block: X and Y (one wgmma group), P and dS in registers, then dV += P^T dO and
// dK += dS^T Q (key/value kernel) or dQ += dS K (query kernel) as a second group; the stage is
// released once both have completed.
void Emitter::streamBlock(llvm::Value* c, llvm::Value* j, llvm::Value* fb, const std::vector<llvm::Value*>& fixed) {
  llvm::Value* s = load(stage_);
  llvm::Value* ph = load(phase_);
  ptx::mbarrierWait(b_, fullT(s), ph);
  if (form_.kv) ptx::mbarrierWait(b_, statsT(s), ph);
  std::vector<llvm::Value*> lse, delta;
  statsOf(streamStats(s), fixed, lse, delta);
  for (auto& d : delta) d = b_.CreateFNeg(d);
  ptx::wgmmaFence(b_);
  std::vector<llvm::Value*> x = scores(c, 0, s, 0);
  std::vector<llvm::Value*> y = scores(c, 1, s, 1, &delta);  // Y = -Delta + dP
  ptx::wgmmaCommit(b_);
  ptx::wgmmaWait(b_, 0);
  auto [p, ds] = gradients(x, y, c, j, fb, lse);
  std::vector<llvm::Value*> db1 = mnDescriptors(s, 0), accDS = loadAcc(accDS_);
  std::vector<llvm::Value*> db2, accP;
  if (form_.kv) {
    db2 = mnDescriptors(s, 1);
    accP = loadAcc(accP_);
  }
  ptx::wgmmaFence(b_);
  if (form_.kv) accP = issueRegA(accP, p, db2);
  accDS = issueRegA(accDS, ds, db1);
  ptx::wgmmaCommit(b_);
  ptx::wgmmaWait(b_, 0);
  storeAcc(accDS_, accDS);
  if (form_.kv) storeAcc(accP_, accP);
  ifThen(b_.CreateICmpEQ(tid_, i32(0)), [&] { ptx::mbarrierArrive(b_, emptyT(s)); });
  advance();
}

void Emitter::consumer(llvm::Value* wg) {
  ptx::setMaxRegisters(b_, true, lay_.consumerRegs);
  llvm::Value* c = b_.CreateSub(wg, i32(1));  // fixed rows 64c .. 64c + 63 of the unit
  auto* f32 = b_.getFloatTy();
  forUnits([&](llvm::Value* b, llvm::Value* h, llvm::Value* fb) {
    std::vector<llvm::Value*> zero(lay_.d / 2, llvm::ConstantFP::get(f32, 0.0));
    storeAcc(accDS_, zero);
    if (form_.kv) storeAcc(accP_, zero);
    ptx::mbarrierWait(b_, barrier(0), load(fPhase_));
    std::vector<llvm::Value*> fixed;
    if (!form_.kv) {
      ptx::mbarrierWait(b_, barrier(2), load(fPhase_));
      for (unsigned half = 0; half < 2; ++half) {
        llvm::Value* at =
            b_.CreateAdd(b_.CreateAdd(smem_, i32(lay_.fixedStats())), b_.CreateMul(fixedRow(c, i32(0), half), i32(8)));
        fixed.push_back(sharedF32(at));
        fixed.push_back(sharedF32(b_.CreateAdd(at, i32(4))));
      }
    }
    llvm::Value *start, *end;
    streamRange(fb, start, end);
    forLoop(start, end, i32(1), "blocks", [&](llvm::Value* j) { streamBlock(c, j, fb, fixed); });
    // The fixed tiles are read (every wgmma of this warpgroup has completed).
    ifThen(b_.CreateICmpEQ(tid_, i32(0)), [&] { ptx::mbarrierArrive(b_, barrier(1)); });
    b_.CreateStore(b_.CreateXor(load(fPhase_), i32(1)), fPhase_);
    epilogue(c, b, h, fb);
  });
}

// acc * factor (factor null: 1) converted to the parameter's type, fixed rows < S.
void Emitter::storeRows(int param, llvm::Value* acc, llvm::Value* factor, llvm::Value* c, llvm::Value* b,
                        llvm::Value* h, llvm::Value* fb) {
  llvm::Type* outTy = paramType(func_.body().arg(param)->type->elem);
  llvm::Value* lane = b_.CreateAnd(tid_, i32(31));
  llvm::Value* col0 = b_.CreateMul(b_.CreateAnd(lane, i32(3)), i32(2));
  auto i64 = [&](llvm::Value* v) { return b_.CreateZExt(v, b_.getInt64Ty()); };
  llvm::Value* data = b_.CreateAddrSpaceCast(tensorField(param, 0, 0), b_.getPtrTy(1));
  llvm::Value* base =
      b_.CreateAdd(b_.CreateMul(i64(b), tensorField(param, 2, 0)), b_.CreateMul(i64(h), tensorField(param, 2, 1)));
  llvm::Value* rowStride = tensorField(param, 2, 2);
  llvm::Value* colStride = tensorField(param, 2, 3);
  for (unsigned half = 0; half < 2; ++half) {
    llvm::Value* row = fixedRow(c, fb, half);
    ifThen(b_.CreateICmpULT(row, S_), [&] {
      llvm::Value* rowOff = b_.CreateAdd(base, b_.CreateMul(i64(row), rowStride));
      for (unsigned i = 0; i < lay_.d / 8; ++i)
        for (unsigned e = 0; e < 2; ++e) {
          llvm::Value* x = b_.CreateLoad(b_.getFloatTy(), accAt(acc, 4 * i + 2 * half + e));
          if (factor) x = b_.CreateFMul(x, factor);
          if (!outTy->isFloatTy()) x = b_.CreateFPTrunc(x, outTy);
          llvm::Value* col = b_.CreateAdd(col0, i32(8 * i + e));
          b_.CreateStore(x, b_.CreateGEP(outTy, data, b_.CreateAdd(rowOff, b_.CreateMul(i64(col), colStride))));
        }
    });
  }
}

// dK = accDS * scale and dV = accP (key/value kernel), or dQ = accDS * scale.
void Emitter::epilogue(llvm::Value* c, llvm::Value* b, llvm::Value* h, llvm::Value* fb) {
  storeRows(form_.out1, accDS_, fn_->getArg(form_.scale), c, b, h, fb);
  if (form_.kv) storeRows(form_.out2, accP_, nullptr, c, b, h, fb);
}

bool Emitter::emit() {
  declare(headDimEntry(func_.funcName(), lay_.d), 5, kThreads);
  b_.SetInsertPoint(block("entry"));
  auto* f32 = b_.getFloatTy();
  stage_ = b_.CreateAlloca(b_.getInt32Ty(), nullptr, "stage");
  phase_ = b_.CreateAlloca(b_.getInt32Ty(), nullptr, "phase");
  fPhase_ = b_.CreateAlloca(b_.getInt32Ty(), nullptr, "fphase");
  accP_ = b_.CreateAlloca(llvm::ArrayType::get(f32, lay_.d / 2), nullptr, "accp");
  accDS_ = b_.CreateAlloca(llvm::ArrayType::get(f32, lay_.d / 2), nullptr, "accds");
  for (llvm::Value* a : {stage_, phase_, fPhase_}) b_.CreateStore(i32(0), a);
  llvm::Value* tid = ptx::threadIdX(b_);
  llvm::Value* wg = b_.CreateLShr(tid, 7);
  tid_ = b_.CreateAnd(tid, i32(127));  // thread in its warpgroup
  smem_ = sharedBase();
  bars_ = b_.CreateAdd(smem_, i32(lay_.barriers()));
  ifThen(b_.CreateICmpEQ(tid, i32(0)), [&] {
    ptx::mbarrierInit(b_, barrier(0), 1);                // fixed full: the producer's arrive + bytes
    ptx::mbarrierInit(b_, barrier(1), 2);                // fixed empty: one arrive per consumer
    ptx::mbarrierInit(b_, barrier(2), kStatWarps * 32);  // fixed statistics: every statistics thread
    for (unsigned s = 0; s < lay_.stages; ++s) {
      ptx::mbarrierInit(b_, fullT(i32(s)), 1);
      ptx::mbarrierInit(b_, statsT(i32(s)), kStatWarps * 32);
      ptx::mbarrierInit(b_, emptyT(i32(s)), 2);
    }
    ptx::fenceMbarrierInit(b_);
  });
  ptx::blockBarrier(b_);
  // Extents of Q (the other tensors have the same: the launch checks compare the kernel's
  // symbols), in 32 bits (TMA maps need extents below 2^31).
  llvm::Value* B = b_.CreateTrunc(tensorField(form_.q, 1, 0), b_.getInt32Ty());
  H_ = b_.CreateTrunc(tensorField(form_.q, 1, 1), b_.getInt32Ty());
  S_ = b_.CreateTrunc(tensorField(form_.q, 1, 2), b_.getInt32Ty());
  nf_ = b_.CreateUDiv(b_.CreateAdd(S_, i32(kFixed - 1)), i32(kFixed));
  ns_ = b_.CreateUDiv(b_.CreateAdd(S_, i32(lay_.rows - 1)), i32(lay_.rows));
  units_ = b_.CreateMul(b_.CreateMul(B, H_), nf_);
  scaleLog2_ = b_.CreateFMul(fn_->getArg(form_.scale), llvm::ConstantFP::get(f32, 1.4426950408889634));
  roles(wg, [&] { producer(); }, [&](llvm::Value* w) { consumer(w); });
  return true;
}

// One variant per head dimension: F1, F2 (128 rows), T1, T2 (lay.rows rows), O (with the query
// rows) by boxes of 64 columns, for exactly this D.
const HeadDimForm<Form> kForm{
    .name = "attention backward form",
    .formOf = formOf,
    .missed = ir::AttrId::AttentionBwdFormMissed,
    .missedRemark = diag::remark_no_attention_bwd_form,
    .plannedRemark = diag::remark_attention_bwd_wgmma,
    .remarkArgs =
        [](const Form& form) {
          return std::vector<std::string>{form.kv ? "dK and dV" : "dQ", form.kv ? "key" : "query",
                                          std::to_string(kFixed)};
        },
    .threads = kThreads,
    .boxColumns = kBox,
    .sharedBytes = [](const Form& form, unsigned d) -> uint64_t { return layoutFor(form, d).sharedBytes(); },
    .maps =
        [](const Form& form, unsigned d) {
          unsigned rows = layoutFor(form, d).rows;
          return std::vector<std::pair<int, unsigned>>{{form.f1(), kFixed},
                                                       {form.f2(), kFixed},
                                                       {form.t1(), rows},
                                                       {form.t2(), rows},
                                                       {form.o, form.kv ? rows : kFixed}};
        },
    .emit = [](llvm::Module& out, ir::Operation& f, const Form& form,
               unsigned d) { return Emitter(out, f, form, d).emit(); },
};

}  // namespace

void planAttentionBwdVariants(ir::Module& m, std::vector<KernelInterface>& kernels) {
  planHeadDimVariants(m, kernels, kForm);
}

bool emitAttentionBwdVariants(ir::Module& m, const std::vector<KernelInterface>& kernels, llvm::Module& out,
                              std::string& error) {
  return emitHeadDimVariants(m, kernels, out, error, kForm);
}

}  // namespace tessera::codegen
