// The sm_90a form of a tile.mma loop kernel. Every CTA of a persistent grid runs three
// warpgroups (384 threads):
//   - warpgroup 0, the producer: one thread walks the CTA's output tiles and, for each k block,
//     waits until a ring slot is empty, announces its bytes on the slot's `full` mbarrier and
//     issues TMA copies of the A block (BM x BK) and the B block (BK x BN) into it;
//   - warpgroups 1 and 2, the consumers: each owns 64 rows of the BM x BN tile as wgmma
//     accumulators (m64n256k16 for bf16/f16, m64n256k32 for fp8; 128 f32 registers a thread);
//     per k block they wait on `full`, issue four wgmmas straight from the swizzled slot, keep one group in flight
//     (wgmma.wait_group 1) and release the previous slot on its `empty` mbarrier; after the last
//     k block they convert and store their accumulators to C (bounds-checked, pairs of columns
//     per store when C's rows allow);
//   - setmaxnreg gives the consumers 232 registers a thread and leaves the producer 40.
// Output tiles are visited in groups of 8 tile rows (tile t -> rows first + t % size, column
// t / size within its group) so that CTAs running at the same time share A and B blocks in L2.
// docs/codegen.md ("Hopper form of tile.mma") has the layouts and descriptors.
#include <algorithm>
#include <array>
#include <functional>
#include <optional>

#include "codegen/hopper/HopperForms.h"
#include "codegen/hopper/HopperKernel.h"
#include "codegen/hopper/HopperPtx.h"
#include "codegen/lower/Lowering.h"
#include "ir/IR.h"
#include "ir/Pass.h"
#include "llvm/IR/IRBuilder.h"
#include "llvm/IR/Intrinsics.h"
#include "llvm/IR/IntrinsicsNVPTX.h"
#include "llvm/IR/Module.h"

namespace tessera::codegen {

namespace {

// The schedule. A k block is 128 bytes of K (one swizzle row per tile row): BK = 64 for 16-bit
// operands, 128 for fp8; four wgmmas of 32 bytes of K (k16 / k32) each.
constexpr unsigned kBM = 128, kBN = 256, kKBytes = 128, kStages = 4, kThreads = 384, kGroupRows = 8;
constexpr unsigned kABytes = kBM * kKBytes, kBBytes = kBN * kKBytes, kStageBytes = kABytes + kBBytes;
// B is loaded as BN / 64 boxes: 64 columns (128 bytes) x BK rows when MN-major, 64 rows of BK
// (128 bytes) when K-major; either way box j fills bytes [8 KiB j, 8 KiB (j + 1)) of the slot.
constexpr unsigned kBoxN = 64;
// Epilogue staging: each of the 8 consumer warps passes its 16 x 256 part through a private
// buffer of 16 rows x 32 columns, padded so that the fragment writes hit distinct banks.
constexpr unsigned kStageCols = 32, kConsumerWarps = 8;
constexpr unsigned stagingRowBytes(unsigned elemBytes) { return kStageCols * elemBytes + 8 * elemBytes; }
constexpr unsigned kBarrierBytes = 128;  // 2 * kStages barriers, rounded up
constexpr unsigned kStagingBytes = kConsumerWarps * 16 * stagingRowBytes(4);
constexpr unsigned kSharedBytes = kStages * kStageBytes + kBarrierBytes + kStagingBytes + 1024;  // + alignment slack
constexpr unsigned kProducerRegs = 40, kConsumerRegs = 232;
// The variants emitted, in the order the runtime tries them. The emitter also builds clusters of 2
// with B multicast ({2, 1}: the pair first, single CTAs where no pair fits); measured on an H100
// they ran level with single CTAs for 16-bit operands (docs/performance.md), so only single CTAs
// are emitted there, which halves the compile time. fp8 moves twice the FLOPs per byte of the
// same k blocks, so L2-to-SM traffic weighs twice as much: it gets the pair too.
constexpr unsigned kClusters16[] = {1};
constexpr unsigned kClusters8[] = {2, 1};

// (parameter, axis) that an extent of the product is read from.
struct ExtentOf {
  int param = 0;
  unsigned axis = 0;
};

struct Form {
  int a = 0, b = 0, c = 0;
  bool tb = false;  // B given K-major (`Bt.T`)
  ir::ScalarKind in = ir::ScalarKind::BF16, out = ir::ScalarKind::F32;
  ir::Type outElem = nullptr;  // what C holds
  ExtentOf m, n, k;            // M and N of C, K of the product
  // A step of a chain of products (ir/passes/ChainForm.cpp): C is the scratch matrix (the entry's
  // workspace argument, row-major M x N) instead of parameter c; the epilogue adds `bias` (a
  // rank-1 parameter along N, -1: none) and applies relu before rounding.
  bool cScratch = false;
  int bias = -1;
  bool relu = false;
  std::string entrySuffix = "__sm90a";
  // @scale of A times @scale of B over C's (stored values are value / scale): the product is
  // scaled once, in the epilogue.
  double scale = 1;
  bool fp8() const { return in == ir::ScalarKind::F8E4M3 || in == ir::ScalarKind::F8E5M2; }
  unsigned bk() const { return kKBytes / (fp8() ? 1 : 2); }
};

std::optional<Form> formOf(ir::Operation* f) {
  const ir::Attribute* at = f->attr(ir::AttrId::MmaForm);
  if (!at || at->kind != ir::AttrKind::Array || at->array.size() != 7 || f->regions.empty()) return std::nullopt;
  Form form;
  form.a = static_cast<int>(at->array[0].i);
  form.b = static_cast<int>(at->array[1].i);
  form.c = static_cast<int>(at->array[2].i);
  form.tb = at->array[6].i != 0;
  ir::Block& body = f->body();
  for (int i : {form.a, form.b, form.c}) {
    if (i < 0 || i >= static_cast<int>(body.numArgs())) return std::nullopt;
    ir::Type t = body.arg(i)->type;
    if (t->kind != ir::TypeKind::Tensor || t->shape.size() != 2 || !t->elem) return std::nullopt;
  }
  form.in = ir::baseScalar(body.arg(form.a)->type->elem);
  form.out = ir::baseScalar(body.arg(form.c)->type->elem);
  form.outElem = body.arg(form.c)->type->elem;
  form.m = {form.c, 0};
  form.n = {form.c, 1};
  form.k = {form.a, 1};
  bool in16 = form.in == ir::ScalarKind::BF16 || form.in == ir::ScalarKind::F16;
  bool out = form.out == ir::ScalarKind::F32 || form.out == ir::ScalarKind::BF16 || form.out == ir::ScalarKind::F16;
  if (!(in16 || (form.fp8() && form.tb)) || !out || ir::baseScalar(body.arg(form.b)->type->elem) != form.in)
    return std::nullopt;
  for (int i : {form.a, form.b}) {
    ir::Type e = body.arg(i)->type->elem;
    if (e->kind == ir::TypeKind::Num && e->scale != 0) form.scale *= e->scale;
  }
  ir::Type ce = body.arg(form.c)->type->elem;
  if (ce->kind == ir::TypeKind::Num) {
    // mma-form refuses other store policies; kept as a guard.
    if ((ce->round != ir::Rounding::Default && ce->round != ir::Rounding::NearestEven) || ce->saturate)
      return std::nullopt;
    if (ce->scale != 0) form.scale /= ce->scale;
  }
  return form;
}

// The two steps of a chain of products (chain_form = [x, w1, b1, w2, b2, out, relu]):
// scratch = relu?(X W1 + b1) rounded to X's type, then Out = scratch W2 + b2.
std::optional<std::array<Form, 2>> chainOf(ir::Operation* f) {
  const ir::Attribute* at = f->attr(ir::AttrId::ChainForm);
  if (!at || at->kind != ir::AttrKind::Array || at->array.size() != 7 || f->regions.empty()) return std::nullopt;
  ir::Block& body = f->body();
  const int n = static_cast<int>(body.numArgs());
  int x = static_cast<int>(at->array[0].i), w1 = static_cast<int>(at->array[1].i),
      b1 = static_cast<int>(at->array[2].i), w2 = static_cast<int>(at->array[3].i),
      b2 = static_cast<int>(at->array[4].i), out = static_cast<int>(at->array[5].i);
  auto tensorOf = [&](int i, size_t rank) {
    if (i < 0 || i >= n) return false;
    ir::Type t = body.arg(i)->type;
    return t->kind == ir::TypeKind::Tensor && t->shape.size() == rank && t->elem;
  };
  if (!tensorOf(x, 2) || !tensorOf(w1, 2) || !tensorOf(w2, 2) || !tensorOf(out, 2) || (b1 >= 0 && !tensorOf(b1, 1)) ||
      (b2 >= 0 && !tensorOf(b2, 1)))
    return std::nullopt;
  ir::Type xe = body.arg(x)->type->elem;
  std::array<Form, 2> s;
  s[0].a = x, s[0].b = w1, s[0].c = -1;
  s[0].outElem = xe;
  s[0].m = {x, 0}, s[0].n = {w1, 1}, s[0].k = {x, 1};
  s[0].cScratch = true;
  s[0].bias = b1;
  s[0].relu = at->array[6].i != 0;
  s[0].entrySuffix = "__sm90a_s0";
  s[1].a = n, s[1].b = w2, s[1].c = out;  // A: the scratch matrix (tensor map param n)
  s[1].outElem = body.arg(out)->type->elem;
  s[1].m = {out, 0}, s[1].n = {out, 1}, s[1].k = {w2, 0};
  s[1].bias = b2;
  s[1].entrySuffix = "__sm90a_s1";
  for (Form& step : s) {
    step.in = ir::baseScalar(xe);
    step.out = ir::baseScalar(step.outElem);
  }
  if (s[0].in != ir::ScalarKind::BF16 && s[0].in != ir::ScalarKind::F16) return std::nullopt;
  return s;
}

// cluster 2: pairs of CTAs (a cluster) take vertically adjacent tiles and share B: each loads half
// of the B block and multicasts it to both, and a slot is empty once all four consumer
// warpgroups of the pair are done with it.
std::string variantEntry(const std::string& kernel, unsigned cluster, const std::string& suffix = "__sm90a") {
  return kernel + suffix + (cluster > 1 ? "_c" + std::to_string(cluster) : "");
}

class Emitter : HopperKernelBuilder {
 public:
  Emitter(llvm::Module& out, ir::Operation& func, const Form& form, unsigned cluster)
      : HopperKernelBuilder(out, func), form_(form), cluster_(cluster) {}

  bool emit(std::string& error);

 private:
  // (tile row, tile column) of output tile u.
  std::pair<llvm::Value*, llvm::Value*> tileOf(llvm::Value* u);
  llvm::Value* fullBar(llvm::Value* s) { return b_.CreateAdd(bars_, b_.CreateMul(s, i32(8))); }
  llvm::Value* emptyBar(llvm::Value* s) {
    return b_.CreateAdd(bars_, b_.CreateMul(b_.CreateAdd(s, i32(kStages)), i32(8)));
  }
  llvm::Value* slotA(llvm::Value* s) { return b_.CreateAdd(smem_, b_.CreateMul(s, i32(kABytes))); }
  llvm::Value* slotB(llvm::Value* s) {
    return b_.CreateAdd(smem_, b_.CreateAdd(i32(kStages * kABytes), b_.CreateMul(s, i32(kBBytes))));
  }
  // stage += 1, wrapping to 0 and flipping the phase.
  void advance();
  void producer();
  void consumer(llvm::Value* wg);
  // A consumer warpgroup is done with a slot: arrive on its empty barrier in every CTA sharing it.
  void release(llvm::Value* empty);
  void epilogue(llvm::Value* c, llvm::Value* mb, llvm::Value* nb);
  // v + bias[col] (0 past the bias's end), then relu, as the portable form computes them in f32.
  llvm::Value* biasRelu(llvm::Value* v, llvm::Value* col);

  Form form_;
  unsigned cluster_ = 1;
  llvm::BasicBlock* exit_ = nullptr;  // every thread leaves through it (cluster barrier first)
  llvm::Value *rank_ = nullptr, *unitRows_ = nullptr, *units_ = nullptr, *first_ = nullptr, *step_ = nullptr;
  llvm::Value *smem_ = nullptr, *bars_ = nullptr;  // 32-bit shared addresses
  llvm::Value *M_ = nullptr, *N_ = nullptr, *mt_ = nullptr, *nt_ = nullptr, *kt_ = nullptr, *tiles_ = nullptr;
  llvm::Value *tid_ = nullptr, *mapA_ = nullptr, *mapB_ = nullptr;
  llvm::Value *stage_ = nullptr, *phase_ = nullptr, *acc_ = nullptr;  // allocas
  llvm::Value *cData_ = nullptr, *cStride0_ = nullptr, *cStride1_ = nullptr, *vec16_ = nullptr, *staging_ = nullptr;
  llvm::Value *biasData_ = nullptr, *biasStride_ = nullptr;
};

llvm::Value* Emitter::biasRelu(llvm::Value* v, llvm::Value* col) {
  if (form_.bias >= 0) {
    llvm::Type* bt = paramType(func_.body().arg(form_.bias)->type->elem);
    llvm::Value* c64 = b_.CreateSExt(col, b_.getInt64Ty());
    llvm::Value* inside = b_.CreateICmpSLT(c64, N_);
    // Columns past N read element 0 (always present when N > 0) and are never stored.
    llvm::Value* at =
        b_.CreateGEP(bt, biasData_, b_.CreateMul(b_.CreateSelect(inside, c64, b_.getInt64(0)), biasStride_));
    llvm::Value* x = b_.CreateLoad(bt, at);
    if (!bt->isFloatTy()) x = b_.CreateFPExt(x, b_.getFloatTy());
    v = b_.CreateFAdd(v, x);
  }
  if (form_.relu) v = b_.CreateBinaryIntrinsic(llvm::Intrinsic::maxnum, v, llvm::ConstantFP::get(b_.getFloatTy(), 0.0));
  return v;
}

std::pair<llvm::Value*, llvm::Value*> Emitter::tileOf(llvm::Value* u) {
  llvm::Value* perGroup = b_.CreateMul(i32(kGroupRows), nt_);
  llvm::Value* g = b_.CreateSDiv(u, perGroup);
  llvm::Value* first = b_.CreateMul(g, i32(kGroupRows));
  llvm::Value* rest = b_.CreateSub(unitRows_, first);
  llvm::Value* size = b_.CreateSelect(b_.CreateICmpSLT(rest, i32(kGroupRows)), rest, i32(kGroupRows));
  llvm::Value* r = b_.CreateSub(u, b_.CreateMul(g, perGroup));
  llvm::Value* row = b_.CreateAdd(first, b_.CreateSRem(r, size));
  if (cluster_ > 1) row = b_.CreateAdd(b_.CreateMul(row, i32(cluster_)), rank_);
  return {row, b_.CreateSDiv(r, size)};
}

void Emitter::advance() {
  llvm::Value* s = b_.CreateAdd(b_.CreateLoad(b_.getInt32Ty(), stage_), i32(1));
  llvm::Value* wrap = b_.CreateICmpEQ(s, i32(kStages));
  llvm::Value* ph = b_.CreateLoad(b_.getInt32Ty(), phase_);
  b_.CreateStore(b_.CreateSelect(wrap, i32(0), s), stage_);
  b_.CreateStore(b_.CreateSelect(wrap, b_.CreateXor(ph, i32(1)), ph), phase_);
}

void Emitter::producer() {
  ptx::setMaxRegisters(b_, false, kProducerRegs);
  ifThen(b_.CreateICmpEQ(tid_, i32(0)), [&] {
    forLoop(first_, units_, step_, "tiles", [&](llvm::Value* u) {
      auto [mb, nb] = tileOf(u);
      forLoop(i32(0), kt_, i32(1), "kblocks", [&](llvm::Value* kb) {
        llvm::Value* s = b_.CreateLoad(b_.getInt32Ty(), stage_);
        llvm::Value* ph = b_.CreateLoad(b_.getInt32Ty(), phase_);
        ptx::mbarrierWait(b_, emptyBar(s), b_.CreateXor(ph, i32(1)));
        llvm::Value* full = fullBar(s);
        ptx::mbarrierArriveExpectTx(b_, full, kStageBytes);
        llvm::Value* k0 = b_.CreateMul(kb, i32(form_.bk()));
        ptx::tmaLoad2d(b_, slotA(s), mapA_, full, k0, b_.CreateMul(mb, i32(kBM)));
        constexpr unsigned boxes = kBN / kBoxN;
        auto boxB = [&](unsigned j) {
          llvm::Value* dst = b_.CreateAdd(slotB(s), i32(j * kBoxN * kKBytes));
          llvm::Value* col = b_.CreateAdd(b_.CreateMul(nb, i32(kBN)), i32(j * kBoxN));
          // Coordinates innermost first: (n, k) of B, or (k, n) of Bt.
          llvm::Value* c0 = form_.tb ? k0 : col;
          llvm::Value* c1 = form_.tb ? col : k0;
          if (cluster_ == 1) return ptx::tmaLoad2d(b_, dst, mapB_, full, c0, c1);
          // This CTA's share of B, written into the same slot of every CTA of the cluster.
          ptx::tmaLoad2dMulticast(b_, dst, mapB_, full, c0, c1, b_.getInt16((1u << cluster_) - 1));
        };
        if (cluster_ == 1) {
          for (unsigned j = 0; j < boxes; ++j) boxB(j);
        } else {
          for (unsigned r = 0; r < cluster_; ++r)
            ifThen(b_.CreateICmpEQ(rank_, i32(r)), [&] {
              for (unsigned j = r * boxes / cluster_; j < (r + 1) * boxes / cluster_; ++j) boxB(j);
            });
        }
        advance();
      });
    });
  });
  b_.CreateBr(exit_);
}

void Emitter::consumer(llvm::Value* wg) {
  ptx::setMaxRegisters(b_, true, kConsumerRegs);
  llvm::Value* c = b_.CreateSub(wg, i32(1));  // rows 64c .. 64c + 63 of the tile
  auto* accTy = llvm::ArrayType::get(b_.getFloatTy(), 128);
  auto accAt = [&](unsigned i) { return b_.CreateConstGEP2_32(accTy, acc_, 0, i); };
  const char* type = form_.in == ir::ScalarKind::BF16     ? "bf16"
                     : form_.in == ir::ScalarKind::F16    ? "f16"
                     : form_.in == ir::ScalarKind::F8E4M3 ? "e4m3"
                                                          : "e5m2";
  forLoop(first_, units_, step_, "tiles", [&](llvm::Value* u) {
    auto [mb, nb] = tileOf(u);
    for (unsigned i = 0; i < 128; ++i) b_.CreateStore(llvm::ConstantFP::get(b_.getFloatTy(), 0.0), accAt(i));
    forLoop(i32(0), kt_, i32(1), "kblocks", [&](llvm::Value* kb) {
      llvm::Value* s = b_.CreateLoad(b_.getInt32Ty(), stage_);
      llvm::Value* ph = b_.CreateLoad(b_.getInt32Ty(), phase_);
      ptx::mbarrierWait(b_, fullBar(s), ph);
      std::vector<llvm::Value*> acc(128);
      for (unsigned i = 0; i < 128; ++i) acc[i] = b_.CreateLoad(b_.getFloatTy(), accAt(i));
      llvm::Value* a0 = b_.CreateAdd(slotA(s), b_.CreateMul(c, i32(64 * kKBytes)));
      llvm::Value* b0 = slotB(s);
      ptx::wgmmaFence(b_);
      for (unsigned kk = 0; kk < kKBytes / 32; ++kk) {
        // A: K-major rows of 128 bytes, 8-row groups 1024 bytes apart; k16 (k32 for fp8) steps
        // are 32 bytes.
        llvm::Value* da = ptx::wgmmaDescriptor(b_, b_.CreateAdd(a0, i32(kk * 32)), 16, 1024);
        // B K-major: laid out as A is. MN-major: 8-row (k) groups 1024 bytes apart, 64-column
        // boxes BK * 128 bytes apart, 16 rows of k per step.
        llvm::Value* db = form_.tb
                              ? ptx::wgmmaDescriptor(b_, b_.CreateAdd(b0, i32(kk * 32)), 16, 1024)
                              : ptx::wgmmaDescriptor(b_, b_.CreateAdd(b0, i32(kk * 16 * 128)), kBoxN * kKBytes, 1024);
        acc = ptx::wgmma(b_, kBN, type, acc, da, db, /*transB=*/!form_.tb);
      }
      for (unsigned i = 0; i < 128; ++i) b_.CreateStore(acc[i], accAt(i));
      ptx::wgmmaCommit(b_);
      ptx::wgmmaWait(b_, 1);
      // The previous slot's wgmmas are complete: hand it back to the producer.
      ifThen(b_.CreateAnd(b_.CreateICmpSGT(kb, i32(0)), b_.CreateICmpEQ(tid_, i32(0))), [&] {
        llvm::Value* prev = b_.CreateSelect(b_.CreateICmpEQ(s, i32(0)), i32(kStages - 1), b_.CreateSub(s, i32(1)));
        release(emptyBar(prev));
      });
      advance();
    });
    ptx::wgmmaWait(b_, 0);
    ifThen(b_.CreateAnd(b_.CreateICmpSGT(kt_, i32(0)), b_.CreateICmpEQ(tid_, i32(0))), [&] {
      llvm::Value* s = b_.CreateLoad(b_.getInt32Ty(), stage_);
      llvm::Value* last = b_.CreateSelect(b_.CreateICmpEQ(s, i32(0)), i32(kStages - 1), b_.CreateSub(s, i32(1)));
      release(emptyBar(last));
    });
    epilogue(c, mb, nb);
  });
  b_.CreateBr(exit_);
}

void Emitter::release(llvm::Value* empty) {
  if (cluster_ == 1) return ptx::mbarrierArrive(b_, empty);
  for (unsigned r = 0; r < cluster_; ++r) ptx::mbarrierArriveRemote(b_, empty, i32(r));
}

// Thread (warp w, lane l) of consumer c holds, for each 8-column block i of its 64 x 256 part,
// rows 16w + l/4 and 16w + l/4 + 8, columns 8i + 2(l % 4) and the next (registers 4i .. 4i + 3).
// Stored straight from that layout, every warp-wide store would touch 8 rows; instead each warp
// writes 32 columns at a time into its staging buffer and reads them back as 16-byte row
// segments, so that each store covers whole 128-byte lines (64-byte for 16-bit types per 4
// lanes). Segments that are not entirely inside C, or views that are not 16-byte aligned, are
// stored element by element from the buffer.
void Emitter::epilogue(llvm::Value* c, llvm::Value* mb, llvm::Value* nb) {
  auto* accTy = llvm::ArrayType::get(b_.getFloatTy(), 128);
  llvm::Type* outTy = paramType(form_.outElem);
  const unsigned eb = outTy->isFloatTy() ? 4 : 2;
  const unsigned rowBytes = stagingRowBytes(eb);
  const unsigned perLane = 16 / eb;                   // elements in a 16-byte segment
  const unsigned lanesPerRow = kStageCols / perLane;  // segments in a staged row
  const unsigned rowsPerPass = 32 / lanesPerRow;
  llvm::Value* warp = b_.CreateLShr(tid_, 5);
  llvm::Value* lane = b_.CreateAnd(tid_, i32(31));
  llvm::Value* buf =
      b_.CreateAdd(staging_, b_.CreateMul(b_.CreateAdd(b_.CreateMul(c, i32(4)), warp), i32(16 * rowBytes)));
  llvm::Value* fragRow = b_.CreateLShr(lane, 2);
  llvm::Value* fragCol = b_.CreateMul(b_.CreateAnd(lane, i32(3)), i32(2));
  llvm::Value* segRow = b_.CreateUDiv(lane, i32(lanesPerRow));
  llvm::Value* segCol = b_.CreateMul(b_.CreateURem(lane, i32(lanesPerRow)), i32(perLane));
  llvm::Value* rowBase =
      b_.CreateAdd(b_.CreateAdd(b_.CreateMul(mb, i32(kBM)), b_.CreateMul(c, i32(64))), b_.CreateMul(warp, i32(16)));
  auto shared = [&](llvm::Value* addr, llvm::Type*) {
    return b_.CreateIntToPtr(b_.CreateZExt(addr, b_.getInt64Ty()), llvm::PointerType::get(c_, 3));
  };
  auto global = [&](llvm::Value* row, llvm::Value* col) {
    llvm::Value* off = b_.CreateAdd(b_.CreateMul(b_.CreateSExt(row, b_.getInt64Ty()), cStride0_),
                                    b_.CreateMul(b_.CreateSExt(col, b_.getInt64Ty()), cStride1_));
    return b_.CreateGEP(outTy, cData_, off);
  };
  auto syncWarp = [&] {
    b_.CreateCall(llvm::Intrinsic::getDeclaration(&out_, llvm::Intrinsic::nvvm_bar_warp_sync), {b_.getInt32(~0u)});
  };
  auto* pairTy = llvm::FixedVectorType::get(outTy, 2);
  for (unsigned chunk = 0; chunk < kBN / kStageCols; ++chunk) {
    // Fragment -> staging buffer (converted to C's type).
    for (unsigned ii = 0; ii < kStageCols / 8; ++ii)
      for (unsigned h = 0; h < 2; ++h) {
        unsigned reg = 4 * (chunk * kStageCols / 8 + ii) + 2 * h;
        llvm::Value* v0 = b_.CreateLoad(b_.getFloatTy(), b_.CreateConstGEP2_32(accTy, acc_, 0, reg));
        llvm::Value* v1 = b_.CreateLoad(b_.getFloatTy(), b_.CreateConstGEP2_32(accTy, acc_, 0, reg + 1));
        if (form_.scale != 1) {
          llvm::Value* sc = llvm::ConstantFP::get(b_.getFloatTy(), form_.scale);
          v0 = b_.CreateFMul(v0, sc), v1 = b_.CreateFMul(v1, sc);
        }
        if (form_.bias >= 0 || form_.relu) {
          llvm::Value* col =
              b_.CreateAdd(b_.CreateAdd(b_.CreateMul(nb, i32(kBN)), fragCol), i32(chunk * kStageCols + 8 * ii));
          v0 = biasRelu(v0, col);
          v1 = biasRelu(v1, b_.CreateAdd(col, i32(1)));
        }
        if (!outTy->isFloatTy()) v0 = b_.CreateFPTrunc(v0, outTy), v1 = b_.CreateFPTrunc(v1, outTy);
        llvm::Value* pair = llvm::PoisonValue::get(pairTy);
        pair = b_.CreateInsertElement(b_.CreateInsertElement(pair, v0, uint64_t(0)), v1, uint64_t(1));
        llvm::Value* at = b_.CreateAdd(buf, b_.CreateAdd(b_.CreateMul(b_.CreateAdd(fragRow, i32(8 * h)), i32(rowBytes)),
                                                         b_.CreateMul(b_.CreateAdd(fragCol, i32(8 * ii)), i32(eb))));
        b_.CreateAlignedStore(pair, shared(at, pairTy), llvm::Align(2 * eb));
      }
    syncWarp();
    // Staging buffer -> C, one 16-byte row segment per lane and pass.
    for (unsigned pass = 0; pass < 16 / rowsPerPass; ++pass) {
      llvm::Value* r = b_.CreateAdd(segRow, i32(pass * rowsPerPass));
      llvm::Value* at = b_.CreateAdd(buf, b_.CreateAdd(b_.CreateMul(r, i32(rowBytes)), b_.CreateMul(segCol, i32(eb))));
      llvm::Value* row = b_.CreateAdd(rowBase, r);
      llvm::Value* col = b_.CreateAdd(b_.CreateAdd(b_.CreateMul(nb, i32(kBN)), i32(chunk * kStageCols)), segCol);
      llvm::Value* whole =
          b_.CreateAnd(b_.CreateAnd(vec16_, b_.CreateICmpSLT(b_.CreateSExt(row, b_.getInt64Ty()), M_)),
                       b_.CreateICmpSLE(b_.CreateSExt(b_.CreateAdd(col, i32(perLane)), b_.getInt64Ty()), N_));
      auto* vec = block("store.segment");
      auto* elems = block("store.elements");
      auto* done = block("store.done");
      b_.CreateCondBr(whole, vec, elems);
      b_.SetInsertPoint(vec);
      auto* segTy = llvm::FixedVectorType::get(b_.getInt32Ty(), 4);
      llvm::Value* seg = b_.CreateAlignedLoad(segTy, shared(at, segTy), llvm::Align(16));
      b_.CreateAlignedStore(seg, global(row, col), llvm::Align(16));
      b_.CreateBr(done);
      b_.SetInsertPoint(elems);
      ifThen(b_.CreateICmpSLT(b_.CreateSExt(row, b_.getInt64Ty()), M_), [&] {
        forLoop(
            i32(0), i32(perLane), i32(1), "store.element",
            [&](llvm::Value* e) {
              llvm::Value* ce = b_.CreateAdd(col, e);
              ifThen(b_.CreateICmpSLT(b_.CreateSExt(ce, b_.getInt64Ty()), N_), [&] {
                llvm::Value* x = b_.CreateLoad(outTy, shared(b_.CreateAdd(at, b_.CreateMul(e, i32(eb))), outTy));
                b_.CreateStore(x, global(row, ce));
              });
            },
            /*rolled=*/true);
      });
      b_.CreateBr(done);
      b_.SetInsertPoint(done);
    }
    syncWarp();
  }
}

bool Emitter::emit(std::string& error) {
  if (form_.in != ir::ScalarKind::BF16 && form_.in != ir::ScalarKind::F16 && !(form_.fp8() && form_.tb)) {
    error = "internal error: the Hopper form needs bf16 or f16 operands, or fp8 with B K-major";
    return false;
  }
  declare(variantEntry(func_.funcName(), cluster_, form_.entrySuffix), 2, kThreads);
  b_.SetInsertPoint(block("entry"));
  stage_ = b_.CreateAlloca(b_.getInt32Ty(), nullptr, "stage");
  phase_ = b_.CreateAlloca(b_.getInt32Ty(), nullptr, "phase");
  acc_ = b_.CreateAlloca(llvm::ArrayType::get(b_.getFloatTy(), 128), nullptr, "acc");
  b_.CreateStore(i32(0), stage_);
  b_.CreateStore(i32(0), phase_);
  llvm::Value* tid = ptx::threadIdX(b_);
  llvm::Value* wg = b_.CreateLShr(tid, 7);
  tid_ = b_.CreateAnd(tid, i32(127));  // thread in its warpgroup
  smem_ = sharedBase();
  bars_ = b_.CreateAdd(smem_, i32(kStages * kStageBytes));
  staging_ = b_.CreateAdd(bars_, i32(kBarrierBytes));
  ifThen(b_.CreateICmpEQ(tid, i32(0)), [&] {
    for (unsigned s = 0; s < kStages; ++s) {
      ptx::mbarrierInit(b_, fullBar(i32(s)), 1);              // the producer's arrive (plus the TMA bytes)
      ptx::mbarrierInit(b_, emptyBar(i32(s)), 2 * cluster_);  // per consumer warpgroup sharing the slot
    }
    ptx::fenceMbarrierInit(b_);
  });
  if (cluster_ > 1) {
    ptx::clusterBarrier(b_);  // the peer's barriers are initialised before anything arrives on them
    rank_ = ptx::clusterRank(b_);
  } else {
    ptx::blockBarrier(b_);
    rank_ = i32(0);
  }
  // Extents: M, N from C; K from A. Tile counts in 32 bits (the runtime takes this form only
  // for extents below 2^31).
  M_ = tensorField(form_.m.param, 1, form_.m.axis);
  N_ = tensorField(form_.n.param, 1, form_.n.axis);
  llvm::Value* K = tensorField(form_.k.param, 1, form_.k.axis);
  auto ceilDiv = [&](llvm::Value* x, unsigned d) {
    return b_.CreateTrunc(b_.CreateUDiv(b_.CreateAdd(x, b_.getInt64(d - 1)), b_.getInt64(d)), b_.getInt32Ty());
  };
  mt_ = ceilDiv(M_, kBM);
  nt_ = ceilDiv(N_, kBN);
  kt_ = ceilDiv(K, form_.bk());
  tiles_ = b_.CreateMul(mt_, nt_);
  unitRows_ = cluster_ > 1 ? b_.CreateUDiv(b_.CreateAdd(mt_, i32(cluster_ - 1)), i32(cluster_)) : mt_;
  units_ = b_.CreateMul(unitRows_, nt_);
  first_ = b_.CreateUDiv(ptx::blockIdX(b_), i32(cluster_));
  step_ = b_.CreateUDiv(ptx::gridDimX(b_), i32(cluster_));
  if (form_.cScratch) {
    cData_ = b_.CreateAddrSpaceCast(fn_->getArg(numParams_ + 1), b_.getPtrTy(1));
    cStride0_ = N_;
    cStride1_ = b_.getInt64(1);
  } else {
    cData_ = b_.CreateAddrSpaceCast(tensorField(form_.c, 0, 0), b_.getPtrTy(1));
    cStride0_ = tensorField(form_.c, 2, 0);
    cStride1_ = tensorField(form_.c, 2, 1);
  }
  if (form_.bias >= 0) {
    biasData_ = b_.CreateAddrSpaceCast(tensorField(form_.bias, 0, 0), b_.getPtrTy(1));
    biasStride_ = tensorField(form_.bias, 2, 0);
  }
  // 16-byte row segments of C can be stored whole: aligned data, contiguous rows of a multiple of
  // 16 bytes apart.
  unsigned outBytes = ir::baseScalar(form_.outElem) == ir::ScalarKind::F32 ? 4 : 2;
  llvm::Value* aligned =
      b_.CreateICmpEQ(b_.CreateAnd(b_.CreatePtrToInt(cData_, b_.getInt64Ty()), b_.getInt64(15)), b_.getInt64(0));
  llvm::Value* rows16 =
      b_.CreateICmpEQ(b_.CreateAnd(b_.CreateMul(cStride0_, b_.getInt64(outBytes)), b_.getInt64(15)), b_.getInt64(0));
  vec16_ = b_.CreateAnd(b_.CreateAnd(b_.CreateICmpEQ(cStride1_, b_.getInt64(1)), aligned), rows16);
  mapA_ = tensorMap(0);
  mapB_ = tensorMap(1);
  auto* prod = block("producer");
  auto* cons = block("consumer");
  exit_ = block("exit");
  b_.CreateCondBr(b_.CreateICmpEQ(wg, i32(0)), prod, cons);
  b_.SetInsertPoint(prod);
  producer();
  b_.SetInsertPoint(cons);
  consumer(wg);
  b_.SetInsertPoint(exit_);
  // No CTA of a cluster may exit while its peer can still multicast into it or arrive on it.
  if (cluster_ > 1) ptx::clusterBarrier(b_);
  b_.CreateRetVoid();
  return true;
}

}  // namespace

namespace {

GpuVariant stepVariant(const std::string& entry, const Form& form) {
  GpuVariant v;
  v.entry = entry;
  v.minSm = 90;
  v.threads = kThreads;
  v.sharedBytes = kSharedBytes;
  unsigned bk = form.bk();
  v.tensorMaps.push_back({form.a, {bk, kBM}, 128});  // A: BK contiguous elements x BM rows
  // B: 64 contiguous columns x BK rows, or (K-major) BK contiguous elements x 64 rows.
  if (form.tb)
    v.tensorMaps.push_back({form.b, {bk, kBoxN}, 128});
  else
    v.tensorMaps.push_back({form.b, {kBoxN, bk}, 128});
  return v;
}

// A chain of products: its two steps, in order, as the kernel's variant chain.
bool planChain(ir::Operation* f, KernelInterface& k) {
  auto steps = chainOf(f);
  if (!steps) {
    if (f->hasAttr(ir::AttrId::ChainFormMissed))
      k.remarks.push_back({diag::remark_no_chain_form, f->loc, {k.name, f->strAttr(ir::AttrId::ChainFormMissed)}});
    return false;
  }
  for (const Form& s : *steps) k.gpuVariants.push_back(stepVariant(variantEntry(f->funcName(), 1, s.entrySuffix), s));
  const Form& first = (*steps)[0];
  k.chain.steps = 2;
  k.chain.scratchDtype = k.params[first.a].dtype;
  k.chain.rowsParam = first.m.param, k.chain.rowsAxis = static_cast<int32_t>(first.m.axis);
  k.chain.colsParam = first.n.param, k.chain.colsAxis = static_cast<int32_t>(first.n.axis);
  std::string epilogue = first.bias >= 0 || (*steps)[1].bias >= 0 ? "bias" : "";
  if (first.relu) epilogue += epilogue.empty() ? "relu" : " and relu";
  k.remarks.push_back({diag::remark_chain_wgmma,
                       f->loc,
                       {k.name, std::to_string(kBM), std::to_string(kBN), std::to_string(first.bk()),
                        epilogue.empty() ? "rounding" : epilogue, ir::printType(first.outElem)}});
  k.remarks.push_back({diag::remark_chain_launch_test, f->loc, {k.name, "8"}});
  return true;
}

}  // namespace

void planHopperVariants(ir::Module& m, std::vector<KernelInterface>& kernels) {
  forEachKernel(m, kernels.size(), [&](ir::Operation* f, size_t i) {
    KernelInterface& k = kernels[i];
    k.gpuVariants.clear();
    k.chain = {};
    if (planChain(f, k)) return true;
    auto form = formOf(f);
    if (!form) {
      // -Rpass-missed=tensor-cores: a tile.mma kernel that keeps its mma.sync form on sm_90a.
      bool hasMma = false;
      f->walk([&](ir::Operation* op) { hasMma |= op->id == ir::OpId::TileMma; });
      if (hasMma) k.remarks.push_back({diag::remark_no_wgmma, f->loc, {k.name, ir::mmaFormMismatch(*f)}});
      return true;
    }
    // Autotune candidates differ in the mma.sync form's tile sizes only; the Hopper form picks
    // its own, so they share their kernel's Hopper entries (one copy of the code, same bits).
    if (!k.autotuneOf.empty()) {
      auto base = std::find_if(kernels.begin(), kernels.begin() + i,
                               [&](const KernelInterface& b) { return b.name == k.autotuneOf; });
      if (base != kernels.begin() + i && !base->gpuVariants.empty()) {
        k.gpuVariants = base->gpuVariants;
        return true;
      }
    }
    k.remarks.push_back({diag::remark_tensor_cores_wgmma,
                         f->loc,
                         {k.name, std::to_string(kBM), std::to_string(kBN), std::to_string(form->bk())}});
    k.remarks.push_back({diag::remark_pipelined_tma,
                         f->loc,
                         {k.name, std::to_string(kStages), std::to_string((kThreads - 128) / 128)}});
    std::vector<unsigned> clusters = form->fp8()
                                         ? std::vector<unsigned>(std::begin(kClusters8), std::end(kClusters8))
                                         : std::vector<unsigned>(std::begin(kClusters16), std::end(kClusters16));
    for (unsigned cluster : clusters) {
      GpuVariant v = stepVariant(variantEntry(f->funcName(), cluster), *form);
      v.cluster = cluster;
      k.gpuVariants.push_back(v);
    }
    return true;
  });
}

void remarkChainsWithoutHopper(ir::Module& m, std::vector<KernelInterface>& kernels) {
  forEachKernel(m, kernels.size(), [&](ir::Operation* f, size_t i) {
    if (f->hasAttr(ir::AttrId::ChainForm))
      kernels[i].remarks.push_back(
          {diag::remark_no_chain_form, f->loc, {kernels[i].name, "no sm_90a among the GPU targets (--gpu)"}});
    else if (f->hasAttr(ir::AttrId::ChainFormMissed))
      kernels[i].remarks.push_back(
          {diag::remark_no_chain_form, f->loc, {kernels[i].name, f->strAttr(ir::AttrId::ChainFormMissed)}});
    return true;
  });
}

bool emitHopperVariants(ir::Module& m, const std::vector<KernelInterface>& kernels, llvm::Module& out,
                        std::string& error) {
  return forEachKernel(m, kernels.size(), [&](ir::Operation* f, size_t i) {
    const KernelInterface& k = kernels[i];
    if (k.gpuVariants.empty()) return true;
    if (auto steps = chainOf(f)) {
      for (const Form& s : *steps)
        if (!Emitter(out, *f, s, 1).emit(error)) {
          error = "kernel '" + k.name + "' (sm_90a chain form): " + error;
          return false;
        }
      return true;
    }
    auto form = formOf(f);
    if (!form) return true;
    for (const GpuVariant& v : k.gpuVariants) {
      if (v.entry != variantEntry(f->funcName(), v.cluster)) continue;  // shared with its kernel
      Emitter e(out, *f, *form, v.cluster);
      if (!e.emit(error)) {
        error = "kernel '" + k.name + "' (sm_90a form): " + error;
        return false;
      }
    }
    return true;
  });
}

}  // namespace tessera::codegen
