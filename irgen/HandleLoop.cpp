// Loops: for over range() (scf.for), tile.range() (tile.range, the outermost loop over a
// tensor's blocks distributed over groups), tile.mma() (a pipelined k loop), and unrolled lists;
// while (scf.while). Locals a body assigns are the loop's iteration arguments.
#include <algorithm>

#include "irgen/FunctionContext.h"

namespace tessera::irgen {

void FunctionContext::buildLoop(I::OpId id, I::Value* lb, I::Value* ub, I::Value* step, std::vector<I::NamedAttr> attrs,
                                const tessera::Block& bodyStmts, SourceRange at, const char* construct,
                                const std::function<void(I::Value*)>& bindIv, const SymSet& exclude,
                                I::Value* extraInit, I::Value** extraOut) {
  SymSet assigned;
  assignedIn(bodyStmts, assigned);
  std::vector<const Symbol*> carried;
  std::vector<I::Type> types;
  std::vector<I::Value*> inits = {lb, ub, step};
  for (const Symbol* s : assigned) {
    if (exclude.count(s)) continue;
    auto it = env_.find(s);
    if (it == env_.end()) continue;
    if (it->second.kind == Lowered::Unsized && sizedShared_.count(it->second.sym))
      it->second = Lowered::val(sizedShared_[it->second.sym]);
    // `v = x[0:128]` then `v = v + 1.0` in the body: the loop carries a tile value.
    if (it->second.kind == Lowered::Val && it->second.v->type->kind == I::TypeKind::Tensor &&
        assignsComputedValue(bodyStmts, s))
      it->second = Lowered::val(asTile(it->second.v, at));
    I::Type t = carriedType(s, it->second, at, construct);
    carried.push_back(s);
    types.push_back(t);
    inits.push_back(coerce(it->second.v, t, at));
  }
  std::vector<I::Type> resultTypes = types;
  if (extraInit) {
    inits.push_back(extraInit);
    resultTypes.push_back(extraInit->type);
  }
  I::Operation* loop = op(id, inits, resultTypes, std::move(attrs));
  I::Block& body = loop->body();
  I::Value* iv = body.addArg(lb->type);
  std::vector<I::Value*> args;
  for (size_t i = 0; i < carried.size(); ++i) args.push_back(body.addArg(types[i], carried[i]->name));
  I::Value* extraArg = extraInit ? body.addArg(extraInit->type) : nullptr;
  auto before = env_;
  for (size_t i = 0; i < carried.size(); ++i) env_[carried[i]] = Lowered::val(args[i]);
  ++depth_;
  b_->setInsertionPointToEnd(body);
  MmaLoop* savedMma = mma_;
  if (extraArg && mma_) mma_->acc = extraArg;
  bindIv(iv);
  unsigned copiesBefore = asyncCopies_;
  lowerLoopBody(bodyStmts);
  flushRegion();
  if (asyncCopies_ != copiesBefore && smemReadSinceBarrier_ && kernel_) {
    op(I::OpId::TileBarrier, {}, {});
    smemReadSinceBarrier_ = false;
  }
  std::vector<I::Value*> ys;
  for (size_t i = 0; i < carried.size(); ++i) {
    auto it = env_.find(carried[i]);
    if (it == env_.end() || it->second.kind != Lowered::Val)
      error(diag::err_lower_type_change, at, carried[i]->name, I::printType(types[i]), construct, "no single value");
    ys.push_back(carriedValue(carried[i], it->second.v, types[i], at, construct));
  }
  if (extraArg) ys.push_back(mma_ ? mma_->acc : extraArg);
  op(I::OpId::ScfYield, ys, {});
  --depth_;
  mma_ = savedMma;
  env_ = before;
  for (const Symbol* s : assigned)
    if (!std::count(carried.begin(), carried.end(), s) && !env_.count(s)) dropped_[s] = construct;
  for (size_t i = 0; i < carried.size(); ++i) {
    I::Value* r = loop->result(static_cast<unsigned>(i));
    r->nameHint = carried[i]->name;
    env_[carried[i]] = Lowered::val(r);
  }
  if (extraOut) *extraOut = loop->result(static_cast<unsigned>(carried.size()));
  b_->setInsertionPointAfter(loop);
}

void FunctionContext::lowerFor(ForStmt* s) {
  if (!s->elseBlock.stmts.empty()) unsupported(s->elseBlock.range, "'else' on a for loop");
  auto* call = dyn_cast<CallExpr>(s->iter);
  const BuiltinInfo* bi = call ? builtinOf(call->callee) : nullptr;
  SymSet targets;
  assignedTarget(s->target, targets);
  if (bi && bi->id == BuiltinId::TileMma) return lowerMmaLoop(s, call);
  if (bi && bi->id == BuiltinId::Range) return lowerRangeLoop(s, call, targets);
  if (bi && bi->id == BuiltinId::TileRange) return lowerTileRangeLoop(s, call, targets);
  // for x in [a, b, c] / (a, b, c): unrolled.
  if (isa<ListExpr>(s->iter) || isa<TupleExpr>(s->iter)) {
    Lowered items = lower(s->iter);
    pushLoop(s->body, s->range, false);
    for (const Lowered& item : items.elems) {
      assign(s->target, item, s->iter->range);
      lowerLoopBody(s->body);
    }
    popLoop();
    for (const Symbol* t : targets) {
      env_.erase(t);
      dropped_[t] = "for";
    }
    return;
  }
  unsupported(s->iter->range, "iterating over '" + text(s->iter->range) + "'",
              "use range(...), tile.range(...) or a list of constants");
}

// for i in range(stop) / range(start, stop, step?): scf.for.
void FunctionContext::lowerRangeLoop(ForStmt* s, CallExpr* call, const SymSet& targets) {
  auto* targetName = dyn_cast<NameExpr>(s->target);
  if (!targetName || !targetName->symbol) unsupported(s->target->range, "this loop target");
  const Symbol* tsym = targetName->symbol;
  std::vector<Expr*> pos;
  for (const Argument& a : call->args)
    if (a.kind == Argument::Positional) pos.push_back(a.value);
  const Type* et = s->target->type;
  I::Type ivT = et && et->kind == TypeKind::Scalar ? scalarType(et->dtype) : ctx().scalar(I::ScalarKind::I32);
  I::Value *lb, *ub, *step;
  if (pos.size() == 1) {
    lb = b_->constInt(0, ivT);
    ub = scalarValue(pos[0], ivT);
  } else {
    lb = scalarValue(pos[0], ivT);
    ub = scalarValue(pos[1], ivT);
  }
  if (pos.size() >= 3) {
    // A negative step counts down (Python's range; the trip count is computed in codegen/
    // LowerControl.cpp); sema refuses a constant zero step.
    step = scalarValue(pos[2], ivT);
  } else {
    step = b_->constInt(1, ivT);
  }
  loc(s);
  pushLoop(s->body, s->range, true);
  buildLoop(
      I::OpId::ScfFor, lb, ub, step, {}, s->body, s->range, "for",
      [&](I::Value* iv) {
        iv->nameHint = tsym->name;
        env_[tsym] = Lowered::val(iv);
      },
      targets);
  popLoop();
}

// for b in tile.range(extent | T, stop?, axis=, step=, prefetch=): tile.range over indices, or
// over the blocks of tensor T along an axis.
void FunctionContext::lowerTileRangeLoop(ForStmt* s, CallExpr* call, const SymSet& targets) {
  const BuiltinInfo* bi = builtinOf(call->callee);
  if (auto* axes = dyn_cast<TupleExpr>(argument(call, *bi, "axis")); axes && axes->elements.size() > 1)
    return lowerMultiAxisLoop(s, call, axes, targets);
  auto* targetName = dyn_cast<NameExpr>(s->target);
  if (!targetName || !targetName->symbol) unsupported(s->target->range, "this loop target");
  const Symbol* tsym = targetName->symbol;
  Expr* extE = argument(call, *bi, "extent");
  Expr* stopE = argument(call, *bi, "stop");
  Expr* axisE = argument(call, *bi, "axis");
  Expr* stepE = argument(call, *bi, "step");
  Expr* preE = argument(call, *bi, "prefetch");
  int64_t step = 1;
  if (stepE) {
    auto c = constInt(stepE);
    if (!c || *c <= 0)
      error(diag::err_argument_not_constant, stepE->range, "the step of 'tile.range' (a positive integer)");
    step = *c;
  }
  std::vector<I::NamedAttr> attrs;
  if (preE) {
    auto c = constInt(preE);
    if (!c || *c < 1 || *c > 16)
      error(diag::err_argument_not_constant, preE->range, "'prefetch' (an integer in [1, 16])");
    attrs.push_back({I::AttrId::Prefetch, I::Attribute::integer(*c)});
  }
  Lowered ext = lower(extE, ctx().index());
  I::Value* e0 = value(ext, extE->range);
  loc(s);
  I::Value* idx0 = b_->constIndex(0);
  bool blocks = I::isView(e0->type);
  int64_t axis = 0;
  I::Value *lb = idx0, *ub;
  if (blocks) {
    if (axisE) {
      auto c = constInt(axisE);
      if (!c) error(diag::err_argument_not_constant, axisE->range, "the axis of 'tile.range'");
      axis = *c;
    }
    if (axis < 0 || axis >= static_cast<int64_t>(e0->type->shape.size()))
      unsupported(axisE ? axisE->range : call->range, "'tile.range' over axis " + std::to_string(axis));
    const I::Dim& d = e0->type->shape[axis];
    ub = d.isStatic() ? b_->constIndex(d.size)
                      : op1(I::OpId::MemDim, {e0}, ctx().index(), {{I::AttrId::Axis, I::Attribute::integer(axis)}});
    // stop=: only the blocks that start below it (each still clipped at the tensor's end only).
    if (stopE) {
      I::Value* stop = scalarValue(stopE, ctx().index());
      loc(s);
      ub = op1(I::OpId::ArithMinSI, {ub, stop}, ctx().index());
    }
  } else if (stopE) {
    lb = coerce(e0, ctx().index(), extE->range);
    ub = scalarValue(stopE, ctx().index());
  } else {
    ub = coerce(e0, ctx().index(), extE->range);
  }
  I::Value* st = b_->constIndex(step);
  // The outermost loop over a tensor's blocks hands them to the groups, grid-stride:
  // group g takes blocks g, g + num_groups, ... (program_id-style partitioning).
  bool distribute = blocks && blockLoopDepth_ == 0 && kernel_;
  if (distribute) {
    markNeedsGroup();
    I::Value* g = op1(I::OpId::TileGroupId, {}, ctx().index());
    lb = op1(I::OpId::ArithMulI, {g, st}, ctx().index());
    I::Value* ng = op1(I::OpId::TileNumGroups, {}, ctx().index());
    st = op1(I::OpId::ArithMulI, {ng, b_->constIndex(step)}, ctx().index());
    int64_t p = -1;
    if (e0->isBlockArg() && e0->ownerBlock == top_) p = static_cast<int64_t>(e0->index);
    distributed_.push_back({p, axis, step});
  }
  if (blocks) ++blockLoopDepth_;
  pushLoop(s->body, s->range, true);
  buildLoop(
      I::OpId::TileRange, lb, ub, st, std::move(attrs), s->body, s->range, "for",
      [&](I::Value* iv) {
        iv->nameHint = tsym->name;
        if (blocks) {
          Lowered blk;
          blk.kind = Lowered::Block;
          blk.v = iv;
          blk.size = step;
          blk.axis = static_cast<int>(axis);
          env_[tsym] = blk;
        } else {
          env_[tsym] = Lowered::val(iv);
        }
      },
      targets);
  popLoop();
  if (blocks) --blockLoopDepth_;
}

// for i, j, blk in tile.range(T, axis=(a0, a1, a2), step=s): every index of the leading axes and
// every block of s along the last, as one tile.range over their row-major enumeration u (the
// outermost such loop hands u = g, g + num_groups, ... to group g); the body recovers the
// indices from u.
void FunctionContext::lowerMultiAxisLoop(ForStmt* s, CallExpr* call, TupleExpr* axes, const SymSet& targets) {
  const BuiltinInfo* bi = builtinOf(call->callee);
  auto* tu = dyn_cast<TupleExpr>(s->target);
  size_t n = axes->elements.size();
  if (!tu || tu->elements.size() != n)
    unsupported(s->target->range, "this target of a loop over " + std::to_string(n) + " axes",
                "name one index per leading axis and the block last: for i, j, blk in tile.range(...)");
  std::vector<const Symbol*> syms;
  for (Expr* t : tu->elements) {
    auto* nm = dyn_cast<NameExpr>(t);
    if (!nm || !nm->symbol) unsupported(t->range, "this loop target");
    syms.push_back(nm->symbol);
  }
  Expr* extE = argument(call, *bi, "extent");
  if (Expr* stopE = argument(call, *bi, "stop")) unsupported(stopE->range, "'stop' in a loop over several axes");
  if (Expr* preE = argument(call, *bi, "prefetch")) unsupported(preE->range, "'prefetch' in a loop over several axes");
  int64_t step = 1;
  if (Expr* stepE = argument(call, *bi, "step")) {
    auto c = constInt(stepE);
    if (!c || *c <= 0)
      error(diag::err_argument_not_constant, stepE->range, "the step of 'tile.range' (a positive integer)");
    step = *c;
  }
  I::Value* t = value(lower(extE), extE->range);
  if (!I::isView(t->type)) unsupported(extE->range, "a loop over several axes of something that is not a tensor");
  std::vector<int64_t> ax;
  for (Expr* a : axes->elements) {
    auto c = constInt(a);
    if (!c) error(diag::err_argument_not_constant, a->range, "the axes of 'tile.range'");
    if (*c < 0 || *c >= static_cast<int64_t>(t->type->shape.size()) || (!ax.empty() && *c <= ax.back()))
      unsupported(a->range, "'tile.range' over axis " + std::to_string(*c), "name increasing axes of the tensor");
    ax.push_back(*c);
  }
  loc(s);
  I::Type ix = ctx().index();
  auto dim = [&](int64_t a) -> I::Value* {
    const I::Dim& d = t->type->shape[a];
    return d.isStatic() ? b_->constIndex(d.size)
                        : op1(I::OpId::MemDim, {t}, ix, {{I::AttrId::Axis, I::Attribute::integer(a)}});
  };
  std::vector<I::Value*> extents;
  for (size_t i = 0; i + 1 < n; ++i) extents.push_back(dim(ax[i]));
  I::Value* blocks =
      op1(I::OpId::ArithDivSI,
          {op1(I::OpId::ArithAddI, {dim(ax.back()), b_->constIndex(step - 1)}, ix), b_->constIndex(step)}, ix);
  I::Value* total = blocks;
  for (I::Value* e : extents) total = op1(I::OpId::ArithMulI, {total, e}, ix);
  I::Value *lb = b_->constIndex(0), *st = b_->constIndex(1);
  if (blockLoopDepth_ == 0 && kernel_) {
    markNeedsGroup();
    lb = op1(I::OpId::TileGroupId, {}, ix);
    st = op1(I::OpId::TileNumGroups, {}, ix);
    int64_t p = t->isBlockArg() && t->ownerBlock == top_ ? static_cast<int64_t>(t->index) : -1;
    std::vector<int64_t> grid;
    for (size_t i = 0; i < n; ++i) grid.insert(grid.end(), {p, ax[i], i + 1 == n ? step : 1});
    distributed_.push_back(grid);
  }
  ++blockLoopDepth_;
  pushLoop(s->body, s->range, true);
  buildLoop(
      I::OpId::TileRange, lb, total, st, {}, s->body, s->range, "for",
      [&](I::Value* u) {
        I::Type i64 = ctx().scalar(I::ScalarKind::I64);
        I::Value* blk = op1(I::OpId::ArithRemSI, {u, blocks}, ix);
        I::Value* rest = op1(I::OpId::ArithDivSI, {u, blocks}, ix);
        for (size_t i = n - 1; i-- > 0;) {
          I::Value* idx = i == 0 ? rest : op1(I::OpId::ArithRemSI, {rest, extents[i]}, ix);
          if (i > 0) rest = op1(I::OpId::ArithDivSI, {rest, extents[i]}, ix);
          I::Value* v = coerce(idx, i64, s->range);
          v->nameHint = syms[i]->name;
          env_[syms[i]] = Lowered::val(v);
        }
        Lowered b;
        b.kind = Lowered::Block;
        b.v = op1(I::OpId::ArithMulI, {blk, b_->constIndex(step)}, ix);
        b.v->nameHint = syms.back()->name;
        b.size = step;
        b.axis = static_cast<int>(ax.back());
        env_[syms.back()] = b;
      },
      targets);
  popLoop();
  --blockLoopDepth_;
}

// for m, n, k in tile.mma(A, B, C, BM=, BN=, BK=): each group owns the (m, n) output tile of C
// and walks k; tile.mma_sync accumulates into a register fragment that is stored to C at the end.
void FunctionContext::lowerMmaLoop(ForStmt* s, CallExpr* call) {
  const BuiltinInfo& b = *call->callee->type->builtin;
  auto* tu = dyn_cast<TupleExpr>(s->target);
  if (!tu || tu->elements.size() != 3)
    unsupported(s->target->range, "this target of a tile.mma loop", "write 'for m, n, k in tile.mma(...)'");
  Expr* aE = argument(call, b, "a");
  Expr* bE = argument(call, b, "b");
  Expr* cE = argument(call, b, "c");
  if (!cE) unsupported(call->range, "'tile.mma' iteration without an output tensor C");
  auto sz = [&](const char* name) {
    Expr* x = argument(call, b, name);
    auto c = x ? constInt(x) : std::nullopt;
    if (!c || *c <= 0)
      error(diag::err_argument_not_constant, x ? x->range : call->range,
            std::string("'") + name + "' (a positive integer)");
    return *c;
  };
  int64_t BM = sz("BM"), BN = sz("BN"), BK = sz("BK");
  // `Bt.T` as B: B given K-major (Bt is [N, K]); the loop copies blocks of Bt and multiplies by
  // their transpose (tile.mma {transpose_b}), which is what fp8 tensor cores need.
  bool transB = false;
  if (auto* at = dyn_cast<AttributeExpr>(bE); at && at->name == "T") {
    transB = true;
    bE = at->base;
  }
  if (auto* at = dyn_cast<AttributeExpr>(aE); at && at->name == "T")
    unsupported(aE->range, "a transposed A ('.T') in a 'tile.mma' loop", "pass A as [M, K]; only B may be transposed");
  I::Value* A = value(lower(aE), aE->range);
  I::Value* B = value(lower(bE), bE->range);
  I::Value* C = value(lower(cE), cE->range);
  for (I::Value* v : {A, B, C})
    if (v->type->kind != I::TypeKind::Tensor || v->type->shape.size() != 2)
      unsupported(call->range, "'tile.mma' iteration over operands that are not rank-2 tensors");
  loc(s);
  // Sema rejects a read-only C (err_write_readonly_param); kept as a guard.
  if (C->type->access == I::Access::Read)
    unsupported(cE->range, "a 'tile.mma' loop into the read-only '" + text(cE->range) + "'");
  markNeedsGroup();
  // The default launch: one group per (m, n) output tile of C (`blocks` = (param, axis, step)...).
  for (auto& arg : func_->body().args)
    if (arg.get() == C && kernel_ && !func_->hasAttr(I::AttrId::Blocks)) {
      func_->setAttr(I::AttrId::Blocks, I::Attribute::ints({static_cast<int64_t>(arg->index), 0, BM,
                                                            static_cast<int64_t>(arg->index), 1, BN}));
      func_->setAttr(I::AttrId::ExactGrid, I::Attribute::unit());  // group g computes output tile g, no striding
    }
  I::Value* sA = prologue(I::OpId::SmemAlloc,
                          ctx().smem(A->type->elem, {I::Dim{BM, {}}, I::Dim{BK, {}}}, I::Layout::Row, I::Swizzle::Auto))
                     ->result();
  sA->nameHint = "sA";
  std::vector<I::Dim> sbShape = transB ? std::vector<I::Dim>{I::Dim{BN, {}}, I::Dim{BK, {}}}
                                       : std::vector<I::Dim>{I::Dim{BK, {}}, I::Dim{BN, {}}};
  I::Value* sB =
      prologue(I::OpId::SmemAlloc, ctx().smem(B->type->elem, sbShape, I::Layout::Row, I::Swizzle::Auto))->result();
  sB->nameHint = "sB";
  I::Type ix = ctx().index();
  I::Value* g = op1(I::OpId::TileGroupId, {}, ix);
  I::Value* N = C->type->shape[1].isStatic()
                    ? b_->constIndex(C->type->shape[1].size)
                    : op1(I::OpId::MemDim, {C}, ix, {{I::AttrId::Axis, I::Attribute::integer(1)}});
  I::Value* cBN = b_->constIndex(BN);
  I::Value* nb = op1(I::OpId::ArithDivSI, {op1(I::OpId::ArithAddI, {N, b_->constIndex(BN - 1)}, ix), cBN}, ix);
  nb->nameHint = "ntiles";
  I::Value* mi = op1(I::OpId::ArithDivSI, {g, nb}, ix);
  I::Value* ni = op1(I::OpId::ArithRemSI, {g, nb}, ix);
  I::Value* m0 = op1(I::OpId::ArithMulI, {mi, b_->constIndex(BM)}, ix);
  m0->nameHint = "m0";
  I::Value* n0 = op1(I::OpId::ArithMulI, {ni, cBN}, ix);
  n0->nameHint = "n0";
  I::Type fragT = ctx().frag(ctx().scalar(I::ScalarKind::F32), {I::Dim{BM, {}}, I::Dim{BN, {}}}, I::FragRole::Acc);
  I::Value* acc0 = op1(I::OpId::TileBroadcast, {b_->constFloat(0.0, ctx().scalar(I::ScalarKind::F32))}, fragT);
  I::Value* K = A->type->shape[1].isStatic()
                    ? b_->constIndex(A->type->shape[1].size)
                    : op1(I::OpId::MemDim, {A}, ix, {{I::AttrId::Axis, I::Attribute::integer(1)}});
  MmaLoop L{A, B, m0, n0, nullptr, acc0, sA, sB, BM, BN, BK, transB};
  MmaLoop* saved = mma_;
  mma_ = &L;
  SymSet targets;
  assignedTarget(s->target, targets);
  I::Value* accOut = nullptr;
  auto* mN = dyn_cast<NameExpr>(tu->elements[0]);
  auto* nN = dyn_cast<NameExpr>(tu->elements[1]);
  auto* kN = dyn_cast<NameExpr>(tu->elements[2]);
  pushLoop(s->body, s->range, false);
  // The k loop is a 2-stage copy pipeline (the pipeline pass double-buffers sA and sB).
  buildLoop(
      I::OpId::TileRange, b_->constIndex(0), K, b_->constIndex(BK), {{I::AttrId::Prefetch, I::Attribute::integer(3)}},
      s->body, s->range, "for",
      [&](I::Value* iv) {
        iv->nameHint = kN ? kN->name : "k";
        L.k = iv;
        if (mN && mN->symbol) env_[mN->symbol] = Lowered::val(m0);
        if (nN && nN->symbol) env_[nN->symbol] = Lowered::val(n0);
        if (kN && kN->symbol) env_[kN->symbol] = Lowered::val(iv);
      },
      targets, acc0, &accOut);
  popLoop();
  mma_ = saved;
  accOut->nameHint = "acc";
  loc(s);
  I::Value* cblk = op1(I::OpId::MemSlice, {C, m0, n0}, ctx().withShape(C->type, {I::Dim{BM, {}}, I::Dim{BN, {}}}),
                       {{I::AttrId::Sizes, I::Attribute::ints({BM, BN})}});
  op(I::OpId::TileStore, {convertElem(accOut, C->type->elem, s->range), cblk}, {});
}

void FunctionContext::lowerWhile(WhileStmt* s) {
  if (!s->elseBlock.stmts.empty()) unsupported(s->elseBlock.range, "'else' on a while loop");
  LoopCtx L = pushLoop(s->body, s->range, true);
  SymSet assigned;
  assignedIn(s->body, assigned);
  std::vector<const Symbol*> carried;
  std::vector<I::Type> types;
  std::vector<I::Value*> inits;
  for (const Symbol* sym : assigned) {
    auto it = env_.find(sym);
    if (it == env_.end()) continue;
    I::Type t = carriedType(sym, it->second, s->range, "while");
    carried.push_back(sym);
    types.push_back(t);
    inits.push_back(coerce(it->second.v, t, s->range));
  }
  loc(s);
  I::Operation* w = op(I::OpId::ScfWhile, inits, types);
  auto before = env_;
  ++depth_;
  // Before region: the condition.
  I::Block& cb = w->body(0);
  std::vector<I::Value*> cargs;
  for (size_t i = 0; i < carried.size(); ++i) {
    cargs.push_back(cb.addArg(types[i], carried[i]->name));
    env_[carried[i]] = Lowered::val(cargs.back());
  }
  b_->setInsertionPointToEnd(cb);
  I::Value* c;
  bool inLoopRet = false;
  bool retInBody = retFlag_ && containsReturn(s->body.stmts, true, inLoopRet);
  if (L.brk || retInBody) {
    // After a break (or a return) the condition is not evaluated again.
    I::Value* go = notFlags(true, false, retInBody);
    I::Operation* g = op(I::OpId::ScfIf, {go}, {ctx().i1()});
    ++depth_;
    b_->setInsertionPointToEnd(g->body(0));
    I::Value* inner = toBool(value(lower(s->cond), s->cond->range), s->cond->range);
    flushRegion();
    op(I::OpId::ScfYield, {inner}, {});
    b_->setInsertionPointToEnd(g->body(1));
    op(I::OpId::ScfYield, {b_->constInt(0, ctx().i1())}, {});
    --depth_;
    b_->setInsertionPointAfter(g);
    c = g->result();
  } else {
    c = toBool(value(lower(s->cond), s->cond->range), s->cond->range);
  }
  flushRegion();
  std::vector<I::Value*> condOps = {c};
  condOps.insert(condOps.end(), cargs.begin(), cargs.end());
  op(I::OpId::ScfCondition, condOps, {});
  // After region: the body.
  I::Block& bb = w->body(1);
  for (size_t i = 0; i < carried.size(); ++i) env_[carried[i]] = Lowered::val(bb.addArg(types[i], carried[i]->name));
  b_->setInsertionPointToEnd(bb);
  lowerLoopBody(s->body);
  flushRegion();
  std::vector<I::Value*> ys;
  for (size_t i = 0; i < carried.size(); ++i) {
    auto it = env_.find(carried[i]);
    if (it == env_.end() || it->second.kind != Lowered::Val)
      error(diag::err_lower_type_change, s->range, carried[i]->name, I::printType(types[i]), "while",
            "no single value");
    ys.push_back(coerce(it->second.v, types[i], s->range));
  }
  op(I::OpId::ScfYield, ys, {});
  --depth_;
  env_ = before;
  for (const Symbol* sym : assigned)
    if (!std::count(carried.begin(), carried.end(), sym) && !env_.count(sym)) dropped_[sym] = "while";
  for (size_t i = 0; i < carried.size(); ++i) {
    I::Value* r = w->result(static_cast<unsigned>(i));
    r->nameHint = carried[i]->name;
    env_[carried[i]] = Lowered::val(r);
  }
  b_->setInsertionPointAfter(w);
  popLoop();
}

}  // namespace tessera::irgen
