// Stores into a tile value: `v = y[0:128] + 1.0; v[0] = 1.0`. A local that holds a view of a
// tensor or shared buffer (`v = y[0:128]`) is memory, and a store into it writes there; a local
// that holds a computed tile (arithmetic, a tile builtin, a slice of such a tile, or a view that
// a loop or if carries together with a computed tile) is a value in registers, and code
// generation has no element update of one (irgen/HandleStmt.cpp store keeps the refusal as a
// backstop). Refused here, with a note at the assignment that made it a value, so that `--check`
// and the editor show it. The analysis follows the lowering: statements in order, a loop's body
// starting from what any assignment in it makes the local, an if merging both branches.
#include <set>

#include "sema/ASTWalk.h"
#include "sema/SemaDiagnostics.h"
#include "sema/analyses/Analyses.h"

namespace tessera {

namespace {

class TileValueStores : public ASTVisitor<TileValueStores> {
  friend ASTVisitor<TileValueStores>;

 public:
  explicit TileValueStores(DiagnosticEngine& diags) : diags_(diags) {}

  void block(const std::vector<Stmt*>& stmts) {
    for (Stmt* s : stmts) stmt(s);
  }

 private:
  using State = std::map<const Symbol*, SourceRange>;  // locals holding a computed tile -> where

  static bool isTileKind(const Type* t) { return t && (t->kind == TypeKind::Tile || t->kind == TypeKind::Fragment); }

  // True when `e` evaluates to a computed tile (not a view of memory). A slice of a value is a
  // value, a slice of memory is memory (walked as a loop: subscript chains may be long).
  bool computed(Expr* e) const {
    while (true) {
      if (!e || !isTileKind(e->type)) return false;
      if (auto* n = dyn_cast<NameExpr>(e)) return n->symbol && computed_.count(n->symbol);
      auto* s = dyn_cast<SubscriptExpr>(e);
      if (!s) return true;
      e = s->base;
    }
  }

  void assign(Expr* target, Expr* value, SourceRange at) {
    if (auto* n = dyn_cast<NameExpr>(target); n && n->symbol) {
      if (computed(value))
        computed_[n->symbol] = at;
      else
        computed_.erase(n->symbol);
      return;
    }
    if (auto* tu = dyn_cast<TupleExpr>(target)) {
      auto* tv = value ? dyn_cast<TupleExpr>(value) : nullptr;
      for (size_t i = 0; i < tu->elements.size(); ++i)
        assign(tu->elements[i], tv && i < tv->elements.size() ? tv->elements[i] : nullptr, at);
      return;
    }
    if (auto* sub = dyn_cast<SubscriptExpr>(target)) store(sub);
  }

  void store(SubscriptExpr* sub) {
    auto* n = dyn_cast<NameExpr>(sub->base);
    if (!n || !n->symbol) return;
    auto it = computed_.find(n->symbol);
    if (it == computed_.end() || !reported_.insert(sub).second) return;
    diags_.report(diag::err_store_into_tile_value, sub->range) << n->name;
    diags_.report(diag::note_tile_value_assigned, it->second) << n->name;
  }

  // Every local a computed tile is assigned to anywhere in `stmts` (the values a loop carries).
  void assignedInside(const Block& b) {
    walkStmts(
        b,
        [&](Stmt* s) {
          if (auto* a = dyn_cast<AssignStmt>(s)) {
            for (Expr* t : a->targets)
              if (auto* n = dyn_cast<NameExpr>(t); n && n->symbol && isTileKind(a->value ? a->value->type : nullptr) &&
                                                   !isa<NameExpr>(a->value) && !isa<SubscriptExpr>(a->value))
                computed_.emplace(n->symbol, a->range);
          } else if (auto* au = dyn_cast<AugAssignStmt>(s)) {
            if (auto* n = dyn_cast<NameExpr>(au->target); n && n->symbol && isTileKind(n->type))
              computed_.emplace(n->symbol, au->range);
          }
        },
        [](Expr*) {});
  }

  void loopBody(const Block& body) {
    for (int pass = 0; pass < 2; ++pass) {  // the second pass sees what the first carried round
      assignedInside(body);
      block(body.stmts);
    }
  }

  void stmt(Stmt* s) {
    if (s) visit(s);
  }

  // ---- one visit a statement kind (frontend/ASTVisitor.h); the rest store nothing.
  void visitAssignStmt(AssignStmt* a) {
    for (Expr* t : a->targets) assign(t, a->value, a->range);
  }
  void visitAugAssignStmt(AugAssignStmt* au) {
    if (auto* sub = dyn_cast<SubscriptExpr>(au->target))
      store(sub);
    else if (auto* n = dyn_cast<NameExpr>(au->target); n && n->symbol && isTileKind(n->type))
      computed_[n->symbol] = au->range;
  }
  void visitAnnAssignStmt(AnnAssignStmt* an) {
    if (an->value) assign(an->target, an->value, an->range);
  }
  void visitIfStmt(IfStmt* i) {
    State before = computed_;
    block(i->thenBlock.stmts);
    State afterThen = computed_;
    computed_ = before;
    block(i->elseBlock.stmts);
    computed_.insert(afterThen.begin(), afterThen.end());  // carried as a value if either made it one
  }
  void visitForStmt(ForStmt* f) {
    loopBody(f->body);
    block(f->elseBlock.stmts);
  }
  void visitWhileStmt(WhileStmt* w) {
    loopBody(w->body);
    block(w->elseBlock.stmts);
  }
  void visitWithStmt(WithStmt* w) { block(w->body.stmts); }

  DiagnosticEngine& diags_;
  State computed_;
  std::set<const SubscriptExpr*> reported_;
};

}  // namespace

void checkTileValueStores(const FunctionDefStmt* fn, DiagnosticEngine& diags) {
  TileValueStores(diags).block(fn->body.stmts);
}

}  // namespace tessera
