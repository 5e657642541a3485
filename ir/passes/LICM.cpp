// licm: hoists loop-invariant code out of scf.for and tile.range (innermost loops first, so
// code climbs as far as it can):
//   - pure ops without regions whose operands are all defined outside the loop, except ops
//     that may trap (integer division: T_NoSpeculate) and ops that read memory through a view
//     (tile.dot on a shared buffer: the buffer may change in the loop);
//   - mem.load from a read-only global tensor with invariant indices, when the loop provably
//     runs at least once (constant bounds) and so the load would have happened anyway.
#include "ir/Pass.h"
#include "ir/passes/PassUtils.h"

namespace tessera::ir {

namespace {

bool definedOutside(const Value* v, const Operation* loop) {
  Block* b = v->definingBlock();
  Operation* owner = b ? b->parentOp() : nullptr;
  // v is inside the loop iff its defining block is nested in the loop.
  return !(owner && owner->isInside(loop));
}

// Constant bounds and a constant positive step with lb < ub (a negative or zero step with
// lb < ub runs no iteration: Python's range).
bool runsAtLeastOnce(Operation* loop) {
  const Attribute* lb = constantOf(loop->operand(0));
  const Attribute* ub = constantOf(loop->operand(1));
  const Attribute* st = constantOf(loop->operand(2));
  return lb && ub && st && lb->kind == AttrKind::Int && ub->kind == AttrKind::Int && st->kind == AttrKind::Int &&
         st->i > 0 && lb->i < ub->i;
}

bool hoistable(Operation* op, Operation* loop) {
  if (!op->regions.empty() || op->has(T_Terminator)) return false;
  bool ok = false;
  if (isMovablePure(op) && !op->has(T_NoSpeculate)) ok = true;
  if (op->id == OpId::MemLoad && op->numOperands() >= 1) {
    Type t = op->operand(0)->type;
    ok = t->kind == TypeKind::Tensor && t->space == MemSpace::Global && t->access == Access::Read &&
         runsAtLeastOnce(loop);
  }
  if (!ok) return false;
  for (Value* v : op->operands)
    if (!definedOutside(v, loop)) return false;
  return true;
}

void visit(Block& b) {
  for (auto it = b.ops.begin(); it != b.ops.end();) {
    Operation* op = it->get();
    ++it;
    for (auto& r : op->regions) visit(r->block());
    if ((op->id != OpId::ScfFor && op->id != OpId::TileRange) || op->regions.size() != 1 || op->numOperands() < 3)
      continue;
    Block& body = op->body();
    for (auto bit = body.ops.begin(); bit != body.ops.end();) {
      Operation* inner = bit->get();
      ++bit;
      if (hoistable(inner, op)) b.insert(b.find(op), body.remove(inner));
    }
  }
}

}  // namespace

bool runLICM(Module& m, DiagnosticEngine&) {
  for (Operation* f : m.funcs())
    if (!f->regions.empty()) visit(f->body());
  return true;
}

}  // namespace tessera::ir
