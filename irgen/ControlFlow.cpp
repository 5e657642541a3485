// Control flow around statements: the locals a region assigns (they become results of `if` and
// iteration arguments of loops), and break, continue and return inside structured control flow,
// kept as i1 flags: the rest of a block after a statement that may jump runs under `if !flags`.
#include <algorithm>

#include "frontend/ASTVisitor.h"
#include "irgen/FunctionContext.h"
#include "sema/ASTWalk.h"

namespace tessera::irgen {

bool sameLowered(const Lowered& a, const Lowered& b) {
  if (a.kind != b.kind || a.v != b.v || a.size != b.size || a.axis != b.axis || a.sym != b.sym) return false;
  if (a.elems.size() != b.elems.size()) return false;
  for (size_t i = 0; i < a.elems.size(); ++i)
    if (!sameLowered(a.elems[i], b.elems[i])) return false;
  return true;
}

const Symbol* FunctionContext::flagSymbol(const char* name, SourceRange at) {
  synth_.emplace_back();
  Symbol& f = synth_.back();
  f.name = name;
  f.declRange = at;
  f.kind = SymbolKind::Variable;
  return &f;
}

void FunctionContext::assignedTarget(Expr* t, SymSet& out) {
  if (auto* n = dyn_cast<NameExpr>(t)) {
    if (n->symbol) out.insert(n->symbol);
  } else if (auto* tu = dyn_cast<TupleExpr>(t)) {
    for (Expr* x : tu->elements) assignedTarget(x, out);
  } else if (auto* li = dyn_cast<ListExpr>(t)) {
    for (Expr* x : li->elements) assignedTarget(x, out);
  } else if (auto* st = dyn_cast<StarredExpr>(t)) {
    assignedTarget(st->value, out);
  }
}

void FunctionContext::assignedIn(const tessera::Block& b, SymSet& out, int nest) {
  assignedInStmts(b.stmts, out, nest);
}

// The locals a statement may assign, by its kind (frontend/ASTVisitor.h); `nest` counts the loops
// entered inside the region (a break or continue of those sets no flag of the region's loop).
struct LocalsAssigned : ASTVisitor<LocalsAssigned, void, int> {
  FunctionContext& fc;
  SymSet& out;
  LocalsAssigned(FunctionContext& fc, SymSet& out) : fc(fc), out(out) {}

  void visitReturnStmt(ReturnStmt*, int) {
    if (!fc.retFlag_) return;
    out.insert(fc.retFlag_);
    if (fc.retVal_) out.insert(fc.retVal_);
  }
  void visitBreakStmt(BreakStmt*, int nest) { jump(true, nest); }
  void visitContinueStmt(ContinueStmt*, int nest) { jump(false, nest); }
  void jump(bool isBreak, int nest) {
    if (nest != 0 || fc.loops_.empty()) return;
    const Symbol* f = isBreak ? fc.loops_.back().brk : fc.loops_.back().cont;
    if (f) out.insert(f);
  }
  void visitAssignStmt(AssignStmt* a, int) {
    for (Expr* t : a->targets) fc.assignedTarget(t, out);
    // A copy into an unsized shared buffer gives the variable its buffer.
  }
  void visitAugAssignStmt(AugAssignStmt* au, int) {
    // `C += t` on a tensor parameter updates memory; it does not rebind the name.
    auto* n = dyn_cast<NameExpr>(au->target);
    if (!n || !n->symbol || n->symbol->kind != SymbolKind::Parameter || !n->symbol->type ||
        n->symbol->type->kind != TypeKind::Tensor)
      fc.assignedTarget(au->target, out);
  }
  void visitAnnAssignStmt(AnnAssignStmt* an, int) { fc.assignedTarget(an->target, out); }
  void visitIfStmt(IfStmt* i, int nest) {
    fc.assignedIn(i->thenBlock, out, nest);
    fc.assignedIn(i->elseBlock, out, nest);
  }
  void visitForStmt(ForStmt* f, int nest) {
    fc.assignedTarget(f->target, out);
    fc.assignedIn(f->body, out, nest + 1);
    fc.assignedIn(f->elseBlock, out, nest);
  }
  void visitWhileStmt(WhileStmt* w, int nest) {
    fc.assignedIn(w->body, out, nest + 1);
    fc.assignedIn(w->elseBlock, out, nest);
  }
  void visitWithStmt(WithStmt* w, int nest) { fc.assignedIn(w->body, out, nest); }
};

void FunctionContext::assignedInStmts(const std::vector<Stmt*>& stmts, SymSet& out, int nest) {
  for (Stmt* s : stmts)
    if (s) LocalsAssigned(*this, out).visit(s, nest);
}

// The type a local keeps through control flow: scalars keep sema's declared type.
I::Type FunctionContext::carriedType(const Symbol* s, const Lowered& v, SourceRange at, const char* construct) {
  if (v.kind != Lowered::Val) {
    if (v.kind == Lowered::Unsized) error(diag::err_lower_shared_shape_unknown, at, s->name);
    unsupported(at, "carrying '" + s->name + "' (not a single value) through a '" + construct + "'");
  }
  if (I::isScalar(v.v->type) && s->type && s->type->kind == TypeKind::Scalar && s->kind == SymbolKind::Variable)
    return scalarType(s->type->dtype, s->type->policy);
  return v.v->type;
}

I::Value* FunctionContext::carriedValue(const Symbol* s, I::Value* v, I::Type t, SourceRange at,
                                        const char* construct) {
  // A view of a tensor where the carried value is a tile (the other path computed one) is loaded.
  bool viewAsTile = t->kind == I::TypeKind::Tile && v->type->kind == I::TypeKind::Tensor && v->type->shape == t->shape;
  bool ok = v->type == t || (I::isScalar(v->type) && I::isScalar(t)) ||
            (isShapedValue(t) && (isShapedValue(v->type) || I::isScalar(v->type))) || viewAsTile;
  if (!ok) error(diag::err_lower_type_change, at, s->name, I::printType(t), construct, I::printType(v->type));
  return coerce(v, t, at);
}

// A break or continue of the innermost loop, through `if`s only, by statement kind
// (frontend/ASTVisitor.h).
struct JumpFinder : ASTVisitor<JumpFinder, void, bool&, bool&> {
  FunctionContext& fc;
  explicit JumpFinder(FunctionContext& fc) : fc(fc) {}
  void visitBreakStmt(BreakStmt*, bool& brk, bool&) { brk = true; }
  void visitContinueStmt(ContinueStmt*, bool&, bool& cont) { cont = true; }
  void visitIfStmt(IfStmt* i, bool& brk, bool& cont) {
    fc.jumpsIn(i->thenBlock.stmts, brk, cont);
    fc.jumpsIn(i->elseBlock.stmts, brk, cont);
  }
};

void FunctionContext::jumpsIn(const std::vector<Stmt*>& stmts, bool& brk, bool& cont) {
  for (Stmt* s : stmts)
    if (s) JumpFinder(*this).visit(s, brk, cont);
}

void FunctionContext::lowerStmts(const std::vector<Stmt*>& stmts, size_t from) {
  for (size_t k = from; k < stmts.size(); ++k) {
    Stmt* s = stmts[k];
    lowerStmt(s);
    if (isa<BreakStmt>(s) || isa<ContinueStmt>(s) || isa<ReturnStmt>(s)) return;  // the rest is dead
    if (k + 1 == stmts.size() || !(isa<IfStmt>(s) || isa<ForStmt>(s) || isa<WhileStmt>(s))) continue;
    bool brk = false, cont = false, inLoop = false;
    if (!loops_.empty() && isa<IfStmt>(s)) jumpsIn({s}, brk, cont);
    bool ret = retFlag_ && containsReturn({s}, false, inLoop);
    if (!brk && !cont && !ret) continue;
    // The rest of the block runs only when the statement did not break, continue or return.
    loc(s);
    I::Value* go = notFlags(brk || cont, brk || cont, ret);
    std::vector<Stmt*> rest(stmts.begin() + static_cast<std::ptrdiff_t>(k) + 1, stmts.end());
    SymSet assigned;
    assignedInStmts(rest, assigned, 0);
    lowerIfCore(go, [&] { lowerStmts(stmts, k + 1); }, [] {}, assigned, s->range);
    return;
  }
}

// !(break || continue) of the innermost loop, over the flags it has.
I::Value* FunctionContext::notFlags(bool withBreak, bool withContinue, bool withReturn) {
  LoopCtx L = loops_.empty() ? LoopCtx{} : loops_.back();
  I::Value* any = nullptr;
  for (const Symbol* f :
       {withBreak ? L.brk : nullptr, withContinue ? L.cont : nullptr, withReturn ? retFlag_ : nullptr}) {
    if (!f) continue;
    auto it = env_.find(f);
    if (it == env_.end() || it->second.kind != Lowered::Val) continue;
    any = any ? op1(I::OpId::ArithOrI, {any, it->second.v}, ctx().i1()) : it->second.v;
  }
  if (!any) return b_->constInt(1, ctx().i1());
  return op1(I::OpId::ArithXOrI, {any, b_->constInt(1, ctx().i1())}, ctx().i1());
}

FunctionContext::LoopCtx FunctionContext::pushLoop(const tessera::Block& body, SourceRange at, bool supported) {
  LoopCtx L;
  bool brk = false, cont = false;
  jumpsIn(body.stmts, brk, cont);
  if (supported && brk) {
    L.brk = flagSymbol("broke", at);
    env_[L.brk] = Lowered::val(b_->constInt(0, ctx().i1()));
    env_[L.brk].v->nameHint = "broke";
  }
  if (supported && cont) L.cont = flagSymbol("continued", at);
  loops_.push_back(L);
  return L;
}

void FunctionContext::popLoop() {
  LoopCtx L = loops_.back();
  loops_.pop_back();
  if (L.brk) env_.erase(L.brk), dropped_.erase(L.brk);
  if (L.cont) env_.erase(L.cont), dropped_.erase(L.cont);
}

// A loop body: `continued` starts false each iteration; after a break, the rest of the
// iterations do nothing (structured loops run to their end).
void FunctionContext::lowerLoopBody(const tessera::Block& body) {
  const LoopCtx& L = loops_.back();
  if (L.cont) {
    I::Value* f = b_->constInt(0, ctx().i1());
    f->nameHint = "continued";
    env_[L.cont] = Lowered::val(f);
  }
  bool inLoop = false;
  bool ret = retFlag_ && containsReturn(body.stmts, true, inLoop);
  if (!L.brk && !ret) return lowerBlock(body);
  // After a break (or a return) the remaining iterations do nothing.
  I::Value* go = notFlags(true, false, ret);
  SymSet assigned;
  assignedIn(body, assigned);
  lowerIfCore(go, [&] { lowerBlock(body); }, [] {}, assigned, body.range);
}

// A `return` in a statement, through if and the bodies of loops (frontend/ASTVisitor.h);
// `inLoopOut` is set when one stands inside a loop.
struct ReturnFinder : ASTVisitor<ReturnFinder, bool, bool, bool&> {
  FunctionContext& fc;
  explicit ReturnFinder(FunctionContext& fc) : fc(fc) {}
  bool visitReturnStmt(ReturnStmt*, bool inLoop, bool& inLoopOut) {
    if (inLoop) inLoopOut = true;
    return true;
  }
  bool visitIfStmt(IfStmt* i, bool inLoop, bool& inLoopOut) {
    bool any = fc.containsReturn(i->thenBlock.stmts, inLoop, inLoopOut);
    any |= fc.containsReturn(i->elseBlock.stmts, inLoop, inLoopOut);
    return any;
  }
  bool visitForStmt(ForStmt* f, bool, bool& inLoopOut) { return fc.containsReturn(f->body.stmts, true, inLoopOut); }
  bool visitWhileStmt(WhileStmt* w, bool, bool& inLoopOut) { return fc.containsReturn(w->body.stmts, true, inLoopOut); }
};

bool FunctionContext::containsReturn(const std::vector<Stmt*>& stmts, bool inLoop, bool& inLoopOut) {
  bool any = false;
  for (Stmt* s : stmts)
    if (s) any |= ReturnFinder(*this).visit(s, inLoop, inLoopOut);
  return any;
}

// A function whose returns are not all at the top level of its body gets the flag locals.
void FunctionContext::prepareReturns() {
  bool nested = false;
  for (Stmt* s : def_->body.stmts) {
    bool inLoop = false;
    if (!isa<ReturnStmt>(s) && containsReturn({s}, false, inLoop)) nested = true;
  }
  if (!nested) return;
  retFlag_ = flagSymbol("returned", def_->nameRange);
  I::Value* f = b_->constInt(0, ctx().i1());
  f->nameHint = "returned";
  env_[retFlag_] = Lowered::val(f);
  if (kernel_) return;
  const Type* rt = info_ && info_->type ? info_->type->result : nullptr;
  if (!rt || rt->kind == TypeKind::None) return;
  if (rt->kind != TypeKind::Scalar) return;  // reported at a return that has a value
  retVal_ = flagSymbol("result", def_->nameRange);
  I::Value* z = constant(0, scalarType(rt->dtype, rt->policy));
  z->nameHint = "result";
  env_[retVal_] = Lowered::val(z);
}

bool FunctionContext::assignsComputedValue(const tessera::Block& body, const Symbol* s) {
  bool computed = false;
  auto names = [&](Expr* t) {
    auto* n = dyn_cast<NameExpr>(t);
    return n && n->symbol == s;
  };
  walkStmts(
      body,
      [&](Stmt* st) {
        if (auto* a = dyn_cast<AssignStmt>(st)) {
          bool view = isa<SubscriptExpr>(a->value) || isa<NameExpr>(a->value);
          for (Expr* t : a->targets)
            if (names(t) && !view) computed = true;
        } else if (auto* au = dyn_cast<AugAssignStmt>(st)) {
          if (names(au->target)) computed = true;
        }
      },
      [](Expr*) {});
  return computed;
}

}  // namespace tessera::irgen
