// Builtins that compute with tile values: constructors (tile.zeros, tile.full), matrix products
// (tile.dot, tile.mma, tile.mma_sync), softmax, activations and reductions of tiles.
#include "irgen/FunctionContext.h"

namespace tessera::irgen {

Lowered FunctionContext::lowerTileFill(const BuiltinCall& c, bool full) {
  Expr* shapeE = arg(c, "shape");
  std::vector<Expr*> parts;
  if (auto* tu = dyn_cast<TupleExpr>(shapeE))
    parts = tu->elements;
  else if (auto* li = dyn_cast<ListExpr>(shapeE))
    parts = li->elements;
  else
    parts = {shapeE};
  std::vector<I::Dim> shape;
  for (Expr* p : parts) {
    // A shape symbol of the kernel (tile.zeros((128, D))) is a symbolic extent.
    if (auto* n = dyn_cast<NameExpr>(p); n && n->symbol && n->symbol->kind == SymbolKind::ShapeSymbol) {
      shape.push_back(dimOf(n->name));
      continue;
    }
    auto k = constInt(p);
    if (!k || *k <= 0) error(diag::err_lower_not_constant, p->range, "the extent of a tile");
    shape.push_back(I::Dim{*k, {}});
  }
  DType d = DType::FP32;
  if (Expr* dt = arg(c, "dtype"); dt && dt->type && dt->type->kind == TypeKind::DTypeValue) d = dt->type->dtype;
  I::Type elem = scalarType(d);
  I::Value* s = full ? scalarValue(arg(c, "value"), elem) : constant(0, elem);
  loc(c.expr);
  return Lowered::val(op1(I::OpId::TileBroadcast, {s}, ctx().tile(elem, shape)));
}

Lowered FunctionContext::handleTileZeros(const BuiltinCall& c) { return lowerTileFill(c, false); }
Lowered FunctionContext::handleTileFull(const BuiltinCall& c) { return lowerTileFill(c, true); }

// The two operands of tile.dot / tile.mma: rank-2 values (views waited for), inner extents
// unified.
std::pair<I::Value*, I::Value*> FunctionContext::productOperands(const BuiltinCall& c, const char* what) {
  Expr* aE = arg(c, "a");
  Expr* bE = arg(c, "b");
  I::Value* x = value(lower(aE), aE->range);
  I::Value* y = value(lower(bE), bE->range);
  loc(c.expr);
  for (auto [v, ex] : {std::pair{x, aE}, std::pair{y, bE}}) {
    if (I::isView(v->type)) {
      knownView(v, ex->range, text(ex->range));
      waitFor(v, true);
    }
    if (v->type->shape.size() != 2)
      unsupported(ex->range, std::string("'") + what + "' of an operand that is not rank 2");
  }
  unify(x->type->shape[1], y->type->shape[0]);
  return {x, y};
}

Lowered FunctionContext::handleTileDot(const BuiltinCall& c) {
  auto [x, y] = productOperands(c, "tile.dot");
  I::Type accum = ctx().scalar(
      I::isFloatLike(x->type) || isFloatKind(I::baseScalar(elemOf(x->type))) ? I::ScalarKind::F32 : I::ScalarKind::I32);
  if (Expr* ac = arg(c, "accum"); ac && ac->type && ac->type->kind == TypeKind::DTypeValue)
    accum = scalarType(ac->type->dtype);
  markNeedsGroup();
  return Lowered::val(op1(I::OpId::TileDot, {x, y}, ctx().tile(accum, {x->type->shape[0], y->type->shape[1]})));
}

Lowered FunctionContext::handleTileMma(const BuiltinCall& c) {
  if (arg(c, "BM") || arg(c, "BN") || arg(c, "BK"))
    unsupported(c.range(), "'tile.mma(..., BM=, BN=, BK=)' outside a for loop",
                "iterate it: for m, n, k in tile.mma(...)");
  auto [x, y] = productOperands(c, "tile.mma");
  I::Type accum = ctx().scalar(I::ScalarKind::F32);
  if (Expr* ac = arg(c, "accum"); ac && ac->type && ac->type->kind == TypeKind::DTypeValue)
    accum = scalarType(ac->type->dtype);
  I::Type ft = ctx().frag(accum, {x->type->shape[0], y->type->shape[1]}, I::FragRole::Acc);
  I::Value* acc;
  if (Expr* cE = arg(c, "c")) {
    acc = value(lower(cE), cE->range);
    if (acc->type != ft)
      unsupported(cE->range, "an accumulator of type " + I::printType(acc->type), "it must be " + I::printType(ft));
  } else {
    acc = op1(I::OpId::TileBroadcast, {constant(0, accum)}, ft);
  }
  markNeedsGroup();
  return Lowered::val(op1(I::OpId::TileMma, {x, y, acc}, ft));
}

// tile.mma_sync() in `for m, n, k in tile.mma(...)`: copy the k-th blocks of A and B into shared
// memory and accumulate their product into the loop's fragment.
Lowered FunctionContext::handleTileMmaSync(const BuiltinCall& c) {
  if (!mma_) unsupported(c.range(), "'tile.mma_sync' outside 'for m, n, k in tile.mma(...)'");
  for (Expr* x : c.positional) (void)lower(x);
  loc(c.expr);
  MmaLoop& L = *mma_;
  I::Value* a =
      op1(I::OpId::MemSlice, {L.A, L.m0, L.k}, ctx().withShape(L.A->type, {I::Dim{L.BM, {}}, I::Dim{L.BK, {}}}),
          {{I::AttrId::Sizes, I::Attribute::ints({L.BM, L.BK})}});
  // B's block: B[k:k+BK, n0:n0+BN], or for `Bt.T` the block Bt[n0:n0+BN, k:k+BK] it transposes.
  int64_t rows = L.transB ? L.BN : L.BK, cols = L.transB ? L.BK : L.BN;
  I::Value* bb = op1(I::OpId::MemSlice, {L.B, L.transB ? L.n0 : L.k, L.transB ? L.k : L.n0},
                     ctx().withShape(L.B->type, {I::Dim{rows, {}}, I::Dim{cols, {}}}),
                     {{I::AttrId::Sizes, I::Attribute::ints({rows, cols})}});
  asyncCopy(L.sA, a, c.range());
  asyncCopy(L.sB, bb, c.range());
  waitAll();
  op(I::OpId::TileBarrier, {}, {});
  std::vector<I::NamedAttr> attrs;
  if (L.transB) attrs.push_back({I::AttrId::TransposeB, I::Attribute::unit()});
  L.acc = op1(I::OpId::TileMma, {L.sA, L.sB, L.acc}, L.acc->type, attrs);
  op(I::OpId::TileBarrier, {}, {});
  smemReadSinceBarrier_ = false;
  return Lowered();
}

Lowered FunctionContext::handleTileSoftmax(const BuiltinCall& c) {
  Expr* xE = arg(c, "x");
  I::Value* x = asTile(value(lower(xE), xE->range), xE->range);
  int64_t axis = -1;
  if (Expr* a = arg(c, "axis")) axis = *constAxis(a);
  loc(c.expr);
  if (x->type->kind != I::TypeKind::Tile)
    unsupported(xE->range, "'tile.softmax' of a value of type " + I::printType(x->type));
  // Sema checks the axis where it knows the rank (not of a tile.cp_async value, for one).
  auto rank = static_cast<int64_t>(x->type->shape.size());
  if (axis < -rank || axis >= rank)
    unsupported(arg(c, "axis")->range,
                "'tile.softmax' along axis " + std::to_string(axis) + " of a rank-" + std::to_string(rank) + " tile");
  I::Type t = floatComputeType(x->type);
  x = coerce(x, t, c.range());
  return Lowered::val(op1(I::OpId::TileSoftmax, {x}, t, {{I::AttrId::Axis, I::Attribute::integer(axis)}}));
}

// An ELEMENTWISE row of sema/Builtins.def: its Tile IR op on x, in x's float compute type.
Lowered FunctionContext::handleElementwise(const BuiltinCall& c, I::OpId id) {
  Expr* xE = arg(c, "x");
  I::Value* x = value(lower(xE), xE->range);
  loc(c.expr);
  if (I::isView(x->type)) x = asTile(x, c.range());
  I::Type t = floatComputeType(x->type);
  return Lowered::val(op1(id, {coerce(x, t, c.range())}, t));
}

// tile.where(cond, a, b): arith.select over the shape the three broadcast to, in the promoted
// type of a and b.
Lowered FunctionContext::handleTileWhere(const BuiltinCall& c) {
  SourceRange at = c.range();
  Expr* condE = arg(c, "cond");
  I::Value* cond = value(lower(condE), condE->range);
  std::vector<I::Value*> vs = typedArgs({arg(c, "a"), arg(c, "b")});
  loc(c.expr);
  if (I::isView(cond->type)) cond = asTile(cond, at);
  for (I::Value*& v : vs)
    if (I::isView(v->type)) v = asTile(v, at);
  std::vector<I::Dim> shape;
  bool shaped = false;
  for (I::Value* v : {cond, vs[0], vs[1]})
    if (isShapedValue(v->type)) {
      shape = shaped ? broadcastShape(shape, v->type->shape) : v->type->shape;
      shaped = true;
    }
  I::Type elem = computeType(promote(elemOf(vs[0]->type), elemOf(vs[1]->type)));
  if (!shaped) {
    return Lowered::val(op1(I::OpId::ArithSelect,
                            {toBool(cond, condE->range), coerce(vs[0], elem, at), coerce(vs[1], elem, at)}, elem));
  }
  I::Type t = ctx().tile(elem, shape);
  if (isShapedValue(cond->type)) {
    if (I::baseScalar(elemOf(cond->type)) != I::ScalarKind::I1)
      cond = compare(BinaryOp::Ne, cond, constant(0, computeType(elemOf(cond->type))), condE->range);
    cond = broadcastTo(cond, shape, condE->range);
  } else {
    cond = broadcastTo(toBool(cond, condE->range), shape, condE->range);
  }
  return Lowered::val(op1(I::OpId::ArithSelect, {cond, coerce(vs[0], t, at), coerce(vs[1], t, at)}, t));
}

// tile.arange(n): 0, 1, ..., n - 1 as a rank-1 i32 tile.
Lowered FunctionContext::handleTileArange(const BuiltinCall& c) {
  Expr* nE = arg(c, "n");
  auto n = constInt(nE);
  if (!n || *n <= 0) error(diag::err_lower_not_constant, nE->range, "the extent of 'tile.arange' (a positive integer)");
  loc(c.expr);
  return Lowered::val(op1(I::OpId::TileIota, {}, ctx().tile(ctx().scalar(I::ScalarKind::I32), {I::Dim{*n, {}}})));
}

Lowered FunctionContext::handleTileSum(const BuiltinCall& c) { return lowerReduction(c, "sum"); }
Lowered FunctionContext::handleTileMax(const BuiltinCall& c) { return lowerReduction(c, "max"); }

// Loops over these are lowered by the for statement (HandleLoop.cpp).
Lowered FunctionContext::handleTileRange(const BuiltinCall& c) {
  unsupported(c.range(), "'" + std::string(c.info.name) + "' outside the header of a for loop");
}
Lowered FunctionContext::handleRange(const BuiltinCall& c) { return handleTileRange(c); }

}  // namespace tessera::irgen
