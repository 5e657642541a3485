// Data-flow matching helpers that the attention recognisers share (ir/passes/AttentionForm.cpp,
// ir/passes/AttentionBackwardForm.cpp): operand patterns over the IR that lowering and the
// cleanups wrote, looking through the index conversions and broadcasts lowering inserts freely.
#pragma once

#include <algorithm>
#include <cmath>
#include <functional>
#include <string>
#include <vector>

#include "ir/IR.h"
#include "ir/passes/PassUtils.h"

namespace tessera::ir::attn {

inline bool isOp(const Value* v, OpId id) { return v && v->defOp && v->defOp->id == id; }
inline Value* opnd(const Value* v, unsigned i) { return v->defOp->operand(i); }

inline bool isInt(const Value* v, int64_t value) {
  const Attribute* a = constantOf(v);
  return a && a->kind == AttrKind::Int && a->i == value;
}

inline bool isFloat(const Value* v, double value) {
  const Attribute* a = constantOf(v);
  return a && a->kind == AttrKind::Float && a->f == value;
}

// Looks through scalar integer conversions (index <-> i64).
inline const Value* strip(const Value* v) {
  while (isOp(v, OpId::ArithConvert) && isIndexOrInt(v->type) && isIndexOrInt(opnd(v, 0)->type)) v = opnd(v, 0);
  return v;
}
inline bool same(const Value* a, const Value* b) { return strip(a) == strip(b); }

// Looks through tile.broadcast and tile.reshape (row vectors broadcast along an axis).
inline const Value* unbroadcast(const Value* v) {
  while (isOp(v, OpId::TileBroadcast) || isOp(v, OpId::TileReshape) ||
         (isOp(v, OpId::ArithConvert) && isIntLike(v->type) && isIntLike(opnd(v, 0)->type)))
    v = opnd(v, 0);
  return v;
}

// v where x is v[:, None] broadcast along the columns (tile.reshape to [R, 1], then broadcasts);
// null otherwise.
inline const Value* rowBroadcastOf(const Value* x) {
  while (isOp(x, OpId::TileBroadcast)) x = opnd(x, 0);
  if (!isOp(x, OpId::TileReshape)) return nullptr;
  const auto& shape = x->type->shape;
  if (shape.size() != 2 || !shape[1].isStatic() || shape[1].size != 1) return nullptr;
  return opnd(x, 0);
}

// Binary op `id` of {x, y} in this order, or either order when `commutative`.
inline bool binary(const Value* v, OpId id, const std::function<bool(const Value*)>& x,
                   const std::function<bool(const Value*)>& y, bool commutative) {
  if (!isOp(v, id) || v->defOp->numOperands() != 2) return false;
  if (x(opnd(v, 0)) && y(opnd(v, 1))) return true;
  return commutative && x(opnd(v, 1)) && y(opnd(v, 0));
}

inline bool isDim(const Value* v, const Value* tensor, int64_t axis) {
  return isOp(v, OpId::MemDim) && opnd(v, 0) == tensor && v->defOp->intAttr(AttrId::Axis, -1) == axis;
}

inline int paramIndex(const Value* v, Block& body) {
  if (!v || !v->isBlockArg() || v->ownerBlock != &body) return -1;
  return static_cast<int>(v->index);
}

// `v` is tensor[b, h, at, 0] (or tensor[b, h, at] for rank 3) with `rows` rows and all of the
// last dimension.
inline bool isBlockSlice(const Value* v, const Value* tensor, const Value* b, const Value* h, const Value* at,
                         int64_t rows) {
  if (!isOp(v, OpId::MemSlice) || opnd(v, 0) != tensor) return false;
  const Operation* s = v->defOp;
  unsigned rank = static_cast<unsigned>(tensor->type->shape.size());
  if (s->numOperands() != rank + 1 || !same(s->operand(1), b) || !same(s->operand(2), h) || !same(s->operand(3), at) ||
      (rank == 4 && !isInt(s->operand(4), 0)))
    return false;
  Type t = v->type;
  if (t->shape.empty() || !t->shape[0].isStatic() || t->shape[0].size != rows) return false;
  return rank == 3 ? t->shape.size() == 1 : t->shape.size() == 2 && t->shape[1] == tensor->type->shape[3];
}

// `v` is base + iota along `axis` of a 2-D index tile (the causal mask's rows or columns).
inline bool isIndexPlusIota(const Value* v, const Value* base, unsigned axis, int64_t n) {
  auto isBase = [&](const Value* x) { return same(unbroadcast(x), base); };
  auto isIota = [&](const Value* x) {
    const Value* r = x;
    while (isOp(r, OpId::TileBroadcast) || isOp(r, OpId::ArithConvert)) r = opnd(r, 0);
    if (!isOp(r, OpId::TileReshape) || r->type->shape.size() != 2) return false;
    const Value* i = opnd(r, 0);
    const Dim& d = r->type->shape[axis];
    return isOp(i, OpId::TileIota) && d.isStatic() && d.size == n;
  };
  while (isOp(v, OpId::TileBroadcast)) v = opnd(v, 0);
  return binary(v, OpId::ArithAddI, isBase, isIota, true);
}

// The kernel's one group loop `outer` (over (batch, head, `unit`)) and the one loop inside it;
// otherwise `why` says what is not so (`holder`: what the inner loop belongs to, `inner`: its name).
inline bool findLoopNest(Block& body, const std::string& unit, const std::string& holder, const std::string& inner,
                         Operation*& outer, Operation*& loop, std::string& why) {
  outer = loop = nullptr;
  for (auto& op : body.ops)
    if (op->id == OpId::TileRange) {
      if (outer) return why = "the kernel has more than one group loop", false;
      outer = op.get();
    }
  if (!outer || outer->numOperands() != 3 || outer->body().numArgs() != 1)
    return why = "the kernel is not one tile.range over (batch, head, " + unit + ")", false;
  for (auto& op : outer->body().ops)
    if (op->id == OpId::TileRange) {
      if (loop) return why = holder + " has more than one " + inner, false;
      loop = op.get();
    }
  if (!loop) return why = holder + " has no " + inner, false;
  return true;
}

// Every op of `func` with an effect (writes, barriers, calls, nested control flow) is one of
// `allowed`; otherwise `why` names the first that is not.
inline bool effectsOnlyFrom(Operation* func, const std::vector<Operation*>& allowed, const std::string& what,
                            std::string& why) {
  bool ok = true;
  func->walk([&](Operation* op) {
    if (op == func || op->has(T_Pure) || op->id == OpId::TileLoad || op->id == OpId::ScfYield ||
        op->id == OpId::FuncReturn)
      return;
    if (std::find(allowed.begin(), allowed.end(), op) != allowed.end()) return;
    if (ok) why = "'" + std::string(op->name()) + "' has an effect besides " + what;
    ok = false;
  });
  return ok;
}

// Peels the causal mask where(kb + j <= qb + i, x, -inf) (or its `>=` mirror) off the scores s:
// x with `causal` set; s itself when it is no select; null with `why` when the select has another
// shape. kRows and qRows: the block sizes the key column j and the query row i run over.
inline const Value* peelCausalMask(const Value* s, const Value* kb, int64_t kRows, const Value* qb, int64_t qRows,
                                   bool& causal, std::string& why) {
  if (!isOp(s, OpId::ArithSelect)) return s;
  const Value* mask = opnd(s, 0);
  why = "the causal mask is not where(key <= query, s, -inf)";
  if (!isFloat(unbroadcast(opnd(s, 2)), -INFINITY) || !isOp(mask, OpId::ArithCmpI)) return nullptr;
  std::string pred = mask->defOp->strAttr(AttrId::Pred);
  const Value *col = opnd(mask, 0), *row = opnd(mask, 1);
  if (pred == "sge")
    std::swap(col, row);
  else if (pred != "sle")
    return nullptr;
  why = "the causal mask does not compare kb + key column with qb + query row";
  if (!isIndexPlusIota(col, kb, 1, kRows) || !isIndexPlusIota(row, qb, 0, qRows)) return nullptr;
  causal = true;
  return opnd(s, 1);
}

}  // namespace tessera::ir::attn
