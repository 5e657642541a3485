// Kernel parameters whose rank is not written: an unannotated parameter (the spec's
// warp_reduce_sum, fused_mlp) is an f32 tensor of the rank its uses need, readwrite when the kernel
// writes it; a `tensor[T]` parameter has the rank its subscripts and matrix uses need. Sema infers
// both from the typed body and records them (FunctionInfo::inferredParams) for the lowering, which
// names the extents (irgen/UntypedParams.cpp); a parameter nothing says the rank of is an error
// here, so that `--check` and the editor show it (docs/language.md, "Unannotated parameters").
#include <algorithm>
#include <map>

#include "sema/ASTWalk.h"
#include "sema/SemaDiagnostics.h"
#include "sema/analyses/Analyses.h"

namespace tessera {

namespace {

const BuiltinInfo* builtinOf(Expr* callee) {
  if (!callee || !callee->type || callee->type->kind != TypeKind::Builtin) return nullptr;
  return callee->type->builtin;
}

// The number of positional subscripts of `s` (a bare tuple `X[i, j]` counts its elements).
int subscriptRank(const SubscriptExpr* s) {
  int k = 0;
  for (const Argument& a : s->indices)
    if (a.kind == Argument::Positional) {
      auto* tu = dyn_cast<TupleExpr>(a.value);
      k += tu && !tu->parenthesized ? static_cast<int>(tu->elements.size()) : 1;
    }
  return k;
}

// The uses of one unannotated parameter: subscripts (X[i, j] is rank 2), operands of tile.dot /
// tile.mma / '@' and '.T' (rank 2, also for a block Q[block] of it), the value stored into a slice
// or block of it (Out[:] = t has t's rank), an operand of elementwise arithmetic with a tile value
// (a bias: rank 1), and the tensor operands of tile.load/store/cp_async/range (rank 1 at least).
class UsesRank {
 public:
  UsesRank(const FunctionDefStmt& def, const std::string& name) : def_(def), name_(name) {}

  InferredParam run() {
    // Locals' ranks feed the parameter's and back: three rounds reach the fixed point of the
    // chains kernels write (t = X[b]; u = t @ W; Out[:] = u).
    for (int pass = 0; pass < 3; ++pass)
      walkStmts(def_.body, [&](Stmt* st) { onStmt(st); }, [&](Expr* e) { onExpr(e); });
    return out_;
  }

 private:
  bool isName(Expr* e) const {
    auto* n = dyn_cast<NameExpr>(e);
    return n && n->name == name_;
  }
  // The parameter, or a block or slice of it (Q[block], X[a:b]).
  bool isValueOf(Expr* e) const {
    if (isName(e)) return true;
    auto* sub = dyn_cast<SubscriptExpr>(e);
    return sub && isName(sub->base) && sub->indices.size() == 1;
  }

  int rankOf(Expr* e) {
    if (!e) return 0;
    if (e->type &&
        (e->type->kind == TypeKind::Tile || e->type->kind == TypeKind::Fragment || e->type->kind == TypeKind::Tensor) &&
        e->type->rankKnown)
      return static_cast<int>(e->type->dims.size());
    if (auto* n = dyn_cast<NameExpr>(e)) {
      if (n->name == name_) return out_.rank;
      auto it = locals_.find(n->symbol);
      return it == locals_.end() ? 0 : it->second;
    }
    // A view of a tensor whose type is not known yet (`X[r, :]`): at least one extent per slice
    // or block index.
    if (auto* s = dyn_cast<SubscriptExpr>(e)) {
      auto sliceLike = [](Expr* x) {
        return x && (isa<SliceExpr>(x) || (x->type && x->type->kind == TypeKind::Slice));
      };
      int k = 0;
      for (const Argument& a : s->indices) {
        if (a.kind != Argument::Positional) continue;
        auto* tu = dyn_cast<TupleExpr>(a.value);
        if (tu && !tu->parenthesized) {
          for (Expr* x : tu->elements) k += sliceLike(x) ? 1 : 0;
        } else {
          k += sliceLike(a.value) ? 1 : 0;
        }
      }
      return k;
    }
    if (auto* b = dyn_cast<BinaryExpr>(e))
      return b->op == BinaryOp::MatMul ? 2 : std::max(rankOf(b->lhs), rankOf(b->rhs));
    if (auto* u = dyn_cast<UnaryExpr>(e)) return rankOf(u->operand);
    if (auto* a = dyn_cast<AttributeExpr>(e)) return a->name == "T" ? 2 : 0;
    if (auto* c = dyn_cast<CallExpr>(e)) {
      const BuiltinInfo* b = builtinOf(c->callee);
      Expr* first = c->args.empty() ? nullptr : c->args[0].value;
      if (c->callee->type && c->callee->type->kind == TypeKind::DTypeValue) return rankOf(first);
      if (!b) return 0;
      if (b->elementwise) return rankOf(first);
      if (b->id == BuiltinId::TileDot || b->id == BuiltinId::TileMma) return 2;
      if (b->id == BuiltinId::TileSoftmax) return rankOf(first);
    }
    return 0;
  }

  void target(Stmt* st, Expr* t, Expr* value) {
    if (isName(t)) {
      out_.written = out_.written || isa<AugAssignStmt>(st);
      return;
    }
    if (auto* sub = dyn_cast<SubscriptExpr>(t); sub && isName(sub->base)) {
      out_.written = true;
      if (value) out_.rank = std::max(out_.rank, rankOf(value));
    }
    if (auto* n = dyn_cast<NameExpr>(t); n && n->symbol && value)
      locals_[n->symbol] = std::max(locals_[n->symbol], rankOf(value));
  }

  void onStmt(Stmt* st) {
    if (auto* a = dyn_cast<AssignStmt>(st))
      for (Expr* t : a->targets) target(st, t, a->value);
    if (auto* au = dyn_cast<AugAssignStmt>(st)) target(st, au->target, au->value);
    if (auto* an = dyn_cast<AnnAssignStmt>(st)) target(st, an->target, an->value);
  }

  void onExpr(Expr* e) {
    int& rank = out_.rank;
    if (auto* s = dyn_cast<SubscriptExpr>(e); s && isName(s->base)) {
      rank = std::max(rank, subscriptRank(s));
    } else if (auto* b = dyn_cast<BinaryExpr>(e)) {
      if (b->op == BinaryOp::MatMul && (isValueOf(b->lhs) || isValueOf(b->rhs))) rank = std::max(rank, 2);
      bool arith = b->op == BinaryOp::Add || b->op == BinaryOp::Sub || b->op == BinaryOp::Mul || b->op == BinaryOp::Div;
      if (arith && ((isName(b->lhs) && rankOf(b->rhs) >= 1) || (isName(b->rhs) && rankOf(b->lhs) >= 1)))
        rank = std::max(rank, 1);
    } else if (auto* a = dyn_cast<AttributeExpr>(e); a && isValueOf(a->base) && a->name == "T") {
      rank = std::max(rank, 2);
    } else if (auto* c = dyn_cast<CallExpr>(e)) {
      const BuiltinInfo* b = builtinOf(c->callee);
      if (!b) return;
      for (size_t i = 0; i < c->args.size(); ++i) {
        if ((b->id == BuiltinId::TileDot || b->id == BuiltinId::TileMma) && isValueOf(c->args[i].value))
          rank = std::max(rank, 2);
        if (!isName(c->args[i].value)) continue;
        if ((b->id == BuiltinId::TileStore || b->id == BuiltinId::AtomicAdd) && i == 0) out_.written = true;
        if (b->id == BuiltinId::TileLoad || b->id == BuiltinId::TileStore || b->id == BuiltinId::TileCpAsync ||
            b->id == BuiltinId::TileRange)
          rank = std::max(rank, 1);
      }
    }
  }

  const FunctionDefStmt& def_;
  const std::string& name_;
  InferredParam out_;
  std::map<const Symbol*, int> locals_;
};

// The rank the uses of a `tensor[T]` parameter of unknown rank need: its subscripts, and
// operands of a matrix call (tile.dot, tile.mma). -1 when nothing says.
int unknownRankUses(const FunctionDefStmt& def, const std::string& name, const SourceManager& sm) {
  int rank = -1;
  walkStmts(
      def.body, [](Stmt*) {},
      [&](Expr* e) {
        if (auto* s = dyn_cast<SubscriptExpr>(e)) {
          if (auto* n = dyn_cast<NameExpr>(s->base); n && n->name == name) rank = std::max(rank, subscriptRank(s));
        } else if (auto* c = dyn_cast<CallExpr>(e); c && c->callee) {
          std::string_view callee = sm.text(c->callee->range);
          bool matrix = callee.find("mma") != std::string_view::npos || callee.find("dot") != std::string_view::npos;
          for (const Argument& a : c->args)
            if (auto* n = dyn_cast<NameExpr>(a.value); n && n->name == name && matrix) rank = std::max(rank, 2);
        }
      });
  return rank;
}

}  // namespace

void inferKernelParams(FunctionDefStmt* fn, FunctionInfo& info, const SourceManager& sm, DiagnosticEngine& diags) {
  if (!info.scope) return;
  for (const Param& p : fn->params) {
    if (p.paramKind != Param::Normal || p.name.empty()) continue;
    const Symbol* sym = info.scope->lookupLocal(p.name);
    const Type* t = sym ? sym->type : nullptr;
    if (t && t->kind == TypeKind::Error) continue;  // reported already
    if (t && t->isDynamic() && !p.annotation) {
      InferredParam ip = UsesRank(*fn, p.name).run();
      if (ip.rank < 1) diags.report(diag::err_untyped_param, p.nameRange) << p.name << fn->name;
      info.inferredParams[p.name] = ip;
      continue;
    }
    if (!t || t->isLenient() || (t->kind == TypeKind::Tensor && !t->dtypeKnown)) {
      diags.report(diag::err_untyped_param, p.nameRange) << p.name << fn->name;
      continue;
    }
    if (t->kind != TypeKind::Tensor || t->rankKnown) continue;
    InferredParam ip;
    ip.rank = unknownRankUses(*fn, p.name, sm);
    if (ip.rank < 1) diags.report(diag::err_unknown_rank, p.nameRange) << p.name << dtypeInfo(t->dtype).shortName;
    info.inferredParams[p.name] = ip;
  }
}

}  // namespace tessera
