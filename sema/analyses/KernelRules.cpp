// Uniformity analysis of a kernel body and the rules that use it.
//
// Every expression gets a divergence level: 0 when all tiles of the group hold the same value,
// 1 when it differs between warps but not inside one (tile.warp_id()), 2 when it differs
// between tiles (tile.linear_id(), launch.thread_id(), loads indexed by those, ...). Locals take
// the join of everything assigned to them, and anything assigned under divergent control flow is
// divergent; this runs to a fixed point. Control flow is divergent inside an `if` or loop whose
// condition or trip count is divergent, and after a tile may have left early (return, or
// break/continue under a divergent condition).
//
// Rules: a barrier or group collective needs uniform control flow (level 0), a warp collective
// warp-uniform control flow (level <= 1); a scalar store whose index is uniform, reached under
// uniform control flow, is made by every tile to the same element: a race, reported as a warning.
#include <map>
#include <optional>

#include "sema/ASTWalk.h"
#include "sema/SemaDiagnostics.h"
#include "sema/analyses/Analyses.h"

namespace tessera {

namespace {

struct Reason {
  SourceRange range;
  DiagID note;
  int level;
};

const BuiltinInfo* calledBuiltin(const CallExpr* c) {
  if (!c->callee || !c->callee->type) return nullptr;
  const Type* t = c->callee->type;
  return t->kind == TypeKind::Builtin ? t->builtin : nullptr;
}

std::string rootName(Expr* e) {
  while (auto* s = dyn_cast<SubscriptExpr>(e)) e = s->base;
  if (auto* n = dyn_cast<NameExpr>(e)) return n->name;
  if (auto* a = dyn_cast<AttributeExpr>(e)) return a->name;
  return "?";
}

class Uniformity : public ASTVisitor<Uniformity, std::optional<Reason>, const Reason*, const Stmt*> {
  friend ASTVisitor<Uniformity, std::optional<Reason>, const Reason*, const Stmt*>;

 public:
  Uniformity(FunctionInfo& info, DiagnosticEngine& diags) : info_(info), diags_(diags) {}

  void run(FunctionDefStmt* fn) {
    for (int i = 0; i < 32; ++i) {
      changed_ = false;
      block(fn->body, nullptr, nullptr);
      if (!changed_) break;
    }
    reporting_ = true;
    block(fn->body, nullptr, nullptr);
  }

 private:
  int level(Expr* e) {
    if (!e) return 0;
    if (auto* n = dyn_cast<NameExpr>(e)) {
      auto it = var_.find(n->symbol);
      return it == var_.end() ? 0 : it->second;
    }
    int l = 0;
    if (auto* c = dyn_cast<CallExpr>(e)) {
      const BuiltinInfo* b = calledBuiltin(c);
      if (b && b->has(eff::Divergent)) l = b->id == BuiltinId::TileWarpId ? 1 : 2;
      // Group reductions: every tile gets the same value, whatever it passed.
      if (b && b->has(eff::Uniform)) return 0;
    }
    forEachSubexpression(e, [&](Expr* x) { l = std::max(l, level(x)); });
    return l;
  }

  static const Reason* stronger(const Reason* a, const Reason* b) {
    if (!a) return b;
    if (!b) return a;
    return b->level > a->level ? b : a;
  }

  void setVar(Expr* target, int l) {
    if (!target) return;
    if (auto* n = dyn_cast<NameExpr>(target)) {
      if (!n->symbol) return;
      int& cur = var_[n->symbol];
      if (l > cur) {
        cur = l;
        changed_ = true;
      }
      return;
    }
    if (auto* t = dyn_cast<TupleExpr>(target))
      for (Expr* x : t->elements) setVar(x, l);
    if (auto* t = dyn_cast<ListExpr>(target))
      for (Expr* x : t->elements) setVar(x, l);
    if (auto* s = dyn_cast<StarredExpr>(target)) setVar(s->value, l);
  }

  void collectives(Expr* e, const Reason* ctrl) {
    if (!e) return;
    forEachSubexpression(e, [&](Expr* x) { collectives(x, ctrl); });
    auto* c = dyn_cast<CallExpr>(e);
    if (!c || !reporting_) return;
    const BuiltinInfo* b = calledBuiltin(c);
    if (!b) return;
    SourceRange at = c->callee->range;
    if (ctrl && ctrl->level >= 1 && (b->has(eff::Barrier) || b->has(eff::GroupCollective))) {
      auto d = b->has(eff::Barrier) ? diags_.report(diag::err_barrier_divergent, at)
                                    : diags_.report(diag::err_collective_divergent, at);
      d << b->name;
      if (!b->has(eff::Barrier)) d << "group";
      d.note(ctrl->note, ctrl->range);
    } else if (ctrl && ctrl->level >= 2 && b->has(eff::WarpCollective)) {
      (diags_.report(diag::err_collective_divergent, at) << b->name << "warp").note(ctrl->note, ctrl->range);
    }
    if (b->id == BuiltinId::TileStore && !ctrl) {
      Expr* dst = nullptr;
      Expr* index = nullptr;
      size_t pos = 0;
      for (Argument& a : c->args) {
        if (a.kind == Argument::Keyword) {
          if (a.keyword == "index") index = a.value;
          if (a.keyword == "dst") dst = a.value;
        } else if (a.kind == Argument::Positional) {
          if (pos == 0) dst = a.value;
          if (pos == 1) index = a.value;
          ++pos;
        }
      }
      if (dst && index && level(index) == 0 && !(index->type && index->type->isError())) {
        auto d = diags_.report(diag::warn_same_element_store, c->range);
        d << rootName(dst);
        d.note(diag::note_uniform_index, index->range);
      }
    }
  }

  void storeRace(Expr* target, Expr* value, const Reason* ctrl) {
    auto* s = dyn_cast<SubscriptExpr>(target);
    if (!s || ctrl || !reporting_ || s->indices.empty()) return;
    const Type* bt = s->base ? s->base->type : nullptr;
    bool memory = bt && (bt->kind == TypeKind::Tensor || bt->kind == TypeKind::Shared);
    if (!memory && bt && bt->isDynamic())
      if (auto* n = dyn_cast<NameExpr>(s->base); n && n->symbol && n->symbol->kind == SymbolKind::Parameter)
        memory = true;
    if (!memory) return;
    if (value && value->type && (value->type->isTileLike())) return;
    for (Argument& a : s->indices) {
      if (!a.value || isa<SliceExpr>(a.value)) return;
      if (a.value->type && (a.value->type->kind == TypeKind::Slice || a.value->type->isError())) return;
      if (level(a.value) != 0) return;
    }
    auto d = diags_.report(diag::warn_same_element_store, target->range);
    d << rootName(target);
    d.note(diag::note_uniform_index, s->indices[0].value->range);
  }

  // Returns the reason when a tile may have returned early inside `b`.
  std::optional<Reason> block(const Block& b, const Reason* ctrl, const Stmt* loop) {
    std::optional<Reason> exit;
    for (Stmt* s : b.stmts) {
      const Reason* c = exit ? stronger(ctrl, &*exit) : ctrl;
      if (auto e = stmt(s, c, loop); e && !exit) exit = e;
    }
    return exit;
  }

  std::optional<Reason> stmt(Stmt* s, const Reason* ctrl, const Stmt* loop) {
    if (!s || stmtTooDeep(s)) return std::nullopt;
    return visit(s, ctrl, loop);
  }

  // ---- one visit a statement kind (frontend/ASTVisitor.h); the others leave nothing.
  using R = std::optional<Reason>;
  static int levelOf(const Reason* ctrl) { return ctrl ? ctrl->level : 0; }
  R visitExprStmt(ExprStmt* s, const Reason* ctrl, const Stmt*) {
    collectives(s->expr, ctrl);
    return std::nullopt;
  }
  R visitAssignStmt(AssignStmt* a, const Reason* ctrl, const Stmt*) {
    collectives(a->value, ctrl);
    int l = std::max(level(a->value), levelOf(ctrl));
    for (Expr* t : a->targets) {
      if (isa<SubscriptExpr>(t)) {
        collectives(t, ctrl);
        storeRace(t, a->value, ctrl);
      } else {
        setVar(t, l);
      }
    }
    return std::nullopt;
  }
  R visitAugAssignStmt(AugAssignStmt* a, const Reason* ctrl, const Stmt*) {
    collectives(a->value, ctrl);
    if (isa<SubscriptExpr>(a->target)) {
      collectives(a->target, ctrl);
      storeRace(a->target, a->value, ctrl);
    } else {
      setVar(a->target, std::max({level(a->value), level(a->target), levelOf(ctrl)}));
    }
    return std::nullopt;
  }
  R visitAnnAssignStmt(AnnAssignStmt* a, const Reason* ctrl, const Stmt*) {
    collectives(a->value, ctrl);
    setVar(a->target, std::max(level(a->value), levelOf(ctrl)));
    return std::nullopt;
  }
  R visitReturnStmt(ReturnStmt* s, const Reason* ctrl, const Stmt*) {
    collectives(s->value, ctrl);
    if (ctrl) return Reason{ctrl->range, diag::note_divergent_exit, ctrl->level};
    return std::nullopt;
  }
  R visitBreakStmt(BreakStmt*, const Reason* ctrl, const Stmt* loop) { return leaveLoop(ctrl, loop); }
  R visitContinueStmt(ContinueStmt*, const Reason* ctrl, const Stmt* loop) { return leaveLoop(ctrl, loop); }
  R leaveLoop(const Reason* ctrl, const Stmt* loop) {
    if (ctrl && loop && !loopExit_.count(loop)) {
      loopExit_[loop] = Reason{ctrl->range, diag::note_divergent_exit, ctrl->level};
      changed_ = true;
    }
    return std::nullopt;
  }
  R visitIfStmt(IfStmt* i, const Reason* ctrl, const Stmt* loop) {
    collectives(i->cond, ctrl);
    int l = level(i->cond);
    Reason r{i->cond ? i->cond->range : i->range, diag::note_divergent_condition, l};
    const Reason* inner = l > levelOf(ctrl) ? &r : ctrl;
    auto e1 = block(i->thenBlock, inner, loop);
    auto e2 = block(i->elseBlock, inner, loop);
    return e1 ? e1 : e2;
  }
  R visitWhileStmt(WhileStmt* w, const Reason* ctrl, const Stmt* loop) {
    collectives(w->cond, ctrl);
    return loopBlocks(w, w->cond, level(w->cond), w->body, w->elseBlock, ctrl, loop);
  }
  R visitForStmt(ForStmt* f, const Reason* ctrl, const Stmt* loop) {
    collectives(f->iter, ctrl);
    int l = level(f->iter);
    setVar(f->target, std::max(l, levelOf(ctrl)));
    return loopBlocks(f, f->iter, l, f->body, f->elseBlock, ctrl, loop);
  }
  // A loop whose condition or iterable `header` has level `l`: its body (divergent control when
  // the trip count is, or when a tile left an earlier iteration), then its else block.
  R loopBlocks(Stmt* s, Expr* header, int l, const Block& body, const Block& elseBlock, const Reason* ctrl,
               const Stmt* loop) {
    Reason r{header ? header->range : s->range, diag::note_divergent_loop, l};
    const Reason* inner = l > levelOf(ctrl) ? &r : ctrl;
    auto it = loopExit_.find(s);
    if (it != loopExit_.end()) inner = stronger(inner, &it->second);
    auto e = block(body, inner, s);
    auto e2 = block(elseBlock, inner, loop);
    return e ? e : e2;
  }
  R visitWithStmt(WithStmt* w, const Reason* ctrl, const Stmt* loop) {
    for (WithItem& item : w->items) {
      collectives(item.context, ctrl);
      setVar(item.target, std::max(level(item.context), levelOf(ctrl)));
    }
    return block(w->body, ctrl, loop);
  }

  FunctionInfo& info_;
  DiagnosticEngine& diags_;
  std::map<const Symbol*, int> var_;
  std::map<const Stmt*, Reason> loopExit_;
  bool changed_ = false, reporting_ = false;
};

}  // namespace

void checkKernelUniformity(FunctionDefStmt* fn, FunctionInfo& info, DiagnosticEngine& diags) {
  Uniformity u(info, diags);
  u.run(fn);
}

}  // namespace tessera
