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
#include <set>

#include "sema/ASTWalk.h"
#include "sema/SemaDiagnostics.h"
#include "sema/analyses/Analyses.h"

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
    const BuiltinInfo* b =
        c->callee && c->callee->type && c->callee->type->kind == TypeKind::Builtin ? c->callee->type->builtin : nullptr;
    if (!b || (b->id != BuiltinId::CpAsyncSharedGlobal && b->id != BuiltinId::TileCpAsync)) return;
    auto it = bindings_.find(c);
    if (it == bindings_.end()) return;
    if (b->id == BuiltinId::TileCpAsync) blockOfUnnamed(it->second.arg("src"), it->second.arg("index"));
    Expr* dst = it->second.arg(b->id == BuiltinId::TileCpAsync ? "src" : "dst");
    Expr* src = it->second.arg(b->id == BuiltinId::TileCpAsync ? "index" : "src");
    if (!dst || !src || !dst->type || dst->type->kind != TypeKind::Shared) return;
    const Type* st = src->type;
    if (!st || !st->isTileLike() || !st->rankKnown) return;
    for (size_t d = 0; d < st->dims.size(); ++d) {
      const Extent& e = st->dims[d];
      if (e.isConst()) continue;
      diags_.report(diag::err_dynamic_shared_shape, src->range)
          << (e.isUnknown() ? std::string("?") : e.str()) << static_cast<unsigned>(d)
          << std::string(sm_.text(src->range));
      return;
    }
  }

  // A whole `tensor[T]` parameter used as a tile value (an operand of arithmetic, '.T', an
  // elementwise or math builtin, a cast, tile.dot/softmax/where, a reduction along an axis): the
  // lowering needs its extents, and a `tensor[T]` parameter's have no name. Views of it (X[i, j],
  // tile.load, copies, a whole reduction) stay in memory and are fine. Once per parameter.
  void wholeTensorAsTile(Expr* e) {
    std::vector<Expr*> operands;
    if (auto* b = dyn_cast<BinaryExpr>(e)) {
      if (b->op == BinaryOp::And || b->op == BinaryOp::Or) return;
      operands = {b->lhs, b->rhs};
    } else if (auto* u = dyn_cast<UnaryExpr>(e)) {
      operands = {u->operand};
    } else if (auto* a = dyn_cast<AttributeExpr>(e); a && a->name == "T") {
      operands = {a->base};
    } else if (auto* c = dyn_cast<CallExpr>(e)) {
      const Type* ct = c->callee ? c->callee->type : nullptr;
      if (!ct) return;
      auto it = bindings_.find(c);
      bool valueCall = ct->kind == TypeKind::DTypeValue;
      if (ct->kind == TypeKind::Builtin && ct->builtin) valueCall = makesTileValue(*ct->builtin, it);
      if (!valueCall) return;
      for (const Argument& a : c->args)
        if (a.kind == Argument::Positional) operands.push_back(a.value);
    }
    for (Expr* x : operands) {
      auto* n = x ? dyn_cast<NameExpr>(x) : nullptr;
      if (!n || !n->type || n->type->kind != TypeKind::Tensor || n->type->rankKnown) continue;
      auto ip = info_.inferredParams.find(n->name);
      if (ip == info_.inferredParams.end() || ip->second.rank < 1) continue;
      NameExpr*& first = wholeUses_[n->name];
      if (!first || n->range.begin.offset < first->range.begin.offset) first = n;
    }
  }
  // Reports the first use in the source of each parameter wholeTensorAsTile found.
  void reportWholeUses() {
    for (auto& [name, n] : wholeUses_)
      diags_.report(diag::err_dynamic_tile_shape, n->range) << std::string("?") << 0u << name;
  }

 private:
  // tile.cp_async(X, rows) of a `tensor[T]` parameter X: the block has X's whole extents past the
  // indexed ones, which have no name.
  void blockOfUnnamed(Expr* src, Expr* index) {
    auto* n = src ? dyn_cast<NameExpr>(src) : nullptr;
    if (!n || !index || !n->type || n->type->kind != TypeKind::Tensor || n->type->rankKnown) return;
    auto it = info_.inferredParams.find(n->name);
    if (it == info_.inferredParams.end()) return;
    auto* tu = dyn_cast<TupleExpr>(index);
    int indexed = tu ? static_cast<int>(tu->elements.size()) : 1;
    if (indexed >= it->second.rank) return;
    diags_.report(diag::err_dynamic_tile_shape, src->range)
        << std::string("?") << static_cast<unsigned>(indexed) << n->name;
  }

  bool makesTileValue(const BuiltinInfo& b, std::map<const CallExpr*, CallBinding>::const_iterator binding) {
    if (b.elementwise) return true;
    switch (b.id) {
      case BuiltinId::TileDot:
      case BuiltinId::TileSoftmax:
      case BuiltinId::TileWhere:
      case BuiltinId::Abs:
      case BuiltinId::Min:
      case BuiltinId::Max:
      case BuiltinId::Exp:
      case BuiltinId::Exp2:
      case BuiltinId::Log:
      case BuiltinId::Log2:
      case BuiltinId::Sqrt:
      case BuiltinId::Rsqrt:
      case BuiltinId::Tanh:
      case BuiltinId::Erf:
      case BuiltinId::Sin:
      case BuiltinId::Cos:
      case BuiltinId::Floor:
      case BuiltinId::Ceil:
      case BuiltinId::Fma:
      case BuiltinId::Pow: return true;
      case BuiltinId::TileSum:
      case BuiltinId::TileMax: return binding != bindings_.end() && binding->second.arg("axis");
      default: return false;
    }
  }

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
  std::map<std::string, NameExpr*> wholeUses_;
};

}  // namespace

namespace {

// A shared buffer allocated without extents (tile.alloc_shared[f16]()) takes the shape of the
// first copy into it; used before any copy (in source order, as the lowering meets it), its shape
// is unknown (err_shared_shape_unknown). Locals that alias such buffers (b = buf0 if t else
// buf1) are left to the lowering, which follows the copies through them.
void checkUnsizedShared(const FunctionDefStmt* fn, const SemaContext& sc, DiagnosticEngine& diags) {
  auto unsized = [](Expr* e) -> const Symbol* {
    auto* n = e ? dyn_cast<NameExpr>(e) : nullptr;
    if (!n || !n->symbol || !n->symbol->type) return nullptr;
    const Type* t = n->symbol->type;
    return t->kind == TypeKind::Shared && t->dims.empty() ? n->symbol : nullptr;
  };
  std::set<const Expr*> harmless;  // copy destinations, assignment targets, aliases
  std::set<const Symbol*> aliased;
  std::map<const Symbol*, uint32_t> firstCopy;
  std::vector<NameExpr*> uses;
  auto alias = [&](Expr* v) {
    std::vector<Expr*> names = {v};
    if (auto* c = dyn_cast<ConditionalExpr>(v)) names = {c->thenExpr, c->elseExpr};
    for (Expr* x : names)
      if (const Symbol* s = unsized(x)) {
        harmless.insert(x);
        aliased.insert(s);
      }
  };
  walkStmts(
      fn->body,
      [&](Stmt* s) {
        auto* a = dyn_cast<AssignStmt>(s);
        if (!a) return;
        for (Expr* t : a->targets) {
          harmless.insert(t);
          if (auto* tu = dyn_cast<TupleExpr>(t))
            for (Expr* x : tu->elements) harmless.insert(x);
          if (unsized(t) && a->value && !isa<CallExpr>(a->value)) aliased.insert(unsized(t));
        }
        if (auto* tu = dyn_cast<TupleExpr>(a->value))
          for (Expr* x : tu->elements) alias(x);
        else if (a->value)
          alias(a->value);
      },
      [&](Expr* e) {
        if (auto* c = dyn_cast<CallExpr>(e)) {
          const BuiltinInfo* b = c->callee && c->callee->type && c->callee->type->kind == TypeKind::Builtin
                                     ? c->callee->type->builtin
                                     : nullptr;
          auto it = b ? sc.bindings.find(c) : sc.bindings.end();
          if (it != sc.bindings.end() && (b->id == BuiltinId::TileCpAsync || b->id == BuiltinId::CpAsyncSharedGlobal)) {
            Expr* dst = it->second.arg(b->id == BuiltinId::TileCpAsync ? "src" : "dst");
            if (const Symbol* s = unsized(dst)) {
              harmless.insert(dst);
              auto [at, fresh] = firstCopy.emplace(s, c->range.begin.offset);
              if (!fresh) at->second = std::min(at->second, c->range.begin.offset);
            }
          }
        }
        if (auto* n = dyn_cast<NameExpr>(e); n && unsized(n)) uses.push_back(n);
      });
  std::set<const Symbol*> reported;
  for (NameExpr* n : uses) {
    const Symbol* s = n->symbol;
    if (harmless.count(n) || aliased.count(s) || reported.count(s)) continue;
    auto c = firstCopy.find(s);
    if (c != firstCopy.end() && c->second < n->range.begin.offset) continue;
    reported.insert(s);
    diags.report(diag::err_shared_shape_unknown, n->range) << n->name;
  }
}

}  // namespace

void checkViewExtents(const FunctionDefStmt* fn, const FunctionInfo& info, const SemaContext& sc,
                      DiagnosticEngine& diags) {
  checkUnsizedShared(fn, sc, diags);
  ViewExtents check(info, sc, diags);
  walkStmts(
      fn->body, [](Stmt*) {},
      [&](Expr* e) {
        if (auto* s = dyn_cast<SubscriptExpr>(e)) check.subscript(s);
        if (auto* c = dyn_cast<CallExpr>(e)) check.copy(c);
        check.wholeTensorAsTile(e);
      });
  check.reportWholeUses();
}

}  // namespace tessera
