// Building graphs: calls of user host functions (inlined), user kernels (launch nodes), launch
// configurations.
#include <set>

#include "frontend/ASTVisitor.h"
#include "graph/Autodiff.h"
#include "graph/BuildContext.h"
#include "sema/Sema.h"

namespace tessera::graph {

HValue FunctionBuilder::call(const CallExpr* c) {
  HValue callee = eval(c->callee);
  std::vector<HValue> args;
  std::vector<const Expr*> argExprs;
  std::vector<std::pair<std::string, HValue>> kwargs;
  for (const Argument& a : c->args) {
    if (a.kind == Argument::Star || a.kind == Argument::DoubleStar || !a.value) {
      diags_.report(diag::err_graph_unsupported, a.range) << "'*' and '**' arguments" << "";
      fail();
    }
    HValue v = eval(a.value);
    if (a.kind == Argument::Keyword)
      kwargs.emplace_back(a.keyword, std::move(v));
    else {
      args.push_back(std::move(v));
      argExprs.push_back(a.value);
    }
  }
  switch (callee.kind) {
    case HValue::Kind::Builtin: return builtin(*callee.builtin, c, args, kwargs);
    case HValue::Kind::Function: return callFunction(callee.fn, args, kwargs, c->range);
    case HValue::Kind::Grad: return gradCall(callee.fn, args, kwargs, c->range);
    case HValue::Kind::Kernel: return launchKernel(HValue(), callee.fn, args, argExprs, c->range);
    case HValue::Kind::Launch:
      if (!callee.fn) {  // launch.grid(...)(k)
        if (args.size() != 1 || !args[0].is(HValue::Kind::Kernel)) {
          diags_.report(diag::err_graph_unsupported, c->range)
              << "applying a launch configuration to something other than one kernel" << "";
          fail();
        }
        callee.fn = args[0].fn;
        return callee;
      }
      return launchKernel(callee, callee.fn, args, argExprs, c->range);
    case HValue::Kind::Dtype:
      if (args.size() == 1 && args[0].is(HValue::Kind::Value))
        return HValue::of(castTo(args[0].value, callee.dtype, c->range));
      if (args.size() == 1 && asConst(args[0])) return args[0];
      break;
    default: break;
  }
  diags_.report(diag::err_graph_unsupported, c->callee->range) << ("calling " + callee.describe()) << "";
  fail();
}

namespace {

// The parameters a kernel writes: `mut` ones, and unannotated ones that its body stores into
// (element or slice stores, augmented assignments, tile.store, atomics), as irgen decides.
void collectStores(const Block& b, std::set<std::string>& out);
void collectStoreTarget(const Expr* t, std::set<std::string>& out) {
  while (auto* s = dyn_cast<SubscriptExpr>(const_cast<Expr*>(t))) t = s->base;
  if (auto* n = dyn_cast<NameExpr>(const_cast<Expr*>(t))) out.insert(n->name);
}
void collectCallStores(const Expr* e, std::set<std::string>& out) {
  auto* c = dyn_cast<CallExpr>(const_cast<Expr*>(e));
  if (!c || !c->callee || !c->callee->type || c->callee->type->kind != TypeKind::Builtin || !c->callee->type->builtin)
    return;
  const BuiltinInfo* b = c->callee->type->builtin;
  if ((b->has(eff::MemWrite) || b->id == BuiltinId::TileStore) && !c->args.empty() && c->args[0].value)
    collectStoreTarget(c->args[0].value, out);
}
// The parameters a kernel body stores into, by statement kind (frontend/ASTVisitor.h): subscript
// targets of assignments, memory-writing builtin calls, and the bodies of if, loops and with.
struct StoreCollector : ConstASTVisitor<StoreCollector> {
  std::set<std::string>& out;
  explicit StoreCollector(std::set<std::string>& out) : out(out) {}
  void visitAssignStmt(const AssignStmt* a) {
    for (const Expr* t : a->targets)
      if (isa<SubscriptExpr>(t)) collectStoreTarget(t, out);
  }
  void visitAugAssignStmt(const AugAssignStmt* a) { collectStoreTarget(a->target, out); }
  void visitExprStmt(const ExprStmt* s) { collectCallStores(s->expr, out); }
  void visitIfStmt(const IfStmt* s) {
    collectStores(s->thenBlock, out);
    collectStores(s->elseBlock, out);
  }
  void visitForStmt(const ForStmt* s) { collectStores(s->body, out); }
  void visitWhileStmt(const WhileStmt* s) { collectStores(s->body, out); }
  void visitWithStmt(const WithStmt* s) { collectStores(s->body, out); }
};
void collectStores(const Block& b, std::set<std::string>& out) {
  for (const Stmt* s : b.stmts) StoreCollector(out).visit(s);
}

}  // namespace

HValue FunctionBuilder::launchKernel(const HValue& cfg, const FunctionDefStmt* kernel, const std::vector<HValue>& args,
                                     const std::vector<const Expr*>& argExprs, SourceRange at) {
  const FunctionInfo* info = functionInfo(sema_, kernel);
  const tessera::Type* fnType = info ? info->type : nullptr;
  if (args.size() != kernel->params.size()) {
    diags_.report(diag::err_graph_unsupported, at)
        << ("launching '" + kernel->name + "' with " + std::to_string(args.size()) + " arguments (it has " +
            std::to_string(kernel->params.size()) + " parameters)")
        << "";
    fail();
  }
  std::set<std::string> stored;
  collectStores(kernel->body, stored);
  std::vector<Value*> operands;
  std::vector<int64_t> writes;
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& pname = kernel->params[i].name;
    const tessera::Type* pt = fnType && i < fnType->elems.size() ? fnType->elems[i] : nullptr;
    SourceRange argAt = i < argExprs.size() ? argExprs[i]->range : at;
    if (pt && pt->kind == TypeKind::Scalar) {
      auto c = asConst(args[i]);
      if (args[i].is(HValue::Kind::Value) && args[i].value->type.isScalar())
        operands.push_back(castTo(args[i].value, pt->dtype, argAt));
      else if (c && c->isNumber())
        operands.push_back(scalarConstant(c->asDouble(), pt->dtype, argAt));
      else if (auto d = asDim(args[i]); d && d->isConst())
        operands.push_back(scalarConstant(static_cast<double>(d->value()), pt->dtype, argAt));
      else {
        diags_.report(diag::err_graph_kernel_arg, argAt)
            << pname << kernel->name
            << ("expects a scalar " + std::string(dtypeName(pt->dtype)) + ", got " + args[i].describe());
        fail();
      }
      continue;
    }
    if (!args[i].is(HValue::Kind::Value) || !args[i].value->type.isTensor()) {
      diags_.report(diag::err_graph_kernel_arg, argAt)
          << pname << kernel->name << ("expects a tensor, got " + args[i].describe());
      fail();
    }
    Value* v = args[i].value;
    if (pt && pt->kind == TypeKind::Tensor) {
      DType want = pt->dtypeKnown ? pt->dtype : DType::FP32;
      if (v->type.dtype != want) {
        diags_.report(diag::err_graph_kernel_arg, argAt)
            << pname << kernel->name
            << ("expects dtype " + std::string(dtypeName(want)) + ", got " + v->type.str() + "; cast it first");
        fail();
      }
      if (pt->rankKnown && pt->dims.size() != v->type.rank()) {
        diags_.report(diag::err_graph_kernel_arg, argAt)
            << pname << kernel->name << ("expects rank " + std::to_string(pt->dims.size()) + ", got " + v->type.str());
        fail();
      }
    }
    operands.push_back(v);
    bool written = (pt && pt->kind == TypeKind::Tensor &&
                    (pt->mut || pt->privilege == Privilege::Write || pt->privilege == Privilege::ReduceSum)) ||
                   ((!pt || pt->isDynamic()) && stored.count(pname));
    if (written) writes.push_back(static_cast<int64_t>(i));
  }
  Attrs attrs;
  attrs.set("kernel", Attr::symbolRef(kernel->name));
  if (!writes.empty()) attrs.set("writes", Attr::ints(writes));
  if (cfg.is(HValue::Kind::Launch)) {
    auto dims = [&](size_t from, size_t to, const char* what) {
      AttrList l;
      for (size_t i = from; i < to; ++i) {
        std::vector<HValue> items =
            cfg.elems[i].is(HValue::Kind::Tuple) ? cfg.elems[i].elems : std::vector<HValue>{cfg.elems[i]};
        for (const HValue& item : items) {
          auto d = asDim(item);
          if (!d) {
            diags_.report(diag::err_graph_attr, at)
                << "a launch" << (std::string(what) + " given as integers or extents");
            fail();
          }
          l.push_back(d->isConst() ? Attr::i(d->value()) : Attr::s(d->str()));
        }
      }
      return Attr::list(std::move(l));
    };
    if (cfg.gridRank > 0) attrs.set("grid", dims(0, cfg.gridRank, "grid"));
    if (cfg.elems.size() > cfg.gridRank) attrs.set("threads", dims(cfg.gridRank, cfg.elems.size(), "threads"));
  }
  std::vector<Value*> results = opN(OpId::Launch, operands, at, attrs);
  // The written arguments now hold the kernel's results: rebind the names that passed them.
  for (size_t w = 0; w < writes.size(); ++w) {
    size_t i = static_cast<size_t>(writes[w]);
    Value* param = nullptr;
    if (i < argExprs.size())
      if (auto* n = dyn_cast<NameExpr>(const_cast<Expr*>(argExprs[i]))) {
        if (depth() == 1) param = entryParam(n->name);
        if (param && frame().vars[n->name].value != args[i].value) param = nullptr;  // rebound locally
        frame().vars[n->name] = HValue::of(results[w]);
      }
    if (param) {
      if (g_.params[param->index].access == Access::Read) {
        diags_.report(diag::err_graph_write_readonly, argExprs[i]->range) << g_.name << kernel->params[i].name;
        fail();
      }
      kernelWroteParam(param, results[w]);
    } else if (args[i].value->isParam() && depth() > 1) {
      diags_.report(diag::err_graph_unsupported, at)
          << ("a kernel writing '" + kernel->params[i].name + "' through an inlined function's parameter")
          << "; launch it in the entry function";
      fail();
    }
  }
  return HValue::none();
}

}  // namespace tessera::graph

namespace tessera::graph {

// tessera.grad(f)(x, ...) is the gradient of f at (x, ...) with respect to x, as JAX's grad with
// argnums=0: f is inlined on the arguments (its nodes are the tape), its result must be a
// floating-point tensor of rank 0 (a loss), and the reverse sweep of graph/Autodiff.cpp runs from
// a seed of 1. The forward nodes stay in the graph (the backward ones read them); dce removes
// those nothing reads.
HValue FunctionBuilder::gradCall(const FunctionDefStmt* def, const std::vector<HValue>& args,
                                 const std::vector<std::pair<std::string, HValue>>& kwargs, SourceRange at) {
  if (args.empty() || !args[0].is(HValue::Kind::Value) || !args[0].value->type.isTensor() ||
      !isFloat(args[0].value->type.dtype)) {
    diags_.report(diag::err_graph_unsupported, at) << ("the gradient of '" + def->name + "' with respect to " +
                                                       (args.empty() ? std::string("nothing") : args[0].describe()))
                                                   << "; its first argument must be a floating-point tensor";
    fail();
  }
  Node* last = g_.nodes.empty() ? nullptr : g_.nodes.back().get();
  HValue r = callFunction(def, args, kwargs, at);
  if (!r.is(HValue::Kind::Value) || !r.value->type.isTensor() || r.value->type.rank() != 0 ||
      !isFloat(r.value->type.dtype)) {
    diags_.report(diag::err_graph_unsupported, at)
        << ("'tessera.grad' of '" + def->name + "', which returns " + r.describe())
        << "; it needs a function whose result is a floating-point tensor of rank 0 (a loss: reduce with op.sum or "
           "op.mean)";
    fail();
  }
  std::vector<Node*> tape;
  auto it = last ? std::next(g_.position(last)) : g_.nodes.begin();
  for (; it != g_.nodes.end(); ++it) tape.push_back(it->get());
  Attrs seedAttrs;
  seedAttrs.set("shape", Attr::dims({}));
  seedAttrs.set("value", Attr::f(1.0));
  seedAttrs.set("dtype", Attr::s(dtypeName(r.value->type.dtype)));
  Value* seed = op(OpId::Fill, {}, at, seedAttrs);
  std::vector<Value*> grads;
  if (!differentiate(g_, tape, {{r.value, seed}}, {args[0].value}, grads, diags_)) fail();
  return HValue::of(grads[0]);
}

}  // namespace tessera::graph
