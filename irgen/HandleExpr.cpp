// Expressions: literals, names, subscripts and slices, attributes, and the facts lowering asks
// of an expression (a constant integer, free of effects).
#include <cmath>

#include "frontend/ASTVisitor.h"
#include "irgen/FunctionContext.h"

namespace tessera::irgen {

// A compile-time integer, by the expression's kind (frontend/ASTVisitor.h): literals, constants
// and autotune parameters, and + - * // % and unary - + on them.
struct ConstIntEval : ASTVisitor<ConstIntEval, std::optional<int64_t>> {
  FunctionContext& fc;
  explicit ConstIntEval(FunctionContext& fc) : fc(fc) {}
  using R = std::optional<int64_t>;

  R visitIntLiteralExpr(IntLiteralExpr* e) { return static_cast<int64_t>(e->value); }
  R visitBoolLiteralExpr(BoolLiteralExpr* e) { return e->value ? 1 : 0; }
  R visitNameExpr(NameExpr* e) {
    const Symbol* s = e->symbol;
    if (!s) return std::nullopt;
    // An autotune parameter holds the candidate being compiled (sema's choice).
    if (s->kind == SymbolKind::AutotuneParam && s->value && s->value->kind == ConstValue::Int) return s->value->i;
    if (s->kind == SymbolKind::Constant && s->value && s->value->kind == ConstValue::Int) return s->value->i;
    return std::nullopt;
  }
  R visitUnaryExpr(UnaryExpr* u) {
    auto v = fc.constInt(u->operand);
    if (!v) return std::nullopt;
    if (u->op == UnaryOp::Neg) return -*v;
    if (u->op == UnaryOp::Pos) return *v;
    return std::nullopt;
  }
  R visitBinaryExpr(BinaryExpr* b) {
    auto l = fc.constInt(b->lhs), r = fc.constInt(b->rhs);
    if (!l || !r) return std::nullopt;
    switch (b->op) {
      case BinaryOp::Add: return *l + *r;
      case BinaryOp::Sub: return *l - *r;
      case BinaryOp::Mul: return *l * *r;
      case BinaryOp::FloorDiv:
        if (*r == 0) return std::nullopt;
        return (*l / *r) - ((*l % *r != 0) && ((*l < 0) != (*r < 0)));
      case BinaryOp::Mod:
        if (*r == 0) return std::nullopt;
        return ((*l % *r) + *r) % *r;
      default: return std::nullopt;
    }
  }
};

// Purity by the expression's kind (frontend/ASTVisitor.h): names and literals are pure, operators,
// conditionals and attributes when every subexpression is, calls by their builtin's effects.
struct PurityCheck : ASTVisitor<PurityCheck, bool> {
  FunctionContext& fc;
  explicit PurityCheck(FunctionContext& fc) : fc(fc) {}

  bool visitNameExpr(NameExpr*) { return true; }
  bool visitIntLiteralExpr(IntLiteralExpr*) { return true; }
  bool visitFloatLiteralExpr(FloatLiteralExpr*) { return true; }
  bool visitBoolLiteralExpr(BoolLiteralExpr*) { return true; }
  bool visitUnaryExpr(UnaryExpr* e) { return childrenPure(e); }
  bool visitBinaryExpr(BinaryExpr* e) { return childrenPure(e); }
  bool visitConditionalExpr(ConditionalExpr* e) { return childrenPure(e); }
  bool visitAttributeExpr(AttributeExpr* e) { return childrenPure(e); }
  bool childrenPure(Expr* e) {
    bool pure = true;
    forEachChild(e, [&](Node* c) { pure = pure && fc.isPure(cast<Expr>(c)); });
    return pure;
  }
  bool visitCallExpr(CallExpr* c) {
    const Type* t = c->callee->type;
    if (t && t->kind == TypeKind::DTypeValue) return c->args.size() == 1 && fc.isPure(c->args[0].value);
    if (!t || t->kind != TypeKind::Builtin || !t->builtin) return false;
    const BuiltinInfo& b = *t->builtin;
    if (b.has(eff::MemRead | eff::MemWrite | eff::Barrier | eff::GroupCollective | eff::WarpCollective | eff::Atomic |
              eff::Async | eff::SharedAlloc))
      return false;
    for (auto& a : c->args)
      if (!fc.isPure(a.value)) return false;
    return true;
  }
};
std::optional<int64_t> FunctionContext::constInt(Expr* e) {
  if (!e) return std::nullopt;
  return ConstIntEval(*this).visit(e);
}

// No memory reads, calls with effects or user calls: safe to evaluate eagerly.
bool FunctionContext::isPure(Expr* e) {
  if (!e) return true;
  return PurityCheck(*this).visit(e);
}

// The dispatch of lowering on an expression's kind (frontend/ASTVisitor.h); a kind without a
// handler here is refused with the name of what it is.
struct ExprLowering : ASTVisitor<ExprLowering, Lowered, I::Type> {
  FunctionContext& fc;
  explicit ExprLowering(FunctionContext& fc) : fc(fc) {}

  Lowered visitIntLiteralExpr(IntLiteralExpr* e, I::Type want) {
    I::Type t =
        want && I::isScalar(fc.elemOf(want)) ? fc.computeType(fc.elemOf(want)) : fc.ctx().scalar(I::ScalarKind::I32);
    if (I::baseScalar(t) == I::ScalarKind::I1) t = fc.ctx().scalar(I::ScalarKind::I32);
    return Lowered::val(fc.constant(static_cast<double>(e->value), t));
  }
  Lowered visitFloatLiteralExpr(FloatLiteralExpr* e, I::Type want) {
    I::Type t = want && I::isScalar(fc.elemOf(want)) && isFloatKind(I::baseScalar(fc.elemOf(want)))
                    ? fc.computeType(fc.elemOf(want))
                    : fc.ctx().scalar(I::ScalarKind::F32);
    return Lowered::val(fc.b_->constFloat(e->value, t));
  }
  Lowered visitBoolLiteralExpr(BoolLiteralExpr* e, I::Type) {
    return Lowered::val(fc.b_->constInt(e->value ? 1 : 0, fc.ctx().i1()));
  }
  Lowered visitNameExpr(NameExpr* e, I::Type want) { return fc.lowerName(e, want); }
  Lowered visitUnaryExpr(UnaryExpr* e, I::Type want) { return fc.lowerUnary(e, want); }
  Lowered visitBinaryExpr(BinaryExpr* e, I::Type want) { return fc.lowerBinary(e, want); }
  Lowered visitConditionalExpr(ConditionalExpr* e, I::Type want) { return fc.lowerConditional(e, want); }
  Lowered visitCallExpr(CallExpr* e, I::Type want) { return fc.lowerCall(e, want); }
  Lowered visitSubscriptExpr(SubscriptExpr* e, I::Type) { return fc.lowerSubscript(e); }
  Lowered visitAttributeExpr(AttributeExpr* e, I::Type) { return fc.lowerAttribute(e); }
  Lowered visitTupleExpr(TupleExpr* e, I::Type) { return elements(e->elements); }
  Lowered visitListExpr(ListExpr* e, I::Type) { return elements(e->elements); }
  Lowered visitNoneLiteralExpr(NoneLiteralExpr*, I::Type) { return Lowered(); }
  Lowered visitStringLiteralExpr(StringLiteralExpr* e, I::Type) { fc.unsupported(e->range, "a string"); }
  Lowered visitFStringExpr(FStringExpr* e, I::Type) { fc.unsupported(e->range, "an f-string"); }
  Lowered visitDictExpr(DictExpr* e, I::Type) { fc.unsupported(e->range, "a dict"); }
  Lowered visitComprehensionExpr(ComprehensionExpr* e, I::Type) { fc.unsupported(e->range, "a comprehension"); }
  Lowered visitSliceExpr(SliceExpr* e, I::Type) { fc.unsupported(e->range, "a slice outside a subscript"); }
  Lowered visitEllipsisExpr(EllipsisExpr* e, I::Type) { fc.unsupported(e->range, "'...' as a value"); }
  Lowered visitExpr(Expr* e, I::Type) { fc.unsupported(e->range, "this expression"); }
  Lowered visitStmt(Stmt* s, I::Type) { fc.unsupported(s->range, "this statement"); }

 private:
  Lowered elements(const std::vector<Expr*>& elems) {
    std::vector<Lowered> out;
    for (Expr* x : elems) out.push_back(fc.lower(x, nullptr));
    return Lowered::tuple(std::move(out));
  }
};

Lowered FunctionContext::lower(Expr* e, I::Type want) {
  if (!e) unsupported(SourceRange(), "a missing expression");
  loc(e);
  if (e->type && e->type->isError()) unsupported(e->range, "an expression that did not type-check");
  return ExprLowering(*this).visit(e, want);
}

Lowered FunctionContext::lowerName(NameExpr* e, I::Type want) {
  const Symbol* s = e->symbol;
  if (!s) unsupported(e->range, "the name '" + e->name + "'");
  if (e->name == "grid_groups" && (s->kind == SymbolKind::ShapeSymbol || s->kind == SymbolKind::Builtin)) {
    markNeedsGroup();
    return Lowered::val(op1(I::OpId::TileNumGroups, {}, ctx().index()));
  }
  switch (s->kind) {
    case SymbolKind::Variable:
    case SymbolKind::Parameter: {
      auto it = env_.find(s);
      if (it != env_.end()) return it->second;
      // Sema refuses it (sema/analyses/DefiniteAssignment.cpp); a backstop.
      auto d = dropped_.find(s);
      error(diag::err_maybe_undefined, e->range, e->name, d != dropped_.end() ? d->second : std::string("use"));
    }
    case SymbolKind::ShapeSymbol: {
      auto it = shapeDims_.find(e->name);
      if (it != shapeDims_.end()) return Lowered::val(it->second);
      if (info_)
        for (const ShapeBinding& sb : info_->shapeBindings) {
          if (sb.symbol != e->name) continue;
          for (auto& [ps, idx] : paramIndex_) {
            if (ps->name != sb.param) continue;
            I::Value* p = top_->arg(idx);
            if (p->type->kind != I::TypeKind::Tensor || sb.dim >= p->type->shape.size()) continue;
            I::Value* d =
                prologue(I::OpId::MemDim, ctx().index(), {{I::AttrId::Axis, I::Attribute::integer(sb.dim)}}, {p})
                    ->result();
            d->nameHint = e->name;
            shapeDims_[e->name] = d;
            return Lowered::val(d);
          }
        }
      unsupported(e->range, "the shape symbol '" + e->name + "' (not bound by a parameter of this function)");
    }
    case SymbolKind::Constant:
    case SymbolKind::AutotuneParam: {
      if (s->kind == SymbolKind::AutotuneParam && s->value && s->value->kind == ConstValue::Int)
        return Lowered::val(constant(static_cast<double>(s->value->i),
                                     want && I::isScalar(want) ? computeType(want) : ctx().scalar(I::ScalarKind::I32)));
      if (s->value && s->value->isNumber()) return lowerModuleConstant(s, want);
      unsupported(e->range, "the module-level name '" + e->name + "'");
    }
    case SymbolKind::Builtin:
      if (s->builtin && s->builtin->id == BuiltinId::GridGroups)
        return Lowered::val(op1(I::OpId::TileNumGroups, {}, ctx().index()));
      if (s->builtin && s->builtin->id == BuiltinId::Inf)
        return Lowered::val(b_->constFloat(INFINITY, want && I::isScalar(want) && I::isFloatLike(want)
                                                         ? computeType(want)
                                                         : ctx().scalar(I::ScalarKind::F32)));
      unsupported(e->range, "the builtin '" + e->name + "' used as a value");
    default: unsupported(e->range, "the name '" + e->name + "' (a " + symbolKindName(s->kind) + ") as a value");
  }
}

I::Value* FunctionContext::sliceView(I::Value* base, const std::vector<Argument>& indices, SubscriptExpr* e,
                                     bool& isElement, std::vector<I::Value*>& elementIdx) {
  I::Type t = base->type;
  size_t rank = t->shape.size();
  std::vector<Expr*> idx;
  std::vector<const Lowered*> blocks;
  for (const Argument& a : indices) {
    if (a.kind != Argument::Positional) unsupported(a.range, "a keyword subscript");
    if (auto* tu = dyn_cast<TupleExpr>(a.value); tu && !tu->parenthesized)
      for (Expr* x : tu->elements) idx.push_back(x);
    else
      idx.push_back(a.value);
  }
  bool anySlice = false;
  std::vector<Lowered> lvs(idx.size());
  for (size_t i = 0; i < idx.size(); ++i) {
    if (isa<SliceExpr>(idx[i])) {
      anySlice = true;
      continue;
    }
    lvs[i] = lower(idx[i]);
    if (lvs[i].kind == Lowered::Block)
      anySlice = true;
    else if (lvs[i].kind == Lowered::Tuple)
      unsupported(idx[i]->range, "a tuple index");
  }
  loc(e);
  if (idx.size() > rank)
    error(diag::err_index_count_mismatch, e->range, text(e->base->range), static_cast<unsigned>(rank),
          static_cast<unsigned>(idx.size()));
  if (!anySlice && idx.size() == rank) {
    isElement = true;
    for (size_t i = 0; i < idx.size(); ++i) elementIdx.push_back(value(lvs[i], idx[i]->range));
    return base;
  }
  isElement = false;
  // A view: offsets and static sizes per dimension (missing trailing indices are full slices).
  std::vector<I::Value*> offs;
  std::vector<I::Attribute> sizes;
  std::vector<int64_t> squeeze;
  std::string baseName = text(e->base->range);
  for (size_t d = 0; d < rank; ++d) {
    const I::Dim& full = t->shape[d];
    // A full extent: static, or symbolic (the slice keeps the symbol: Q[block] is [128, D]).
    auto fullSize = [&](SourceRange at) { return fullExtent(full, static_cast<unsigned>(d), at, baseName); };
    if (d >= idx.size()) {
      offs.push_back(b_->constIndex(0));
      sizes.push_back(fullSize(e->range));
      continue;
    }
    Expr* x = idx[d];
    if (auto* s = dyn_cast<SliceExpr>(x)) {
      if (s->step) {
        auto st = constInt(s->step);
        if (!st || *st != 1) unsupported(s->step->range, "a slice with a step");
      }
      I::Value* lo = s->lower ? scalarValue(s->lower, nullptr) : b_->constIndex(0);
      if (!s->lower && !s->upper) {
        offs.push_back(lo);
        sizes.push_back(fullSize(x->range));
        continue;
      }
      std::optional<int64_t> size = sliceSize(s, full);
      if (!size || *size < 0)
        error(diag::err_lower_dynamic_tile_shape, x->range, text(x->range), static_cast<unsigned>(d), baseName);
      offs.push_back(lo);
      sizes.push_back(I::Attribute::integer(*size));
    } else if (lvs[d].kind == Lowered::Block) {
      offs.push_back(lvs[d].v);
      sizes.push_back(I::Attribute::integer(lvs[d].size));
    } else {
      // An integer index next to slices selects one position and drops the dimension (numpy).
      offs.push_back(coerce(value(lvs[d], x->range), ctx().index(), x->range));
      sizes.push_back(I::Attribute::integer(1));
      squeeze.push_back(static_cast<int64_t>(d));
    }
  }
  waitFor(base, true);
  return slice(base, offs, sizes, squeeze);
}

// The static extent of slice `s` of a dimension of extent `full`: constant bounds, a constant
// lower bound of a static dimension, or `i:i+c`.
std::optional<int64_t> FunctionContext::sliceSize(SliceExpr* s, const I::Dim& full) {
  auto cl = constInt(s->lower), cu = constInt(s->upper);
  if (s->upper && cu && (!s->lower || cl)) return *cu - (cl ? *cl : 0);
  if (!s->upper && cl && full.isStatic()) return full.size - *cl;
  if (s->lower && s->upper) {
    if (auto* add = dyn_cast<BinaryExpr>(s->upper); add && add->op == BinaryOp::Add) {
      std::string l = text(s->lower->range);
      if (text(add->lhs->range) == l) return constInt(add->rhs);
      if (text(add->rhs->range) == l) return constInt(add->lhs);
    }
  }
  return std::nullopt;
}

// t[:, None], t[None, :]: a tile value with extents of 1 inserted where None stands (numpy's
// newaxis); every other index must be a whole `:`.
I::Value* FunctionContext::expandDims(I::Value* t, SubscriptExpr* e) {
  std::vector<I::Dim> shape;
  size_t next = 0;
  for (const Argument& a : e->indices) {
    std::vector<Expr*> parts;
    if (auto* tu = dyn_cast<TupleExpr>(a.value); tu && !tu->parenthesized)
      parts = tu->elements;
    else
      parts = {a.value};
    for (Expr* x : parts) {
      auto* sl = dyn_cast<SliceExpr>(x);
      if (isa<NoneLiteralExpr>(x)) {
        shape.push_back(I::Dim{1, {}});
      } else if (sl && !sl->lower && !sl->upper && !sl->step && next < t->type->shape.size()) {
        shape.push_back(t->type->shape[next++]);
      } else {
        unsupported(x->range, "this index of a tile value", "tile values take ':' and None (t[:, None])");
      }
    }
  }
  while (next < t->type->shape.size()) shape.push_back(t->type->shape[next++]);
  loc(e);
  return op1(I::OpId::TileReshape, {t}, ctx().tile(t->type->elem, shape));
}

Lowered FunctionContext::lowerSubscript(SubscriptExpr* e) {
  Lowered base = lower(e->base);
  if (base.kind == Lowered::Tuple) {
    if (e->indices.size() == 1)
      if (auto c = constInt(e->indices[0].value)) {
        int64_t i = *c < 0 ? *c + static_cast<int64_t>(base.elems.size()) : *c;
        if (i >= 0 && i < static_cast<int64_t>(base.elems.size())) return base.elems[i];
      }
    unsupported(e->range, "indexing a tuple with a non-constant index");
  }
  I::Value* b = value(base, e->base->range);
  if (b->type->kind == I::TypeKind::Tile) return Lowered::val(expandDims(b, e));
  if (!I::isView(b->type)) unsupported(e->range, "indexing a value of type " + I::printType(b->type));
  bool isElement = false;
  std::vector<I::Value*> idx;
  I::Value* v = sliceView(b, e->indices, e, isElement, idx);
  loc(e);
  if (!isElement) return Lowered::val(v);
  waitFor(b, true);
  std::vector<I::Value*> ops = {b};
  ops.insert(ops.end(), idx.begin(), idx.end());
  return Lowered::val(op1(I::OpId::MemLoad, ops, b->type->elem));
}

// A numeric module constant: its folded value, typed as declared (a weak literal takes the
// type the use wants).
Lowered FunctionContext::lowerModuleConstant(const Symbol* s, I::Type want) {
  I::Type t =
      s->type && s->type->kind == TypeKind::Scalar ? scalarType(s->type->dtype) : ctx().scalar(I::ScalarKind::I32);
  if (s->type && s->type->weak && want && I::isScalar(want)) t = computeType(want);
  return Lowered::val(constant(s->value->asDouble(), t));
}

Lowered FunctionContext::lowerAttribute(AttributeExpr* e) {
  const Type* bt = e->base->type;
  // `act.CLAMP_HI` with `import act`: a numeric constant of the imported module.
  if (auto* base = dyn_cast<NameExpr>(e->base);
      base && base->symbol && base->symbol->kind == SymbolKind::Module && bt && bt->module && bt->module->scope) {
    const Symbol* member = bt->module->scope->lookupLocal(e->name);
    if (member && member->kind == SymbolKind::Constant && member->value && member->value->isNumber())
      return lowerModuleConstant(member, I::Type());
    unsupported(e->range, "'" + text(e->range) + "' as a value");
  }
  if (bt && (bt->kind == TypeKind::Namespace || bt->kind == TypeKind::Builtin)) {
    if (e->type && e->type->kind == TypeKind::Scalar && e->name == "grid_groups")
      return Lowered::val(op1(I::OpId::TileNumGroups, {}, ctx().index()));
    unsupported(e->range, "'" + text(e->range) + "' as a value");
  }
  Lowered base = lower(e->base);
  if (base.kind == Lowered::Block && (e->name == "start" || e->name == "stop")) {
    // A block of a tile.range loop over a tensor: its first index, and one past its last (not
    // clipped at the tensor's end).
    loc(e);
    I::Type i64 = ctx().scalar(I::ScalarKind::I64);
    I::Value* start = coerce(base.v, i64, e->range);
    if (e->name == "start") return Lowered::val(start);
    return Lowered::val(op1(I::OpId::ArithAddI, {start, b_->constInt(base.size, i64)}, i64));
  }
  I::Value* b = value(base, e->base->range);
  loc(e);
  I::Type t = b->type;
  if (e->name == "shape" && (I::isView(t) || isShapedValue(t))) {
    std::vector<Lowered> dims;
    for (size_t i = 0; i < t->shape.size(); ++i) {
      if (t->shape[i].isStatic())
        dims.push_back(Lowered::val(b_->constIndex(t->shape[i].size)));
      else
        dims.push_back(
            Lowered::val(op1(I::OpId::MemDim, {b}, ctx().index(), {{I::AttrId::Axis, I::Attribute::integer(i)}})));
    }
    return Lowered::tuple(std::move(dims));
  }
  if (e->name == "ndim" && (I::isView(t) || isShapedValue(t)))
    return Lowered::val(b_->constInt(static_cast<int64_t>(t->shape.size()), ctx().scalar(I::ScalarKind::I64)));
  if (e->name == "T") {
    I::Value* tv = asTile(b, e->base->range);
    if (tv->type->kind != I::TypeKind::Tile || tv->type->shape.size() != 2)
      unsupported(e->range, "'.T' of a value that is not a rank-2 tile");
    return Lowered::val(
        op1(I::OpId::TileTranspose, {tv}, ctx().tile(tv->type->elem, {tv->type->shape[1], tv->type->shape[0]})));
  }
  unsupported(e->nameRange, "the attribute '." + e->name + "'");
}

}  // namespace tessera::irgen
