// The sm_90a GEMM schedule (codegen/hopper/HopperGemmForm.h): every CTA of a persistent grid runs three
// warpgroups (384 threads):
//   - warpgroup 0, the producer: one thread walks the CTA's output tiles and, for each k block,
//     waits until a ring slot is empty, announces its bytes on the slot's `full` mbarrier and
//     issues TMA copies of the A block (BM x BK) and of each product's B block (BK x BN / products)
//     into it;
//   - warpgroups 1 and 2, the consumers: each owns 64 rows of the output tile as wgmma
//     accumulators (128 f32 registers a thread: m64n256 for one product, m64n128 for each of two
//     sharing A); per k block they wait on `full`, issue the wgmmas straight from the swizzled
//     slot, keep one group in flight (wgmma.wait_group 1) and release the previous slot on its
//     `empty` mbarrier; after the last k block they run the epilogue on the accumulator registers
//     and store the tile through a per-warp staging buffer (16-byte row segments where the view
//     allows, element by element at the edges);
//   - setmaxnreg gives the consumers 232 registers a thread and leaves the producer 40.
// Output tiles are visited in groups of 8 tile rows (tile t -> rows first + t % size, column
// t / size within its group) so that CTAs running at the same time share A and B blocks in L2.
// docs/codegen.md ("Hopper form of tile.mma", "Products of whole-tensor programs on wgmma") has
// the layouts, descriptors and the epilogue.
#include <unordered_map>

#include "codegen/hopper/HopperGemmForm.h"
#include "codegen/hopper/HopperKernel.h"
#include "codegen/hopper/HopperPtx.h"
#include "codegen/lower/Lowering.h"
#include "llvm/IR/IRBuilder.h"
#include "llvm/IR/Intrinsics.h"
#include "llvm/IR/IntrinsicsNVPTX.h"
#include "llvm/IR/Module.h"

namespace tessera::codegen {

using namespace gemm;

namespace {

class Emitter : HopperKernelBuilder {
 public:
  Emitter(llvm::Module& out, ir::Operation& func, const KernelInterface& kernel, const GemmForm& form, unsigned cluster,
          detail::Lowering* lowering)
      : HopperKernelBuilder(out, func), kernel_(kernel), form_(form), cluster_(cluster), lowering_(lowering) {}

  bool emit(std::string& error);

 private:
  // (tile row, tile column) of output tile u.
  std::pair<llvm::Value*, llvm::Value*> tileOf(llvm::Value* u);
  llvm::Value* fullBar(llvm::Value* s) { return b_.CreateAdd(bars_, b_.CreateMul(s, i32(8))); }
  llvm::Value* emptyBar(llvm::Value* s) {
    return b_.CreateAdd(bars_, b_.CreateMul(b_.CreateAdd(s, i32(kStages)), i32(8)));
  }
  llvm::Value* slotA(llvm::Value* s) { return b_.CreateAdd(smem_, b_.CreateMul(s, i32(kABytes))); }
  // Product p's B block in slot s: its BN / 64 boxes after the previous products'.
  llvm::Value* slotB(llvm::Value* s, unsigned p) {
    return b_.CreateAdd(smem_,
                        b_.CreateAdd(i32(kStages * kABytes + p * form_.bn() * kKBytes), b_.CreateMul(s, i32(kBBytes))));
  }
  // stage += 1, wrapping to 0 and flipping the phase.
  void advance();
  void producer();
  void consumer(llvm::Value* wg);
  // A consumer warpgroup is done with a slot: arrive on its empty barrier in every CTA sharing it.
  void release(llvm::Value* empty);
  void epilogue(llvm::Value* c, llvm::Value* mb, llvm::Value* nb);
  // The value stored for output element (row, col) (i32) whose products' accumulators are `acc`.
  llvm::Value* elementValue(llvm::Value* row, llvm::Value* col, const std::vector<llvm::Value*>& acc);
  // What a leaf of the epilogue reads at (row, col).
  llvm::Value* leafValue(const ir::EpilogueLeaf& leaf, llvm::Value* row, llvm::Value* col);
  void bindLeaves();

  const KernelInterface& kernel_;
  GemmForm form_;
  unsigned cluster_ = 1;
  detail::Lowering* lowering_ = nullptr;
  std::string* error_ = nullptr;
  llvm::BasicBlock* exit_ = nullptr;  // every thread leaves through it (cluster barrier first)
  llvm::Value *rank_ = nullptr, *unitRows_ = nullptr, *units_ = nullptr, *first_ = nullptr, *step_ = nullptr;
  llvm::Value *smem_ = nullptr, *bars_ = nullptr;  // 32-bit shared addresses
  llvm::Value *M_ = nullptr, *N_ = nullptr, *mt_ = nullptr, *nt_ = nullptr, *kt_ = nullptr, *tiles_ = nullptr;
  llvm::Value *tid_ = nullptr, *mapA_ = nullptr;
  std::vector<llvm::Value*> mapB_;
  llvm::Value *stage_ = nullptr, *phase_ = nullptr, *acc_ = nullptr;  // allocas
  llvm::Value *cData_ = nullptr, *cStride0_ = nullptr, *cStride1_ = nullptr, *vec16_ = nullptr, *staging_ = nullptr;
  // The tensors the epilogue reads: data, strides (i64) per parameter.
  struct LeafTensor {
    llvm::Value *data = nullptr, *stride0 = nullptr, *stride1 = nullptr;
  };
  std::unordered_map<int, LeafTensor> leafTensors_;
};

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
  const unsigned boxes = form_.bn() / kBoxN;  // per product
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
        auto boxB = [&](unsigned p, unsigned j) {
          llvm::Value* dst = b_.CreateAdd(slotB(s, p), i32(j * kBoxN * kKBytes));
          llvm::Value* col = b_.CreateAdd(b_.CreateMul(nb, i32(form_.bn())), i32(j * kBoxN));
          // Coordinates innermost first: (n, k) of B, or (k, n) of Bt.
          bool km = form_.b[p].kMajor;
          llvm::Value* c0 = km ? k0 : col;
          llvm::Value* c1 = km ? col : k0;
          if (cluster_ == 1) return ptx::tmaLoad2d(b_, dst, mapB_[p], full, c0, c1);
          // This CTA's share of B, written into the same slot of every CTA of the cluster.
          ptx::tmaLoad2dMulticast(b_, dst, mapB_[p], full, c0, c1, b_.getInt16((1u << cluster_) - 1));
        };
        for (unsigned p = 0; p < form_.b.size(); ++p) {
          if (cluster_ == 1) {
            for (unsigned j = 0; j < boxes; ++j) boxB(p, j);
            continue;
          }
          for (unsigned r = 0; r < cluster_; ++r)
            ifThen(b_.CreateICmpEQ(rank_, i32(r)), [&] {
              for (unsigned j = r * boxes / cluster_; j < (r + 1) * boxes / cluster_; ++j) boxB(p, j);
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
  const unsigned bn = form_.bn(), regs = bn / 2;  // accumulator registers of each product
  forLoop(first_, units_, step_, "tiles", [&](llvm::Value* u) {
    auto [mb, nb] = tileOf(u);
    for (unsigned i = 0; i < 128; ++i) b_.CreateStore(llvm::ConstantFP::get(b_.getFloatTy(), 0.0), accAt(i));
    forLoop(i32(0), kt_, i32(1), "kblocks", [&](llvm::Value* kb) {
      llvm::Value* s = b_.CreateLoad(b_.getInt32Ty(), stage_);
      llvm::Value* ph = b_.CreateLoad(b_.getInt32Ty(), phase_);
      ptx::mbarrierWait(b_, fullBar(s), ph);
      std::vector<std::vector<llvm::Value*>> acc(form_.b.size(), std::vector<llvm::Value*>(regs));
      for (unsigned p = 0; p < form_.b.size(); ++p)
        for (unsigned i = 0; i < regs; ++i) acc[p][i] = b_.CreateLoad(b_.getFloatTy(), accAt(p * regs + i));
      llvm::Value* a0 = b_.CreateAdd(slotA(s), b_.CreateMul(c, i32(64 * kKBytes)));
      ptx::wgmmaFence(b_);
      for (unsigned kk = 0; kk < kKBytes / 32; ++kk) {
        // A: K-major rows of 128 bytes, 8-row groups 1024 bytes apart; k16 (k32 for fp8) steps
        // are 32 bytes.
        llvm::Value* da = ptx::wgmmaDescriptor(b_, b_.CreateAdd(a0, i32(kk * 32)), 16, 1024);
        for (unsigned p = 0; p < form_.b.size(); ++p) {
          // B K-major: laid out as A is. MN-major: 8-row (k) groups 1024 bytes apart, 64-column
          // boxes BK * 128 bytes apart, 16 rows of k per step.
          llvm::Value* b0 = slotB(s, p);
          bool km = form_.b[p].kMajor;
          llvm::Value* db = km ? ptx::wgmmaDescriptor(b_, b_.CreateAdd(b0, i32(kk * 32)), 16, 1024)
                               : ptx::wgmmaDescriptor(b_, b_.CreateAdd(b0, i32(kk * 16 * 128)), kBoxN * kKBytes, 1024);
          acc[p] = ptx::wgmma(b_, bn, type, acc[p], da, db, /*transB=*/!km);
        }
      }
      for (unsigned p = 0; p < form_.b.size(); ++p)
        for (unsigned i = 0; i < regs; ++i) b_.CreateStore(acc[p][i], accAt(p * regs + i));
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

llvm::Value* Emitter::leafValue(const ir::EpilogueLeaf& leaf, llvm::Value* row, llvm::Value* col) {
  if (leaf.kind == ir::LeafKind::Scalar) return fn_->getArg(static_cast<unsigned>(leaf.param));
  const LeafTensor& t = leafTensors_.at(leaf.param);
  ir::Type elem = func_.body().arg(static_cast<unsigned>(leaf.param))->type->elem;
  llvm::Type* ty = paramType(elem);
  llvm::Type* storage = ty->isIntegerTy(1) ? b_.getInt8Ty() : ty;
  // Rows past M and columns past N read element 0 (present: the tile is not empty) and are never
  // stored.
  auto clamp = [&](llvm::Value* i, llvm::Value* n) {
    llvm::Value* i64 = b_.CreateSExt(i, b_.getInt64Ty());
    return b_.CreateSelect(b_.CreateICmpSLT(i64, n), i64, b_.getInt64(0));
  };
  llvm::Value* off = b_.CreateMul(clamp(col, N_), leaf.kind == ir::LeafKind::Column ? t.stride0 : t.stride1);
  if (leaf.kind == ir::LeafKind::Element) off = b_.CreateAdd(off, b_.CreateMul(clamp(row, M_), t.stride0));
  llvm::Value* x = b_.CreateLoad(storage, b_.CreateGEP(storage, t.data, off));
  return storage == ty ? x : b_.CreateTrunc(x, ty);
}

llvm::Value* Emitter::elementValue(llvm::Value* row, llvm::Value* col, const std::vector<llvm::Value*>& acc) {
  llvm::Type* outTy = paramType(form_.outElem);
  if (!form_.step) {
    llvm::Value* v = acc[0];
    if (form_.scale != 1) v = b_.CreateFMul(v, llvm::ConstantFP::get(b_.getFloatTy(), form_.scale));
    return outTy->isFloatTy() ? v : b_.CreateFPTrunc(v, outTy);
  }
  std::unordered_map<const ir::Value*, llvm::Value*> env;
  for (size_t p = 0; p < acc.size(); ++p) env[form_.step->products[p].dot->result()] = acc[p];
  for (const ir::EpilogueLeaf& leaf : form_.step->leaves) env[leaf.value] = leafValue(leaf, row, col);
  if (!lowering_->lowerElementwiseAt(b_, kernel_, form_.step->epilogue, env)) {
    if (error_->empty()) *error_ = "its epilogue cannot be lowered per element";
    return llvm::PoisonValue::get(outTy);
  }
  llvm::Value* v = env[form_.step->result];
  if (v->getType() == outTy) return v;
  // A materialised value rounds once to the scratch matrix's type (to nearest even).
  if (!v->getType()->isFloatTy()) v = b_.CreateFPExt(v, b_.getFloatTy());
  return outTy->isFloatTy() ? v : b_.CreateFPTrunc(v, outTy);
}

// Thread (warp w, lane l) of consumer c holds, for each 8-column block i of its 64 x BN part of a
// product, rows 16w + l/4 and 16w + l/4 + 8, columns 8i + 2(l % 4) and the next (registers
// 4i .. 4i + 3 of that product's BN / 2). Each element's value (elementValue) is computed there,
// on the registers; stored straight from that layout, every warp-wide store would touch 8 rows,
// so each warp writes 32 columns at a time into its staging buffer and reads them back as 16-byte
// row segments, each store covering whole 128-byte lines (64-byte for 16-bit types per 4 lanes).
// Segments that are not entirely inside the output, or views that are not 16-byte aligned, are
// stored element by element from the buffer.
void Emitter::epilogue(llvm::Value* c, llvm::Value* mb, llvm::Value* nb) {
  auto* accTy = llvm::ArrayType::get(b_.getFloatTy(), 128);
  llvm::Type* outTy = paramType(form_.outElem);
  const unsigned eb = outTy->isFloatTy() ? 4 : 2;
  const unsigned rowBytes = stagingRowBytes(eb);
  const unsigned perLane = 16 / eb;                   // elements in a 16-byte segment
  const unsigned lanesPerRow = kStageCols / perLane;  // segments in a staged row
  const unsigned rowsPerPass = 32 / lanesPerRow;
  const unsigned bn = form_.bn(), regs = bn / 2;
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
  llvm::Value* colBase = b_.CreateMul(nb, i32(bn));
  auto global = [&](llvm::Value* row, llvm::Value* col) {
    llvm::Value* off = b_.CreateAdd(b_.CreateMul(b_.CreateSExt(row, b_.getInt64Ty()), cStride0_),
                                    b_.CreateMul(b_.CreateSExt(col, b_.getInt64Ty()), cStride1_));
    return b_.CreateGEP(outTy, cData_, off);
  };
  auto syncWarp = [&] {
    b_.CreateCall(llvm::Intrinsic::getDeclaration(&out_, llvm::Intrinsic::nvvm_bar_warp_sync), {b_.getInt32(~0u)});
  };
  auto* pairTy = llvm::FixedVectorType::get(outTy, 2);
  for (unsigned chunk = 0; chunk < bn / kStageCols; ++chunk) {
    // Fragment -> epilogue -> staging buffer (in the output's type).
    for (unsigned ii = 0; ii < kStageCols / 8; ++ii)
      for (unsigned h = 0; h < 2; ++h) {
        unsigned reg = 4 * (chunk * kStageCols / 8 + ii) + 2 * h;
        llvm::Value* row = b_.CreateAdd(rowBase, b_.CreateAdd(fragRow, i32(8 * h)));
        llvm::Value* col = b_.CreateAdd(colBase, b_.CreateAdd(fragCol, i32(chunk * kStageCols + 8 * ii)));
        llvm::Value* v[2];
        for (unsigned e = 0; e < 2; ++e) {
          std::vector<llvm::Value*> acc;
          for (unsigned p = 0; p < form_.b.size(); ++p)
            acc.push_back(b_.CreateLoad(b_.getFloatTy(), b_.CreateConstGEP2_32(accTy, acc_, 0, p * regs + reg + e)));
          v[e] = elementValue(row, b_.CreateAdd(col, i32(e)), acc);
        }
        llvm::Value* pair = llvm::PoisonValue::get(pairTy);
        pair = b_.CreateInsertElement(b_.CreateInsertElement(pair, v[0], uint64_t(0)), v[1], uint64_t(1));
        llvm::Value* at = b_.CreateAdd(buf, b_.CreateAdd(b_.CreateMul(b_.CreateAdd(fragRow, i32(8 * h)), i32(rowBytes)),
                                                         b_.CreateMul(b_.CreateAdd(fragCol, i32(8 * ii)), i32(eb))));
        b_.CreateAlignedStore(pair, toShared(at), llvm::Align(2 * eb));
      }
    syncWarp();
    // Staging buffer -> output, one 16-byte row segment per lane and pass.
    for (unsigned pass = 0; pass < 16 / rowsPerPass; ++pass) {
      llvm::Value* r = b_.CreateAdd(segRow, i32(pass * rowsPerPass));
      llvm::Value* at = b_.CreateAdd(buf, b_.CreateAdd(b_.CreateMul(r, i32(rowBytes)), b_.CreateMul(segCol, i32(eb))));
      llvm::Value* row = b_.CreateAdd(rowBase, r);
      llvm::Value* col = b_.CreateAdd(b_.CreateAdd(colBase, i32(chunk * kStageCols)), segCol);
      llvm::Value* whole =
          b_.CreateAnd(b_.CreateAnd(vec16_, b_.CreateICmpSLT(b_.CreateSExt(row, b_.getInt64Ty()), M_)),
                       b_.CreateICmpSLE(b_.CreateSExt(b_.CreateAdd(col, i32(perLane)), b_.getInt64Ty()), N_));
      auto* vec = block("store.segment");
      auto* elems = block("store.elements");
      auto* done = block("store.done");
      b_.CreateCondBr(whole, vec, elems);
      b_.SetInsertPoint(vec);
      auto* segTy = llvm::FixedVectorType::get(b_.getInt32Ty(), 4);
      llvm::Value* seg = b_.CreateAlignedLoad(segTy, toShared(at), llvm::Align(16));
      b_.CreateAlignedStore(seg, global(row, col), llvm::Align(16));
      b_.CreateBr(done);
      b_.SetInsertPoint(elems);
      ifThen(b_.CreateICmpSLT(b_.CreateSExt(row, b_.getInt64Ty()), M_), [&] {
        forLoop(
            i32(0), i32(perLane), i32(1), "store.element",
            [&](llvm::Value* e) {
              llvm::Value* ce = b_.CreateAdd(col, e);
              ifThen(b_.CreateICmpSLT(b_.CreateSExt(ce, b_.getInt64Ty()), N_), [&] {
                llvm::Value* x = b_.CreateLoad(outTy, toShared(b_.CreateAdd(at, b_.CreateMul(e, i32(eb)))));
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

// The data and strides of every tensor the epilogue reads, loaded once at entry.
void Emitter::bindLeaves() {
  if (!form_.step) return;
  for (const ir::EpilogueLeaf& leaf : form_.step->leaves) {
    if (leaf.kind == ir::LeafKind::Scalar || leafTensors_.count(leaf.param)) continue;
    LeafTensor t;
    unsigned p = static_cast<unsigned>(leaf.param);
    t.data = b_.CreateAddrSpaceCast(tensorField(p, 0, 0), b_.getPtrTy(1));
    t.stride0 = tensorField(p, 2, 0);
    t.stride1 = leaf.kind == ir::LeafKind::Element ? tensorField(p, 2, 1) : nullptr;
    leafTensors_[leaf.param] = t;
  }
}

bool Emitter::emit(std::string& error) {
  error_ = &error;
  if (form_.in != ir::ScalarKind::BF16 && form_.in != ir::ScalarKind::F16 && !(form_.fp8() && form_.b[0].kMajor)) {
    error = "internal error: the Hopper form needs bf16 or f16 operands, or fp8 with B K-major";
    return false;
  }
  if (form_.b.empty() || form_.b.size() > 2 || (form_.step && !lowering_)) {
    error = "internal error: the Hopper form takes one or two products";
    return false;
  }
  declare(gemmVariant(form_, cluster_).entry, 1 + static_cast<unsigned>(form_.b.size()), kThreads);
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
  // Extents of the output and of the products' k. Tile counts in 32 bits (the runtime takes
  // this form only for extents below 2^31).
  M_ = tensorField(static_cast<unsigned>(form_.m.param), 1, form_.m.axis);
  N_ = tensorField(static_cast<unsigned>(form_.n.param), 1, form_.n.axis);
  llvm::Value* K = tensorField(static_cast<unsigned>(form_.k.param), 1, form_.k.axis);
  auto ceilDiv = [&](llvm::Value* x, unsigned d) {
    return b_.CreateTrunc(b_.CreateUDiv(b_.CreateAdd(x, b_.getInt64(d - 1)), b_.getInt64(d)), b_.getInt32Ty());
  };
  mt_ = ceilDiv(M_, kBM);
  nt_ = ceilDiv(N_, form_.bn());
  kt_ = ceilDiv(K, form_.bk());
  tiles_ = b_.CreateMul(mt_, nt_);
  unitRows_ = cluster_ > 1 ? b_.CreateUDiv(b_.CreateAdd(mt_, i32(cluster_ - 1)), i32(cluster_)) : mt_;
  units_ = b_.CreateMul(unitRows_, nt_);
  first_ = b_.CreateUDiv(ptx::blockIdX(b_), i32(cluster_));
  step_ = b_.CreateUDiv(ptx::gridDimX(b_), i32(cluster_));
  if (form_.cScratch >= 0) {
    cData_ = b_.CreateAddrSpaceCast(fn_->getArg(numParams_ + 1), b_.getPtrTy(1));
    cStride0_ = N_;
    cStride1_ = b_.getInt64(1);
  } else {
    unsigned cp = static_cast<unsigned>(form_.c);
    cData_ = b_.CreateAddrSpaceCast(tensorField(cp, 0, 0), b_.getPtrTy(1));
    cStride0_ = tensorField(cp, 2, 0);
    cStride1_ = tensorField(cp, 2, 1);
  }
  bindLeaves();
  // 16-byte row segments of the output can be stored whole: aligned data, contiguous rows of a
  // multiple of 16 bytes apart.
  unsigned outBytes = ir::baseScalar(form_.outElem) == ir::ScalarKind::F32 ? 4 : 2;
  llvm::Value* aligned =
      b_.CreateICmpEQ(b_.CreateAnd(b_.CreatePtrToInt(cData_, b_.getInt64Ty()), b_.getInt64(15)), b_.getInt64(0));
  llvm::Value* rows16 =
      b_.CreateICmpEQ(b_.CreateAnd(b_.CreateMul(cStride0_, b_.getInt64(outBytes)), b_.getInt64(15)), b_.getInt64(0));
  vec16_ = b_.CreateAnd(b_.CreateAnd(b_.CreateICmpEQ(cStride1_, b_.getInt64(1)), aligned), rows16);
  mapA_ = tensorMap(0);
  for (unsigned p = 0; p < form_.b.size(); ++p) mapB_.push_back(tensorMap(1 + p));
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
  return error.empty();
}

}  // namespace

GpuVariant gemmVariant(const GemmForm& form, unsigned cluster) {
  GpuVariant v;
  v.entry = form.entry + (cluster > 1 ? "_c" + std::to_string(cluster) : "");
  v.minSm = 90;
  v.threads = kThreads;
  v.sharedBytes = kSharedBytes;
  v.cluster = cluster;
  unsigned bk = form.bk();
  v.tensorMaps.push_back({form.a.param, {bk, kBM}, 128});  // A: BK contiguous elements x BM rows
  // B: 64 contiguous columns x BK rows, or (K-major) BK contiguous elements x 64 rows.
  for (const GemmOperand& b : form.b)
    v.tensorMaps.push_back(b.kMajor ? TensorMapRequest{b.param, {bk, kBoxN}, 128}
                                    : TensorMapRequest{b.param, {kBoxN, bk}, 128});
  return v;
}

bool emitGemmForm(llvm::Module& out, ir::Operation& func, const KernelInterface& kernel, const GemmForm& form,
                  unsigned cluster, detail::Lowering* lowering, std::string& error) {
  return Emitter(out, func, kernel, form, cluster, lowering).emit(error);
}

}  // namespace tessera::codegen
