// Whole-tensor tile programs (docs/language.md, section 4): the compiler splits the rows of the
// output into blocks across groups, and every parameter with the output's leading extent stands
// for its block of rows (a rank-2 parameter with that extent second, used only transposed, for
// its block of columns). Rows of different blocks must never meet, and a value computed from
// whole tensors that has the output's rows must not meet a block. The rules are basic/RowSplit.h's;
// the Tile IR pass that splits the rows (ir/passes/RowPartition.cpp) checks them again on the IR,
// and sema checks them here on the typed AST so that `--check` and the editor show them.
// Kernels with unannotated tensor parameters are left to the pass: the extent names of those
// come from the lowering (irgen/UntypedParams.cpp).
#include "basic/RowSplit.h"

#include <algorithm>
#include <map>
#include <optional>
#include <set>

#include "sema/ASTWalk.h"
#include "sema/SemaDiagnostics.h"
#include "sema/analyses/Analyses.h"

namespace tessera {

namespace {

using rowsplit::Rule;

const BuiltinInfo* builtinOf(const CallExpr* c) {
  if (!c || !c->callee || !c->callee->type || c->callee->type->kind != TypeKind::Builtin) return nullptr;
  return c->callee->type->builtin;
}

}  // namespace

bool isWholeTensorProgram(const FunctionDefStmt& def, const FunctionInfo& info) {
  if (!info.isKernel() || !info.groupShape.empty()) return false;
  bool tileOps = false, explicitTiles = false;
  walkStmts(
      def.body,
      [&](Stmt* s) {
        if (auto* f = dyn_cast<ForStmt>(s))
          if (const BuiltinInfo* b = builtinOf(dyn_cast<CallExpr>(f->iter));
              b && (b->id == BuiltinId::TileRange || b->id == BuiltinId::TileMma))
            explicitTiles = true;
      },
      [&](Expr* e) {
        if (auto* bin = dyn_cast<BinaryExpr>(e); bin && bin->op == BinaryOp::MatMul) tileOps = true;
        // Arithmetic on whole tensors (`C[:] = A + B * 2.0`, `exp(A)`) computes tile values as
        // much as a tile op does; without a group shape they need the row split too.
        if ((isa<BinaryExpr>(e) || isa<UnaryExpr>(e) || isa<CallExpr>(e)) && e->type && e->type->kind == TypeKind::Tile)
          tileOps = true;
        if (auto* a = dyn_cast<AttributeExpr>(e)) {
          if (a->name == "T") tileOps = true;
          if (a->name == "grid_groups") explicitTiles = true;
        }
        if (auto* n = dyn_cast<NameExpr>(e); n && n->name == "grid_groups") explicitTiles = true;
        const BuiltinInfo* b = builtinOf(dyn_cast<CallExpr>(e));
        if (!b) return;
        if (b->elementwise) tileOps = true;
        switch (b->id) {
          case BuiltinId::TileLinearId:
          case BuiltinId::TileLaneId:
          case BuiltinId::TileWarpId:
          case BuiltinId::LaunchThreadId:
          case BuiltinId::GroupLinearId:
          case BuiltinId::GroupTileCount:
          case BuiltinId::CooperativeGroup:
          case BuiltinId::TileMmaSync: explicitTiles = true; break;
          case BuiltinId::TileDot:
          case BuiltinId::TileMma:
          case BuiltinId::TileSoftmax:
          case BuiltinId::TileSum:
          case BuiltinId::TileMax:
          case BuiltinId::TileZeros:
          case BuiltinId::TileFull: tileOps = true; break;
          default: break;
        }
      });
  return tileOps && !explicitTiles;
}

std::set<std::string> namesUsedOnlyTransposed(const Block& body) {
  std::map<std::string, int> uses, transposed;
  walkStmts(
      body, [](Stmt*) {},
      [&](Expr* e) {
        if (auto* n = dyn_cast<NameExpr>(e)) ++uses[n->name];
        if (auto* a = dyn_cast<AttributeExpr>(e); a && a->name == "T")
          if (auto* n = dyn_cast<NameExpr>(a->base)) ++transposed[n->name];
      });
  std::set<std::string> out;
  for (auto& [name, n] : transposed)
    if (uses[name] == n) out.insert(name);
  return out;
}

namespace {

// What a value is with respect to the row split: a block of rows of a parameter, a block of
// columns (transposed, a block of rows), or neither. `wholeRows`: neither, but its leading extent
// is the output's row symbol (computed from whole tensors).
struct Split {
  enum Kind { None, Rows, Cols } kind = None;
  std::string src;  // the parameter the block is of
  bool rows() const { return kind == Rows; }
};

class RowSplit : public ASTVisitor<RowSplit, Split> {
  friend ASTVisitor<RowSplit, Split>;

 public:
  RowSplit(const FunctionDefStmt& def, const FunctionInfo& info, DiagnosticEngine& diags)
      : def_(def), info_(info), diags_(diags) {}

  void run() {
    const Type* out = nullptr;
    for (const Param& p : def_.params) {
      const Symbol* sym = info_.scope ? info_.scope->lookupLocal(p.name) : nullptr;
      const Type* t = sym ? sym->type : nullptr;
      if (!t || t->kind != TypeKind::Tensor || !t->rankKnown) {
        if (!t || t->isDynamic()) return;  // unannotated and not typed by ExtentInference.cpp
        continue;
      }
      if (t->mut && !out) out = t, outName_ = p.name;
    }
    if (!out || out->dims.empty() || out->dims[0].isConst() || out->dims[0].isUnknown()) return;
    rowSym_ = out->dims[0];
    std::set<std::string> transposedOnly = namesUsedOnlyTransposed(def_.body);
    for (const Param& p : def_.params) {
      const Symbol* sym = info_.scope->lookupLocal(p.name);
      const Type* t = sym ? sym->type : nullptr;
      if (!t || t->kind != TypeKind::Tensor || t->dims.empty()) continue;
      switch (rowsplit::classifyParam(t->dims.size(), t->dims[0] == rowSym_,
                                      t->dims.size() > 1 && t->dims[1] == rowSym_, transposedOnly.count(p.name) > 0)) {
        case rowsplit::ParamSplit::Columns: vars_[sym] = {Split::Cols, p.name}; break;
        case rowsplit::ParamSplit::Rows: vars_[sym] = {Split::Rows, p.name}; break;
        case rowsplit::ParamSplit::Whole: break;
      }
    }
    block(def_.body);
  }

 private:
  void block(const Block& b) {
    for (Stmt* s : b.stmts) {
      if (done_) return;
      stmt(s);
    }
  }

  void stmt(Stmt* s) {
    if (s) Stmts{{}, *this}.visit(s);
  }

  // The dispatch of stmt on the statement's kind (frontend/ASTVisitor.h); the rest do nothing.
  struct Stmts : ASTVisitor<Stmts> {
    RowSplit& r;
    void visitAssignStmt(AssignStmt* a) {
      Split v = r.eval(a->value);
      for (Expr* t : a->targets) r.assign(t, v, a->value, a);
    }
    void visitAugAssignStmt(AugAssignStmt* au) {
      Split v = r.eval(au->value);
      Split t = r.eval(au->target);
      r.meet(t, au->target, v, au->value, au->range);
      if (!r.done_) r.assign(au->target, t.rows() ? t : v, au->value, au);
    }
    void visitAnnAssignStmt(AnnAssignStmt* an) {
      if (an->value) r.assign(an->target, r.eval(an->value), an->value, an);
    }
    void visitExprStmt(ExprStmt* e) { r.eval(e->expr); }
    void visitIfStmt(IfStmt* i) {
      r.eval(i->cond);
      r.block(i->thenBlock);
      r.block(i->elseBlock);
    }
    void visitForStmt(ForStmt* f) {
      r.eval(f->iter);
      r.block(f->body);
    }
    void visitWhileStmt(WhileStmt* w) {
      r.eval(w->cond);
      r.block(w->body);
    }
  };

  // `target = value`: a local takes the value's split; a store into a block of rows must not
  // store a value that has all the output's rows.
  void assign(Expr* target, const Split& v, Expr* value, Stmt* s) {
    if (done_) return;
    if (auto* n = dyn_cast<NameExpr>(target)) {
      if (n->symbol && v.kind != Split::None)
        vars_[n->symbol] = v;
      else if (n->symbol)
        vars_.erase(n->symbol);
      return;
    }
    if (auto* sub = dyn_cast<SubscriptExpr>(target)) {
      Split dst = eval(sub);
      if (dst.rows() && !v.rows() && wholeRows(value)) notSplit(s->range, Rule::StoreWholeRows);
    }
  }

  bool wholeRows(const Expr* e) const {
    const Type* t = e ? e->type : nullptr;
    return t && t->isTileLike() && t->rankKnown && !t->dims.empty() && t->dims[0] == rowSym_;
  }

  static int rankOf(const Expr* e) {
    const Type* t = e ? e->type : nullptr;
    return t && t->isTileLike() && t->rankKnown ? static_cast<int>(t->dims.size()) : 0;
  }

  // Two operands of an elementwise operation: a block of rows broadcast along the rows of a
  // larger tile mixes its rows; a whole-rows value broadcast to a block gives every block the
  // same rows.
  void meet(const Split& a, Expr* ae, const Split& b, Expr* be, SourceRange at) {
    for (int side = 0; side < 2 && !done_; ++side) {
      const Split& x = side ? b : a;
      Expr *xe = side ? be : ae, *ye = side ? ae : be;
      const Split& y = side ? a : b;
      if (!x.rows()) continue;
      if (rowsplit::broadcastMixesRows(static_cast<size_t>(rankOf(xe)), static_cast<size_t>(rankOf(ye))))
        independent(at, x.src, Rule::BroadcastAlongRows);
      else if (!y.rows() && wholeRows(ye))
        notSplit(at, Rule::BroadcastWholeRows);
    }
  }

  static std::optional<long long> axisOf(CallExpr* c) {
    for (const Argument& a : c->args)
      if (a.keyword == "axis") {
        auto v = evalConst(a.value, nullptr);
        if (!v || v->kind != ConstValue::Int) return std::nullopt;
        return v->i;
      }
    return -1;
  }

  static Expr* positional(CallExpr* c, size_t i) {
    size_t k = 0;
    for (const Argument& a : c->args)
      if (a.kind == Argument::Positional && k++ == i) return a.value;
    return nullptr;
  }

  Split call(CallExpr* c) {
    const BuiltinInfo* b = builtinOf(c);
    std::vector<Split> args;
    for (const Argument& a : c->args) args.push_back(eval(a.value));
    if (done_) return {};
    Split first;
    for (const Split& s : args)
      if (s.rows() && !first.rows()) first = s;
    if (!b) return first;
    Expr* x = positional(c, 0);
    Split xs = x ? eval(x) : Split{};
    switch (b->id) {
      case BuiltinId::TileDot:
      case BuiltinId::TileMma:
        if (Expr* r = positional(c, 1); r && eval(r).rows()) independent(c->range, eval(r).src, Rule::MatmulRight);
        return xs;
      case BuiltinId::TileSoftmax:
      case BuiltinId::TileSum:
      case BuiltinId::TileMax:
      case BuiltinId::ReduceSum:
      case BuiltinId::ReduceMax:
      case BuiltinId::ReduceMin: {
        if (!xs.rows()) return first;
        auto axis = axisOf(c);
        bool reduceAll =
            (b->id == BuiltinId::ReduceSum || b->id == BuiltinId::ReduceMax || b->id == BuiltinId::ReduceMin) &&
            axis == -1 && !c->args.empty() &&
            std::none_of(c->args.begin(), c->args.end(), [](const Argument& a) { return a.keyword == "axis"; });
        if (reduceAll)
          independent(c->range, xs.src, Rule::ReduceAll);
        else if (axis && rowsplit::axisMixesRows(*axis, static_cast<size_t>(rankOf(x))))
          independent(c->range, xs.src, b->id == BuiltinId::TileSoftmax ? Rule::SoftmaxRows : Rule::ReduceRows);
        return xs;
      }
      default: break;
    }
    if (b->elementwise)
      for (size_t i = 0; i + 1 < c->args.size(); ++i)
        meet(args[i], c->args[i].value, args[i + 1], c->args[i + 1].value, c->range);
    return first;
  }

  Split subscript(SubscriptExpr* s) {
    Split base = eval(s->base);
    bool allInts = true;
    for (size_t i = 0; i < s->indices.size(); ++i) {
      Expr* ix = s->indices[i].value;
      auto* sl = dyn_cast<SliceExpr>(ix);
      if (!sl) {
        if (eval(ix).rows()) independent(s->range, eval(ix).src, Rule::IndexWith);
      } else {
        allInts = false;
        for (Expr* b : {sl->lower, sl->upper, sl->step})
          if (b && eval(b).rows()) independent(s->range, eval(b).src, Rule::IndexWith);
        if (i == 0 && base.rows() && (sl->lower || sl->upper)) independent(s->range, base.src, Rule::SliceRows);
      }
    }
    if (base.rows() && allInts && !s->indices.empty()) independent(s->range, base.src, Rule::IndexElements);
    return base;
  }

  Split eval(Expr* e) {
    if (!e || done_) return {};
    return visit(e);
  }

  // ---- the split of an expression, by its kind (frontend/ASTVisitor.h)
  Split visitNameExpr(NameExpr* n) {
    auto it = n->symbol ? vars_.find(n->symbol) : vars_.end();
    if (it == vars_.end() || it->second.kind == Split::Cols) return {};
    return it->second;
  }
  Split visitAttributeExpr(AttributeExpr* a) {
    if (a->name == "T") {
      if (auto* n = dyn_cast<NameExpr>(a->base);
          n && n->symbol && vars_.count(n->symbol) && vars_[n->symbol].kind == Split::Cols)
        return {Split::Rows, vars_[n->symbol].src};
      Split b = eval(a->base);
      if (b.rows()) independent(a->range, b.src, Rule::Transpose);
      return {};
    }
    eval(a->base);
    return {};
  }
  Split visitBinaryExpr(BinaryExpr* b) {
    Split l = eval(b->lhs), r = eval(b->rhs);
    if (done_) return {};
    if (b->op == BinaryOp::MatMul) {
      if (r.rows()) independent(b->range, r.src, Rule::MatmulRight);
      return l;
    }
    meet(l, b->lhs, r, b->rhs, b->range);
    return l.rows() ? l : r;
  }
  Split visitUnaryExpr(UnaryExpr* u) { return eval(u->operand); }
  Split visitCallExpr(CallExpr* c) { return call(c); }
  Split visitSubscriptExpr(SubscriptExpr* s) { return subscript(s); }
  Split visitConditionalExpr(ConditionalExpr* c) {
    eval(c->cond);
    Split t = eval(c->thenExpr), f = eval(c->elseExpr);
    return t.rows() ? t : f;
  }
  Split visitExpr(Expr* e) {
    forEachSubexpression(e, [&](Expr* x) { eval(x); });
    return {};
  }

  void independent(SourceRange at, const std::string& src, Rule rule) {
    if (done_) return;
    diags_.report(diag::err_rows_not_independent, at) << src << rowsplit::ruleText(rule) << outName_;
    done_ = true;
  }
  void notSplit(SourceRange at, Rule rule) {
    if (done_) return;
    diags_.report(diag::err_rows_not_split, at) << rowSym_.str() << rowsplit::ruleText(rule) << outName_;
    done_ = true;
  }

  const FunctionDefStmt& def_;
  const FunctionInfo& info_;
  DiagnosticEngine& diags_;
  Extent rowSym_;
  std::string outName_;
  std::map<const Symbol*, Split> vars_;
  bool done_ = false;  // one error per kernel, as the lowering stops at its first
};

}  // namespace

void checkRowSplit(const FunctionDefStmt* fn, const FunctionInfo& info, DiagnosticEngine& diags) {
  if (!isWholeTensorProgram(*fn, info)) return;
  RowSplit(*fn, info, diags).run();
}

}  // namespace tessera
