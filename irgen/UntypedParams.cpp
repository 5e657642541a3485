// Kernel parameters whose rank or extents are not written: the rank their uses need, and (for
// unannotated parameters of whole-tensor programs) extents named after the parameter and unified
// with the extents they meet while lowering (docs/language.md, "Unannotated parameters").
#include <algorithm>
#include <functional>

#include "irgen/FunctionContext.h"
#include "sema/ASTWalk.h"

namespace tessera::irgen {

// The rank the uses of `tensor[T]` parameter `p` of unknown rank need: subscripts, operands of
// tile.dot and tile.mma. -1 when nothing says.
int FunctionContext::usesRankOfUnknownRank(const Param& p) {
  int rank = -1;
  std::function<void(const tessera::Block&)> scan;
  std::function<void(Expr*)> scanExpr = [&](Expr* e) {
    if (!e) return;
    if (auto* s = dyn_cast<SubscriptExpr>(e)) {
      if (auto* n = dyn_cast<NameExpr>(s->base); n && n->name == p.name) {
        int k = 0;
        for (auto& a : s->indices)
          if (a.kind == Argument::Positional) {
            auto* tu = dyn_cast<TupleExpr>(a.value);
            k += tu && !tu->parenthesized ? static_cast<int>(tu->elements.size()) : 1;
          }
        rank = std::max(rank, k);
      }
      scanExpr(s->base);
      for (auto& a : s->indices) scanExpr(a.value);
    } else if (auto* c = dyn_cast<CallExpr>(e)) {
      std::string callee = text(c->callee->range);
      bool matrix = callee.find("mma") != std::string::npos || callee.find("dot") != std::string::npos;
      for (auto& a : c->args) {
        if (auto* n = dyn_cast<NameExpr>(a.value); n && n->name == p.name && matrix) rank = std::max(rank, 2);
        scanExpr(a.value);
      }
      scanExpr(c->callee);
    } else if (auto* b = dyn_cast<BinaryExpr>(e)) {
      scanExpr(b->lhs);
      scanExpr(b->rhs);
    } else if (auto* u = dyn_cast<UnaryExpr>(e)) {
      scanExpr(u->operand);
    } else if (auto* a = dyn_cast<AttributeExpr>(e)) {
      scanExpr(a->base);
    } else if (auto* c2 = dyn_cast<ConditionalExpr>(e)) {
      scanExpr(c2->cond);
      scanExpr(c2->thenExpr);
      scanExpr(c2->elseExpr);
    } else if (auto* t2 = dyn_cast<TupleExpr>(e)) {
      for (Expr* x : t2->elements) scanExpr(x);
    }
  };
  scan = [&](const tessera::Block& b) {
    for (Stmt* s : b.stmts) {
      if (auto* es = dyn_cast<ExprStmt>(s))
        scanExpr(es->expr);
      else if (auto* as = dyn_cast<AssignStmt>(s)) {
        for (Expr* t2 : as->targets) scanExpr(t2);
        scanExpr(as->value);
      } else if (auto* au = dyn_cast<AugAssignStmt>(s)) {
        scanExpr(au->target);
        scanExpr(au->value);
      } else if (auto* is = dyn_cast<IfStmt>(s)) {
        scanExpr(is->cond);
        scan(is->thenBlock);
        scan(is->elseBlock);
      } else if (auto* fs = dyn_cast<ForStmt>(s)) {
        scanExpr(fs->iter);
        scan(fs->body);
      } else if (auto* ws = dyn_cast<WhileStmt>(s)) {
        scanExpr(ws->cond);
        scan(ws->body);
      }
    }
  };
  scan(def_->body);
  return rank;
}

// The rank the uses of parameter `name` need, and whether the kernel writes it: subscripts
// (X[i, j] is rank 2), operands of tile.dot / tile.mma / '@' and '.T' (rank 2, also for a block
// Q[block] of it), the value stored into a slice or block of it (Out[:] = t has t's rank), and an
// operand of elementwise arithmetic with a tile value (a bias: rank 1). 0 when nothing says it is
// a tensor.
int FunctionContext::usesRank(const std::string& name, bool& written) {
  std::map<const Symbol*, int> locals;
  int rank = 0;
  std::function<int(Expr*)> rankOf = [&](Expr* e) -> int {
    if (!e) return 0;
    if (e->type &&
        (e->type->kind == TypeKind::Tile || e->type->kind == TypeKind::Fragment || e->type->kind == TypeKind::Tensor) &&
        e->type->rankKnown)
      return static_cast<int>(e->type->dims.size());
    if (auto* n = dyn_cast<NameExpr>(e)) {
      if (n->name == name) return rank;
      auto it = locals.find(n->symbol);
      return it == locals.end() ? 0 : it->second;
    }
    if (auto* b = dyn_cast<BinaryExpr>(e)) {
      if (b->op == BinaryOp::MatMul) return 2;
      return std::max(rankOf(b->lhs), rankOf(b->rhs));
    }
    if (auto* u = dyn_cast<UnaryExpr>(e)) return rankOf(u->operand);
    if (auto* a = dyn_cast<AttributeExpr>(e)) return a->name == "T" ? 2 : 0;
    if (auto* c = dyn_cast<CallExpr>(e)) {
      const BuiltinInfo* b = builtinOf(c->callee);
      Expr* first = c->args.empty() ? nullptr : c->args[0].value;
      if (c->callee->type && c->callee->type->kind == TypeKind::DTypeValue) return rankOf(first);
      if (!b) return 0;
      if (b->elementwise) return rankOf(first);
      switch (b->id) {
        case BuiltinId::TileDot:
        case BuiltinId::TileMma: return 2;
        case BuiltinId::TileSoftmax: return rankOf(first);
        default: return 0;
      }
    }
    return 0;
  };
  auto isName = [&](Expr* e) {
    auto* n = dyn_cast<NameExpr>(e);
    return n && n->name == name;
  };
  // The parameter, or a block or slice of it (Q[block], X[a:b]): a matrix operand needs rank 2.
  auto isValueOf = [&](Expr* e) {
    if (isName(e)) return true;
    auto* sub = dyn_cast<SubscriptExpr>(e);
    return sub && isName(sub->base) && sub->indices.size() == 1;
  };
  for (int pass = 0; pass < 3; ++pass) {
    walkStmts(
        def_->body,
        [&](Stmt* st) {
          auto target = [&](Expr* t, Expr* value) {
            if (isName(t)) {
              written = written || isa<AugAssignStmt>(st);
              return;
            }
            if (auto* sub = dyn_cast<SubscriptExpr>(t); sub && isName(sub->base)) {
              written = true;
              if (value) rank = std::max(rank, rankOf(value));
            }
            if (auto* n = dyn_cast<NameExpr>(t); n && n->symbol && value)
              locals[n->symbol] = std::max(locals[n->symbol], rankOf(value));
          };
          if (auto* a = dyn_cast<AssignStmt>(st))
            for (Expr* t : a->targets) target(t, a->value);
          if (auto* au = dyn_cast<AugAssignStmt>(st)) target(au->target, au->value);
          if (auto* an = dyn_cast<AnnAssignStmt>(st)) target(an->target, an->value);
        },
        [&](Expr* e) {
          if (auto* s2 = dyn_cast<SubscriptExpr>(e); s2 && isName(s2->base)) {
            int k = 0;
            for (auto& a : s2->indices)
              if (a.kind == Argument::Positional) {
                auto* tu = dyn_cast<TupleExpr>(a.value);
                k += tu && !tu->parenthesized ? static_cast<int>(tu->elements.size()) : 1;
              }
            rank = std::max(rank, k);
          } else if (auto* b = dyn_cast<BinaryExpr>(e)) {
            if (b->op == BinaryOp::MatMul && (isValueOf(b->lhs) || isValueOf(b->rhs))) rank = std::max(rank, 2);
            bool arith =
                b->op == BinaryOp::Add || b->op == BinaryOp::Sub || b->op == BinaryOp::Mul || b->op == BinaryOp::Div;
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
              if ((b->id == BuiltinId::TileStore || b->id == BuiltinId::AtomicAdd) && i == 0) written = true;
              if (b->id == BuiltinId::TileLoad || b->id == BuiltinId::TileStore || b->id == BuiltinId::TileCpAsync ||
                  b->id == BuiltinId::TileRange)
                rank = std::max(rank, 1);
            }
          }
        });
  }
  return rank;
}

I::Type FunctionContext::untypedParamType(const Param& p) {
  bool written = false;
  int rank = usesRank(p.name, written);
  if (rank < 1) error(diag::err_lower_untyped_param, p.nameRange, p.name, def_->name);
  std::vector<I::Dim> shape;
  for (int d = 0; d < rank; ++d) {
    std::string g = dimOf(p.name + "_" + std::to_string(d)).sym;
    while (usedSyms_.count(g)) g += "_";
    usedSyms_.insert(g);
    genNames_.push_back(g);
    auto it = rename_.find(g);
    shape.push_back(I::Dim{-1, it == rename_.end() ? g : it->second});
  }
  return ctx().tensor(ctx().scalar(I::ScalarKind::F32), shape, I::MemSpace::Global,
                      written ? I::Access::ReadWrite : I::Access::Read);
}

bool FunctionContext::needsShapeInference() {
  if (!kernel_) return false;
  for (const Param& p : def_->params) {
    const Symbol* sym = info_ && info_->scope ? info_->scope->lookupLocal(p.name) : nullptr;
    if (!p.annotation && sym && sym->type && sym->type->isDynamic()) return true;
  }
  return false;
}

// Each generated extent name -> the name of its class of equal extents: an annotated extent of
// the class if there is one, else the first generated name of the class (parameter order).
std::map<std::string, std::string> FunctionContext::extentClasses() {
  std::map<std::string, std::string> repOf;  // class root -> chosen name
  for (auto& [a, b] : eq_) {
    for (const std::string& x : {a, b})
      if (!std::count(genNames_.begin(), genNames_.end(), x)) {
        std::string r = findSym(x);
        if (!repOf.count(r)) repOf[r] = x;
      }
  }
  for (const std::string& g : genNames_) {
    std::string r = findSym(g);
    if (!repOf.count(r)) repOf[r] = g;
  }
  std::map<std::string, std::string> out;
  for (const std::string& g : genNames_) out[g] = repOf[findSym(g)];
  return out;
}

std::string FunctionContext::findSym(const std::string& s) {
  std::string r = s;
  for (auto it = eq_.find(r); it != eq_.end() && it->second != r; it = eq_.find(r)) r = it->second;
  return r;
}

void FunctionContext::unify(const I::Dim& a, const I::Dim& b) {
  if (a.sym.empty() || b.sym.empty()) return;
  std::string x = findSym(a.sym), y = findSym(b.sym);
  if (x != y) eq_[y] = x;
}

}  // namespace tessera::irgen
