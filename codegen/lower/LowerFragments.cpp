// Accumulator fragments in registers, products on tensor cores (GPU). When every !frag value of
// a kernel is an f32 accumulator that only flows through tile.mma (with row-major bf16/f16
// shared-memory operands), loops, branches, conversions and tile.store, the fragments live in
// registers instead of the workspace: the group's warps split the BM x BN tile as a grid (4 warps
// 2 x 2, 8 warps 2 x 4), and each warp holds its part in the accumulator layout of
// mma.sync.m16n8k16 (thread `lane` holds rows lane/4 and lane/4 + 8, columns 2 * (lane % 4) and
// the next, of every 16 x 8 piece). tile.mma becomes mma.sync over k in steps of 16. Anything else keeps the workspace
// path (LowerTiles.cpp), which is also what the CPU runs.
#include "codegen/lower/Lowering.h"
#include "llvm/IR/Intrinsics.h"
#include "llvm/IR/IntrinsicsNVPTX.h"

namespace tessera::codegen::detail {

using ir::OpId;

namespace {

// The warps of a group tile the accumulator as a grid: 4 warps 2 x 2, 8 warps 2 x 4.
bool warpGrid(unsigned tiles, unsigned& wm, unsigned& wn) {
  if (tiles == 128) return wm = 2, wn = 2, true;
  if (tiles == 256) return wm = 2, wn = 4, true;
  return false;
}

bool isSmemOperand(ir::Type t, int64_t rows, int64_t cols) {
  if (t->kind != ir::TypeKind::Smem || t->shape.size() != 2 || t->layout != ir::Layout::Row ||
      t->swizzle == ir::Swizzle::Auto)
    return false;
  ir::ScalarKind e = ir::baseScalar(t->elem);
  if (e != ir::ScalarKind::BF16 && e != ir::ScalarKind::F16) return false;
  return t->shape[0].isStatic() && t->shape[1].isStatic() && (rows < 0 || t->shape[0].size == rows) &&
         (cols < 0 || t->shape[1].size == cols);
}

// An f32 accumulator whose tile splits into 16 x 8 pieces per warp of a wm x wn grid, at most
// 256 registers a thread.
bool isRegisterFragType(ir::Type t, unsigned wm, unsigned wn) {
  if (t->kind != ir::TypeKind::Frag || t->role != ir::FragRole::Acc || t->shape.size() != 2) return false;
  if (!t->shape[0].isStatic() || !t->shape[1].isStatic()) return false;
  int64_t m = t->shape[0].size, n = t->shape[1].size;
  return m > 0 && n > 0 && m % (16 * wm) == 0 && n % (8 * wn) == 0 && m * n / (32 * wm * wn) <= 256;
}

}  // namespace

bool Lowering::planRegisterFragments(ir::Operation& func, KernelInterface& k) {
  regFrags_ = false;
  if (!hooks_->isGpu()) return true;
  unsigned threads = k.groupShape[0] * k.groupShape[1] * k.groupShape[2];
  bool grid = k.grouped && warpGrid(threads, warpsM_, warpsN_);
  unsigned wm = warpsM_, wn = warpsN_;
  bool any = false, ok = grid;
  std::string why = grid ? ""
                         : "the group has " + std::to_string(k.grouped ? threads : 0) +
                               " threads (register fragments need groups of 128 or 256)";
  auto refuse = [&](const std::string& reason) {
    if (ok) why = reason;
    ok = false;
  };
  std::vector<ir::Operation*> mmas;
  auto isFrag = [](const ir::Value* v) { return v->type->kind == ir::TypeKind::Frag; };
  func.walk([&](ir::Operation* op) {
    if (op->id == OpId::TileMma) mmas.push_back(op);
    bool touches = false;
    for (auto& r : op->results) touches |= isFrag(r.get());
    for (ir::Value* v : op->operands) touches |= isFrag(v);
    if (!touches || !grid) return;
    any = true;
    for (auto& r : op->results)
      if (isFrag(r.get()) && !isRegisterFragType(r->type, wm, wn))
        refuse("the accumulator " + ir::printType(r->type) + " is not f32 in 16 x 8 pieces per warp of a " +
               std::to_string(wm) + " x " + std::to_string(wn) + " grid, at most 256 registers a thread");
    switch (op->id) {
      case OpId::TileBroadcast:
        if (!ir::isScalar(op->operand(0)->type)) refuse("the accumulator starts from a tile, not a scalar");
        break;
      case OpId::TileMma: {
        ir::Type acc = op->operand(2)->type;
        ir::Type a = op->operand(0)->type, b = op->operand(1)->type;
        bool tb = op->hasAttr(ir::AttrId::TransposeB);  // b is [N, K]
        bool shapes = isRegisterFragType(acc, wm, wn) && isSmemOperand(a, acc->shape[0].size, -1) &&
                      (tb ? isSmemOperand(b, acc->shape[1].size, -1) : isSmemOperand(b, -1, acc->shape[1].size)) &&
                      a->shape[1].size == b->shape[tb ? 1 : 0].size && a->shape[1].size % 16 == 0 &&
                      ir::baseScalar(a->elem) == ir::baseScalar(b->elem);
        if (!shapes)
          refuse("its operands " + ir::printType(a) + " and " + ir::printType(b) +
                 " are not bf16 or f16 row-major shared buffers of one type with k a multiple of 16");
        break;
      }
      case OpId::ArithConvert:
      case OpId::TileStore:
      case OpId::ScfFor:
      case OpId::TileRange:
      case OpId::ScfIf:
      case OpId::ScfYield: break;
      default:
        refuse("'" + std::string(op->name()) + "' uses the accumulator (only tile.mma, conversions, " +
               "stores, loops and branches keep it in registers)");
        break;
    }
  });
  regFrags_ = any && ok;
  if (mmas.empty()) return true;
  for (ir::Operation* mma : mmas) {
    if (regFrags_)
      k.remarks.push_back({diag::remark_tensor_cores_mma, mma->loc, {ir::printType(mma->operand(0)->type->elem)}});
    else
      k.remarks.push_back({diag::remark_no_tensor_cores, mma->loc, {why}});
  }
  if (regFrags_)
    k.remarks.push_back(
        {diag::remark_tile_registers,
         func.loc,
         {k.name, std::to_string(mmas.size()), std::to_string(wm * wn), std::to_string(wm), std::to_string(wn)}});
  return true;
}

std::pair<llvm::Value*, llvm::Value*> Lowering::fragCoord(ir::Type t, unsigned j) {
  int64_t m = t->shape[0].size / warpsM_, n = t->shape[1].size / warpsN_;  // a warp's part
  unsigned nTiles = static_cast<unsigned>(n / 8);
  unsigned mi = j / (nTiles * 4), ni = (j / 4) % nTiles, q = j % 4;
  llvm::Value* tid = hooks_->tileLinear(b_);
  llvm::Value* lane = b_.CreateAnd(tid, b_.getInt64(31));
  llvm::Value* warp = b_.CreateLShr(tid, 5);
  llvm::Value* wm = b_.CreateUDiv(warp, b_.getInt64(warpsN_));
  llvm::Value* wn = b_.CreateURem(warp, b_.getInt64(warpsN_));
  llvm::Value* row = b_.CreateAdd(b_.CreateMul(wm, b_.getInt64(m)),
                                  b_.CreateAdd(b_.getInt64(mi * 16 + (q / 2) * 8), b_.CreateLShr(lane, 2)));
  llvm::Value* col =
      b_.CreateAdd(b_.CreateMul(wn, b_.getInt64(n)),
                   b_.CreateAdd(b_.getInt64(ni * 8 + q % 2), b_.CreateShl(b_.CreateAnd(lane, b_.getInt64(3)), 1)));
  return {row, col};
}

bool Lowering::lowerFragmentOp(ir::Operation& op) {
  switch (op.id) {
    case OpId::TileBroadcast: {
      ir::Type t = op.result()->type;
      fragRegs_[op.result()] = std::vector<llvm::Value*>(
          static_cast<size_t>(t->shape[0].size * t->shape[1].size / (32 * warpsM_ * warpsN_)), get(op.operand(0)));
      return true;
    }
    case OpId::ArithConvert: {
      // Every policy of the result type (scale, rounding, saturation, software formats) applies
      // as in any other conversion: a C declared with @scale stores the product divided by it.
      ir::Type from = op.operand(0)->type->elem, to = op.result()->type->elem;
      std::vector<llvm::Value*> r;
      for (llvm::Value* v : fragRegs_.at(op.operand(0))) r.push_back(convertScalar(v, from, to, "", &op));
      fragRegs_[op.result()] = r;
      return true;
    }
    case OpId::TileStore: {
      ir::Type t = op.operand(0)->type;
      View dst = *view(op.operand(1));
      const std::vector<llvm::Value*>& regs = fragRegs_.at(op.operand(0));
      for (unsigned j = 0; j < regs.size(); ++j) {
        auto [row, col] = fragCoord(t, j);
        auto* store = llvm::BasicBlock::Create(c_, "frag.store", fn_);
        auto* next = llvm::BasicBlock::Create(c_, "frag.next", fn_);
        b_.CreateCondBr(b_.CreateAnd(b_.CreateICmpULT(row, dst.shape[0]), b_.CreateICmpULT(col, dst.shape[1])), store,
                        next);
        b_.SetInsertPoint(store);
        storeElem(dst, {row, col}, regs[j], t->elem);
        b_.CreateBr(next);
        b_.SetInsertPoint(next);
      }
      hooks_->barrier(b_);
      return true;
    }
    case OpId::TileMma: break;
    default: return fail(op, "internal error: not a register-fragment op");
  }
  // tile.mma %a, %b, %acc: mma.sync.m16n8k16 over k in steps of 16, operands read from shared
  // memory as the instruction's fragments (pairs of adjacent elements packed in 32 bits). With
  // {transpose_b}, b is [N, K]: the B fragment's k pairs are adjacent there, so ldmatrix reads
  // its rows without .trans.
  ir::Type accT = op.operand(2)->type;
  View a = *view(op.operand(0)), bm = *view(op.operand(1));
  int64_t m = accT->shape[0].size / warpsM_, n = accT->shape[1].size / warpsN_;  // a warp's part
  int64_t kExtent = op.operand(0)->type->shape[1].size;
  unsigned mTiles = static_cast<unsigned>(m / 16), nTiles = static_cast<unsigned>(n / 8);
  bool bf16 = ir::baseScalar(op.operand(0)->type->elem) == ir::ScalarKind::BF16;
  const bool tb = op.hasAttr(ir::AttrId::TransposeB);
  llvm::Function* mma =
      llvm::Intrinsic::getDeclaration(&out_, bf16 ? llvm::Intrinsic::nvvm_mma_m16n8k16_row_col_bf16
                                                  : llvm::Intrinsic::nvvm_mma_m16n8k16_row_col_f32_f32);
  llvm::FunctionType* mmaTy = mma->getFunctionType();
  std::vector<llvm::Value*> acc = fragRegs_.at(op.operand(2));
  llvm::Value* tid = hooks_->tileLinear(b_);
  llvm::Value* lane = b_.CreateAnd(tid, b_.getInt64(31));
  llvm::Value* warp = b_.CreateLShr(tid, 5);
  llvm::Value* colBase =
      b_.CreateAdd(b_.CreateMul(b_.CreateURem(warp, b_.getInt64(warpsN_)), b_.getInt64(n)), b_.CreateLShr(lane, 2));
  llvm::Value* kLane = b_.CreateShl(b_.CreateAnd(lane, b_.getInt64(3)), 1);
  auto ld16 = [&](View& v, llvm::Value* r, llvm::Value* c) -> llvm::Value* {
    return b_.CreateZExt(b_.CreateAlignedLoad(b_.getInt16Ty(), address(v, {r, c}), llvm::Align(2)), b_.getInt32Ty());
  };
  auto k = [&](int64_t v) { return b_.getInt64(v); };
  // ldmatrix: each lane names one 16-byte row of an 8 x 8 matrix of b16; x4 loads four such
  // matrices, which for A are exactly the four registers of its 16 x 16 fragment and for B
  // (transposed while loading) the two registers of two 16 x 8 fragments.
  auto ldmatrix = [&](llvm::Intrinsic::ID id, llvm::Value* at) {
    // Overloaded on the pointer's address space (shared: 3).
    llvm::Function* f = llvm::Intrinsic::isOverloaded(id) ? llvm::Intrinsic::getDeclaration(&out_, id, {at->getType()})
                                                          : llvm::Intrinsic::getDeclaration(&out_, id);
    llvm::Value* r = b_.CreateCall(f, {at});
    return std::array<llvm::Value*, 4>{b_.CreateExtractValue(r, 0), b_.CreateExtractValue(r, 1),
                                       b_.CreateExtractValue(r, 2), b_.CreateExtractValue(r, 3)};
  };
  llvm::Value* warpRow = b_.CreateMul(b_.CreateUDiv(warp, b_.getInt64(warpsN_)), b_.getInt64(m));
  llvm::Value* warpCol = b_.CreateMul(b_.CreateURem(warp, b_.getInt64(warpsN_)), b_.getInt64(n));
  llvm::Value* lane16 = b_.CreateAnd(lane, b_.getInt64(15));
  llvm::Value* laneHalf = b_.CreateMul(b_.CreateLShr(lane, 4), b_.getInt64(8));  // A: k + 0 or 8
  llvm::Value* lane8 = b_.CreateAnd(lane, b_.getInt64(7));
  llvm::Value* bK = b_.CreateMul(b_.CreateAnd(b_.CreateLShr(lane, 3), b_.getInt64(1)), b_.getInt64(8));
  llvm::Value* bN = b_.CreateMul(b_.CreateLShr(lane, 4), b_.getInt64(8));
  bool pairsOfN = nTiles % 2 == 0;
  for (int64_t ks = 0; ks < kExtent; ks += 16) {
    std::vector<std::array<llvm::Value*, 4>> af(mTiles);
    std::vector<std::array<llvm::Value*, 2>> bfr(nTiles);
    llvm::Value* c0 = b_.CreateAdd(kLane, k(ks));
    for (unsigned mi = 0; mi < mTiles; ++mi) {
      llvm::Value* row = b_.CreateAdd(warpRow, b_.CreateAdd(lane16, k(mi * 16)));
      af[mi] = ldmatrix(llvm::Intrinsic::nvvm_ldmatrix_sync_aligned_m8n8_x4_b16,
                        address(a, {row, b_.CreateAdd(laneHalf, k(ks))}));
    }
    if (pairsOfN) {
      for (unsigned ni = 0; ni < nTiles; ni += 2) {
        std::array<llvm::Value*, 4> r;
        if (tb) {
          // Matrix j = lane / 8: n rows 8 (j / 2) .. + 7, k columns 8 (j % 2) .. + 7.
          llvm::Value* nn = b_.CreateAdd(warpCol, b_.CreateAdd(b_.CreateAdd(bN, lane8), k(ni * 8)));
          r = ldmatrix(llvm::Intrinsic::nvvm_ldmatrix_sync_aligned_m8n8_x4_b16,
                       address(bm, {nn, b_.CreateAdd(bK, k(ks))}));
        } else {
          llvm::Value* kk = b_.CreateAdd(b_.CreateAdd(lane8, bK), k(ks));
          llvm::Value* col = b_.CreateAdd(warpCol, b_.CreateAdd(bN, k(ni * 8)));
          r = ldmatrix(llvm::Intrinsic::nvvm_ldmatrix_sync_aligned_m8n8_x4_trans_b16, address(bm, {kk, col}));
        }
        bfr[ni] = {r[0], r[1]};
        bfr[ni + 1] = {r[2], r[3]};
      }
    } else {
      for (unsigned ni = 0; ni < nTiles; ++ni) {
        llvm::Value* col = b_.CreateAdd(colBase, k(ni * 8));
        auto pair = [&](llvm::Value* k0) {
          llvm::Value* k1 = b_.CreateAdd(k0, k(1));
          return b_.CreateOr(tb ? ld16(bm, col, k0) : ld16(bm, k0, col),
                             b_.CreateShl(tb ? ld16(bm, col, k1) : ld16(bm, k1, col), 16));
        };
        bfr[ni] = {pair(c0), pair(b_.CreateAdd(c0, k(8)))};
      }
    }
    for (unsigned mi = 0; mi < mTiles; ++mi)
      for (unsigned ni = 0; ni < nTiles; ++ni) {
        unsigned base = (mi * nTiles + ni) * 4;
        std::vector<llvm::Value*> args;
        for (llvm::Value* v : af[mi]) args.push_back(v);
        for (llvm::Value* v : bfr[ni]) args.push_back(v);
        for (unsigned q = 0; q < 4; ++q) args.push_back(acc[base + q]);
        for (unsigned i = 0; i < args.size(); ++i)
          if (args[i]->getType() != mmaTy->getParamType(i)) args[i] = b_.CreateBitCast(args[i], mmaTy->getParamType(i));
        llvm::Value* d = b_.CreateCall(mma, args);
        for (unsigned q = 0; q < 4; ++q) acc[base + q] = b_.CreateExtractValue(d, q);
      }
  }
  fragRegs_[op.result()] = acc;
  return true;
}

}  // namespace tessera::codegen::detail
