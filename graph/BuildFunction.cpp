// Building graphs: the module loop, entry parameters, statements and @autodiff.
#include <set>

#include "frontend/ASTVisitor.h"
#include "graph/Autodiff.h"
#include "graph/BuildContext.h"
#include "graph/Verifier.h"
#include "sema/Sema.h"

namespace tessera::graph {

const FunctionInfo* functionInfo(const SemaContext& sema, const FunctionDefStmt* def) {
  auto it = sema.functions.find(def);
  return it == sema.functions.end() ? nullptr : it->second.get();
}

void FunctionBuilder::fail() { throw BuildAbort{}; }

namespace {

Access accessOf(const tessera::Type* t) {
  if (!t || t->kind != TypeKind::Tensor) return Access::Read;
  switch (t->privilege) {
    case Privilege::Write: return Access::Write;
    case Privilege::ReduceSum: return Access::ReduceSum;
    case Privilege::ReduceMax: return Access::ReduceMax;
    case Privilege::ReduceMin: return Access::ReduceMin;
    default: return t->mut ? Access::Write : Access::Read;
  }
}

// The decorators that matter to the host level: @jit(capture_graph=True), @graph.module("n"),
// @autodiff.
void readDecorators(const FunctionDefStmt* def, Attrs& attrs, bool& autodiff) {
  autodiff = false;
  for (const Decorator& d : def->decorators) {
    const Expr* head = d.expr;
    const CallExpr* call = dyn_cast<CallExpr>(const_cast<Expr*>(d.expr));
    if (call) head = call->callee;
    if (!head || !head->type || head->type->kind != TypeKind::Builtin || !head->type->builtin) continue;
    switch (head->type->builtin->id) {
      case BuiltinId::Jit:
        attrs.set("jit", Attr::b(true));
        if (call)
          for (const Argument& a : call->args)
            if (a.keyword == "capture_graph")
              if (auto c = evalConst(a.value, nullptr); c && c->isNumber() && c->asDouble() != 0)
                attrs.set("capture_graph", Attr::b(true));
        break;
      case BuiltinId::GraphModule:
        if (call && !call->args.empty())
          if (auto c = evalConst(call->args[0].value, nullptr); c && c->kind == ConstValue::Str)
            attrs.set("module", Attr::s(c->s));
        break;
      case BuiltinId::Autodiff:
        autodiff = true;
        attrs.set("autodiff", Attr::b(true));
        break;
      default: break;
    }
  }
}

}  // namespace

void FunctionBuilder::buildEntry(const FunctionDefStmt* def, const FunctionInfo* info) {
  g_.name = def->name;
  g_.loc = def->nameRange;
  bool autodiff = false;  // also recorded as the graph's `autodiff` attribute
  readDecorators(def, g_.attrs, autodiff);
  frames_.push_back(Frame{def, {}, std::nullopt, def->nameRange});
  inlining_.push_back(def);
  const tessera::Type* fnType = info ? info->type : nullptr;
  for (size_t i = 0; i < def->params.size(); ++i) {
    const tessera::Param& p = def->params[i];
    if (p.paramKind != tessera::Param::Normal) {
      diags_.report(diag::err_graph_entry_param, p.range)
          << p.name << def->name << "is variadic; an entry point takes a fixed list of tensors and scalars";
      fail();
    }
    const tessera::Type* t = fnType && i < fnType->elems.size() ? fnType->elems[i] : nullptr;
    graph::Type gt;
    if (t && t->kind == TypeKind::Scalar) {
      gt = graph::Type::scalar(t->dtype);
    } else if (!t || t->kind == TypeKind::Tensor || t->isDynamic()) {
      DType d = t && t->kind == TypeKind::Tensor && t->dtypeKnown ? t->dtype : DType::FP32;
      Shape s;
      if (t && t->kind == TypeKind::Tensor && t->rankKnown) {
        for (size_t k = 0; k < t->dims.size(); ++k) {
          auto dim = Dim::fromExtent(t->dims[k]);
          if (!dim) {
            std::string sym = p.name + "_" + std::to_string(k);
            unifier_.flexible.insert(sym);
            dim = Dim::symbol(sym);
          }
          s.push_back(*dim);
        }
      } else {
        for (unsigned k = 0; k < opts_.defaultRank; ++k) {
          std::string sym = p.name + "_" + std::to_string(k);
          unifier_.flexible.insert(sym);
          s.push_back(Dim::symbol(sym));
        }
      }
      gt = graph::Type::tensor(d, s);
    } else {
      diags_.report(diag::err_graph_entry_param, p.range)
          << p.name << def->name << ("has type '" + t->str() + "'; an entry point takes tensors and scalars");
      fail();
    }
    Value* v = g_.addParam(p.name, gt, accessOf(t));
    paramByName_[p.name] = v;
    frame().vars[p.name] = HValue::of(v);
  }
  execBlock(def->body);
  // Parameters the body wrote (Y[:] = ..., Y += ..., kernels writing them) are stored back.
  for (const Param& p : g_.params) {
    auto it = writes_.find(p.value.get());
    if (it == writes_.end()) continue;
    opN(OpId::Store, {p.value.get(), it->second}, def->nameRange);
  }
  if (frame().returned) {
    const HValue& r = *frame().returned;
    std::vector<HValue> items = r.is(HValue::Kind::Tuple) ? r.elems : std::vector<HValue>{r};
    if (!r.is(HValue::Kind::None))
      for (const HValue& item : items) g_.results.push_back(asValue(item, def->nameRange, "a returned value"));
  }
  // Extents settle once every rule has run: substitute what unification bound.
  for (Param& p : g_.params) p.value->type = unifier_.resolve(p.value->type);
  for (auto& n : g_.nodes) {
    for (auto& r : n->results) r->type = unifier_.resolve(r->type);
    for (auto& [k, a] : n->attrs.mutableItems()) {
      Shape s;
      if ((k == "shape") && a.asDims(s)) a = Attr::dims(unifier_.resolve(s));
    }
  }
}

// ---- statements

void FunctionBuilder::execBlock(const Block& b) {
  for (const Stmt* s : b.stmts) {
    if (frame().returned) return;
    exec(s);
  }
}

void FunctionBuilder::rebind(const Expr* target, const HValue& v) {
  if (auto* n = dyn_cast<NameExpr>(const_cast<Expr*>(target))) {
    // As in Python, `Y = v` rebinds the name; the caller's tensor keeps its elements.
    Value* p = depth() == 1 ? entryParam(n->name) : nullptr;
    if (p && g_.params[p->index].access != Access::Read && frame().vars[n->name].value == p)
      diags_.report(diag::warn_graph_param_rebound, target->range) << n->name;
    frame().vars[n->name] = v;
    return;
  }
  if (auto* t = dyn_cast<TupleExpr>(const_cast<Expr*>(target))) {
    if (!v.is(HValue::Kind::Tuple) || v.elems.size() != t->elements.size()) {
      diags_.report(diag::err_graph_unsupported, target->range)
          << ("unpacking " + v.describe() + " into " + std::to_string(t->elements.size()) + " names") << "";
      fail();
    }
    for (size_t i = 0; i < t->elements.size(); ++i) rebind(t->elements[i], v.elems[i]);
    return;
  }
  if (auto* l = dyn_cast<ListExpr>(const_cast<Expr*>(target))) {
    TupleExpr tmp(l->range);
    tmp.elements = l->elements;
    rebind(&tmp, v);
    return;
  }
  if (auto* s = dyn_cast<SubscriptExpr>(const_cast<Expr*>(target))) {
    writeParam(s, v, false, target->range);
    return;
  }
  diags_.report(diag::err_graph_unsupported, target->range) << "assigning to this target" << "";
  fail();
}

// `Y[:] = v` (whole-tensor store) and `Y += v` (accumulation) into a parameter of the entry
// function. The new value is what later reads of Y see; it is stored back at the end.
void FunctionBuilder::writeParam(const Expr* target, const HValue& v, bool accumulate, SourceRange at) {
  const Expr* base = target;
  if (auto* s = dyn_cast<SubscriptExpr>(const_cast<Expr*>(target))) {
    bool whole = s->indices.size() == 1 && s->indices[0].value &&
                 ((isa<SliceExpr>(s->indices[0].value) && !cast<SliceExpr>(s->indices[0].value)->lower &&
                   !cast<SliceExpr>(s->indices[0].value)->upper && !cast<SliceExpr>(s->indices[0].value)->step) ||
                  isa<EllipsisExpr>(s->indices[0].value));
    if (!whole) {
      diags_.report(diag::err_graph_unsupported, target->range)
          << "storing into part of a tensor" << "; store a whole tensor ('Y[:] = ...') or launch a kernel";
      fail();
    }
    base = s->base;
  }
  auto* name = dyn_cast<NameExpr>(const_cast<Expr*>(base));
  auto pit = name ? paramByName_.find(name->name) : paramByName_.end();
  if (pit == paramByName_.end() || frames_.size() != 1) {
    diags_.report(diag::err_graph_unsupported, target->range)
        << "writing into a tensor that is not a parameter of the entry function"
        << "; return the new value instead";
    fail();
  }
  Value* param = pit->second;
  Access access = g_.params[param->index].access;
  if (access == Access::Read) {
    diags_.report(diag::err_graph_write_readonly, target->range) << g_.name << name->name;
    fail();
  }
  if ((access == Access::ReduceSum && !accumulate) || access == Access::ReduceMax || access == Access::ReduceMin) {
    // sema admits only `+=` into a reduce_sum region (err_region_reduce_only); kept for graphs
    // built from modules sema did not see whole.
    diags_.report(diag::err_graph_unsupported, target->range)
        << ("this update of the 'Region[" + std::string(accessName(access)) + "]' parameter '" + name->name + "'")
        << "; only '+=' into a reduce_sum region is";
    fail();
  }
  HValue current = frame().vars[name->name];
  Value* cur = asTensor(current, at, "the destination");
  Value* val = asValue(v, at, "the stored value", cur->type.dtype);
  if (accumulate) val = op(OpId::Add, {cur, val}, at);
  val = castTo(val, param->type.dtype, at);
  bool same = val->type.isTensor() && val->type.rank() == param->type.rank();
  for (size_t i = 0; same && i < param->type.rank(); ++i) {
    Dim a = unifier_.resolve(val->type.shape[i]);
    same = !(a.isConst() && a.value() == 1 && unifier_.resolve(param->type.shape[i]) != a) &&
           unifier_.unify(param->type.shape[i], val->type.shape[i]);
  }
  if (!same)
    val = op(OpId::BroadcastTo, {val}, at, [&] {
      Attrs a;
      a.set("shape", Attr::dims(param->type.shape));
      return a;
    }());
  frame().vars[name->name] = HValue::of(val);
  writes_[param] = val;
}

// The dispatch of host execution on the statement's kind (frontend/ASTVisitor.h): statements run
// at build time, unrolling loops and taking branches on constants; the others are refused.
struct FunctionBuilder::StmtExec : ConstASTVisitor<StmtExec> {
  FunctionBuilder& b;
  explicit StmtExec(FunctionBuilder& b) : b(b) {}

  void visitExprStmt(const ExprStmt* s) {
    if (isa<StringLiteralExpr>(s->expr) || isa<EllipsisExpr>(s->expr)) return;  // docstrings
    b.eval(s->expr);
  }
  void visitAssignStmt(const AssignStmt* a) {
    HValue v = b.eval(a->value);
    for (const Expr* t : a->targets) b.rebind(t, v);
  }
  void visitAugAssignStmt(const AugAssignStmt* a) {
    HValue r = b.eval(a->value);
    const Expr* t = a->target;
    auto* n = dyn_cast<NameExpr>(t);
    bool isParam =
        n && b.paramByName_.count(n->name) && b.frames_.size() == 1 && b.frame().vars[n->name].is(HValue::Kind::Value);
    if (isParam || isa<SubscriptExpr>(t)) {
      if (a->op != BinaryOp::Add) {
        const Expr* base = isa<SubscriptExpr>(t) ? cast<SubscriptExpr>(t)->base : t;
        auto* bn = dyn_cast<NameExpr>(base);
        auto pit = bn ? b.paramByName_.find(bn->name) : b.paramByName_.end();
        if (pit != b.paramByName_.end() && b.g_.params[pit->second->index].access == Access::ReduceSum) {
          b.diags_.report(diag::err_graph_unsupported, t->range)
              << ("this update of the 'Region[reduce_sum]' parameter '" + bn->name + "'")
              << "; only '+=' into a reduce_sum region is";
          b.fail();
        }
        HValue cur = b.eval(base);
        b.writeParam(t, b.binary(a->op, cur, r, a->opRange), false, a->range);
        return;
      }
      b.writeParam(t, r, true, a->range);
      return;
    }
    HValue cur = b.eval(t);
    b.rebind(t, b.binary(a->op, cur, r, a->opRange));
  }
  void visitAnnAssignStmt(const AnnAssignStmt* a) {
    if (a->value) b.rebind(a->target, b.eval(a->value));
  }
  void visitPassStmt(const PassStmt*) {}
  void visitReturnStmt(const ReturnStmt* r) { b.frame().returned = r->value ? b.eval(r->value) : HValue::none(); }
  void visitIfStmt(const IfStmt* i) {
    HValue c = b.eval(i->cond);
    auto cv = b.asConst(c);
    if (!cv) {
      b.diags_.report(diag::err_graph_dynamic_control, i->cond->range) << (i->isElif ? "elif" : "if");
      b.fail();
    }
    bool truth = cv->kind == ConstValue::Str ? !cv->s.empty() : cv->asDouble() != 0;
    b.execBlock(truth ? i->thenBlock : i->elseBlock);
  }
  void visitForStmt(const ForStmt* f) {
    HValue it = b.eval(f->iter);
    if (!it.is(HValue::Kind::Tuple)) {
      b.diags_.report(diag::err_graph_dynamic_control, f->iter->range) << "for";
      b.fail();
    }
    for (const HValue& item : it.elems) {
      b.rebind(f->target, item);
      b.execBlock(f->body);
      if (b.frame().returned) return;
    }
    b.execBlock(f->elseBlock);
  }
  void visitWhileStmt(const WhileStmt* s) {
    b.diags_.report(diag::err_graph_dynamic_control, s->range) << "while";
    b.fail();
  }
  void visitWithStmt(const WithStmt* w) {
    b.diags_.report(diag::err_graph_unsupported, w->range)
        << "'with'" << "; a host function is captured as a whole with @jit(capture_graph=True)";
    b.fail();
  }
  void visitFunctionDefStmt(const FunctionDefStmt* s) {
    b.diags_.report(diag::err_graph_unsupported, s->range) << "a nested function" << "; define it at module level";
    b.fail();
  }
  void visitImportStmt(const ImportStmt* s) { refuseImport(s); }
  void visitImportFromStmt(const ImportFromStmt* s) { refuseImport(s); }
  void refuseImport(const Stmt* s) {
    b.diags_.report(diag::err_graph_unsupported, s->range) << "an import" << "; import at module level";
    b.fail();
  }
  void visitBreakStmt(const BreakStmt* s) { refuseLoopExit(s, "'break'"); }
  void visitContinueStmt(const ContinueStmt* s) { refuseLoopExit(s, "'continue'"); }
  void refuseLoopExit(const Stmt* s, const char* what) {
    b.diags_.report(diag::err_graph_unsupported, s->range) << what << " in an unrolled loop";
    b.fail();
  }
  void visitNode(const tessera::Node* s) {
    b.diags_.report(diag::err_graph_unsupported, s->range) << "this statement" << "";
    b.fail();
  }
};

void FunctionBuilder::exec(const Stmt* s) {
  // Unrolled loops nest: a budget keeps compile time and graph size bounded on any source.
  if (++statements_ > kMaxStatements) {
    diags_.report(diag::err_graph_unsupported, s->range)
        << ("host code that runs more than " + std::to_string(kMaxStatements) + " statements at compile time")
        << "; unrolled loops nest too deeply";
    fail();
  }
  StmtExec(*this).visit(s);
}

HValue FunctionBuilder::callFunction(const FunctionDefStmt* def, const std::vector<HValue>& args,
                                     const std::vector<std::pair<std::string, HValue>>& kwargs, SourceRange at) {
  for (const FunctionDefStmt* d : inlining_)
    if (d == def) {
      diags_.report(diag::err_graph_recursive, at) << def->name;
      fail();
    }
  Frame f;
  f.def = def;
  f.callSite = at;
  size_t pos = 0;
  for (const tessera::Param& p : def->params) {
    if (p.paramKind != tessera::Param::Normal) {
      diags_.report(diag::err_graph_unsupported, p.range) << "a variadic parameter of an inlined function" << "";
      fail();
    }
    const HValue* given = nullptr;
    if (pos < args.size()) given = &args[pos++];
    for (const auto& [k, v] : kwargs)
      if (k == p.name) given = &v;
    if (given) {
      f.vars[p.name] = *given;
    } else if (p.defaultValue) {
      f.vars[p.name] = eval(p.defaultValue);
    } else {
      diags_.report(diag::err_graph_unsupported, at)
          << ("calling '" + def->name + "' without a value for parameter '" + p.name + "'") << "";
      fail();
    }
  }
  if (pos < args.size()) {
    diags_.report(diag::err_graph_unsupported, at)
        << ("calling '" + def->name + "' with " + std::to_string(args.size()) + " arguments") << "";
    fail();
  }
  frames_.push_back(std::move(f));
  inlining_.push_back(def);
  try {
    execBlock(def->body);
  } catch (BuildAbort&) {
    diags_.report(diag::note_graph_called_from, at) << def->name;
    throw;
  }
  inlining_.pop_back();
  HValue r = frames_.back().returned ? *frames_.back().returned : HValue::none();
  frames_.pop_back();
  return r;
}

// ---- the module

namespace {

bool buildOne(const FunctionDefStmt* def, const FunctionInfo* info, const SemaContext& sema, DiagnosticEngine& diags,
              const BuildOptions& opts, GraphModule& m) {
  auto g = std::make_unique<Graph>();
  FunctionBuilder b(sema, diags, opts, *g);
  try {
    b.buildEntry(def, info);
  } catch (BuildAbort&) {
    return false;
  }
  bool autodiff = g->attrs.has("autodiff");
  m.graphs.push_back(std::move(g));
  if (!autodiff) return true;
  // @autodiff: <name>_backward(inputs..., cotangents of the results...) -> the gradients of the
  // floating-point tensor inputs. It recomputes the forward pass (it is an entry point of its
  // own, so nothing of the forward call needs to be kept between the two).
  auto bg = std::make_unique<Graph>();
  FunctionBuilder bb(sema, diags, opts, *bg);
  try {
    bb.buildEntry(def, info);
  } catch (BuildAbort&) {
    return false;
  }
  bg->name = def->name + "_backward";
  bg->attrs = Attrs();
  bg->attrs.set("jit", Attr::b(true));
  bg->attrs.set("backward_of", Attr::symbolRef(def->name));
  if (!makeBackward(*bg, diags)) return false;
  m.graphs.push_back(std::move(bg));
  return true;
}

}  // namespace

std::unique_ptr<GraphModule> buildGraphs(const Module& ast, const SemaContext& sema, DiagnosticEngine& diags,
                                         const BuildOptions& opts) {
  auto m = std::make_unique<GraphModule>();
  m->name = std::string(sema.sm.bufferName(ast.file));
  unsigned before = diags.errorCount();
  for (const Stmt* s : ast.stmts) {
    auto* f = dyn_cast<FunctionDefStmt>(const_cast<Stmt*>(s));
    if (!f) continue;
    const FunctionInfo* info = functionInfo(sema, f);
    if (!info || info->kind != FunctionKind::Jit) continue;
    buildOne(f, info, sema, diags, opts, *m);
  }
  if (diags.errorCount() != before) return nullptr;
  if (!verifyModule(*m, diags)) return nullptr;
  return m;
}

}  // namespace tessera::graph
