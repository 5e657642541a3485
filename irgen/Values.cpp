// Values: constants, element conversions, broadcasts, views used as tile values, conditions,
// and slices of views.
#include <algorithm>

#include "irgen/FunctionContext.h"

namespace tessera::irgen {

I::Value* FunctionContext::constant(double v, I::Type t) {
  if (isShapedValue(t)) {
    I::Value* s = constant(v, t->elem);
    return op1(I::OpId::TileBroadcast, {s}, t);
  }
  I::ScalarKind k = I::baseScalar(t);
  if (isFloatKind(k)) return b_->constFloat(v, t);
  return b_->constInt(static_cast<int64_t>(v), t);
}

I::Value* FunctionContext::convertElem(I::Value* v, I::Type elem, SourceRange at) {
  I::Type t = v->type;
  I::Type target = isShapedValue(t) ? (t->kind == I::TypeKind::Frag ? ctx().frag(elem, t->shape, t->role)
                                                                    : ctx().tile(elem, t->shape))
                                    : elem;
  if (target == t) return v;
  std::vector<I::NamedAttr> attrs;
  if (elem->kind == I::TypeKind::Num && elem->round != I::Rounding::Default) {
    const char* r = elem->round == I::Rounding::Stochastic   ? "stochastic"
                    : elem->round == I::Rounding::TowardZero ? "toward_zero"
                                                             : "nearest_even";
    attrs.push_back({I::AttrId::Round, I::Attribute::string(r)});
  }
  // To bool: compare with zero (a conversion would truncate).
  if (I::isScalar(elem) && I::baseScalar(elem) == I::ScalarKind::I1 && !isShapedValue(t)) return toBool(v, at);
  return op1(I::OpId::ArithConvert, {v}, target, std::move(attrs));
}

I::Value* FunctionContext::broadcastTo(I::Value* v, const std::vector<I::Dim>& shape, SourceRange at) {
  I::Type t = v->type;
  if (isShapedValue(t) && t->shape == shape) return v;
  for (const I::Dim& d : shape)
    if (!d.isStatic() && d.sym.empty()) unsupported(at, "broadcasting to a tile of unknown ('?') shape");
  if (isShapedValue(t)) {
    size_t off = shape.size() >= t->shape.size() ? shape.size() - t->shape.size() : 0;
    for (size_t i = 0; i < t->shape.size() && off + i < shape.size(); ++i) unify(t->shape[i], shape[off + i]);
  }
  return op1(I::OpId::TileBroadcast, {v}, ctx().tile(elemOf(t), shape));
}

I::Value* FunctionContext::knownView(I::Value* v, SourceRange at, const std::string& name) {
  I::Type t = v->type;
  for (size_t i = 0; i < t->shape.size(); ++i)
    if (!t->shape[i].isStatic() && t->shape[i].sym.empty())
      error(diag::err_lower_dynamic_tile_shape, at, std::string("?"), static_cast<unsigned>(i), name);
  return v;
}

// Sema refuses copies into shared memory from a source without constant extents
// (sema/analyses/ViewExtents.cpp); a backstop.
void FunctionContext::staticShared(I::Type t, SourceRange at, const std::string& name) {
  for (size_t i = 0; i < t->shape.size(); ++i)
    if (!t->shape[i].isStatic())
      error(diag::err_dynamic_shared_shape, at, t->shape[i].sym.empty() ? std::string("?") : t->shape[i].sym,
            static_cast<unsigned>(i), name);
}

// A view (shared buffer, static global slice) used as a tile value is loaded.
I::Value* FunctionContext::asTile(I::Value* v, SourceRange at) {
  I::Type t = v->type;
  if (isShapedValue(t)) return v;
  if (I::isView(t)) {
    knownView(v, at, text(at));
    waitFor(v, true);
    return op1(I::OpId::TileLoad, {v}, ctx().tile(t->elem, t->shape));
  }
  return v;
}

I::Value* FunctionContext::coerce(I::Value* v, I::Type to, SourceRange at) {
  I::Type from = v->type;
  if (from == to) return v;
  if (I::isScalar(to)) {
    if (I::isScalar(from)) return convertElem(v, to, at);
    unsupported(at, "using a value of type " + I::printType(from) + " where " + I::printType(to) + " is expected");
  }
  if (isShapedValue(to)) {
    if (I::isView(from)) v = asTile(v, at), from = v->type;
    if (I::isScalar(from)) {
      v = convertElem(v, to->elem, at);
      if (to->kind == I::TypeKind::Frag) return op1(I::OpId::TileBroadcast, {v}, to);
      return broadcastTo(v, to->shape, at);
    }
    if (isShapedValue(from)) {
      if (from->kind == I::TypeKind::Frag && to->kind == I::TypeKind::Tile)
        unsupported(at, "using an mma fragment as a tile value", "store it, or keep accumulating with tile.mma");
      if (from->shape != to->shape) {
        v = convertElem(v, to->elem, at);
        return broadcastTo(v, to->shape, at);
      }
      return convertElem(v, to->elem, at);
    }
  }
  if (I::isView(to) && I::isView(from) && from->elem == to->elem && from->shape.size() == to->shape.size() &&
      from->kind == to->kind)
    error(diag::err_lower_unsupported, at,
          "changing the shape or access of '" + text(at) + "' (" + I::printType(from) + " to " + I::printType(to) + ")",
          "");
  unsupported(at, "using a value of type " + I::printType(from) + " where " + I::printType(to) + " is expected");
}

I::Value* FunctionContext::toBool(I::Value* v, SourceRange at) {
  I::Type t = v->type;
  if (!I::isScalar(t)) unsupported(at, "a condition of type " + I::printType(t));
  I::ScalarKind k = I::baseScalar(t);
  if (k == I::ScalarKind::I1 && t->kind == I::TypeKind::Scalar) return v;
  I::Type c = computeType(t);
  v = coerce(v, c, at);
  if (isFloatKind(k))
    return op1(I::OpId::ArithCmpF, {v, constant(0, c)}, ctx().i1(), {{I::AttrId::Pred, I::Attribute::string("une")}});
  return op1(I::OpId::ArithCmpI, {v, constant(0, c)}, ctx().i1(), {{I::AttrId::Pred, I::Attribute::string("ne")}});
}

I::Value* FunctionContext::value(const Lowered& lv, SourceRange at) {
  switch (lv.kind) {
    case Lowered::Val: return lv.v;
    case Lowered::Block:
      unsupported(at, "using a block of 'tile.range' as a value", "index a tensor with it (Q[block])");
    case Lowered::Unsized:
      if (auto it = lv.sym ? sizedShared_.find(lv.sym) : sizedShared_.end(); it != sizedShared_.end())
        return it->second;
      error(diag::err_lower_shared_shape_unknown, at, lv.sym ? lv.sym->name : text(at));
    case Lowered::Tuple: unsupported(at, "a tuple value here");
    default: unsupported(at, "an expression without a value here");
  }
}

I::Value* FunctionContext::scalarValue(Expr* e, I::Type want) {
  I::Value* v = value(lower(e, want), e->range);
  loc(e);
  return want ? coerce(v, want, e->range) : v;
}

I::Attribute FunctionContext::fullExtent(const I::Dim& full, unsigned d, SourceRange at, const std::string& name) {
  if (!full.isStatic() && full.sym.empty()) error(diag::err_lower_dynamic_tile_shape, at, std::string("?"), d, name);
  return full.isStatic() ? I::Attribute::integer(full.size) : I::Attribute::string(full.sym);
}

I::Value* FunctionContext::slice(I::Value* base, const std::vector<I::Value*>& offsets,
                                 const std::vector<I::Attribute>& sizes, const std::vector<int64_t>& squeeze) {
  std::vector<I::Dim> shape;
  for (size_t d = 0; d < sizes.size(); ++d) {
    if (std::count(squeeze.begin(), squeeze.end(), static_cast<int64_t>(d))) continue;
    const I::Attribute& a = sizes[d];
    shape.push_back(a.kind == I::AttrKind::String ? I::Dim{-1, a.s} : I::Dim{a.i, {}});
  }
  std::vector<I::Value*> ops = {base};
  ops.insert(ops.end(), offsets.begin(), offsets.end());
  std::vector<I::NamedAttr> attrs = {{I::AttrId::Sizes, I::Attribute::arrayOf(sizes)}};
  if (!squeeze.empty()) attrs.push_back({I::AttrId::Squeeze, I::Attribute::ints(squeeze)});
  return op1(I::OpId::MemSlice, ops, ctx().withShape(base->type, shape), std::move(attrs));
}

}  // namespace tessera::irgen
