// fuse-elementwise: a chain of elementwise ops becomes one graph.fused node, so that it runs as
// one kernel and its intermediates never reach memory:
//   %t = graph.add %x, %b           %r = graph.fused %x, %b, %c
//   %u = graph.gelu %t        ->          {body = ["($0 + $1)", "(0.5 * (#0) * ...)", "((#1) * ($2))"]}
//   %r = graph.mul %u, %c
// A producer folds into its user when every use of its result is in that user and the result has
// the user's type (a producer broadcast into a larger user stays its own kernel, so nothing is
// recomputed per row), and it is not a result of the function. Casts and broadcast_to stay.
// Each step keeps its own rounding to the dtype, so the fused kernel computes what the chain did.
#include <cctype>

#include "graph/Passes.h"

namespace tessera::graph {

namespace {

// At most this many operands and steps per fused node: the kernel's parameters and its body's
// length stay bounded whatever the chain.
constexpr size_t kMaxOperands = 16, kMaxSteps = 32;

bool fusable(const Node& n) {
  if (n.is(OpId::Fused)) return true;
  return n.has(T_Elementwise) && n.info().expr && !n.is(OpId::Cast) && !n.is(OpId::BroadcastTo) &&
         n.result()->type.isTensor();
}

std::vector<std::string> stepsOf(const Node& n) {
  if (!n.is(OpId::Fused)) return {n.info().expr};
  std::vector<std::string> out;
  for (const Attr& a : n.attrs.get(AttrId::Body)->asList()) out.push_back(a.asStr());
  return out;
}

// `e` with each $i replaced by operandRef[i] and each #j by #(j + stepOffset).
std::string renumber(const std::string& e, const std::vector<std::string>& operandRef, size_t stepOffset) {
  std::string out;
  for (size_t i = 0; i < e.size(); ++i) {
    if (e[i] != '$' && e[i] != '#') {
      out += e[i];
      continue;
    }
    size_t k = i + 1;
    while (k < e.size() && std::isdigit(static_cast<unsigned char>(e[k]))) ++k;
    size_t x = std::stoul(e.substr(i + 1, k - i - 1));
    out += e[i] == '$' ? operandRef[x] : "#" + std::to_string(x + stepOffset);
    i = k - 1;
  }
  return out;
}

// Folds the producer of `user`'s operand `o` into `user`.
bool tryFuse(Graph& g, Node* user) {
  if (!fusable(*user)) return false;
  for (Value* o : user->operands) {
    Node* p = o->def;
    if (!p || !fusable(*p) || g.isResult(o) || o->type != user->result()->type) continue;
    bool onlyHere = true;
    for (Node* u : o->users) onlyHere &= u == user;
    if (!onlyHere) continue;
    std::vector<std::string> pSteps = stepsOf(*p), uSteps = stepsOf(*user);
    if (pSteps.size() + uSteps.size() > kMaxSteps) continue;
    // Operands: the producer's, then the user's other ones, each once.
    std::vector<Value*> operands;
    auto refOf = [&](Value* v) {
      for (size_t i = 0; i < operands.size(); ++i)
        if (operands[i] == v) return "$" + std::to_string(i);
      operands.push_back(v);
      return "$" + std::to_string(operands.size() - 1);
    };
    std::vector<std::string> pRefs, uRefs;
    for (Value* v : p->operands) pRefs.push_back(refOf(v));
    std::string last = "#" + std::to_string(pSteps.size() - 1);
    for (Value* v : user->operands) uRefs.push_back(v == o ? last : refOf(v));
    if (operands.size() > kMaxOperands) continue;
    AttrList body;
    for (const std::string& s : pSteps) body.push_back(Attr::s(renumber(s, pRefs, 0)));
    for (const std::string& s : uSteps) body.push_back(Attr::s(renumber(s, uRefs, pSteps.size())));
    Attrs attrs;
    attrs.set(AttrId::Body, Attr::list(std::move(body)));
    Node* f = g.create(OpId::Fused, operands, {user->result()->type}, attrs, user->loc, user);
    f->result()->name = user->result()->name;
    g.replaceAllUses(user->result(), f->result());
    g.erase(user);
    g.erase(p);
    return true;
  }
  return false;
}

}  // namespace

bool runFuseElementwise(Graph& g, DiagnosticEngine&) {
  rewriteUntilFixed(g, tryFuse);
  return true;
}

}  // namespace tessera::graph
