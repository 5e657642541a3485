// fuse-attention: the operator graph of attention,
//   %s = graph.matmul %q, %k {transpose_b}     (q k^T; fold-transpose made k.T a flag)
//   %t = graph.mul %s, %c  |  graph.div %s, %c  (optional: a constant scale)
//   %p = graph.softmax %t
//   %o = graph.matmul %p, %v
// becomes %o, %lse = graph.flash_attention %q, %k, %v {heads = 1, scale = c}: one kernel that
// never stores the scores. Each intermediate must have no other user (else it is needed in
// memory anyway) and q, k, v must have the same dtype and batch axes.
#include "graph/Passes.h"
#include "graph/ShapeRules.h"

namespace tessera::graph {

namespace {

bool singleUse(const Value* v, const Graph& g) { return v->users.size() == 1 && !g.isResult(v); }

// The value of a graph.constant, if `v` is one.
bool constantValue(const Value* v, double& out) {
  if (!v->def || !v->def->is(OpId::Constant)) return false;
  out = v->def->attrs.getFloat(AttrId::Value, 0);
  return true;
}

bool tryFuse(Graph& g, Node* second) {
  if (!second->is(OpId::MatMul) || second->attrs.getBool(AttrId::TransposeA, false) ||
      second->attrs.getBool(AttrId::TransposeB, false))
    return false;
  Value* p = second->operands[0];
  Value* v = second->operands[1];
  if (!p->def || !p->def->is(OpId::Softmax) || !singleUse(p, g)) return false;
  Value* t = p->def->operands[0];
  double scale = 1.0;
  Value* s = t;
  if (t->def && (t->def->is(OpId::Mul) || t->def->is(OpId::Div)) && singleUse(t, g)) {
    double c;
    if (constantValue(t->def->operands[1], c) && t->def->operands[0]->type == t->type) {
      scale = t->def->is(OpId::Mul) ? c : 1.0 / c;
      s = t->def->operands[0];
    } else if (t->def->is(OpId::Mul) && constantValue(t->def->operands[0], c) && t->def->operands[1]->type == t->type) {
      scale = c;
      s = t->def->operands[1];
    }
  }
  if (!s->def || !s->def->is(OpId::MatMul) || !singleUse(s, g) || s->def->attrs.getBool(AttrId::TransposeA, false) ||
      !s->def->attrs.getBool(AttrId::TransposeB, false))
    return false;
  Value* q = s->def->operands[0];
  Value* k = s->def->operands[1];
  if (q->type.rank() != k->type.rank() || k->type.rank() != v->type.rank()) return false;
  Attrs attrs;
  attrs.set(AttrId::Heads, Attr::i(1));
  attrs.set(AttrId::Scale, Attr::f(scale));
  std::vector<Type> types, results;
  for (Value* x : {q, k, v}) types.push_back(x->type);
  Unifier strict;
  std::string error;
  if (!inferResultTypes(OpId::FlashAttention, types, attrs, results, strict, error) ||
      results[0] != second->result()->type)
    return false;
  Node* fa = g.create(OpId::FlashAttention, {q, k, v}, results, attrs, second->loc, second);
  fa->result(0)->name = second->result()->name;  // the output keeps the name it was written with
  g.replaceAllUses(second->result(), fa->result(0));
  // The matched nodes are dead now, latest first.
  std::vector<Node*> dead = {second, p->def};
  if (t != s) dead.push_back(t->def);
  dead.push_back(s->def);
  for (Node* n : dead) g.erase(n);
  return true;
}

}  // namespace

bool runFuseAttention(Graph& g, DiagnosticEngine&) {
  rewriteUntilFixed(g, tryFuse);
  return true;
}

}  // namespace tessera::graph
