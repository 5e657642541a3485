// One adjoint rule per op (the Adjoint column of graph/GraphOps.def). Each rule receives the
// node and the gradients of its results and adds one contribution per operand that needs one.
#include "graph/Adjoints.h"

#include <cmath>

#include "graph/ShapeRules.h"

namespace tessera::graph {

Value* AdjointContext::scalar(double v, DType d) {
  Attrs a;
  a.set(AttrId::Value, Attr::f(v));
  a.set(AttrId::DType, Attr::s(dtypeName(d)));
  return make(OpId::Constant, {}, std::move(a));
}

Value* AdjointContext::zeros(const Type& t) {
  Attrs a;
  a.set(AttrId::Shape, Attr::dims(t.shape));
  a.set(AttrId::Value, Attr::f(0.0));
  a.set(AttrId::DType, Attr::s(dtypeName(t.dtype)));
  return make(OpId::Fill, {}, std::move(a));
}

namespace {

using Grads = std::vector<Value*>;
using C = AdjointContext;

Value* x0(Node& n) { return n.operands[0]; }
Value* x1(Node& n) { return n.operands[1]; }
Value* out(Node& n) { return n.result(0); }
DType dt(Value* v) { return v->type.dtype; }

Value* mul(C& c, Value* a, Value* b) { return c.make(OpId::Mul, {a, b}); }
Value* div(C& c, Value* a, Value* b) { return c.make(OpId::Div, {a, b}); }
Value* sub(C& c, Value* a, Value* b) { return c.make(OpId::Sub, {a, b}); }
Value* neg(C& c, Value* a) { return c.make(OpId::Neg, {a}); }
Value* transpose(C& c, Value* a) { return c.make(OpId::Transpose, {a}); }

// ---- elementwise

bool adjointAdd(C& c, Node& n, const Grads& g, std::string&) {
  c.add(0, g[0]);
  c.add(1, g[0]);
  return true;
}
bool adjointSub(C& c, Node& n, const Grads& g, std::string&) {
  c.add(0, g[0]);
  c.add(1, neg(c, g[0]));
  return true;
}
bool adjointMul(C& c, Node& n, const Grads& g, std::string&) {
  c.add(0, mul(c, g[0], x1(n)));
  c.add(1, mul(c, g[0], x0(n)));
  return true;
}
bool adjointDiv(C& c, Node& n, const Grads& g, std::string&) {
  c.add(0, div(c, g[0], x1(n)));
  c.add(1, neg(c, div(c, mul(c, g[0], out(n)), x1(n))));
  return true;
}
bool adjointMaximum(C& c, Node& n, const Grads& g, std::string&) {
  Value* mask = c.make(OpId::GreaterEqual, {x0(n), x1(n)});
  Value* ga = mul(c, g[0], mask);
  c.add(0, ga);
  c.add(1, sub(c, g[0], ga));
  return true;
}
bool adjointMinimum(C& c, Node& n, const Grads& g, std::string&) {
  Value* mask = c.make(OpId::LessEqual, {x0(n), x1(n)});
  Value* ga = mul(c, g[0], mask);
  c.add(0, ga);
  c.add(1, sub(c, g[0], ga));
  return true;
}
bool adjointPow(C& c, Node& n, const Grads& g, std::string&) {
  Value* bm1 = sub(c, x1(n), c.scalar(1.0, dt(x1(n))));
  c.add(0, mul(c, g[0], mul(c, x1(n), c.make(OpId::Pow, {x0(n), bm1}))));
  if (x1(n)->type.isTensor()) c.add(1, mul(c, g[0], mul(c, out(n), c.make(OpId::Log, {x0(n)}))));
  return true;
}
bool adjointNeg(C& c, Node& n, const Grads& g, std::string&) {
  c.add(0, neg(c, g[0]));
  return true;
}
bool adjointExp(C& c, Node& n, const Grads& g, std::string&) {
  c.add(0, mul(c, g[0], out(n)));
  return true;
}
bool adjointLog(C& c, Node& n, const Grads& g, std::string&) {
  c.add(0, div(c, g[0], x0(n)));
  return true;
}
bool adjointSqrt(C& c, Node& n, const Grads& g, std::string&) {
  c.add(0, div(c, mul(c, g[0], c.scalar(0.5, dt(out(n)))), out(n)));
  return true;
}
bool adjointRsqrt(C& c, Node& n, const Grads& g, std::string&) {
  c.add(0, mul(c, g[0], div(c, mul(c, out(n), c.scalar(-0.5, dt(out(n)))), x0(n))));
  return true;
}
bool adjointTanh(C& c, Node& n, const Grads& g, std::string&) {
  c.add(0, mul(c, g[0], sub(c, c.scalar(1.0, dt(out(n))), mul(c, out(n), out(n)))));
  return true;
}
bool adjointSigmoid(C& c, Node& n, const Grads& g, std::string&) {
  c.add(0, mul(c, g[0], mul(c, out(n), sub(c, c.scalar(1.0, dt(out(n))), out(n)))));
  return true;
}
bool adjointRelu(C& c, Node& n, const Grads& g, std::string&) {
  c.add(0, c.make(OpId::ReluGrad, {x0(n), g[0]}));
  return true;
}
bool adjointGelu(C& c, Node& n, const Grads& g, std::string&) {
  c.add(0, c.make(OpId::GeluGrad, {x0(n), g[0]}));
  return true;
}
bool adjointSilu(C& c, Node& n, const Grads& g, std::string&) {
  c.add(0, c.make(OpId::SiluGrad, {x0(n), g[0]}));
  return true;
}
bool adjointAbs(C& c, Node& n, const Grads& g, std::string&) {
  c.add(0, mul(c, g[0], c.make(OpId::Sign, {x0(n)})));
  return true;
}
bool adjointSin(C& c, Node& n, const Grads& g, std::string&) {
  c.add(0, mul(c, g[0], c.make(OpId::Cos, {x0(n)})));
  return true;
}
bool adjointCos(C& c, Node& n, const Grads& g, std::string&) {
  c.add(0, neg(c, mul(c, g[0], c.make(OpId::Sin, {x0(n)}))));
  return true;
}
bool adjointErf(C& c, Node& n, const Grads& g, std::string&) {
  Value* sq = mul(c, x0(n), x0(n));
  Value* e = c.make(OpId::Exp, {neg(c, sq)});
  c.add(0, mul(c, g[0], mul(c, e, c.scalar(2.0 / std::sqrt(M_PI), dt(out(n))))));
  return true;
}
bool adjointCast(C& c, Node& n, const Grads& g, std::string&) {
  c.add(0, g[0]);  // the driver casts the contribution back to the operand's dtype
  return true;
}
bool adjointBroadcastTo(C& c, Node& n, const Grads& g, std::string&) {
  c.add(0, g[0]);  // the driver sums it back to the operand's shape
  return true;
}
bool adjointIdentity(C& c, Node& n, const Grads& g, std::string&) {
  c.add(0, g[0]);
  return true;
}
bool adjointZero(C&, Node&, const Grads&, std::string&) { return true; }
bool adjointNone(C&, Node& n, const Grads&, std::string& why) {
  why = n.is(OpId::Launch)  ? "a user kernel has no adjoint; differentiate the operators around it"
        : n.is(OpId::Store) ? "it writes a parameter"
                            : "the op has no adjoint rule";
  return false;
}

// ---- matrix products

bool adjointMatMul(C& c, Node& n, const Grads& g, std::string&) {
  Value* a = x0(n);
  Value* b = x1(n);
  bool ta = n.attrs.getBool(AttrId::TransposeA, false), tb = n.attrs.getBool(AttrId::TransposeB, false);
  // C = A' B' with A' = ta ? A^T : A. dA' = dC B'^T; dB' = A'^T dC.
  Attrs da;
  if (!tb) da.set(AttrId::TransposeB, Attr::b(true));
  Value* dA = c.make(OpId::MatMul, {g[0], b}, da);
  c.add(0, ta ? transpose(c, dA) : dA);
  if (b->type.rank() == 2 && a->type.rank() > 2) {
    // A rank-2 right operand is shared by every batch: flatten the batch into the rows.
    Value* ap = ta ? transpose(c, a) : a;
    Shape rows = {numElements(Shape(ap->type.shape.begin(), ap->type.shape.end() - 1)), ap->type.shape.back()};
    Shape grows = {numElements(Shape(g[0]->type.shape.begin(), g[0]->type.shape.end() - 1)), g[0]->type.shape.back()};
    Attrs ra, rg, t;
    ra.set(AttrId::Shape, Attr::dims(rows));
    rg.set(AttrId::Shape, Attr::dims(grows));
    t.set(AttrId::TransposeA, Attr::b(true));
    Value* dB = c.make(OpId::MatMul, {c.make(OpId::Reshape, {ap}, ra), c.make(OpId::Reshape, {g[0]}, rg)}, t);
    c.add(1, tb ? transpose(c, dB) : dB);
    return true;
  }
  Attrs db;
  if (!ta) db.set(AttrId::TransposeA, Attr::b(true));
  Value* dB = c.make(OpId::MatMul, {a, g[0]}, db);
  c.add(1, tb ? transpose(c, dB) : dB);
  return true;
}

// ---- row operations

bool adjointSoftmax(C& c, Node& n, const Grads& g, std::string&) {
  c.add(0, c.make(OpId::SoftmaxGrad, {out(n), g[0]}));
  return true;
}
bool adjointLogSoftmax(C& c, Node& n, const Grads& g, std::string&) {
  c.add(0, c.make(OpId::LogSoftmaxGrad, {out(n), g[0]}));
  return true;
}
bool normAdjoint(C& c, Node& n, const Grads& g, OpId gradOp) {
  std::vector<Value*> ops = {x0(n), g[0]};
  if (n.operands.size() > 1) ops.push_back(n.operands[1]);
  Attrs a;
  a.set(AttrId::Eps, Attr::f(n.attrs.getFloat(AttrId::Eps, 1e-6)));
  std::vector<Value*> r = c.makeN(gradOp, ops, a);
  c.add(0, r[0]);
  if (n.operands.size() > 1) c.add(1, r[1]);
  if (n.operands.size() > 2) c.add(2, g[0]);  // the bias: summed over the rows by the driver
  return true;
}
bool adjointRMSNorm(C& c, Node& n, const Grads& g, std::string&) { return normAdjoint(c, n, g, OpId::RMSNormGrad); }
bool adjointLayerNorm(C& c, Node& n, const Grads& g, std::string&) { return normAdjoint(c, n, g, OpId::LayerNormGrad); }

// ---- reductions

// The gradient of a reduction, with the reduced axes kept (size 1), broadcast to the operand.
Value* spread(C& c, Node& n, Value* gy) {
  const Type& in = x0(n)->type;
  std::vector<bool> reduced(in.rank(), !n.attrs.has(AttrId::Axes));
  for (int64_t ax : n.attrs.getInts(AttrId::Axes)) {
    int64_t k;
    if (normalizeAxis(ax, in.rank(), k)) reduced[k] = true;
  }
  Shape kept;
  for (size_t i = 0; i < in.rank(); ++i) kept.push_back(reduced[i] ? Dim::constant(1) : in.shape[i]);
  Value* v = gy;
  if (!n.attrs.getBool(AttrId::Keepdims, false)) {
    Attrs r;
    r.set(AttrId::Shape, Attr::dims(kept));
    v = c.make(OpId::Reshape, {gy}, r);
  }
  Attrs b;
  b.set(AttrId::Shape, Attr::dims(in.shape));
  return c.make(OpId::BroadcastTo, {v}, b);
}
Dim reducedCount(Node& n) {
  const Type& in = x0(n)->type;
  Dim count = Dim::constant(1);
  std::vector<bool> reduced(in.rank(), !n.attrs.has(AttrId::Axes));
  for (int64_t ax : n.attrs.getInts(AttrId::Axes)) {
    int64_t k;
    if (normalizeAxis(ax, in.rank(), k)) reduced[k] = true;
  }
  for (size_t i = 0; i < in.rank(); ++i)
    if (reduced[i]) count = count * in.shape[i];
  return count;
}
bool adjointReduceSum(C& c, Node& n, const Grads& g, std::string&) {
  c.add(0, spread(c, n, g[0]));
  return true;
}
bool adjointReduceMean(C& c, Node& n, const Grads& g, std::string&) {
  Attrs a;
  Dim count = reducedCount(n);
  a.set(AttrId::Value, count.isConst() ? Attr::i(count.value()) : Attr::s(count.str()));
  a.set(AttrId::DType, Attr::s(dtypeName(dt(out(n)))));
  c.add(0, div(c, spread(c, n, g[0]), c.make(OpId::DimValue, {}, a)));
  return true;
}
bool adjointReduceMax(C& c, Node& n, const Grads& g, std::string&) {
  // Ties share the gradient equally (as PyTorch's amax).
  Value* mask = c.make(OpId::GreaterEqual, {x0(n), spread(c, n, out(n))});
  Attrs keep = n.attrs;
  Value* ties = c.make(OpId::ReduceSum, {mask}, keep);
  c.add(0, mul(c, spread(c, n, div(c, g[0], ties)), mask));
  return true;
}
bool adjointSumTo(C& c, Node& n, const Grads& g, std::string&) {
  Attrs b;
  b.set(AttrId::Shape, Attr::dims(x0(n)->type.shape));
  c.add(0, c.make(OpId::BroadcastTo, {g[0]}, b));
  return true;
}

// ---- layout

bool adjointTranspose(C& c, Node& n, const Grads& g, std::string&) {
  size_t r = x0(n)->type.rank();
  std::vector<int64_t> perm = n.attrs.getInts(AttrId::Perm);
  if (perm.empty()) {
    c.add(0, transpose(c, g[0]));
    return true;
  }
  std::vector<int64_t> inverse(r);
  for (size_t i = 0; i < r; ++i) inverse[perm[i]] = static_cast<int64_t>(i);
  Attrs a;
  a.set(AttrId::Perm, Attr::ints(inverse));
  c.add(0, c.make(OpId::Transpose, {g[0]}, a));
  return true;
}
bool adjointReshape(C& c, Node& n, const Grads& g, std::string&) {
  Attrs a;
  a.set(AttrId::Shape, Attr::dims(x0(n)->type.shape));
  c.add(0, c.make(OpId::Reshape, {g[0]}, a));
  return true;
}
bool adjointSplitQKV(C& c, Node& n, const Grads& g, std::string&) {
  std::vector<Value*> parts;
  for (unsigned i = 0; i < 3; ++i) parts.push_back(g[i] ? g[i] : c.zeros(n.result(i)->type));
  Attrs a;
  a.set(AttrId::Axis, Attr::i(-1));
  c.add(0, c.make(OpId::Concat, parts, a));
  return true;
}
bool adjointConcat(C&, Node&, const Grads&, std::string& why) {
  why = "concat has no adjoint yet";
  return false;
}

// ---- attention

bool adjointFlashAttention(C& c, Node& n, const Grads& g, std::string& why) {
  if (g[1]) {
    why = "the log-sum-exp result of flash_attention is not differentiable";
    return false;
  }
  Attrs a = n.attrs;
  std::vector<Value*> r = c.makeN(OpId::FlashAttentionGrad,
                                  {n.operands[0], n.operands[1], n.operands[2], n.result(0), n.result(1), g[0]}, a);
  for (unsigned i = 0; i < 3; ++i) c.add(i, r[i]);
  return true;
}

// ---- collectives (docs/language.md: the adjoint of all_reduce is the identity: the gradient
// of a replicated value is replicated; all_gather and reduce_scatter are each other's)

bool adjointAllReduce(C& c, Node& n, const Grads& g, std::string&) {
  c.add(0, g[0]);
  return true;
}
bool adjointAllGather(C& c, Node& n, const Grads& g, std::string&) {
  Attrs a;
  a.set(AttrId::Axis, Attr::s(n.attrs.getStr(AttrId::Axis)));
  a.set(AttrId::Op, Attr::s("sum"));
  a.set(AttrId::Dim, Attr::i(n.attrs.getInt(AttrId::Dim, 0)));
  c.add(0, c.make(OpId::ReduceScatter, {g[0]}, a));
  return true;
}
bool adjointReduceScatter(C& c, Node& n, const Grads& g, std::string&) {
  Attrs a;
  a.set(AttrId::Axis, Attr::s(n.attrs.getStr(AttrId::Axis)));
  a.set(AttrId::Dim, Attr::i(n.attrs.getInt(AttrId::Dim, 0)));
  c.add(0, c.make(OpId::AllGather, {g[0]}, a));
  return true;
}

}  // namespace

bool runAdjoint(AdjointContext& ctx, Node& n, const std::vector<Value*>& gy, std::string& why) {
  switch (n.op) {
#define GRAPH_OP(ID, NAME, MINOPS, MAXOPS, RESULTS, TRAITS, RULE, ADJOINT, KERNEL, ATTRS, DOC) \
  case OpId::ID: return adjoint##ADJOINT(ctx, n, gy, why);
#include "graph/GraphOps.def"
    case OpId::NumOps: break;
  }
  why = "unknown op";
  return false;
}

}  // namespace tessera::graph
