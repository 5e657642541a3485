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
#include "sema/Checker.h"
#include "sema/SemaDiagnostics.h"

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

// The locals a statement list may assign (the lowering's assignedIn).
void assignedIn(const std::vector<Stmt*>& stmts, SymSet& out) {
  for (Stmt* s : stmts) {
    if (auto* a = dyn_cast<AssignStmt>(s)) {
      for (Expr* t : a->targets) targetSymbols(t, out);
    } else if (auto* au = dyn_cast<AugAssignStmt>(s)) {
      auto* n = dyn_cast<NameExpr>(au->target);  // `C += t` on a tensor parameter updates memory
      if (!n || !isTensorParam(n->symbol)) targetSymbols(au->target, out);
    } else if (auto* an = dyn_cast<AnnAssignStmt>(s)) {
      targetSymbols(an->target, out);
    } else if (auto* i = dyn_cast<IfStmt>(s)) {
      assignedIn(i->thenBlock.stmts, out);
      assignedIn(i->elseBlock.stmts, out);
    } else if (auto* f = dyn_cast<ForStmt>(s)) {
      targetSymbols(f->target, out);
      assignedIn(f->body.stmts, out);
      assignedIn(f->elseBlock.stmts, out);
    } else if (auto* w = dyn_cast<WhileStmt>(s)) {
      assignedIn(w->body.stmts, out);
      assignedIn(w->elseBlock.stmts, out);
    } else if (auto* wi = dyn_cast<WithStmt>(s)) {
      assignedIn(wi->body.stmts, out);
    }
  }
}

// A break or continue of the innermost loop, through `if`s only.
bool jumpsIn(const std::vector<Stmt*>& stmts) {
  for (Stmt* s : stmts) {
    if (isa<BreakStmt>(s) || isa<ContinueStmt>(s)) return true;
    if (auto* i = dyn_cast<IfStmt>(s); i && (jumpsIn(i->thenBlock.stmts) || jumpsIn(i->elseBlock.stmts))) return true;
  }
  return false;
}

class DefiniteAssignment {
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
    if (auto* a = dyn_cast<AssignStmt>(s)) {
      use(a->value);
      for (Expr* t : a->targets) define(t);
    } else if (auto* au = dyn_cast<AugAssignStmt>(s)) {
      use(au->value);
      use(au->target);
      define(au->target);
    } else if (auto* an = dyn_cast<AnnAssignStmt>(s)) {
      if (!an->value) return;
      use(an->value);
      define(an->target);
    } else if (auto* e = dyn_cast<ExprStmt>(s)) {
      use(e->expr);
    } else if (auto* r = dyn_cast<ReturnStmt>(s)) {
      use(r->value);
    } else if (auto* i = dyn_cast<IfStmt>(s)) {
      ifStmt(i);
    } else if (auto* f = dyn_cast<ForStmt>(s)) {
      forStmt(f);
    } else if (auto* w = dyn_cast<WhileStmt>(s)) {
      use(w->cond);
      SymSet before = defined_, assigned;
      loopBody(w->body);
      assignedIn(w->body.stmts, assigned);
      defined_ = before;
      for (const Symbol* x : assigned)
        if (!before.count(x)) dropped_[x] = "while";
    }
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
