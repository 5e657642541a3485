// Deterministic atomics (docs/language.md, "Atomics"): integer add/sub, min and max leave the
// same memory whatever order tiles run in only when nothing else touches that memory in the
// launch. So in a deterministic kernel, and in every helper function (helpers cannot opt out),
// a tensor parameter or shared array that atomics update is accessed only through atomics of one
// commuting kind: add and sub together, or min, or max. A load sees some updates and not others
// (`err_atomic_mixed_access`: reads, plain stores, slices, aliases, passing it to a helper that
// does not update it atomically), and max after add differs from add after max
// (`err_atomic_mixed_kinds`). `.shape` stays allowed. A helper that updates a parameter
// atomically makes its call an atomic update of the argument, of the helper's kind.
// (Shared arrays are judged like tensors: barriers that separate the phases are not considered.)
#include <algorithm>
#include <map>
#include <set>

#include "sema/ASTWalk.h"
#include "sema/SemaDiagnostics.h"
#include "sema/analyses/Analyses.h"

namespace tessera {

namespace {

// The kinds that commute with each other: 1 add/sub, 2 min, 3 max (0: not one of these).
int kindOf(BuiltinId id) {
  switch (id) {
    case BuiltinId::AtomicAdd:
    case BuiltinId::AtomicSub: return 1;
    case BuiltinId::AtomicMin: return 2;
    case BuiltinId::AtomicMax: return 3;
    default: return 0;
  }
}
const char* kindName(int k) { return k == 1 ? "atomic_add" : k == 2 ? "atomic_min" : "atomic_max"; }

const BuiltinInfo* builtinOf(const CallExpr* c) {
  if (!c || !c->callee || !c->callee->type || c->callee->type->kind != TypeKind::Builtin) return nullptr;
  return c->callee->type->builtin;
}

struct Update {
  int kind = 0;
  SourceRange at;  // the first update of the memory
  std::string spelled;
};

// The parameters of each function that it (or a helper it calls) updates atomically, by index.
using Summary = std::map<size_t, Update>;

class AtomicAccess {
 public:
  AtomicAccess(SemaContext& sc, DiagnosticEngine& diags) : sc_(sc), diags_(diags) {}

  // The atomic updates a function makes to its parameters (reported when `report`).
  Summary summary(const FunctionDefStmt* f) {
    if (auto it = summaries_.find(f); it != summaries_.end()) return it->second;
    summaries_[f] = {};  // recursion (an error of its own) ends here
    Summary s = analyse(f, false);
    summaries_[f] = s;
    return s;
  }

  void check(const FunctionDefStmt* f) { analyse(f, true); }

 private:
  Summary analyse(const FunctionDefStmt* f, bool report) {
    std::map<const Symbol*, Update> targets;
    std::set<const Expr*> allowed;  // the name of the memory in each atomic update
    auto note = [&](const Symbol* s, int kind, SourceRange at, const std::string& spelled) {
      auto [it, fresh] = targets.insert({s, Update{kind, at, spelled}});
      if (!fresh && it->second.kind != kind && report) {
        auto d = diags_.report(diag::err_atomic_mixed_kinds, at);
        d << s->name << it->second.spelled << spelled;
        d.note(diag::note_atomic_update, it->second.at, {it->second.spelled});
      }
    };
    auto memory = [](Expr* e) -> const NameExpr* {
      auto* n = e ? dyn_cast<NameExpr>(e) : nullptr;
      if (!n || !n->symbol) return nullptr;
      const Symbol* s = n->symbol;
      bool shared = s->type && s->type->kind == TypeKind::Shared;
      return s->kind == SymbolKind::Parameter || shared ? n : nullptr;
    };
    walkStmts(
        f->body, [](Stmt*) {},
        [&](Expr* e) {
          if (auto* a = dyn_cast<AttributeExpr>(e); a && a->name == "shape") allowed.insert(a->base);
          auto* c = dyn_cast<CallExpr>(e);
          if (!c) return;
          if (const BuiltinInfo* b = builtinOf(c)) {
            int kind = kindOf(b->id);
            auto bind = sc_.bindings.find(c);
            if (!kind || bind == sc_.bindings.end()) return;
            auto* ref = dyn_cast_or_null_subscript(bind->second.arg("ref"));
            if (const NameExpr* n = ref ? memory(ref->base) : nullptr) {
              allowed.insert(n);
              note(n->symbol, kind, c->range, kindName(kind));
            }
            return;
          }
          const FunctionDefStmt* callee = calledFunction(c);
          auto bind = sc_.bindings.find(c);
          if (!callee || bind == sc_.bindings.end() || callee == f) return;
          for (auto& [index, u] : summary(callee)) {
            if (index >= callee->params.size()) continue;
            if (const NameExpr* n = memory(bind->second.arg(callee->params[index].name))) {
              allowed.insert(n);
              note(n->symbol, u.kind, c->range, callee->name + " (" + kindName(u.kind) + ")");
            }
          }
        });
    if (report && !targets.empty()) {
      std::set<const Symbol*> reported;
      walkStmts(
          f->body, [](Stmt*) {},
          [&](Expr* e) {
            auto* n = dyn_cast<NameExpr>(e);
            // The assignment that declares a shared array is not a use of it.
            if (!n || allowed.count(n) || !n->symbol || n->range.begin.offset == n->symbol->declRange.begin.offset)
              return;
            auto it = targets.find(n->symbol);
            if (it == targets.end() || !reported.insert(n->symbol).second) return;
            auto d = diags_.report(diag::err_atomic_mixed_access, n->range);
            d << n->symbol->name;
            d.note(diag::note_atomic_update, it->second.at, {it->second.spelled});
          });
    }
    Summary out;
    for (size_t i = 0; i < f->params.size(); ++i)
      for (auto& [s, u] : targets)
        if (s->kind == SymbolKind::Parameter && s->param == &f->params[i]) out[i] = u;
    return out;
  }

  static SubscriptExpr* dyn_cast_or_null_subscript(Expr* e) { return e ? dyn_cast<SubscriptExpr>(e) : nullptr; }

  SemaContext& sc_;
  DiagnosticEngine& diags_;
  std::map<const FunctionDefStmt*, Summary> summaries_;
};

}  // namespace

void checkAtomicAccess(SemaContext& sc, DiagnosticEngine& diags) {
  std::vector<const FunctionDefStmt*> fns;
  for (auto& [def, info] : sc.functions)
    if (info && (!info->isKernel() || info->deterministic) && !info->bodyHasErrors) fns.push_back(def);
  std::sort(fns.begin(), fns.end(), [](const FunctionDefStmt* a, const FunctionDefStmt* b) {
    return a->range.begin.offset < b->range.begin.offset;
  });
  AtomicAccess a(sc, diags);
  for (const FunctionDefStmt* f : fns) a.check(f);
}

}  // namespace tessera
