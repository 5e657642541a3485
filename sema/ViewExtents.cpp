// Extents that code generation must know, in device code (kernels and the functions they call):
//   - a slice or block of a tensor (a view: X[a:b], X[rows, :], X[i]) has extents that are
//     constants or shape symbols, so that the lowering can size it at run time
//     (err_dynamic_tile_shape): a slice whose length is not a constant, or a whole dimension of
//     a `tensor[T]` parameter (it has no name), is neither;
//   - the source of a copy into shared memory (`cp_async.shared.global(dst, src)`,
//     `tile.cp_async(buf, src)`) has constant extents, since shared memory is allocated
//     statically (err_dynamic_shared_shape).
// The rules follow the lowering's (irgen/HandleExpr.cpp sliceView, irgen/Values.cpp), which keeps
// them as a backstop; reported here so that `--check` and the editor show them.
#include "sema/ASTWalk.h"
#include "sema/Checker.h"
#include "sema/SemaDiagnostics.h"

namespace tessera {

namespace {

std::optional<long long> constInt(Expr* e) {
  if (!e) return std::nullopt;
  auto v = evalConst(e, nullptr);
  if (!v || v->kind != ConstValue::Int) return std::nullopt;
  return v->i;
}

class ViewExtents {
public:
  ViewExtents(const FunctionInfo& info, const SemaContext& sc, DiagnosticEngine& diags)
      : info_(info), sm_(sc.sm), bindings_(sc.bindings), diags_(diags) {}

  void subscript(SubscriptExpr* s) {
    const Type* bt = s->base ? s->base->type : nullptr;
    if (!bt || (bt->kind != TypeKind::Tensor && bt->kind != TypeKind::Shared)) return;
    std::vector<Expr*> idx;
    for (const Argument& a : s->indices) {
      if (a.kind != Argument::Positional || !a.value) return;
      if (auto* tu = dyn_cast<TupleExpr>(a.value); tu && !tu->parenthesized)
        idx.insert(idx.end(), tu->elements.begin(), tu->elements.end());
      else
        idx.push_back(a.value);
    }
    size_t rank = bt->dims.size();
    if (!bt->rankKnown) {
      // A `tensor[T]` parameter: the rank sema inferred from its uses.
      auto* n = dyn_cast<NameExpr>(s->base);
      auto it = n ? info_.inferredParams.find(n->name) : info_.inferredParams.end();
      if (it == info_.inferredParams.end() || it->second.rank < 1) return;
      rank = static_cast<size_t>(it->second.rank);
    }
    if (idx.size() > rank) return;  // err_index_count_mismatch
    bool anySlice = idx.size() < rank;
    for (Expr* x : idx) anySlice |= isa<SliceExpr>(x);
    if (!anySlice) return;  // one element
    std::string base(sm_.text(s->base->range));
    for (size_t d = 0; d < rank; ++d) {
      Extent full = bt->rankKnown ? bt->dims[d] : Extent();
      auto unnamed = [&](SourceRange at) {
        if (!full.isUnknown()) return false;
        diags_.report(diag::err_dynamic_tile_shape, at) << std::string("?") << static_cast<unsigned>(d) << base;
        return true;
      };
      if (d >= idx.size()) {
        if (unnamed(s->range)) return;
        continue;
      }
      auto* sl = dyn_cast<SliceExpr>(idx[d]);
      if (!sl || sl->step) continue;  // an index or block; a step is refused elsewhere
      if (!sl->lower && !sl->upper) {
        if (unnamed(sl->range)) return;
        continue;
      }
      std::optional<long long> size = sliceSize(sl, full);
      if (!size || *size < 0) {
        diags_.report(diag::err_dynamic_tile_shape, sl->range)
            << std::string(sm_.text(sl->range)) << static_cast<unsigned>(d) << base;
        return;
      }
    }
  }

  // A copy into shared memory: the source's extents are constants.
  void copy(CallExpr* c) {
    const BuiltinInfo* b = c->callee && c->callee->type && c->callee->type->kind == TypeKind::Builtin
                               ? c->callee->type->builtin
                               : nullptr;
    if (!b || (b->id != BuiltinId::CpAsyncSharedGlobal && b->id != BuiltinId::TileCpAsync)) return;
    auto it = bindings_.find(c);
    if (it == bindings_.end()) return;
    Expr* dst = it->second.arg(b->id == BuiltinId::TileCpAsync ? "src" : "dst");
    Expr* src = it->second.arg(b->id == BuiltinId::TileCpAsync ? "index" : "src");
    if (!dst || !src || !dst->type || dst->type->kind != TypeKind::Shared) return;
    const Type* st = src->type;
    if (!st || !st->isTileLike() || !st->rankKnown) return;
    for (size_t d = 0; d < st->dims.size(); ++d) {
      const Extent& e = st->dims[d];
      if (e.isConst()) continue;
      diags_.report(diag::err_dynamic_shared_shape, src->range)
          << (e.isUnknown() ? std::string("?") : e.str()) << static_cast<unsigned>(d) << std::string(sm_.text(src->range));
      return;
    }
  }

private:
  // The static length of a slice (the lowering's rule): constant bounds, a constant lower bound
  // of a static dimension, or `i:i+c`.
  std::optional<long long> sliceSize(SliceExpr* s, const Extent& full) {
    auto cl = constInt(s->lower), cu = constInt(s->upper);
    if (s->upper && cu && (!s->lower || cl)) return *cu - (cl ? *cl : 0);
    if (!s->upper && cl && full.isConst()) return full.value() - *cl;
    if (s->lower && s->upper)
      if (auto* add = dyn_cast<BinaryExpr>(s->upper); add && add->op == BinaryOp::Add) {
        std::string_view l = sm_.text(s->lower->range);
        if (sm_.text(add->lhs->range) == l) return constInt(add->rhs);
        if (sm_.text(add->rhs->range) == l) return constInt(add->lhs);
      }
    return std::nullopt;
  }

  const FunctionInfo& info_;
  const SourceManager& sm_;
  const std::map<const CallExpr*, CallBinding>& bindings_;
  DiagnosticEngine& diags_;
};

}  // namespace

void checkViewExtents(const FunctionDefStmt* fn, const FunctionInfo& info, const SemaContext& sc,
                      DiagnosticEngine& diags) {
  ViewExtents check(info, sc, diags);
  walkStmts(fn->body, [](Stmt*) {}, [&](Expr* e) {
    if (auto* s = dyn_cast<SubscriptExpr>(e)) check.subscript(s);
    if (auto* c = dyn_cast<CallExpr>(e)) check.copy(c);
  });
}

}  // namespace tessera
