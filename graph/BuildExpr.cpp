// Building graphs: expressions (names, literals, operators, attributes, subscripts).
#include <cmath>

#include "frontend/ASTVisitor.h"
#include "graph/BuildContext.h"
#include "sema/Sema.h"

namespace tessera::graph {

std::string HValue::describe() const {
  switch (kind) {
    case Kind::None: return "None";
    case Kind::Value: return "a value of type " + value->type.str();
    case Kind::Const: return "the constant " + c.str();
    case Kind::Dim: return "the extent " + dim.str();
    case Kind::Tuple: return "a tuple of " + std::to_string(elems.size());
    case Kind::Function: return "the function '" + fn->name + "'";
    case Kind::Kernel: return "the kernel '" + fn->name + "'";
    case Kind::Builtin: return std::string("the builtin '") + builtin->name + "'";
    case Kind::Launch: return "a launch configuration";
    case Kind::Dtype: return std::string("the dtype ") + dtypeName(dtype);
    case Kind::Grad: return "the gradient of '" + fn->name + "'";
  }
  return "a value";
}

// ---- node creation

std::vector<Value*> FunctionBuilder::opN(OpId id, const std::vector<Value*>& operands, SourceRange at, Attrs attrs) {
  std::vector<graph::Type> types, results;
  for (Value* v : operands) types.push_back(unifier_.resolve(v->type));
  std::string error;
  if (!inferResultTypes(id, types, attrs, results, unifier_, error)) {
    diags_.report(diag::err_graph_op, at) << (opInfo(id).name + 6) << error;
    fail();
  }
  Node* n = g_.create(id, operands, results, std::move(attrs), at);
  std::vector<Value*> out;
  for (auto& r : n->results) out.push_back(r.get());
  return out;
}

Value* FunctionBuilder::op(OpId id, const std::vector<Value*>& operands, SourceRange at, Attrs attrs) {
  return opN(id, operands, at, std::move(attrs))[0];
}

Value* FunctionBuilder::scalarConstant(double v, DType d, SourceRange at) {
  Attrs a;
  a.set("value", isFloat(d) ? Attr::f(v) : Attr::i(static_cast<int64_t>(v)));
  a.set("dtype", Attr::s(dtypeName(d)));
  return op(OpId::Constant, {}, at, std::move(a));
}

Value* FunctionBuilder::castTo(Value* v, DType d, SourceRange at) {
  if (v->type.dtype == d) return v;
  Attrs a;
  a.set("dtype", Attr::s(dtypeName(d)));
  return op(OpId::Cast, {v}, at, std::move(a));
}

Value* FunctionBuilder::asValue(const HValue& h, SourceRange at, const char* what, DType like) {
  if (h.is(HValue::Kind::Value)) return h.value;
  if (auto c = asConst(h); c && c->isNumber()) {
    DType d = like;
    if (c->kind == ConstValue::Float && !isFloat(d)) d = DType::FP32;
    return scalarConstant(c->asDouble(), d, at);
  }
  if (h.is(HValue::Kind::Dim) && h.dim.isConst()) return scalarConstant(static_cast<double>(h.dim.value()), like, at);
  diags_.report(diag::err_graph_not_tensor, at) << what << h.describe();
  fail();
}

Value* FunctionBuilder::asTensor(const HValue& h, SourceRange at, const char* what) {
  if (h.is(HValue::Kind::Value) && h.value->type.isTensor()) return h.value;
  diags_.report(diag::err_graph_not_tensor, at) << what << h.describe();
  fail();
}

// ---- constants and extents

std::optional<ConstValue> FunctionBuilder::asConst(const HValue& h) const {
  if (h.is(HValue::Kind::Const)) return h.c;
  if (h.is(HValue::Kind::Dim) && h.dim.isConst()) return ConstValue::ofInt(h.dim.value());
  return std::nullopt;
}

std::optional<int64_t> FunctionBuilder::asInt(const HValue& h) const {
  auto c = asConst(h);
  if (c && c->kind == ConstValue::Int) return c->i;
  if (c && c->kind == ConstValue::Bool) return c->b;
  return std::nullopt;
}

std::optional<graph::Dim> FunctionBuilder::asDim(const HValue& h) const {
  if (h.is(HValue::Kind::Dim)) return h.dim;
  if (auto i = asInt(h)) return graph::Dim::constant(*i);
  return std::nullopt;
}

HValue FunctionBuilder::binary(BinaryOp op, const HValue& l, const HValue& r, SourceRange at) {
  auto cl = asConst(l), cr = asConst(r);
  if (cl && cr) {
    if (auto v = foldBinaryConst(op, *cl, *cr, nullptr, nullptr)) return HValue::constant(*v);
    diags_.report(diag::err_graph_unsupported, at)
        << ("'" + std::string(binaryOpSpelling(op)) + "' on " + l.describe() + " and " + r.describe()) << "";
    fail();
  }
  // Extents: x.shape[0] * 2, N // heads.
  auto dl = asDim(l), dr = asDim(r);
  if (dl && dr) {
    switch (op) {
      case BinaryOp::Add: return HValue::ofDim(*dl + *dr);
      case BinaryOp::Sub: return HValue::ofDim(*dl - *dr);
      case BinaryOp::Mul: return HValue::ofDim(*dl * *dr);
      case BinaryOp::FloorDiv: return HValue::ofDim(*dl / *dr);
      case BinaryOp::Mod: return HValue::ofDim(graph::Dim::binary(graph::Dim::Op::Mod, *dl, *dr));
      default: break;
    }
  }
  if (!l.is(HValue::Kind::Value) && !r.is(HValue::Kind::Value)) {
    diags_.report(diag::err_graph_unsupported, at)
        << ("'" + std::string(binaryOpSpelling(op)) + "' on " + l.describe() + " and " + r.describe()) << "";
    fail();
  }
  DType like = l.is(HValue::Kind::Value) ? l.value->type.dtype : r.value->type.dtype;
  Value* a = asValue(l, at, "the left operand", like);
  Value* b = asValue(r, at, "the right operand", like);
  switch (op) {
    case BinaryOp::Add: return HValue::of(this->op(OpId::Add, {a, b}, at));
    case BinaryOp::Sub: return HValue::of(this->op(OpId::Sub, {a, b}, at));
    case BinaryOp::Mul: return HValue::of(this->op(OpId::Mul, {a, b}, at));
    case BinaryOp::Div: return HValue::of(this->op(OpId::Div, {a, b}, at));
    case BinaryOp::Pow: return HValue::of(this->op(OpId::Pow, {a, b}, at));
    case BinaryOp::MatMul: return HValue::of(this->op(OpId::MatMul, {a, b}, at));
    default: break;
  }
  diags_.report(diag::err_graph_unsupported, at) << ("'" + std::string(binaryOpSpelling(op)) + "' on tensors")
                                                 << "; use the elementwise operators + - * / ** and @";
  fail();
}

// ---- expressions

namespace {
// A builtin named as a value (`tessera.relu`, `tile.load`): sema typed it.
std::optional<HValue> builtinValue(const Expr* e) {
  if (!e->type || e->type->kind != TypeKind::Builtin || !e->type->builtin) return std::nullopt;
  HValue h;
  h.kind = HValue::Kind::Builtin;
  h.builtin = e->type->builtin;
  return h;
}
HValue dtypeValue(DType d) {
  HValue h;
  h.kind = HValue::Kind::Dtype;
  h.dtype = d;
  return h;
}
}  // namespace

// The dispatch of host evaluation on the expression's kind (frontend/ASTVisitor.h): expressions
// are evaluated at build time to constants, extents, tuples or graph values; the others are
// refused.
struct FunctionBuilder::ExprEval : ConstASTVisitor<ExprEval, HValue> {
  FunctionBuilder& b;
  explicit ExprEval(FunctionBuilder& b) : b(b) {}

  HValue visitIntLiteralExpr(const IntLiteralExpr* e) {
    return HValue::constant(ConstValue::ofInt(static_cast<long long>(e->value)));
  }
  HValue visitFloatLiteralExpr(const FloatLiteralExpr* e) { return HValue::constant(ConstValue::ofFloat(e->value)); }
  HValue visitStringLiteralExpr(const StringLiteralExpr* e) { return HValue::constant(ConstValue::ofStr(e->value)); }
  HValue visitBoolLiteralExpr(const BoolLiteralExpr* e) { return HValue::constant(ConstValue::ofBool(e->value)); }
  HValue visitNoneLiteralExpr(const NoneLiteralExpr*) { return HValue::none(); }
  HValue visitTupleExpr(const TupleExpr* e) { return items(e->elements); }
  HValue visitListExpr(const ListExpr* e) { return items(e->elements); }
  HValue items(const std::vector<Expr*>& elements) {
    std::vector<HValue> items;
    for (Expr* el : elements) items.push_back(b.eval(el));
    return HValue::tuple(std::move(items));
  }
  HValue visitNameExpr(const NameExpr* n) {
    // Only the innermost frame: inlined functions do not see their caller's locals.
    if (!b.frames_.empty()) {
      auto it = b.frames_.back().vars.find(n->name);
      if (it != b.frames_.back().vars.end()) return it->second;
    }
    const Symbol* sym = n->symbol;
    if (auto h = builtinValue(n)) return *h;
    if (sym && sym->kind == SymbolKind::Function && sym->function) {
      HValue h;
      const FunctionInfo* info = functionInfo(b.sema_, sym->function);
      h.kind = info && info->isKernel() ? HValue::Kind::Kernel : HValue::Kind::Function;
      h.fn = sym->function;
      return h;
    }
    if (sym && sym->kind == SymbolKind::DType && n->type && n->type->kind == TypeKind::DTypeValue)
      return dtypeValue(n->type->dtype);
    if (auto c = evalConst(n, nullptr)) return HValue::constant(*c);
    // A shape symbol of the entry function's annotations (`X: f32[N]`) is that extent, bound
    // when the function is called.
    if (sym && sym->kind == SymbolKind::ShapeSymbol && b.depth() == 1 && b.entryShapeSymbol(n->name))
      return HValue::ofDim(Dim::symbol(n->name));
    b.diags_.report(diag::err_graph_unsupported, n->range)
        << ("the name '" + n->name + "' (" + (sym ? symbolKindName(sym->kind) : "undefined") + ")")
        << "; host functions use their parameters, module constants, functions and builtins";
    b.fail();
  }
  HValue visitUnaryExpr(const UnaryExpr* u) {
    HValue v = b.eval(u->operand);
    if (u->op == UnaryOp::Pos) return v;
    if (auto c = b.asConst(v)) {
      if (u->op == UnaryOp::Neg && c->kind == ConstValue::Int) return HValue::constant(ConstValue::ofInt(-c->i));
      if (u->op == UnaryOp::Neg && c->kind == ConstValue::Float) return HValue::constant(ConstValue::ofFloat(-c->f));
      if (u->op == UnaryOp::Not && c->isNumber()) return HValue::constant(ConstValue::ofBool(c->asDouble() == 0));
    }
    if (u->op == UnaryOp::Neg && v.is(HValue::Kind::Value)) return HValue::of(b.op(OpId::Neg, {v.value}, u->range));
    b.diags_.report(diag::err_graph_unsupported, u->range)
        << ("'" + std::string(unaryOpSpelling(u->op)) + "' on " + v.describe()) << "";
    b.fail();
  }
  HValue visitBinaryExpr(const BinaryExpr* e) {
    HValue l = b.eval(e->lhs);
    if ((e->op == BinaryOp::And || e->op == BinaryOp::Or) && b.asConst(l)) {
      bool truth = b.asConst(l)->asDouble() != 0;
      if ((e->op == BinaryOp::And) != truth) return l;  // short circuit
    }
    HValue r = b.eval(e->rhs);
    return b.binary(e->op, l, r, e->opRange);
  }
  HValue visitConditionalExpr(const ConditionalExpr* c) {
    auto cv = b.asConst(b.eval(c->cond));
    if (!cv) {
      b.diags_.report(diag::err_graph_dynamic_control, c->cond->range) << "if";
      b.fail();
    }
    return b.eval(cv->asDouble() != 0 ? c->thenExpr : c->elseExpr);
  }
  HValue visitAttributeExpr(const AttributeExpr* a) {
    if (auto h = builtinValue(a)) return *h;
    HValue base = b.eval(a->base);
    if (base.is(HValue::Kind::Value) && base.value->type.isTensor()) {
      Value* v = base.value;
      if (a->name == "T") return HValue::of(b.op(OpId::Transpose, {v}, a->nameRange));
      if (a->name == "shape") {
        std::vector<HValue> dims;
        for (const graph::Dim& d : b.unifier_.resolve(v->type.shape)) dims.push_back(HValue::ofDim(d));
        return HValue::tuple(std::move(dims));
      }
      if (a->name == "ndim") return HValue::constant(ConstValue::ofInt(static_cast<long long>(v->type.rank())));
      if (a->name == "dtype") return dtypeValue(v->type.dtype);
    }
    b.diags_.report(diag::err_graph_unsupported, a->nameRange)
        << ("the attribute '" + a->name + "' of " + base.describe()) << "";
    b.fail();
  }
  HValue visitSubscriptExpr(const SubscriptExpr* s) {
    HValue base = b.eval(s->base);
    if (base.is(HValue::Kind::Kernel)) {  // k[grid, block, stream=s](args)
      HValue cfg;
      cfg.kind = HValue::Kind::Launch;
      cfg.fn = base.fn;
      for (const Argument& arg : s->indices)
        if (arg.kind == Argument::Positional && arg.value) cfg.elems.push_back(b.eval(arg.value));
      cfg.gridRank = cfg.elems.empty() ? 0 : 1;
      return cfg;
    }
    if (base.is(HValue::Kind::Tuple) && s->indices.size() == 1 && s->indices[0].value) {
      auto i = b.asInt(b.eval(s->indices[0].value));
      int64_t n = static_cast<int64_t>(base.elems.size());
      if (i && *i >= -n && *i < n) return base.elems[*i < 0 ? *i + n : *i];
    }
    if (base.is(HValue::Kind::Value) && s->indices.size() == 1 && s->indices[0].value &&
        isa<SliceExpr>(s->indices[0].value)) {
      auto* sl = cast<SliceExpr>(s->indices[0].value);
      if (!sl->lower && !sl->upper && !sl->step) return base;
    }
    b.diags_.report(diag::err_graph_unsupported, s->range)
        << ("indexing " + base.describe()) << "; index tensors inside kernels";
    b.fail();
  }
  HValue visitCallExpr(const CallExpr* c) { return b.call(c); }
  HValue visitNode(const tessera::Node* e) {
    b.diags_.report(diag::err_graph_unsupported, e->range) << "this expression" << "";
    b.fail();
  }
};

HValue FunctionBuilder::eval(const Expr* e) { return ExprEval(*this).visit(e); }

}  // namespace tessera::graph
