// Locals of device code (kernels and the functions they call) must be assigned on every path
// before a use. Kernels lower to SSA Tile IR, where a local assigned in only one branch of an
// `if` (or only inside a loop) has no value after it, so such a use is refused here, at the use,
// with the construct that left it unassigned; the lowering keeps the same check as a backstop
// (irgen/HandleExpr.cpp). The rules follow the lowering's exactly:
//   - after an `if`, a local is assigned when it was before or when both branches assign it;
//   - after a loop over range, tile.range or tile.mma and after a `while`, only the locals
//     assigned before the loop are (the body may run zero times);
//   - a loop over a list of constants is unrolled: its body's assignments stay, its target does
//     not;
//   - the rest of a block after a statement that may break, continue or return runs under an
//     `if`, so what only the rest assigns is unassigned after the block;
//   - `x: f32` without a value assigns nothing; statements after break, continue and return are
//     dead and not checked.
#include <map>
#include <set>

#include "sema/ASTWalk.h"
#include "sema/SemaDiagnostics.h"
#include "sema/analyses/Analyses.h"

namespace tessera {

namespace {

using SymSet = std::set<const Symbol*>;

void targetSymbols(Expr* t, SymSet& out) {
  if (auto* n = dyn_cast<NameExpr>(t)) {
    if (n->symbol) out.insert(n->symbol);
  } else if (auto* tu = dyn_cast<TupleExpr>(t)) {
    for (Expr* x : tu->elements) targetSymbols(x, out);
  } else if (auto* li = dyn_cast<ListExpr>(t)) {
    for (Expr* x : li->elements) targetSymbols(x, out);
  } else if (auto* st = dyn_cast<StarredExpr>(t)) {
    targetSymbols(st->value, out);
  }
}

bool isTensorParam(const Symbol* s) {
  return s && s->kind == SymbolKind::Parameter && s->type && s->type->kind == TypeKind::Tensor;
}

// The locals a statement list may assign (the lowering's assignedIn), by statement kind
// (frontend/ASTVisitor.h).
struct AssignedLocals : ASTVisitor<AssignedLocals> {
  SymSet& out;
  explicit AssignedLocals(SymSet& out) : out(out) {}
  void in(const std::vector<Stmt*>& stmts) {
    for (Stmt* s : stmts)
      if (s) visit(s);
  }
  void visitAssignStmt(AssignStmt* a) {
    for (Expr* t : a->targets) targetSymbols(t, out);
  }
  void visitAugAssignStmt(AugAssignStmt* au) {
    auto* n = dyn_cast<NameExpr>(au->target);  // `C += t` on a tensor parameter updates memory
    if (!n || !isTensorParam(n->symbol)) targetSymbols(au->target, out);
  }
  void visitAnnAssignStmt(AnnAssignStmt* an) { targetSymbols(an->target, out); }
  void visitIfStmt(IfStmt* i) {
    in(i->thenBlock.stmts);
    in(i->elseBlock.stmts);
  }
  void visitForStmt(ForStmt* f) {
    targetSymbols(f->target, out);
    in(f->body.stmts);
    in(f->elseBlock.stmts);
  }
  void visitWhileStmt(WhileStmt* w) {
    in(w->body.stmts);
    in(w->elseBlock.stmts);
  }
  void visitWithStmt(WithStmt* w) { in(w->body.stmts); }
};
void assignedIn(const std::vector<Stmt*>& stmts, SymSet& out) { AssignedLocals(out).in(stmts); }

// A break or continue of the innermost loop, through `if`s only.
bool jumpsIn(const std::vector<Stmt*>& stmts);
struct JumpIn : ASTVisitor<JumpIn, bool> {  // by statement kind (frontend/ASTVisitor.h)
  bool visitBreakStmt(BreakStmt*) { return true; }
  bool visitContinueStmt(ContinueStmt*) { return true; }
  bool visitIfStmt(IfStmt* i) { return jumpsIn(i->thenBlock.stmts) || jumpsIn(i->elseBlock.stmts); }
};
bool jumpsIn(const std::vector<Stmt*>& stmts) {
  for (Stmt* s : stmts)
    if (s && JumpIn().visit(s)) return true;
  return false;
}

class DefiniteAssignment : public ASTVisitor<DefiniteAssignment> {
  friend ASTVisitor<DefiniteAssignment>;

 public:
  DefiniteAssignment(const FunctionDefStmt* fn, DiagnosticEngine& diags) : fn_(fn), diags_(diags) {}

  void run() {
    // Parameters are assigned on entry; the locals checked are those the body assigns.
    assignedIn(fn_->body.stmts, tracked_);
    for (const Symbol* s : tracked_)
      if (s->kind == SymbolKind::Parameter) defined_.insert(s);
    for (Stmt* s : fn_->body.stmts)
      if (!isa<ReturnStmt>(s) && containsReturn({s})) nestedReturns_ = true;
    block(fn_->body.stmts, 0);
  }

 private:
  void use(Expr* root) {
    std::vector<Expr*> stack{root};
    while (!stack.empty()) {
      Expr* e = stack.back();
      stack.pop_back();
      if (!e) continue;
      if (auto* n = dyn_cast<NameExpr>(e)) {
        const Symbol* s = n->symbol;
        if (s && tracked_.count(s) && !defined_.count(s) && reported_.insert(s).second) {
          auto d = dropped_.find(s);
          diags_.report(diag::err_maybe_undefined, n->range) << n->name << (d != dropped_.end() ? d->second : "use");
        }
        continue;
      }
      forEachChild(e, [&](Node* c) {
        if (auto* x = dyn_cast<Expr>(c)) stack.push_back(x);
      });
    }
  }

  void define(Expr* target) {
    if (auto* n = dyn_cast<NameExpr>(target)) {
      if (n->symbol) {
        defined_.insert(n->symbol);
        dropped_.erase(n->symbol);
      }
      return;
    }
    if (auto* tu = dyn_cast<TupleExpr>(target)) {
      for (Expr* x : tu->elements) define(x);
    } else if (auto* li = dyn_cast<ListExpr>(target)) {
      for (Expr* x : li->elements) define(x);
    } else if (auto* st = dyn_cast<StarredExpr>(target)) {
      define(st->value);
    } else {
      use(target);  // X[i] = v reads X and i
    }
  }

  // After a region that may not run (`if` without the other branch's assignment): what `assigned`
  // holds is assigned only where it was before and still is.
  void mergeGuarded(const SymSet& before, const SymSet& assigned, const char* construct) {
    for (const Symbol* s : assigned) {
      if (before.count(s) && defined_.count(s)) continue;
      defined_.erase(s);
      dropped_[s] = construct;
    }
  }

  void block(const std::vector<Stmt*>& stmts, size_t from) {
    for (size_t k = from; k < stmts.size(); ++k) {
      Stmt* s = stmts[k];
      if (stmtTooDeep(s)) return;
      stmt(s);
      if (isa<BreakStmt>(s) || isa<ContinueStmt>(s) || isa<ReturnStmt>(s)) return;  // the rest is dead
      if (k + 1 == stmts.size() || !(isa<IfStmt>(s) || isa<ForStmt>(s) || isa<WhileStmt>(s))) continue;
      bool jumps = loopDepth_ > 0 && isa<IfStmt>(s) && jumpsIn({s});
      if (!jumps && !(nestedReturns_ && containsReturn({s}))) continue;
      // The rest runs only when the statement did not jump.
      SymSet before = defined_, assigned;
      assignedIn(std::vector<Stmt*>(stmts.begin() + static_cast<std::ptrdiff_t>(k) + 1, stmts.end()), assigned);
      block(stmts, k + 1);
      mergeGuarded(before, assigned, "if");
      return;
    }
  }

  void loopBody(const Block& body) {
    ++loopDepth_;
    SymSet before = defined_, assigned;
    block(body.stmts, 0);
    if (nestedReturns_ && containsReturn(body.stmts)) {
      assignedIn(body.stmts, assigned);
      mergeGuarded(before, assigned, "if");
    }
    --loopDepth_;
  }

  void stmt(Stmt* s) {
    if (s) visit(s);
  }

  // ---- one visit a statement kind (frontend/ASTVisitor.h); the others use and define nothing.
  void visitAssignStmt(AssignStmt* a) {
    use(a->value);
    for (Expr* t : a->targets) define(t);
  }
  void visitAugAssignStmt(AugAssignStmt* au) {
    use(au->value);
    use(au->target);
    define(au->target);
  }
  void visitAnnAssignStmt(AnnAssignStmt* an) {
    if (!an->value) return;
    use(an->value);
    define(an->target);
  }
  void visitExprStmt(ExprStmt* e) { use(e->expr); }
  void visitReturnStmt(ReturnStmt* r) { use(r->value); }
  void visitIfStmt(IfStmt* i) { ifStmt(i); }
  void visitForStmt(ForStmt* f) { forStmt(f); }
  void visitWhileStmt(WhileStmt* w) {
    use(w->cond);
    SymSet before = defined_, assigned;
    loopBody(w->body);
    assignedIn(w->body.stmts, assigned);
    defined_ = before;
    for (const Symbol* x : assigned)
      if (!before.count(x)) dropped_[x] = "while";
  }

  void ifStmt(IfStmt* i) {
    use(i->cond);
    SymSet before = defined_;
    block(i->thenBlock.stmts, 0);
    SymSet thenDefined = defined_;
    defined_ = before;
    block(i->elseBlock.stmts, 0);
    SymSet elseDefined = defined_, assigned;
    assignedIn(i->thenBlock.stmts, assigned);
    assignedIn(i->elseBlock.stmts, assigned);
    defined_ = before;
    for (const Symbol* x : assigned) {
      if (thenDefined.count(x) && elseDefined.count(x)) {
        defined_.insert(x);
        dropped_.erase(x);
      } else {
        defined_.erase(x);
        dropped_[x] = "if";
      }
    }
  }

  void forStmt(ForStmt* f) {
    use(f->iter);
    SymSet targets;
    targetSymbols(f->target, targets);
    if (isa<ListExpr>(f->iter) || isa<TupleExpr>(f->iter)) {  // unrolled
      size_t n =
          isa<ListExpr>(f->iter) ? cast<ListExpr>(f->iter)->elements.size() : cast<TupleExpr>(f->iter)->elements.size();
      if (n > 0) {
        define(f->target);
        loopBody(f->body);
      }
      for (const Symbol* t : targets) {
        defined_.erase(t);
        dropped_[t] = "for";
      }
      return;
    }
    SymSet before = defined_, assigned = targets;
    define(f->target);
    loopBody(f->body);
    assignedIn(f->body.stmts, assigned);
    defined_ = before;
    for (const Symbol* x : assigned)
      if (!before.count(x)) dropped_[x] = "for";
  }

  const FunctionDefStmt* fn_;
  DiagnosticEngine& diags_;
  SymSet tracked_, defined_, reported_;
  std::map<const Symbol*, std::string> dropped_;
  bool nestedReturns_ = false;
  unsigned loopDepth_ = 0;
};

}  // namespace

void checkDefiniteAssignment(const FunctionDefStmt* fn, DiagnosticEngine& diags) {
  DefiniteAssignment(fn, diags).run();
}

}  // namespace tessera
