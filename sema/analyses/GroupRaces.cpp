// Stores that every group makes to the same element of a tensor (docs/language.md, section 5,
// "Races between groups"), an error in deterministic kernels.
//
// Every expression is either the same in every group of the launch or group-dependent. Sources
// of group dependence: `group_linear_id()`, `launch.thread_id()`, `tile.linear_id()` and
// `tile.warp_id()` in a kernel without a group shape (there they are the global tile and warp
// indices: codegen's warp id is the tile's linear id / 32), atomics and the targets of the outermost
// block loop (`tile.range` over a tensor's axis, `tile.mma`), which hands each group its own
// blocks (a `tile.range` over an extent is walked whole by every group). Everything else (tile,
// lane and warp ids inside the group, parameters, constants) is the same in every group; a load,
// call or operator is group-dependent when an operand is, and a local when anything assigned to
// it is or when it is assigned under group-dependent control flow. This runs to a fixed point,
// as the uniformity analysis of KernelRules.cpp does.
//
// The rule: a store into a tensor parameter whose indices are the same in every group, reached
// under control flow that is the same in every group, that writes a group-dependent value (or
// updates the element: `t[0] += v` loses updates whatever v is) is made by every group: the
// value that remains depends on the order groups run. Stores guarded by a group-dependent
// condition (`if group_linear_id() == 0:`) or indexed by the group's block are not races, nor
// are stores of one value by every group, nor shared memory (each group has its own). Calls of
// helper functions are judged by their arguments. Kernels without a group shape whose stores are
// of tile values are whole-tensor programs: the compiler splits their rows across groups.
#include <map>
#include <optional>

#include "sema/ASTWalk.h"
#include "sema/SemaDiagnostics.h"
#include "sema/analyses/Analyses.h"

namespace tessera {

namespace {

const BuiltinInfo* builtinOf(const CallExpr* c) {
  if (!c || !c->callee || !c->callee->type) return nullptr;
  const Type* t = c->callee->type;
  return t->kind == TypeKind::Builtin ? t->builtin : nullptr;
}

std::string rootName(Expr* e) {
  while (auto* s = dyn_cast<SubscriptExpr>(e)) e = s->base;
  if (auto* n = dyn_cast<NameExpr>(e)) return n->name;
  return "?";
}

// Where a value starts to depend on the group: shown in a note.
struct Origin {
  SourceRange range;
  bool valid = false;
};

class GroupRaces : public ASTVisitor<GroupRaces, bool, bool, int> {
  friend ASTVisitor<GroupRaces, bool, bool, int>;

 public:
  GroupRaces(FunctionInfo& info, DiagnosticEngine& diags) : info_(info), diags_(diags) {}

  void run(FunctionDefStmt* fn) {
    grouped_ = !info_.groupShape.empty();
    for (int i = 0; i < 32; ++i) {
      changed_ = false;
      block(fn->body, false, 0);
      if (!changed_) break;
    }
    reporting_ = true;
    block(fn->body, false, 0);
  }

 private:
  // The first group-dependent part of `e`, if any.
  Origin origin(Expr* e) {
    if (!e) return {};
    if (auto* n = dyn_cast<NameExpr>(e)) {
      auto it = var_.find(n->symbol);
      return it == var_.end() ? Origin{} : it->second;
    }
    if (auto* c = dyn_cast<CallExpr>(e)) {
      const BuiltinInfo* b = builtinOf(c);
      if (b && (b->id == BuiltinId::GroupLinearId || b->id == BuiltinId::LaunchThreadId || b->has(eff::Atomic) ||
                b->has(eff::NonDeterministic) ||
                ((b->id == BuiltinId::TileLinearId || b->id == BuiltinId::TileWarpId) && !grouped_)))
        return {c->range, true};
    }
    Origin o;
    forEachSubexpression(e, [&](Expr* x) {
      if (!o.valid) o = origin(x);
    });
    return o;
  }

  void setVar(Expr* target, Origin o) {
    if (!target || !o.valid) return;
    if (auto* n = dyn_cast<NameExpr>(target)) {
      if (!n->symbol || var_.count(n->symbol)) return;
      var_[n->symbol] = o;
      changed_ = true;
      return;
    }
    if (auto* t = dyn_cast<TupleExpr>(target))
      for (Expr* x : t->elements) setVar(x, o);
    if (auto* t = dyn_cast<ListExpr>(target))
      for (Expr* x : t->elements) setVar(x, o);
    if (auto* s = dyn_cast<StarredExpr>(target)) setVar(s->value, o);
  }

  // A store into `tensor` at `indices` (`tensor[indices] = value`, or `op=` when `update`).
  void store(Expr* tensor, const std::vector<Expr*>& indices, Expr* value, bool update, SourceRange at, bool ctrl) {
    if (!reporting_ || ctrl || !tensor || !tensor->type || tensor->type->kind != TypeKind::Tensor || indices.empty())
      return;
    // Unannotated parameters are judged as well: ExtentInference.cpp types them as tensors before
    // this runs, and a store into one is as much a race as into a `mut` one.
    // Whole-tensor programs: their row split gives each group its rows.
    if (!grouped_ && value && value->type && value->type->isTileLike()) return;
    for (Expr* i : indices)
      if (!i || (i->type && i->type->isError()) || origin(i).valid) return;
    Origin v = origin(value);
    if (!update && !v.valid) return;
    auto d = diags_.report(update ? diag::err_group_update_race : diag::err_group_store_race, at);
    d << rootName(tensor);
    d.note(diag::note_group_invariant_index, indices[0]->range);
    if (v.valid) d.note(diag::note_group_dependent_value, v.range);
  }

  void subscriptStore(Expr* target, Expr* value, bool update, bool ctrl) {
    auto* s = dyn_cast<SubscriptExpr>(target);
    if (!s) return;
    std::vector<Expr*> indices;
    for (Argument& a : s->indices) indices.push_back(a.value);
    store(s->base, indices, value, update, target->range, ctrl);
  }

  void calls(Expr* e, bool ctrl) {
    if (!e) return;
    forEachSubexpression(e, [&](Expr* x) { calls(x, ctrl); });
    auto* c = dyn_cast<CallExpr>(e);
    const BuiltinInfo* b = builtinOf(c);
    if (!b || b->id != BuiltinId::TileStore) return;
    Expr* dst = nullptr;
    Expr* index = nullptr;
    Expr* value = nullptr;
    size_t pos = 0;
    for (Argument& a : c->args) {
      if (a.kind == Argument::Keyword) {
        if (a.keyword == "dst") dst = a.value;
        if (a.keyword == "index") index = a.value;
        if (a.keyword == "value") value = a.value;
      } else if (a.kind == Argument::Positional) {
        (pos == 0 ? dst : pos == 1 ? index : value) = a.value;
        ++pos;
      }
    }
    if (!dst || !index) return;
    std::vector<Expr*> indices;
    if (auto* t = dyn_cast<TupleExpr>(index))
      indices = t->elements;
    else
      indices.push_back(index);
    store(dst, indices, value, false, c->range, ctrl);
  }

  // `ctrl`: control flow here may differ between groups. `blockLoops`: block loops around here.
  bool block(const Block& b, bool ctrl, int blockLoops) {
    bool exited = false;
    for (Stmt* s : b.stmts) exited |= stmt(s, ctrl || exited, blockLoops);
    return exited;
  }

  // Returns true when a group may leave early (return, break, continue) under group-dependent
  // control flow inside `s`.
  bool stmt(Stmt* s, bool ctrl, int blockLoops) {
    if (!s || stmtTooDeep(s)) return false;
    return visit(s, ctrl, blockLoops);
  }

  // ---- one visit a statement kind (frontend/ASTVisitor.h); the others never leave early.
  bool visitExprStmt(ExprStmt* s, bool ctrl, int) {
    calls(s->expr, ctrl);
    return false;
  }
  bool visitAssignStmt(AssignStmt* a, bool ctrl, int) {
    calls(a->value, ctrl);
    Origin o = origin(a->value);
    for (Expr* t : a->targets) {
      if (isa<SubscriptExpr>(t))
        subscriptStore(t, a->value, false, ctrl);
      else
        setVar(t, o.valid ? o : ctrl ? ctrlOrigin_ : Origin{});
    }
    return false;
  }
  bool visitAugAssignStmt(AugAssignStmt* a, bool ctrl, int) {
    calls(a->value, ctrl);
    if (isa<SubscriptExpr>(a->target)) {
      subscriptStore(a->target, a->value, true, ctrl);
    } else {
      Origin o = origin(a->value);
      setVar(a->target, o.valid ? o : ctrl ? ctrlOrigin_ : Origin{});
    }
    return false;
  }
  bool visitAnnAssignStmt(AnnAssignStmt* a, bool ctrl, int) {
    calls(a->value, ctrl);
    Origin o = origin(a->value);
    setVar(a->target, o.valid ? o : ctrl ? ctrlOrigin_ : Origin{});
    return false;
  }
  bool visitReturnStmt(ReturnStmt* s, bool ctrl, int) {
    calls(s->value, ctrl);
    return ctrl;
  }
  bool visitBreakStmt(BreakStmt*, bool ctrl, int) { return ctrl; }
  bool visitContinueStmt(ContinueStmt*, bool ctrl, int) { return ctrl; }
  bool visitIfStmt(IfStmt* i, bool ctrl, int blockLoops) {
    calls(i->cond, ctrl);
    bool inner = enter(ctrl, origin(i->cond));
    bool e1 = block(i->thenBlock, inner, blockLoops);
    bool e2 = block(i->elseBlock, inner, blockLoops);
    return e1 || e2;
  }
  bool visitWhileStmt(WhileStmt* w, bool ctrl, int blockLoops) {
    calls(w->cond, ctrl);
    bool inner = enter(ctrl, origin(w->cond));
    bool e = block(w->body, inner, blockLoops);
    return block(w->elseBlock, inner || e, blockLoops) || e;
  }
  bool visitForStmt(ForStmt* f, bool ctrl, int blockLoops) {
    calls(f->iter, ctrl);
    Origin o = origin(f->iter);
    // The outermost block loop hands each group its own blocks: its targets depend on the
    // group, though every group runs the body (a block loop's trip count is not a guard).
    auto* c = (f->iter ? dyn_cast<CallExpr>(f->iter) : nullptr);
    const BuiltinInfo* b = builtinOf(c);
    bool blockLoop = b && (b->id == BuiltinId::TileMma ||
                           (b->id == BuiltinId::TileRange && !c->args.empty() && c->args[0].value &&
                            c->args[0].value->type && c->args[0].value->type->kind == TypeKind::Tensor));
    if (blockLoop && blockLoops == 0 && !o.valid) o = {f->iter->range, true};
    setVar(f->target, o.valid ? o : ctrl ? ctrlOrigin_ : Origin{});
    bool inner = blockLoop ? ctrl : enter(ctrl, origin(f->iter));
    bool e = block(f->body, inner, blockLoops + (blockLoop ? 1 : 0));
    return block(f->elseBlock, inner || e, blockLoops) || e;
  }
  bool visitWithStmt(WithStmt* w, bool ctrl, int blockLoops) {
    for (WithItem& item : w->items) {
      calls(item.context, ctrl);
      setVar(item.target, origin(item.context));
    }
    return block(w->body, ctrl, blockLoops);
  }

  // Control flow inside a construct whose condition has origin `o`.
  bool enter(bool ctrl, Origin o) {
    if (ctrl || !o.valid) return ctrl;
    ctrlOrigin_ = o;
    return true;
  }

  FunctionInfo& info_;
  DiagnosticEngine& diags_;
  std::map<const Symbol*, Origin> var_;
  Origin ctrlOrigin_;
  bool grouped_ = false, changed_ = false, reporting_ = false;
};

}  // namespace

void checkGroupRaces(FunctionDefStmt* fn, FunctionInfo& info, DiagnosticEngine& diags) {
  if (!info.deterministic) return;
  GroupRaces g(info, diags);
  g.run(fn);
}

}  // namespace tessera
