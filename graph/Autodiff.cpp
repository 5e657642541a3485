// The reverse sweep (graph/Autodiff.h).
#include "graph/Autodiff.h"

#include <map>

#include "graph/Adjoints.h"
#include "graph/GraphDiagnostics.h"
#include "graph/ShapeRules.h"

namespace tessera::graph {

namespace {

class Sweep : public AdjointContext {
 public:
  Sweep(Graph& g, DiagnosticEngine& diags) : g_(g), diags_(diags) {}

  std::vector<Value*> makeN(OpId op, const std::vector<Value*>& operands, Attrs attrs) override {
    std::vector<Type> types, results;
    for (Value* v : operands) types.push_back(v->type);
    Unifier strict;
    std::string error;
    if (!inferResultTypes(op, types, attrs, results, strict, error)) {
      // A rule built an ill-typed node: a bug in the rule, reported rather than crashing.
      diags_.report(diag::err_graph_not_differentiable, at_)
          << (std::string("'") + (current_->info().name + 6) + "'") << ("internal error in its adjoint: " + error);
      failed_ = true;
      throw Failed{};
    }
    Node* n = g_.create(op, operands, results, std::move(attrs), at_);
    std::vector<Value*> out;
    for (auto& r : n->results) out.push_back(r.get());
    return out;
  }
  Value* make(OpId op, const std::vector<Value*>& operands, Attrs attrs) override {
    return makeN(op, operands, std::move(attrs))[0];
  }
  void add(unsigned i, Value* contribution) override {
    Value* x = current_->operands[i];
    accumulate(x, contribution);
  }

  void accumulate(Value* x, Value* c) {
    if (!x->type.isTensor()) return;  // host scalars and constants get no gradient
    if (c->type.dtype != x->type.dtype) {
      Attrs a;
      a.set(AttrId::DType, Attr::s(dtypeName(x->type.dtype)));
      c = make(OpId::Cast, {c}, a);
    }
    if (c->type.isScalar() || c->type.shape != x->type.shape) {
      if (c->type.isScalar() || c->type.rank() < x->type.rank()) {
        Attrs a;
        a.set(AttrId::Shape, Attr::dims(x->type.shape));
        c = make(OpId::BroadcastTo, {c}, a);
      } else {
        Attrs a;
        a.set(AttrId::Shape, Attr::dims(x->type.shape));
        c = make(OpId::SumTo, {c}, a);
      }
    }
    auto it = grad_.find(x);
    if (it == grad_.end())
      grad_[x] = c;
    else
      it->second = make(OpId::Add, {it->second, c}, {});
  }

  bool run(const std::vector<Node*>& tape, const std::vector<std::pair<Value*, Value*>>& seeds,
           const std::vector<Value*>& wrt, std::vector<Value*>& grads) {
    try {
      for (const auto& [v, ct] : seeds) {
        current_ = nullptr;
        accumulate(v, ct);
      }
      for (auto it = tape.rbegin(); it != tape.rend(); ++it) {
        Node* n = *it;
        std::vector<Value*> gy;
        bool any = false;
        for (auto& r : n->results) {
          auto f = grad_.find(r.get());
          gy.push_back(f == grad_.end() ? nullptr : f->second);
          any |= gy.back() != nullptr;
        }
        if (!any) continue;
        current_ = n;
        at_ = n->loc;
        if (n->info().results == 1 && !gy[0]) continue;
        std::string why;
        if (!runAdjoint(*this, *n, gy, why)) {
          diags_.report(diag::err_graph_not_differentiable, n->loc)
              << (std::string("'") + (n->info().name + 6) + "'") << why;
          return false;
        }
      }
      for (Value* w : wrt) {
        auto f = grad_.find(w);
        if (f != grad_.end()) {
          grads.push_back(f->second);
          continue;
        }
        Attrs a;
        a.set(AttrId::Shape, Attr::dims(w->type.shape));
        a.set(AttrId::Value, Attr::f(0.0));
        a.set(AttrId::DType, Attr::s(dtypeName(w->type.dtype)));
        grads.push_back(make(OpId::Fill, {}, a));
      }
    } catch (Failed&) {
      return false;
    }
    return !failed_;
  }

 private:
  struct Failed {};
  Graph& g_;
  DiagnosticEngine& diags_;
  std::map<Value*, Value*> grad_;
  Node* current_ = nullptr;
  SourceRange at_;
  bool failed_ = false;
};

}  // namespace

bool differentiate(Graph& g, const std::vector<Node*>& tape, const std::vector<std::pair<Value*, Value*>>& seeds,
                   const std::vector<Value*>& wrt, std::vector<Value*>& grads, DiagnosticEngine& diags) {
  Sweep s(g, diags);
  return s.run(tape, seeds, wrt, grads);
}

bool makeBackward(Graph& g, DiagnosticEngine& diags) {
  std::vector<Node*> tape;
  for (auto& n : g.nodes) {
    if (n->has(T_SideEffect)) {
      diags.report(diag::err_graph_not_differentiable, n->loc)
          << (std::string("'") + (n->info().name + 6) + "'")
          << "@autodiff functions may not write memory (launch kernels or store into parameters)";
      return false;
    }
    tape.push_back(n.get());
  }
  std::vector<Value*> wrt;
  for (Param& p : g.params)
    if (p.value->type.isTensor() && isFloat(p.value->type.dtype)) wrt.push_back(p.value.get());
  std::vector<std::pair<Value*, Value*>> seeds;
  std::vector<Value*> forward = g.results;
  for (size_t i = 0; i < forward.size(); ++i) {
    if (!forward[i]->type.isTensor()) {
      diags.report(diag::err_graph_not_differentiable, g.loc)
          << "the function's results" << "a scalar result has no cotangent";
      return false;
    }
    Value* ct = g.addParam("d_" + std::to_string(i), forward[i]->type);
    seeds.emplace_back(forward[i], ct);
  }
  std::vector<Value*> grads;
  if (!differentiate(g, tape, seeds, wrt, grads, diags)) return false;
  g.results = grads;
  return true;
}

}  // namespace tessera::graph
