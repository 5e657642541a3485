#include "ir/passes/PassUtils.h"

namespace tessera::ir {

const Attribute* constantOf(const Value* v) {
  if (!v || !v->defOp || v->defOp->id != OpId::ArithConstant) return nullptr;
  return v->defOp->attr(AttrId::Value);
}

bool isMovablePure(const Operation* op) {
  if (!op->has(T_Pure)) return false;
  if (op->has(T_ViewLike) || op->id == OpId::MemDim) return true;
  for (const Value* v : op->operands)
    if (isView(v->type)) return false;
  return true;
}

bool resultsUnused(const Operation* op) {
  for (auto& r : op->results)
    if (r->hasUses()) return false;
  return true;
}

bool isRemovableWhenDead(Operation* op) {
  switch (op->id) {
    case OpId::ScfIf:
    case OpId::ScfFor:
    case OpId::TileRange: {
      for (auto& r : op->regions)
        for (auto& inner : r->block().ops)
          if (!(inner->id == OpId::ScfYield || isRemovableWhenDead(inner.get()))) return false;
      return true;
    }
    default: return op->regions.empty() && (op->has(T_Pure) || op->has(T_Alloc));
  }
}

void replaceOp(Operation* op, const std::vector<Value*>& values) {
  for (size_t i = 0; i < op->results.size() && i < values.size(); ++i) op->result(i)->replaceAllUsesWith(values[i]);
  op->parent->erase(op);
}

std::vector<Value*> inlineBlockBefore(Block& from, Operation* before, IRMapping* argMap) {
  if (argMap)
    for (auto& a : from.args) {
      auto it = argMap->find(a.get());
      if (it != argMap->end()) a->replaceAllUsesWith(it->second);
    }
  std::vector<Value*> yielded;
  Block* dest = before->parent;
  auto pos = dest->find(before);
  while (!from.ops.empty()) {
    Operation* op = from.ops.front().get();
    if (op->has(T_Terminator) && from.ops.size() == 1) {
      yielded = op->operands;
      from.erase(op);
      break;
    }
    dest->insert(pos, from.remove(op));
  }
  return yielded;
}

bool eraseDeadOps(Block& b) {
  bool changed = false;
  std::vector<Operation*> ops;
  for (auto& o : b.ops) ops.push_back(o.get());
  for (auto it = ops.rbegin(); it != ops.rend(); ++it) {
    Operation* op = *it;
    for (auto& r : op->regions) changed |= eraseDeadOps(r->block());
    if (!op->has(T_Terminator) && resultsUnused(op) && isRemovableWhenDead(op)) {
      b.erase(op);
      changed = true;
    }
  }
  return changed;
}

void collectPostOrder(Block& b, std::vector<Operation*>& out) {
  for (auto& op : b.ops) {
    for (auto& r : op->regions) collectPostOrder(r->block(), out);
    out.push_back(op.get());
  }
}

}  // namespace tessera::ir
