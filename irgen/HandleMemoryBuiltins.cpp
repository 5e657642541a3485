// Builtins that allocate, copy, read and write memory: shared buffers, async copies (their waits
// are planned in AsyncCopies.cpp), element loads and stores, atomics, reductions over memory,
// len().
#include "irgen/FunctionContext.h"

namespace tessera::irgen {

Lowered FunctionContext::lowerSharedAlloc(const BuiltinCall& c) {
  DType d = c.typeArg && c.typeArg->kind == TypeKind::Scalar ? c.typeArg->dtype : DType::FP32;
  I::Swizzle sw = I::Swizzle::None;
  if (Expr* s = arg(c, "swizzle"))
    if (auto* str = dyn_cast<StringLiteralExpr>(s); str && str->value == "xor") sw = I::Swizzle::Auto;
  std::vector<I::Dim> shape;
  for (Expr* x : c.positional) {
    auto n = constInt(x);
    if (!n || *n <= 0) error(diag::err_lower_not_constant, x->range, "the extent of a shared buffer");
    shape.push_back(I::Dim{*n, {}});
  }
  loc(c.expr);
  if (shape.empty()) {
    Lowered u;
    u.kind = Lowered::Unsized;
    u.dtype = d;
    return u;
  }
  return Lowered::val(prologue(I::OpId::SmemAlloc, ctx().smem(scalarType(d), shape, I::Layout::Row, sw))->result());
}

Lowered FunctionContext::handleTSharedAlloc(const BuiltinCall& c) { return lowerSharedAlloc(c); }
Lowered FunctionContext::handleTileAllocShared(const BuiltinCall& c) { return lowerSharedAlloc(c); }

// An async copy from the view `srcE` into the shared buffer `dst` (lowered from `dstE`); an
// unsized buffer takes the source's shape.
Lowered FunctionContext::lowerCopyIntoShared(const BuiltinCall& c, Lowered dst, Expr* dstE, Expr* srcE) {
  I::Value* src = value(lower(srcE), srcE->range);
  loc(c.expr);
  if (!I::isView(src->type)) unsupported(srcE->range, "copying from a value of type " + I::printType(src->type));
  staticShared(src->type, srcE->range, text(srcE->range));
  I::Value* buf = sharedFor(dst, src, dstE->range);
  if (auto* n = dyn_cast<NameExpr>(dstE); n && n->symbol && env_.count(n->symbol)) env_[n->symbol] = dst;
  asyncCopy(buf, src, c.range());
  return Lowered();
}

Lowered FunctionContext::handleCpAsyncSharedGlobal(const BuiltinCall& c) {
  Expr* dstE = arg(c, "dst");
  Expr* srcE = arg(c, "src");
  if (!dstE || !srcE) unsupported(c.range(), "this form of 'cp_async.shared.global'");
  Lowered dst = lower(dstE);
  return lowerCopyIntoShared(c, dst, dstE, srcE);
}

Lowered FunctionContext::handleCpAsyncWait(const BuiltinCall& c) {
  int64_t n = 0;
  if (Expr* p = arg(c, "pending")) {
    auto k = constInt(p);
    if (!k) error(diag::err_argument_not_constant, p->range, "the 'pending' count");
    n = *k;
  }
  loc(c.expr);
  if (n == 0) waitAll();
  op(I::OpId::AsyncWaitPending, {}, {}, {{I::AttrId::Pending, I::Attribute::integer(n)}});
  op(I::OpId::TileBarrier, {}, {});
  return Lowered();
}

// tile.cp_async(buf, slice): a copy into a shared buffer. tile.cp_async(T, block): a tile of T
// through shared memory (a buffer of its own).
Lowered FunctionContext::handleTileCpAsync(const BuiltinCall& c) {
  Expr* srcE = arg(c, "src");
  Expr* idxE = arg(c, "index");
  if (!srcE) unsupported(c.range(), "this form of 'tile.cp_async'");
  Lowered src = lower(srcE);
  if (src.kind == Lowered::Unsized || (src.kind == Lowered::Val && src.v->type->kind == I::TypeKind::Smem)) {
    if (!idxE) unsupported(c.range(), "'tile.cp_async' into a shared buffer without a source");
    return lowerCopyIntoShared(c, src, srcE, idxE);
  }
  I::Value* t = value(src, srcE->range);
  if (!I::isView(t->type)) unsupported(srcE->range, "'tile.cp_async' of a value of type " + I::printType(t->type));
  I::Value* view = t;
  if (idxE) {
    Lowered ix = lower(idxE);
    loc(c.expr);
    if (ix.kind == Lowered::Block) {
      std::vector<I::Value*> offsets;
      std::vector<I::Attribute> sizes;
      for (size_t d = 0; d < t->type->shape.size(); ++d) {
        if (static_cast<int>(d) == ix.axis) {
          offsets.push_back(ix.v);
          sizes.push_back(I::Attribute::integer(ix.size));
        } else {
          I::Attribute full = fullExtent(t->type->shape[d], static_cast<unsigned>(d), idxE->range, text(srcE->range));
          offsets.push_back(b_->constIndex(0));
          sizes.push_back(full);
        }
      }
      view = slice(t, offsets, sizes);
    } else {
      I::Value* v = value(ix, idxE->range);
      if (!I::isView(v->type))
        unsupported(idxE->range, "'tile.cp_async' with an index of type " + I::printType(v->type));
      view = v;
    }
  }
  loc(c.expr);
  knownView(view, c.range(), text(srcE->range));
  markNeedsGroup();
  // A block with a symbolic extent cannot live in (static) shared memory: it is loaded as a
  // tile value, which codegen keeps in the group's workspace.
  if (I::staticElementCount(view->type) < 0) {
    waitFor(view, true);
    return Lowered::val(op1(I::OpId::TileLoad, {view}, ctx().tile(view->type->elem, view->type->shape)));
  }
  I::Value* buf =
      prologue(I::OpId::SmemAlloc, ctx().smem(view->type->elem, view->type->shape, I::Layout::Row, I::Swizzle::None))
          ->result();
  asyncCopy(buf, view, c.range());
  return Lowered::val(buf);
}

// tile.load(src, index) / tile.store(dst, index, value): one element.
Lowered FunctionContext::lowerIndexedAccess(const BuiltinCall& c, bool isStore) {
  Expr* tE = arg(c, isStore ? "dst" : "src");
  Expr* iE = arg(c, "index");
  I::Value* t = value(lower(tE), tE->range);
  if (!I::isView(t->type))
    unsupported(tE->range, "'" + std::string(c.info.name) + "' on a value of type " + I::printType(t->type));
  std::vector<I::Value*> ops;
  if (isStore) ops.push_back(scalarValue(arg(c, "value"), t->type->elem));
  ops.push_back(t);
  Lowered ix = lower(iE);
  if (ix.kind == Lowered::Tuple)
    for (const Lowered& x : ix.elems) ops.push_back(value(x, iE->range));
  else
    ops.push_back(value(ix, iE->range));
  loc(c.expr);
  size_t nIdx = ops.size() - (isStore ? 2 : 1);
  if (nIdx != t->type->shape.size())
    error(diag::err_index_count_mismatch, iE->range, text(tE->range), static_cast<unsigned>(t->type->shape.size()),
          static_cast<unsigned>(nIdx));
  waitFor(t, true);
  if (!isStore) return Lowered::val(op1(I::OpId::MemLoad, ops, t->type->elem));
  op(I::OpId::MemStore, ops, {});
  return Lowered();
}

Lowered FunctionContext::handleTileLoad(const BuiltinCall& c) { return lowerIndexedAccess(c, false); }
Lowered FunctionContext::handleTileStore(const BuiltinCall& c) { return lowerIndexedAccess(c, true); }

std::optional<int64_t> FunctionContext::constAxis(Expr* a) {
  auto axis = constInt(a);
  if (!axis) error(diag::err_lower_not_constant, a->range, "the axis");
  return axis;
}

// reduce_sum(x, axis=) and friends: a view reduced whole stays in memory (mem.reduce); tile
// values and reductions along an axis are tile.reduce.
Lowered FunctionContext::lowerReduction(const BuiltinCall& c, const char* kind) {
  Expr* xE = arg(c, "x");
  I::Value* x = value(lower(xE), xE->range);
  std::optional<int64_t> axis;
  if (Expr* a = arg(c, "axis")) axis = constAxis(a);
  loc(c.expr);
  if (I::isView(x->type) && !axis) {
    waitFor(x, true);
    return Lowered::val(op1(I::OpId::MemReduce, {x}, x->type->elem, {{I::AttrId::Kind, I::Attribute::string(kind)}}));
  }
  return Lowered::val(reduceTile(x, kind, axis, c.range()));
}

Lowered FunctionContext::handleReduceSum(const BuiltinCall& c) { return lowerReduction(c, "sum"); }
Lowered FunctionContext::handleReduceMax(const BuiltinCall& c) { return lowerReduction(c, "max"); }
Lowered FunctionContext::handleReduceMin(const BuiltinCall& c) { return lowerReduction(c, "min"); }

Lowered FunctionContext::handleLen(const BuiltinCall& c) {
  Expr* xE = c.positional.empty() ? nullptr : c.positional[0];
  if (!xE) unsupported(c.range(), "this call of 'len'");
  Lowered x = lower(xE);
  loc(c.expr);
  if (x.kind == Lowered::Tuple)
    return Lowered::val(b_->constInt(static_cast<int64_t>(x.elems.size()), ctx().scalar(I::ScalarKind::I64)));
  I::Value* v = value(x, xE->range);
  if ((I::isView(v->type) || isShapedValue(v->type)) && !v->type->shape.empty()) {
    if (v->type->shape[0].isStatic()) return Lowered::val(b_->constIndex(v->type->shape[0].size));
    return Lowered::val(op1(I::OpId::MemDim, {v}, ctx().index(), {{I::AttrId::Axis, I::Attribute::integer(0)}}));
  }
  unsupported(c.range(), "'len' of a value of type " + I::printType(v->type));
}

// atomic_add / sub / min / max / exch (t[i], value) and atomic_cas (kind null: t[i], compare,
// value) on an element of a tensor or shared array: mem.atomic / mem.atomic_cas, whose result is
// the element's old value. Sema refuses the element types the op does not take.
Lowered FunctionContext::lowerAtomic(const BuiltinCall& c, const char* kind) {
  Expr* refE = arg(c, "ref");
  auto* sub = dyn_cast<SubscriptExpr>(refE);
  if (!sub) unsupported(refE->range, "an atomic on '" + text(refE->range) + "'", "atomics take an element t[i]");
  I::Value* base = value(lower(sub->base), sub->base->range);
  if (!I::isView(base->type)) unsupported(refE->range, "an atomic on a value of type " + I::printType(base->type));
  bool isElement = false;
  std::vector<I::Value*> idx;
  sliceView(base, sub->indices, sub, isElement, idx);
  if (!isElement) unsupported(refE->range, "an atomic on a slice", "atomics take one element t[i]");
  I::Type elem = base->type->elem;
  std::vector<I::Value*> ops;
  for (const char* name : {"compare", "value"}) {
    if (kind && std::string(name) == "compare") continue;
    Expr* e = arg(c, name);
    ops.push_back(coerce(value(lower(e, elem), e->range), elem, e->range));
  }
  ops.push_back(base);
  ops.insert(ops.end(), idx.begin(), idx.end());
  loc(c.expr);
  waitFor(base, true);
  if (!kind) return Lowered::val(op1(I::OpId::MemAtomicCas, ops, elem));
  return Lowered::val(op1(I::OpId::MemAtomic, ops, elem, {{I::AttrId::Kind, I::Attribute::string(kind)}}));
}

Lowered FunctionContext::handleAtomicAdd(const BuiltinCall& c) { return lowerAtomic(c, "add"); }
Lowered FunctionContext::handleAtomicSub(const BuiltinCall& c) { return lowerAtomic(c, "sub"); }
Lowered FunctionContext::handleAtomicMin(const BuiltinCall& c) { return lowerAtomic(c, "min"); }
Lowered FunctionContext::handleAtomicMax(const BuiltinCall& c) { return lowerAtomic(c, "max"); }
Lowered FunctionContext::handleAtomicExch(const BuiltinCall& c) { return lowerAtomic(c, "exch"); }
Lowered FunctionContext::handleAtomicCas(const BuiltinCall& c) { return lowerAtomic(c, nullptr); }

}  // namespace tessera::irgen
