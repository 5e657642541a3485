// Helpers shared by the passes.
#pragma once

#include "ir/IR.h"

namespace tessera::ir {

// True when `op` may be moved or merged like a pure computation: T_Pure, and it does not read
// memory through a view operand (tile.dot / tile.mma on shared buffers or global views read
// memory even though their results are values; views themselves and mem.dim do not).
bool isMovablePure(const Operation* op);
// The constant attribute of `v` when it is defined by arith.constant.
const Attribute* constantOf(const Value* v);
// True when dropping `op` (results unused) cannot change behaviour: pure or allocating ops, and
// scf.if / scf.for / tile.range whose regions only hold such ops.
bool isRemovableWhenDead(Operation* op);
bool resultsUnused(const Operation* op);
// Replaces the results of `op` by `values` and erases it.
void replaceOp(Operation* op, const std::vector<Value*>& values);
// Moves the ops of `from` (all but its terminator) before `before`; returns the terminator's
// operands (what the region yields).
std::vector<Value*> inlineBlockBefore(Block& from, Operation* before, IRMapping* argMap = nullptr);
// Erases dead removable ops in `b` and nested blocks (one sweep, innermost and last first).
// Returns true when something was erased.
bool eraseDeadOps(Block& b);
// Collects every op nested in `root` (post-order: inner ops before the op holding them).
void collectPostOrder(Block& b, std::vector<Operation*>& out);

}  // namespace tessera::ir
