// Structured control flow (scf.for, scf.if, scf.while) to branches and phis.
#include "codegen/lower/Lowering.h"
#include "llvm/IR/MDBuilder.h"

namespace tessera::codegen::detail {

using ir::OpId;

bool Lowering::lowerFor(ir::Operation& op) {
  llvm::Value* lb = get(op.operand(0));
  llvm::Value* ub = get(op.operand(1));
  llvm::Value* step = get(op.operand(2));
  bool uns = isUnsigned(op.operand(0)->type);
  auto* cstep = llvm::dyn_cast<llvm::ConstantInt>(step);
  // Python range semantics. With a step of unknown sign the loop runs a trip count computed
  // once before it (a counted loop LLVM can unroll and pipeline):
  //   step > 0: max(0, ceil((ub - lb) / step)); step < 0: max(0, ceil((lb - ub) / -step)).
  llvm::Value* trips = nullptr;
  if (!uns && !(cstep && !cstep->isNegative())) {
    llvm::Type* t = step->getType();
    llvm::Value* zero = llvm::ConstantInt::get(t, 0);
    llvm::Value* one = llvm::ConstantInt::get(t, 1);
    llvm::Value* up = b_.CreateICmpSGT(step, zero);
    llvm::Value* dist = b_.CreateSelect(up, b_.CreateSub(ub, lb), b_.CreateSub(lb, ub));
    llvm::Value* mag = b_.CreateSelect(up, step, b_.CreateNeg(step));
    llvm::Value* safeMag = b_.CreateSelect(b_.CreateICmpEQ(mag, zero), one, mag);
    llvm::Value* count = b_.CreateSDiv(b_.CreateSub(b_.CreateAdd(dist, safeMag), one), safeMag);
    trips = b_.CreateSelect(b_.CreateOr(b_.CreateICmpSLE(dist, zero), b_.CreateICmpEQ(step, zero)), zero, count);
  }
  // Tile values are carried in the slot of the loop's result: copied in here and at each yield.
  std::vector<View> tileSlots(op.numOperands());
  for (unsigned i = 3; i < op.numOperands(); ++i)
    if (isTileValue(op.operand(i)->type) && !inRegisters(op.operand(i)) &&
        !carryTileInto(op.result(i - 3), op.operand(i), &tileSlots[i]))
      return fail(op, "internal error: a carried tile value has no storage");
  llvm::BasicBlock* pre = b_.GetInsertBlock();
  auto* header = llvm::BasicBlock::Create(c_, "for", fn_);
  auto* body = llvm::BasicBlock::Create(c_, "for.body", fn_);
  auto* exit = llvm::BasicBlock::Create(c_, "for.done", fn_);
  b_.CreateBr(header);
  b_.SetInsertPoint(header);
  ir::Block& blk = op.body();
  llvm::PHINode* iv = b_.CreatePHI(lb->getType(), 2, "iv");
  iv->addIncoming(lb, pre);
  llvm::PHINode* trip = nullptr;
  if (trips) {
    trip = b_.CreatePHI(trips->getType(), 2, "trip");
    trip->addIncoming(llvm::ConstantInt::get(trips->getType(), 0), pre);
  }
  std::vector<llvm::PHINode*> phis;                                     // null for tile values
  std::vector<std::vector<llvm::PHINode*>> fragPhis(op.numOperands());  // fragments in registers
  for (unsigned i = 3; i < op.numOperands(); ++i) {
    if (inRegisters(op.operand(i))) {
      for (llvm::Value* v : fragRegs_.at(op.operand(i))) {
        llvm::PHINode* p = b_.CreatePHI(v->getType(), 2);
        p->addIncoming(v, pre);
        fragPhis[i - 3].push_back(p);
      }
      phis.push_back(nullptr);
      continue;
    }
    if (isTileValue(op.operand(i)->type)) {
      phis.push_back(nullptr);
      continue;
    }
    llvm::Value* init = carried(op.operand(i));
    llvm::PHINode* p = b_.CreatePHI(init->getType(), 2);
    p->addIncoming(init, pre);
    phis.push_back(p);
  }
  llvm::Value* cond = trip ? b_.CreateICmpSLT(trip, trips) : uns ? b_.CreateICmpULT(iv, ub) : b_.CreateICmpSLT(iv, ub);
  b_.CreateCondBr(cond, body, exit);
  b_.SetInsertPoint(body);
  set(blk.arg(0), iv);
  for (size_t i = 0; i < phis.size(); ++i) {
    if (!fragPhis[i].empty())
      fragRegs_[blk.arg(static_cast<unsigned>(i + 1))].assign(fragPhis[i].begin(), fragPhis[i].end());
    else if (!phis[i])
      views_[blk.arg(static_cast<unsigned>(i + 1))] = tileSlots[i + 3];
    else
      bindCarried(blk.arg(static_cast<unsigned>(i + 1)), phis[i], op.operand(static_cast<unsigned>(i + 3)));
  }
  ir::Operation* yield = nullptr;
  if (!lowerBlock(blk, &yield)) return false;
  for (size_t i = 0; i < phis.size(); ++i) {
    View ignored;
    if (!phis[i] && fragPhis[i].empty() &&
        !carryTileInto(op.result(static_cast<unsigned>(i)), yield->operand(static_cast<unsigned>(i)), &ignored))
      return fail(op, "internal error: a carried tile value has no storage");
  }
  llvm::BasicBlock* latch = b_.GetInsertBlock();
  iv->addIncoming(b_.CreateAdd(iv, step), latch);
  if (trip) trip->addIncoming(b_.CreateAdd(trip, llvm::ConstantInt::get(trips->getType(), 1)), latch);
  for (size_t i = 0; i < phis.size(); ++i)
    if (phis[i]) phis[i]->addIncoming(carried(yield->operand(static_cast<unsigned>(i))), latch);
  for (size_t i = 0; i < fragPhis.size(); ++i)
    for (size_t j = 0; j < fragPhis[i].size(); ++j)
      fragPhis[i][j]->addIncoming(fragRegs_.at(yield->operand(static_cast<unsigned>(i)))[j], latch);
  b_.CreateBr(header);
  b_.SetInsertPoint(exit);
  for (size_t i = 0; i < phis.size(); ++i) {
    if (!fragPhis[i].empty())
      fragRegs_[op.result(static_cast<unsigned>(i))].assign(fragPhis[i].begin(), fragPhis[i].end());
    else if (!phis[i])
      views_[op.result(static_cast<unsigned>(i))] = tileSlots[i + 3];
    else
      bindCarried(op.result(static_cast<unsigned>(i)), phis[i], op.operand(static_cast<unsigned>(i + 3)));
  }
  return true;
}

bool Lowering::lowerIf(ir::Operation& op) {
  auto* thenBB = llvm::BasicBlock::Create(c_, "then", fn_);
  auto* elseBB = llvm::BasicBlock::Create(c_, "else", fn_);
  auto* merge = llvm::BasicBlock::Create(c_, "endif", fn_);
  b_.CreateCondBr(get(op.operand(0)), thenBB, elseBB);
  std::vector<std::pair<llvm::BasicBlock*, ir::Operation*>> arms;
  std::vector<std::vector<std::vector<llvm::Value*>>> tileShapes(op.numResults());
  for (unsigned r = 0; r < 2; ++r) {
    b_.SetInsertPoint(r == 0 ? thenBB : elseBB);
    ir::Operation* yield = nullptr;
    if (!lowerBlock(op.region(r).block(), &yield)) return false;
    // Tile results: each arm copies its value into the result's slot.
    for (unsigned i = 0; i < op.numResults(); ++i) {
      if (!isTileValue(op.result(i)->type) || inRegisters(op.result(i))) continue;
      View v;
      if (!carryTileInto(op.result(i), yield->operand(i), &v))
        return fail(op, "internal error: a tile result has no storage");
      tileShapes[i].push_back(v.shape);
    }
    arms.push_back({b_.GetInsertBlock(), yield});
    b_.CreateBr(merge);
  }
  b_.SetInsertPoint(merge);
  for (unsigned i = 0; i < op.numResults(); ++i) {
    if (inRegisters(op.result(i))) {
      const auto& x = fragRegs_.at(arms[0].second->operand(i));
      const auto& y = fragRegs_.at(arms[1].second->operand(i));
      std::vector<llvm::Value*> r;
      for (size_t j = 0; j < x.size(); ++j) {
        llvm::PHINode* p = b_.CreatePHI(x[j]->getType(), 2);
        p->addIncoming(x[j], arms[0].first);
        p->addIncoming(y[j], arms[1].first);
        r.push_back(p);
      }
      fragRegs_[op.result(i)] = r;
      continue;
    }
    if (isTileValue(op.result(i)->type)) {
      std::vector<llvm::Value*> shape;
      for (size_t d = 0; d < tileShapes[i][0].size(); ++d) {
        llvm::PHINode* p = b_.CreatePHI(b_.getInt64Ty(), 2);
        p->addIncoming(tileShapes[i][0][d], arms[0].first);
        p->addIncoming(tileShapes[i][1][d], arms[1].first);
        shape.push_back(p);
      }
      views_[op.result(i)] = slotView(op.result(i), shape);
      continue;
    }
    llvm::Value* a = carried(arms[0].second->operand(i));
    llvm::PHINode* p = b_.CreatePHI(a->getType(), 2);
    p->addIncoming(a, arms[0].first);
    p->addIncoming(carried(arms[1].second->operand(i)), arms[1].first);
    bindCarried(op.result(i), p, arms[0].second->operand(i));
  }
  return true;
}

bool Lowering::lowerWhile(ir::Operation& op) {
  for (ir::Value* v : op.operands)
    if (isTileValue(v->type))
      return fail(op, "while loops that carry tile values are not supported by code generation yet");
  llvm::BasicBlock* pre = b_.GetInsertBlock();
  auto* before = llvm::BasicBlock::Create(c_, "while", fn_);
  auto* after = llvm::BasicBlock::Create(c_, "while.body", fn_);
  auto* exit = llvm::BasicBlock::Create(c_, "while.done", fn_);
  b_.CreateBr(before);
  b_.SetInsertPoint(before);
  ir::Block& cb = op.region(0).block();
  ir::Block& bb = op.region(1).block();
  std::vector<llvm::PHINode*> args;
  for (unsigned i = 0; i < op.numOperands(); ++i) {
    llvm::Value* init = carried(op.operand(i));
    llvm::PHINode* p = b_.CreatePHI(init->getType(), 2);
    p->addIncoming(init, pre);
    args.push_back(p);
    bindCarried(cb.arg(i), p, op.operand(i));
  }
  ir::Operation* condition = nullptr;
  if (!lowerBlock(cb, &condition)) return false;
  llvm::BasicBlock* condEnd = b_.GetInsertBlock();
  std::vector<llvm::Value*> forwarded;
  for (unsigned i = 1; i < condition->numOperands(); ++i) forwarded.push_back(carried(condition->operand(i)));
  b_.CreateCondBr(get(condition->operand(0)), after, exit);
  b_.SetInsertPoint(after);
  for (unsigned i = 0; i < bb.numArgs(); ++i) bindCarried(bb.arg(i), forwarded[i], condition->operand(i + 1));
  ir::Operation* yield = nullptr;
  if (!lowerBlock(bb, &yield)) return false;
  for (size_t i = 0; i < args.size(); ++i)
    args[i]->addIncoming(carried(yield->operand(static_cast<unsigned>(i))), b_.GetInsertBlock());
  b_.CreateBr(before);
  b_.SetInsertPoint(exit);
  for (unsigned i = 0; i < op.numResults(); ++i) bindCarried(op.result(i), forwarded[i], condition->operand(i + 1));
  (void)condEnd;
  return true;
}

}  // namespace tessera::codegen::detail
