// Statements: expression statements, assignments (to names, elements and views), augmented
// assignments, return, and `if` (its branches yield the locals they assign).
#include <algorithm>

#include "frontend/ASTVisitor.h"
#include "irgen/FunctionContext.h"

namespace tessera::irgen {

void FunctionContext::lowerBlock(const tessera::Block& b) { lowerStmts(b.stmts, 0); }

// The dispatch of lowering on a statement's kind (frontend/ASTVisitor.h).
struct StmtLowering : ASTVisitor<StmtLowering> {
  FunctionContext& fc;
  explicit StmtLowering(FunctionContext& fc) : fc(fc) {}

  void visitExprStmt(ExprStmt* s) {
    if (isa<StringLiteralExpr>(s->expr) || isa<EllipsisExpr>(s->expr)) return;  // docstrings, `...` bodies
    (void)fc.lower(s->expr);
  }
  void visitAssignStmt(AssignStmt* a) {
    // A value assigned to a scalar local takes the local's type (literals included).
    I::Type want = a->targets.size() == 1 ? fc.localType(a->targets[0]) : nullptr;
    Lowered v = fc.lower(a->value, want);
    for (Expr* t : a->targets) fc.assign(t, v, a->value->range);
  }
  void visitAugAssignStmt(AugAssignStmt* s) { fc.lowerAugAssign(s); }
  void visitAnnAssignStmt(AnnAssignStmt* a) {
    if (!a->value) return;
    fc.assign(a->target, fc.lower(a->value, fc.localType(a->target)), a->value->range);
  }
  void visitPassStmt(PassStmt*) {}
  void visitBreakStmt(BreakStmt* s) { breakOrContinue(s, true); }
  void visitContinueStmt(ContinueStmt* s) { breakOrContinue(s, false); }
  void visitReturnStmt(ReturnStmt* s) { fc.lowerReturn(s); }
  void visitIfStmt(IfStmt* s) { fc.lowerIf(s); }
  void visitForStmt(ForStmt* s) { fc.lowerFor(s); }
  void visitWhileStmt(WhileStmt* s) { fc.lowerWhile(s); }
  void visitImportStmt(ImportStmt*) {}
  void visitImportFromStmt(ImportFromStmt*) {}
  void visitWithStmt(WithStmt* s) { fc.unsupported(s->range, "'with'"); }
  void visitFunctionDefStmt(FunctionDefStmt* s) { fc.unsupported(s->range, "a nested function definition"); }
  void visitNode(Node* n) { fc.unsupported(n->range, "this statement"); }

 private:
  void breakOrContinue(Stmt* s, bool isBreak) {
    auto& loops = fc.loops_;
    const Symbol* f = loops.empty() ? nullptr : isBreak ? loops.back().brk : loops.back().cont;
    // Sema refuses it in kernels; a backstop for helpers inlined into them.
    if (!f) fc.error(diag::err_break_continue_unsupported, s->range, isBreak ? "break" : "continue");
    fc.env_[f] = Lowered::val(fc.b_->constInt(1, fc.ctx().i1()));
  }
};

void FunctionContext::lowerStmt(Stmt* s) {
  if (!s) return;
  loc(s);
  StmtLowering(*this).visit(s);
}

// The declared type of a scalar local that `target` names, or null.
I::Type FunctionContext::localType(Expr* target) {
  auto* n = dyn_cast<NameExpr>(target);
  if (!n || !n->symbol || !n->symbol->type || n->symbol->type->kind != TypeKind::Scalar) return nullptr;
  return scalarType(n->symbol->type->dtype, n->symbol->type->policy);
}

void FunctionContext::lowerReturn(ReturnStmt* r) {
  if (retFlag_) {
    if (r->value) {
      // Sema refuses it (sema/analyses/EarlyReturns.cpp); a backstop.
      if (!retVal_)
        error(diag::err_early_return, r->range,
              "of a value from inside a branch of a function without a scalar result annotation ('-> f32')");
      I::Value* v = value(lower(r->value, env_[retVal_].v->type), r->value->range);
      env_[retVal_] = Lowered::val(coerce(v, env_[retVal_].v->type, r->value->range));
    }
    env_[retFlag_] = Lowered::val(b_->constInt(1, ctx().i1()));
    return;
  }
  if (depth_ != 0) error(diag::err_early_return, r->range, "here");
  if (r->value) {
    Lowered v = lower(r->value);
    if (v.kind == Lowered::Tuple)
      for (const Lowered& x : v.elems) returned_.push_back(value(x, r->value->range));
    else if (v.kind != Lowered::None)
      returned_.push_back(value(v, r->value->range));
  }
  sawReturn_ = true;
}

void FunctionContext::assignName(NameExpr* n, const Lowered& v, SourceRange at) {
  const Symbol* s = n->symbol;
  if (!s) unsupported(n->range, "assigning to '" + n->name + "'");
  Lowered out = v;
  if (v.kind == Lowered::Val && I::isScalar(v.v->type) && s->type && s->type->kind == TypeKind::Scalar) {
    loc(n);
    out = Lowered::val(coerce(v.v, scalarType(s->type->dtype, s->type->policy), at));
  }
  if (out.kind == Lowered::Unsized && !out.sym) out.sym = s;
  if (out.kind == Lowered::Val && out.v->nameHint.empty() && !out.v->isBlockArg()) out.v->nameHint = n->name;
  env_[s] = out;
  dropped_.erase(s);
}

void FunctionContext::store(Expr* target, I::Value* v, SourceRange at) {
  auto* sub = dyn_cast<SubscriptExpr>(target);
  if (!sub) unsupported(target->range, "assigning to '" + text(target->range) + "'");
  I::Value* base = value(lower(sub->base), sub->base->range);
  if (!I::isView(base->type)) unsupported(target->range, "storing into a value of type " + I::printType(base->type));
  bool isElement = false;
  std::vector<I::Value*> idx;
  I::Value* view = sliceView(base, sub->indices, sub, isElement, idx);
  loc(target);
  if (isElement) {
    I::Value* x = coerce(v, base->type->elem, at);
    waitFor(base, true);
    std::vector<I::Value*> ops = {x, base};
    ops.insert(ops.end(), idx.begin(), idx.end());
    op(I::OpId::MemStore, ops, {});
    return;
  }
  // A tile value stored to a view, cooperatively by the group.
  I::Value* t = v;
  if (I::isView(t->type)) t = asTile(t, at);
  if (I::isScalar(t->type)) t = broadcastTo(convertElem(t, view->type->elem, at), view->type->shape, at);
  const std::vector<I::Dim>&vs = view->type->shape, &ts = t->type->shape;
  if (ts.size() != vs.size()) {
    // Leading extents of 1 come and go (sema allows only those: a (1, C) tile into an [C] slot).
    const std::vector<I::Dim>& longer = ts.size() > vs.size() ? ts : vs;
    size_t extra = longer.size() - std::min(ts.size(), vs.size());
    for (size_t d = 0; d < extra; ++d)
      if (!longer[d].isStatic() || longer[d].size != 1)
        unsupported(
            at, "storing a tile of type " + I::printType(t->type) + " into a view of type " + I::printType(view->type));
    for (size_t i = 0; i + extra < longer.size(); ++i) unify(ts[ts.size() - 1 - i], vs[vs.size() - 1 - i]);
    t = op1(I::OpId::TileReshape, {t}, ctx().tile(t->type->elem, vs));
  }
  for (size_t i = 0; i < t->type->shape.size(); ++i) unify(t->type->shape[i], view->type->shape[i]);
  t = convertElem(t, view->type->elem, at);
  op(I::OpId::TileStore, {t, view}, {});
}

// The dispatch of FunctionContext::assign on the target's form (frontend/ASTVisitor.h).
struct TargetLowering : ASTVisitor<TargetLowering, void, const Lowered&, SourceRange> {
  FunctionContext& fc;
  explicit TargetLowering(FunctionContext& fc) : fc(fc) {}
  void visitNameExpr(NameExpr* n, const Lowered& v, SourceRange at) { fc.assignName(n, v, at); }
  void visitTupleExpr(TupleExpr* t, const Lowered& v, SourceRange at) { unpack(t, t->elements, v, at); }
  void visitListExpr(ListExpr* l, const Lowered& v, SourceRange at) { unpack(l, l->elements, v, at); }
  void unpack(Expr* target, std::vector<Expr*>& elems, const Lowered& v, SourceRange at) {
    if (v.kind != Lowered::Tuple || v.elems.size() != elems.size())
      fc.unsupported(target->range, "unpacking a value that is not a tuple of " + std::to_string(elems.size()));
    for (size_t i = 0; i < elems.size(); ++i) fc.assign(elems[i], v.elems[i], at);
  }
  void visitSubscriptExpr(SubscriptExpr* s, const Lowered& v, SourceRange at) { fc.store(s, fc.value(v, at), at); }
  void visitNode(Node* target, const Lowered&, SourceRange) {
    fc.unsupported(target->range, "assigning to '" + fc.text(target->range) + "'");
  }
};
void FunctionContext::assign(Expr* target, const Lowered& v, SourceRange at) {
  TargetLowering(*this).visit(target, v, at);
}

void FunctionContext::lowerAugAssign(AugAssignStmt* s) {
  SourceRange at = s->opRange.valid() ? s->opRange : s->range;
  if (auto* n = dyn_cast<NameExpr>(s->target)) {
    I::Value* cur = value(lowerName(n, nullptr), n->range);
    I::Value* rhs = value(lower(s->value, I::isView(cur->type) ? cur->type->elem : cur->type), s->value->range);
    loc(s);
    if (I::isView(cur->type)) {
      // C += t on a whole tensor parameter: load, add, store.
      I::Value* sum = arith(s->op, asTile(cur, n->range), rhs, nullptr, at);
      knownView(cur, n->range, n->name);
      op(I::OpId::TileStore, {convertElem(sum, cur->type->elem, at), cur}, {});
      return;
    }
    I::Type semaT = nullptr;
    if (I::isScalar(cur->type) && n->symbol && n->symbol->type && n->symbol->type->kind == TypeKind::Scalar)
      semaT = promote(cur->type, rhs->type);
    I::Value* r = arith(s->op, cur, rhs, semaT, at);
    assignName(n, Lowered::val(r), s->value->range);
    return;
  }
  auto* sub = dyn_cast<SubscriptExpr>(s->target);
  if (!sub) unsupported(s->target->range, "this augmented assignment");
  // x[i] op= v: load, compute, store (the subscript is lowered once).
  I::Value* base = value(lower(sub->base), sub->base->range);
  if (!I::isView(base->type)) unsupported(s->target->range, "updating a value of type " + I::printType(base->type));
  bool isElement = false;
  std::vector<I::Value*> idx;
  I::Value* view = sliceView(base, sub->indices, sub, isElement, idx);
  loc(s);
  if (isElement) {
    waitFor(base, true);
    std::vector<I::Value*> lops = {base};
    lops.insert(lops.end(), idx.begin(), idx.end());
    I::Value* cur = op1(I::OpId::MemLoad, lops, base->type->elem);
    I::Value* rhs = value(lower(s->value, cur->type), s->value->range);
    loc(s);
    I::Value* r = arith(s->op, cur, rhs, nullptr, at);
    std::vector<I::Value*> sops = {coerce(r, base->type->elem, at), base};
    sops.insert(sops.end(), idx.begin(), idx.end());
    op(I::OpId::MemStore, sops, {});
    return;
  }
  I::Value* cur = asTile(view, s->target->range);
  I::Value* rhs = value(lower(s->value, cur->type->elem), s->value->range);
  loc(s);
  I::Value* r = arith(s->op, cur, rhs, nullptr, at);
  op(I::OpId::TileStore, {convertElem(r, view->type->elem, at), view}, {});
}

void FunctionContext::lowerIf(IfStmt* s) {
  I::Value* c = toBool(value(lower(s->cond), s->cond->range), s->cond->range);
  loc(s);
  SymSet assigned;
  assignedIn(s->thenBlock, assigned);
  assignedIn(s->elseBlock, assigned);
  lowerIfCore(c, [&] { lowerBlock(s->thenBlock); }, [&] { lowerBlock(s->elseBlock); }, assigned, s->range);
}

void FunctionContext::lowerIfCore(I::Value* c, const std::function<void()>& thenFn, const std::function<void()>& elseFn,
                                  const SymSet& assigned, SourceRange at) {
  I::Operation* ifOp = op(I::OpId::ScfIf, {c}, {});
  auto before = env_;
  ++depth_;
  b_->setInsertionPointToEnd(ifOp->body(0));
  thenFn();
  flushRegion();
  auto thenEnv = env_;
  env_ = before;
  b_->setInsertionPointToEnd(ifOp->body(1));
  elseFn();
  flushRegion();
  auto elseEnv = env_;
  --depth_;
  // Locals a branch assigns leave the if as its results.
  std::vector<const Symbol*> carried;
  std::vector<I::Type> types;
  std::vector<I::Value*> thenVals, elseVals;
  env_ = before;
  for (const Symbol* sym : assigned) {
    auto t = thenEnv.find(sym), e = elseEnv.find(sym);
    if (t == thenEnv.end() || e == elseEnv.end()) {
      env_.erase(sym);
      dropped_[sym] = "if";
      continue;
    }
    if (sameLowered(t->second, e->second)) {
      env_[sym] = t->second;
      continue;
    }
    auto b0 = before.find(sym);
    const Lowered& ref = b0 != before.end() ? b0->second : t->second;
    I::Type ty = carriedType(sym, ref, at, "if");
    // A view of a tensor on one path and a computed tile on the other: the if yields a tile.
    auto isTile = [](const Lowered& l) { return l.kind == Lowered::Val && l.v->type->kind == I::TypeKind::Tile; };
    if (ty->kind == I::TypeKind::Tensor && (isTile(t->second) || isTile(e->second)))
      ty = ctx().tile(ty->elem, ty->shape);
    if (t->second.kind != Lowered::Val || e->second.kind != Lowered::Val)
      error(diag::err_lower_type_change, at, sym->name, I::printType(ty), "if", "a value of another kind");
    carried.push_back(sym);
    types.push_back(ty);
    thenVals.push_back(t->second.v);
    elseVals.push_back(e->second.v);
  }
  for (int branch = 0; branch < 2; ++branch) {
    b_->setInsertionPointToEnd(ifOp->body(branch));
    std::vector<I::Value*> ys;
    for (size_t i = 0; i < carried.size(); ++i)
      ys.push_back(carriedValue(carried[i], branch == 0 ? thenVals[i] : elseVals[i], types[i], at, "if"));
    op(I::OpId::ScfYield, ys, {});
  }
  for (size_t i = 0; i < carried.size(); ++i) {
    I::Value* r = ifOp->addResult(types[i]);
    r->nameHint = carried[i]->name;
    env_[carried[i]] = Lowered::val(r);
    dropped_.erase(carried[i]);
  }
  b_->setInsertionPointAfter(ifOp);
}

}  // namespace tessera::irgen
