// Builtins of the execution model: tile, warp and group ids, the group barrier, warp shuffles,
// votes, cooperative groups and the clock.
#include "irgen/FunctionContext.h"

namespace tessera::irgen {

Lowered FunctionContext::idOp(const BuiltinCall& c, I::OpId id) {
  loc(c.expr);
  return Lowered::val(op1(id, {}, ctx().index()));
}

Lowered FunctionContext::handleTileLinearId(const BuiltinCall& c) { return idOp(c, I::OpId::TileLinearId); }
Lowered FunctionContext::handleTileLaneId(const BuiltinCall& c) { return idOp(c, I::OpId::TileLaneId); }
Lowered FunctionContext::handleTileWarpId(const BuiltinCall& c) { return idOp(c, I::OpId::TileWarpId); }
Lowered FunctionContext::handleLaunchThreadId(const BuiltinCall& c) { return idOp(c, I::OpId::TileThreadId); }
Lowered FunctionContext::handleGroupLinearId(const BuiltinCall& c) { return idOp(c, I::OpId::TileGroupId); }
Lowered FunctionContext::handleGroupTileCount(const BuiltinCall& c) { return idOp(c, I::OpId::TileGroupSize); }
// `grid_groups` is a value (HandleExpr.cpp), not a call.
Lowered FunctionContext::handleGridGroups(const BuiltinCall& c) { return unsupportedBuiltin(c); }

Lowered FunctionContext::handleTBarrier(const BuiltinCall& c) {
  loc(c.expr);
  waitAll();
  op(I::OpId::TileBarrier, {}, {});
  smemReadSinceBarrier_ = false;
  return Lowered();
}

Lowered FunctionContext::lowerShuffle(const BuiltinCall& c, const char* mode) {
  // Sema checks the width (a constant power of two, 1..32); this is a backstop.
  int64_t width = 32;
  if (Expr* w = arg(c, "width")) {
    auto n = constInt(w);
    if (!n || *n < 1 || *n > 32 || (*n & (*n - 1)))
      unsupported(w->range, "a shuffle 'width' that is not a constant power of two from 1 to 32");
    width = *n;
  }
  const BuiltinInfo& b = c.info;
  Expr* vE = arg(c, "value");
  Expr* oE = arg(c, b.sig.params.size() > 1 ? b.sig.params[1].name.c_str() : "offset");
  I::Value* v = value(lower(vE, c.want), vE->range);
  I::Value* o = scalarValue(oE, ctx().scalar(I::ScalarKind::I32));
  loc(c.expr);
  if (!I::isScalar(v->type)) unsupported(vE->range, "shuffling a value of type " + I::printType(v->type));
  std::vector<I::NamedAttr> attrs = {{I::AttrId::Mode, I::Attribute::string(mode)}};
  if (width != 32) attrs.push_back({I::AttrId::Width, I::Attribute::integer(width)});
  return Lowered::val(op1(I::OpId::TileShuffle, {v, o}, v->type, std::move(attrs)));
}

// tile.vote_any / vote_all (bool) and tile.ballot (u32): the predicate is any scalar, true when
// nonzero.
Lowered FunctionContext::lowerVote(const BuiltinCall& c, const char* mode) {
  Expr* pE = arg(c, "pred");
  I::Value* p = toBool(value(lower(pE), pE->range), pE->range);
  loc(c.expr);
  bool ballot = std::string(mode) == "ballot";
  I::Type rt = ballot ? ctx().scalar(I::ScalarKind::U32) : ctx().i1();
  return Lowered::val(op1(I::OpId::TileVote, {p}, rt, {{I::AttrId::Mode, I::Attribute::string(mode)}}));
}

Lowered FunctionContext::handleWarpShuffleDown(const BuiltinCall& c) { return lowerShuffle(c, "down"); }
Lowered FunctionContext::handleWarpShuffleUp(const BuiltinCall& c) { return lowerShuffle(c, "up"); }
Lowered FunctionContext::handleWarpShuffleXor(const BuiltinCall& c) { return lowerShuffle(c, "xor"); }
Lowered FunctionContext::handleWarpShuffleIdx(const BuiltinCall& c) { return lowerShuffle(c, "idx"); }
Lowered FunctionContext::handleWarpVoteAny(const BuiltinCall& c) { return lowerVote(c, "any"); }
Lowered FunctionContext::handleWarpVoteAll(const BuiltinCall& c) { return lowerVote(c, "all"); }
Lowered FunctionContext::handleWarpBallot(const BuiltinCall& c) { return lowerVote(c, "ballot"); }
Lowered FunctionContext::handleTileClock(const BuiltinCall& c) {
  loc(c.expr);
  return Lowered::val(op1(I::OpId::TileClock, {}, ctx().scalar(I::ScalarKind::I64)));
}

Lowered FunctionContext::handleCooperativeGroup(const BuiltinCall& c) {
  Expr* s = arg(c, "size");
  auto n = constInt(s);
  if (!n) error(diag::err_argument_not_constant, s ? s->range : c.range(), "the size of a cooperative group");
  loc(c.expr);
  return Lowered::val(
      op1(I::OpId::TileCoopGroup, {}, ctx().cgroup(*n), {{I::AttrId::Size, I::Attribute::integer(*n)}}));
}

// tile.group_sum/max/min(value) and tile.group_argmax/argmin(value, index) -> tile.group_reduce.
// Values reduce in their compute type (f32 for f16/bf16, i32 for narrower integers, i64 for
// extents); indices are i64.
Lowered FunctionContext::lowerGroupReduce(const BuiltinCall& c, const char* kind) {
  bool withIndex = kind[0] == 'a';
  Expr* vE = arg(c, "value");
  I::Value* v = value(lower(vE), vE->range);
  if (!I::isScalar(v->type) || I::baseScalar(v->type) == I::ScalarKind::I1)
    unsupported(vE->range, "a group reduction of a value of type " + I::printType(v->type), "reduce a number");
  I::Type t = I::baseScalar(v->type) == I::ScalarKind::Index ? ctx().scalar(I::ScalarKind::I64) : computeType(v->type);
  // The group combine works on 32- and 64-bit lanes: narrower integers widen (a sum wraps to the
  // same bits when it is narrowed back).
  if (I::scalarClass(I::baseScalar(t)) != I::ScalarClass::Float && I::scalarBits(I::baseScalar(t)) < 32)
    t = ctx().scalar(isUnsignedKind(I::baseScalar(t)) ? I::ScalarKind::U32 : I::ScalarKind::I32);
  v = coerce(v, t, vE->range);
  std::vector<I::Value*> operands = {v};
  I::Type result = t;
  if (withIndex) {
    result = ctx().scalar(I::ScalarKind::I64);
    operands.push_back(scalarValue(arg(c, "index"), result));
  }
  loc(c.expr);
  return Lowered::val(op1(I::OpId::TileGroupReduce, operands, result, {{I::AttrId::Kind, I::Attribute::string(kind)}}));
}

Lowered FunctionContext::handleTileGroupSum(const BuiltinCall& c) { return lowerGroupReduce(c, "sum"); }
Lowered FunctionContext::handleTileGroupMax(const BuiltinCall& c) { return lowerGroupReduce(c, "max"); }
Lowered FunctionContext::handleTileGroupMin(const BuiltinCall& c) { return lowerGroupReduce(c, "min"); }
Lowered FunctionContext::handleTileGroupArgmax(const BuiltinCall& c) { return lowerGroupReduce(c, "argmax"); }
Lowered FunctionContext::handleTileGroupArgmin(const BuiltinCall& c) { return lowerGroupReduce(c, "argmin"); }

// g.sync(), g.thread_rank(), g.size() of a cooperative group g.
Lowered FunctionContext::lowerGroupMethod(const BuiltinCall& c) {
  auto* attr = dyn_cast<AttributeExpr>(c.expr->callee);
  if (!attr) unsupported(c.range(), "this call");
  I::Value* g = value(lower(attr->base), attr->base->range);
  loc(c.expr);
  if (g->type->kind != I::TypeKind::CGroup) unsupported(attr->base->range, "a cooperative-group method on this value");
  if (c.info.id == BuiltinId::GroupSync) {
    waitAll();
    op(I::OpId::TileCoopSync, {g}, {});
    return Lowered();
  }
  if (c.info.id == BuiltinId::GroupSize) return Lowered::val(b_->constIndex(g->type->count));
  return Lowered::val(op1(I::OpId::TileCoopRank, {g}, ctx().index()));
}

Lowered FunctionContext::handleGroupSync(const BuiltinCall& c) { return lowerGroupMethod(c); }
Lowered FunctionContext::handleGroupThreadRank(const BuiltinCall& c) { return lowerGroupMethod(c); }
Lowered FunctionContext::handleGroupSize(const BuiltinCall& c) { return lowerGroupMethod(c); }

}  // namespace tessera::irgen
