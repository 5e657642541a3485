// The forms of the nodes that run on library kernels or tensor cores (docs/graph.md, "Kernel
// forms"): matmul (the tile.mma loop of the sm_90a GEMM form for 16-bit operands, the tiled
// tile.dot form for f32), the row ops and attention launched as stdlib.nn's own kernels, and
// split_qkv (head-major for the stdlib attention).
#include <algorithm>
#include <cmath>
#include <tuple>

#include "graph/KernelForms.h"
#include "graph/PlanWriter.h"
#include "graph/ShapeRules.h"

namespace tessera::graph::kernelgen {

// y = a @ b (operands read transposed per {transpose_a, transpose_b}): bf16/f16 as the tile.mma
// loop (the sm_90a GEMM form on an H100/H200, mma.sync elsewhere; f32 accumulation, the result
// rounded once), a transposed a first copied to a temporary (the loop takes no At.T); f32 in the
// tiled tile.dot form (graph/KernelForms.cpp); tile_shape is a hint
// the forms do not take yet.
bool PlanWriter::matmul(const Node& n) {
  const Value *a = n.operands[0], *b = n.operands[1];
  if (a->type.rank() != 2 || b->type.rank() != 2)
    return refuse(&n, "a batched graph.matmul has no kernel yet (two matrices do)");
  if (a->type.dtype != n.result()->type.dtype || b->type.dtype != n.result()->type.dtype)
    return refuse(&n, "graph.matmul of mixed dtypes has no kernel yet");
  DType d = n.result()->type.dtype;
  bool ta = n.attrs.getBool(AttrId::TransposeA, false), tb = n.attrs.getBool(AttrId::TransposeB, false);
  if ((d == DType::BF16 || d == DType::FP16) && ta) {
    // The loop takes no At.T: a [K, M] is copied to a temporary [M, K] (one pass over a, against
    // the product's K passes) and the product runs on the tensor cores.
    const Dim &K = a->type.shape[0], &M = a->type.shape[1];
    plan_.temps.push_back({d, {M, K}});
    PlanBuffer at{PlanBuffer::Kind::Temp, static_cast<unsigned>(plan_.temps.size() - 1)};
    std::string tname = nextKernel("transpose");
    KernelText k(tname);
    k.tensor("x", d, {"d1", "d0"});
    k.tensor("y", d, {"d0", "d1"}, true);
    decomposeIndex(k, {"d0", "d1"});
    k.line(2, "y[i0, i1] = x[i1, i0]");
    source_ += k.str();
    plan_.steps.push_back({tname, {tensorArg(a), PlanArg::tensor(at)}});
    std::string name = nextKernel("matmul");
    plan_.steps.push_back({name, {PlanArg::tensor(at), tensorArg(b), PlanArg::tensor(allocate(n.result()))}});
    source_ += mmaMatmul(name, d, tb);
    return true;
  }
  std::string name = nextKernel("matmul");
  PlanBuffer out = allocate(n.result());
  plan_.steps.push_back({name, {tensorArg(a), tensorArg(b), PlanArg::tensor(out)}});
  if (d == DType::BF16 || d == DType::FP16) {
    source_ += mmaMatmul(name, d, tb);
    return true;
  }
  if (d != DType::FP64) {
    source_ += tiledMatmul(name, d, ta, tb);
    return true;
  }
  // f64: tile.dot accumulates in f32, so f64 keeps the reference form (one tile per element,
  // k in order at f64).
  KernelText k(name);
  k.tensor("a", d, ta ? std::vector<std::string>{"K", "M"} : std::vector<std::string>{"M", "K"});
  k.tensor("b", d, tb ? std::vector<std::string>{"N", "K"} : std::vector<std::string>{"K", "N"});
  k.tensor("y", d, {"M", "N"}, true);
  decomposeIndex(k, {"M", "N"});
  std::string dt = dtypeName(d);
  k.line(2, "acc = " + dt + "(0.0)");
  k.line(2, "for k in range(K):");
  k.line(3, std::string("acc += ") + (ta ? "a[k, i0]" : "a[i0, k]") + " * " + (tb ? "b[i1, k]" : "b[k, i1]"));
  k.line(2, "y[i0, i1] = acc");
  source_ += k.str();
  return true;
}

// Row operations along the last axis of a matrix: every tile recomputes its row's statistics
// in the same order, so all elements of a row see the same bits.
bool PlanWriter::rows(const Node& n) {
  const Value* x = n.operands[0];
  if (x->type.rank() != 2) return refuse(&n, std::string(n.info().name) + " of rank other than 2 has no kernel yet");
  DType d = x->type.dtype;
  if (d != DType::FP64) return stdlibRowsNode(n);
  if (n.is(OpId::LayerNorm)) return refuse(&n, "graph.layernorm on f64 tensors has no kernel yet (f32 does)");
  std::string dt = dtypeName(d);
  std::string name = nextKernel(n.info().name + 6);
  KernelText k(name);
  k.tensor("x", d, {"R", "C"});
  PlanStep step{name, {tensorArg(x)}};
  bool weight = n.is(OpId::RMSNorm) && n.operands.size() > 1;
  if (weight) {
    if (n.operands[1]->type.dtype != d) return refuse(&n, "a weight of another dtype has no kernel form yet");
    k.tensor("w", d, {"C"});
    step.args.push_back(tensorArg(n.operands[1]));
  }
  k.tensor("y", d, {"R", "C"}, true);
  step.args.push_back({PlanArg::Kind::Tensor, allocate(n.result()), 0});
  decomposeIndex(k, {"R", "C"});
  if (n.is(OpId::RMSNorm)) {
    // Safe RMS (as stdlib.nn.rmsnorm_safe): statistics of x / max|x|, so squares never overflow.
    safeInvRms(k, 2, "i0", dt, n.attrs.getFloat(AttrId::Eps, 1e-6));
    k.line(2, std::string("y[i0, i1] = x[i0, i1] * inv") + (weight ? " * w[i1]" : ""));
  } else {
    k.line(2, "m = " + dt + "(-inf)");
    k.line(2, "for c in range(C):");
    k.line(3, "m = max(m, x[i0, c])");
    k.line(2, "s = " + dt + "(0.0)");
    k.line(2, "for c in range(C):");
    k.line(3, "s += exp(x[i0, c] - m)");
    k.line(2, n.is(OpId::Softmax) ? "y[i0, i1] = exp(x[i0, i1] - m) / s" : "y[i0, i1] = x[i0, i1] - m - log(s)");
  }
  source_ += k.str();
  plan_.steps.push_back(std::move(step));
  return true;
}

// A row op of f32, bf16 or f16 rows as stdlib.nn's own kernel (softmax_<dt>, log_softmax_<dt>,
// rmsnorm_safe_<dt>, layernorm_safe_<dt>), launched as it is. The norms' missing weight is a
// tensor of ones and layernorm's missing bias one of zeros, so the one stdlib kernel serves
// every variant.
bool PlanWriter::stdlibRowsNode(const Node& n) {
  const Value* x = n.operands[0];
  DType d = x->type.dtype;
  for (const Value* v : n.operands)
    if (v->type.dtype != d) return refuse(&n, "a weight of another dtype has no kernel form yet");
  std::string op = n.is(OpId::Softmax)      ? "softmax"
                   : n.is(OpId::LogSoftmax) ? "log_softmax"
                   : n.is(OpId::RMSNorm)    ? "rmsnorm_safe"
                                            : "layernorm_safe";
  bool norm = n.is(OpId::RMSNorm) || n.is(OpId::LayerNorm);
  std::vector<PlanArg> args{tensorArg(x)};
  const Dim& C = x->type.shape[1];
  if (norm) {
    args.push_back(n.operands.size() > 1 ? tensorArg(n.operands[1]) : PlanArg::tensor(filledTemp(d, C, 1.0)));
    if (n.is(OpId::LayerNorm))
      args.push_back(n.operands.size() > 2 ? tensorArg(n.operands[2]) : PlanArg::tensor(filledTemp(d, C, 0.0)));
  }
  PlanStep step = stdlibStep(op + "_" + dtypeName(d));
  step.args = std::move(args);
  step.args.push_back(PlanArg::tensor(allocate(n.result())));
  if (norm) step.args.push_back(PlanArg::constant(n.attrs.getFloat(AttrId::Eps, 1e-6), DType::FP32));
  plan_.steps.push_back(std::move(step));
  return true;
}

// A temporary vector of `extent` elements, all `value` (one fill kernel; one per dtype, extent and
// value in the plan: no kernel writes it after its fill).
PlanBuffer PlanWriter::filledTemp(DType d, const Dim& extent, double value) {
  auto key = std::make_tuple(d, extent.str(), value);
  if (auto it = fills_.find(key); it != fills_.end()) return it->second;
  plan_.temps.push_back({d, {extent}});
  PlanBuffer b{PlanBuffer::Kind::Temp, static_cast<unsigned>(plan_.temps.size() - 1)};
  std::string name = nextKernel("fill");
  KernelText k(name);
  k.tensor("y", d, {"d0"}, true);
  decomposeIndex(k, {"d0"});
  k.line(2, "y[i0] = " + std::string(dtypeName(d)) + "(" + literal(value) + ")");
  source_ += k.str();
  plan_.steps.push_back({name, {PlanArg::tensor(b)}});
  return fills_[key] = b;
}

// {scale} as Tessera source; by default 1/sqrt(D), D the kernel's head extent.
std::string attentionScale(const Node& n, const std::string& dt) {
  return n.attrs.has(AttrId::Scale) ? dt + "(" + literal(n.attrs.getFloat(AttrId::Scale, 1)) + ")"
                                    : dt + "(1.0) / sqrt(" + dt + "(D))";
}

// o = softmax(scale * q k^T) v per head (heads side by side in the last axes; the default scale
// is 1/sqrt of the head dim): stdlib.nn's flash_attention kernel when it can take the problem,
// else (f64, cross-attention, head dims of q and v that differ) the reference form.
bool PlanWriter::attention(const Node& n) {
  const Value *q = n.operands[0], *kk = n.operands[1], *v = n.operands[2];
  DType d = q->type.dtype;
  for (const Value* x : {q, kk, v})
    if (x->type.rank() != 2 || x->type.dtype != d)
      return refuse(&n, "graph.flash_attention of other than three matrices of one dtype has no kernel yet");
  if (stdlibAttentionFits(n)) return stdlibAttention(n);
  return referenceAttention(n, nextKernel("flash_attention"));
}

// The stdlib kernel takes Q, K, V and O of one shape [B, H, S, D] (B = 1 here) and an f32
// log-sum-exp [B, H, S]: self-attention (as many keys as queries) with equal head dims of q and
// v, in f32, bf16 or f16.
bool PlanWriter::stdlibAttentionFits(const Node& n) const {
  const Value *q = n.operands[0], *kk = n.operands[1], *v = n.operands[2];
  DType d = q->type.dtype;
  return (d == DType::FP32 || d == DType::BF16 || d == DType::FP16) && q->type.shape[0] == kk->type.shape[0] &&
         q->type.shape[1] == v->type.shape[1] && n.result(1)->type.dtype == DType::FP32;
}

// x [S, E] as the stdlib's [1, heads, S, E / heads], a view (no copy): dense for one head of a
// whole buffer, else strided (head h at column h E / heads, rows a row length apart), over
// split_qkv's operand when x is one of its thirds.
PlanArg PlanWriter::headView(const Value* x, int64_t heads) {
  const Dim &S = x->type.shape[0], &E = x->type.shape[1];
  Dim H = Dim::constant(heads), Dh = E / H;
  Shape hm{Dim::constant(1), H, S, Dh};
  auto it = columns_.find(x);
  if (it == columns_.end() && heads == 1) return tensorArg(x, hm);
  PlanArg a = it == columns_.end() ? tensorArg(x) : PlanArg::tensor(it->second.buffer);
  Dim row = it == columns_.end() ? E : it->second.rowLength;
  a.view = hm;
  a.viewStrides = {S * row, Dh, row, Dim::constant(1)};
  a.viewOffset = it == columns_.end() ? Dim::constant(0) : it->second.first;
  return a;
}

bool PlanWriter::stdlibAttention(const Node& n) {
  const Value *q = n.operands[0], *kk = n.operands[1], *v = n.operands[2];
  DType d = q->type.dtype;
  int64_t heads = n.attrs.getInt(AttrId::Heads, 1);
  bool causal = n.attrs.getBool(AttrId::Causal, false);
  PlanStep step = stdlibStep(std::string("flash_attention") + (causal ? "_causal_" : "_") + dtypeName(d));
  for (const Value* x : {q, kk, v}) step.args.push_back(headView(x, heads));
  const Dim& S = q->type.shape[0];
  Dim Dh = q->type.shape[1] / Dim::constant(heads);
  allocate(n.result(0));
  step.args.push_back(headView(n.result(0), heads));  // o: heads written in place in [S, E]
  step.args.push_back(PlanArg::tensor(allocate(n.result(1)), {Dim::constant(1), Dim::constant(heads), S}));
  step.args.push_back(attentionScaleArg(n, Dh));
  plan_.steps.push_back(std::move(step));
  return true;
}

// The f32 scale argument of the stdlib attention kernels: {scale}, or 1 / sqrt(head dim)
// evaluated when the function runs (the head dim may be a symbol).
PlanArg PlanWriter::attentionScaleArg(const Node& n, const Dim& Dh) {
  if (n.attrs.has(AttrId::Scale)) return PlanArg::constant(n.attrs.getFloat(AttrId::Scale, 1), DType::FP32);
  PlanArg scale = PlanArg::constant(1, DType::FP32);
  scale.extent = Dh;
  scale.invSqrt = true;
  return scale;
}

// dq, dk, dv of flash_attention (operands q, k, v, o, lse, do) as stdlib.nn's FlashAttention
// backward: flash_attention_grad_kv[_causal]_<dt> writes dk and dv, flash_attention_grad_q...
// dq, each recomputing the probabilities from q, k and lse (no atomics: the same bits every call).
// Operands and results are [S, E] matrices read and written as [1, heads, S, E / heads] views, as
// the forward's; the problems the forward's stdlib kernel takes (self-attention, f32/bf16/f16).
bool PlanWriter::attentionGrad(const Node& n) {
  const Value *q = n.operands[0], *kk = n.operands[1], *v = n.operands[2], *o = n.operands[3], *lse = n.operands[4],
              *g = n.operands[5];
  DType d = q->type.dtype;
  for (const Value* x : {q, kk, v, o, g})
    if (x->type.rank() != 2 || x->type.dtype != d)
      return refuse(&n, "graph.flash_attention_grad of other than matrices of one dtype has no kernel yet");
  if (!(d == DType::FP32 || d == DType::BF16 || d == DType::FP16) || q->type.shape[0] != kk->type.shape[0] ||
      q->type.shape[1] != v->type.shape[1] || lse->type.dtype != DType::FP32)
    return refuse(&n,
                  "graph.flash_attention_grad has kernels for self-attention of f32, bf16 or f16 with equal "
                  "head dims of q and v only");
  int64_t heads = n.attrs.getInt(AttrId::Heads, 1);
  std::string form = std::string(n.attrs.getBool(AttrId::Causal, false) ? "_causal_" : "_") + dtypeName(d);
  const Dim& S = q->type.shape[0];
  Dim Dh = q->type.shape[1] / Dim::constant(heads);
  std::vector<PlanArg> inputs;
  for (const Value* x : {q, kk, v, o, g}) inputs.push_back(headView(x, heads));
  inputs.push_back(PlanArg::tensor(buffers_.at(lse), {Dim::constant(1), Dim::constant(heads), S}));
  if (const Node* cat = concatOfGradients(n)) {
    // split_qkv's adjoint: dq, dk and dv are written as column ranges of the concat's result
    // (views, as the forward reads q, k, v), and the concat runs no kernel. The result gets a
    // buffer of its own (not a plan-memory slot, which an operand of this node may hold).
    const Value* y = cat->result();
    bool returned = std::find(g_.results.begin(), g_.results.end(), y) != g_.results.end();
    PlanBuffer b = returned ? allocate(y) : freshTemp(y);
    for (unsigned i = 0; i < 3; ++i)
      columns_[n.result(i)] = {b, n.result(0)->type.shape[1] * Dim::constant(i), y->type.shape[1]};
    viewConcats_.insert(cat);
  } else {
    for (unsigned i = 0; i < 3; ++i) allocate(n.result(i));
  }
  PlanStep kv = stdlibStep("flash_attention_grad_kv" + form);
  kv.args = inputs;
  kv.args.push_back(headView(n.result(1), heads));
  kv.args.push_back(headView(n.result(2), heads));
  kv.args.push_back(attentionScaleArg(n, Dh));
  plan_.steps.push_back(std::move(kv));
  PlanStep dq = stdlibStep("flash_attention_grad_q" + form);
  dq.args = std::move(inputs);
  dq.args.push_back(headView(n.result(0), heads));
  dq.args.push_back(attentionScaleArg(n, Dh));
  plan_.steps.push_back(std::move(dq));
  return true;
}

// The concat that takes the three gradients of flash_attention_grad `n` in order (split_qkv's
// adjoint) as their only use, when it is the next node that runs a kernel: its result can hold
// them as column ranges. Else null.
const Node* PlanWriter::concatOfGradients(const Node& n) const {
  const Node* cat = nullptr;
  for (unsigned i = 0; i < 3; ++i) {
    const Value* r = n.result(i);
    if (r->users.size() != 1 || std::find(g_.results.begin(), g_.results.end(), r) != g_.results.end()) return nullptr;
    if (i == 0) cat = r->users[0];
    if (r->users[0] != cat || cat->operands.size() != 3 || cat->operands[i] != r) return nullptr;
  }
  int64_t axis = cat->attrs.getInt(AttrId::Axis, -1);
  if (!cat->is(OpId::Concat) || cat->result()->type.rank() != 2 || (axis != -1 && axis != 1)) return nullptr;
  auto it = std::find_if(g_.nodes.begin(), g_.nodes.end(), [&](const auto& m) { return m.get() == &n; });
  if (it != g_.nodes.end()) ++it;
  while (it != g_.nodes.end() && ((*it)->is(OpId::Constant) || (*it)->is(OpId::DimValue))) ++it;
  return it != g_.nodes.end() && it->get() == cat ? cat : nullptr;
}

// The reference form (f64: tile.dot accumulates in f32): one tile per output element, the
// online softmax over the keys in order; lse[0, i] = m + log(l), written by column 0's tiles.
bool PlanWriter::referenceAttention(const Node& n, const std::string& name) {
  const Value *q = n.operands[0], *kk = n.operands[1], *v = n.operands[2];
  DType d = q->type.dtype;
  std::string dt = dtypeName(accumulationDType(d));  // bf16/f16 sums at f32
  int64_t heads = n.attrs.getInt(AttrId::Heads, 1);
  std::string H = std::to_string(heads);
  KernelText k(name);
  k.tensor("q", d, {"S", "D"});
  k.tensor("k", d, {"T", "D"});
  k.tensor("v", d, {"T", "E"});
  k.tensor("o", d, {"S", "E"}, true);
  k.tensor("lse", n.result(1)->type.dtype, {H, "S"}, true);
  PlanBuffer o = allocate(n.result(0));
  PlanBuffer lse = allocate(n.result(1));
  decomposeIndex(k, {"S", "E"});
  // Head h = i1 // (E / heads) reads columns h * (D / heads) ... of q and k.
  k.line(2, "h = i1 // (E // " + H + ")");
  k.line(2, "c0 = h * (D // " + H + ")");
  std::string scale =
      n.attrs.has(AttrId::Scale) ? attentionScale(n, dt) : dt + "(1.0) / sqrt(" + dt + "(D // " + H + "))";
  k.line(2, "scale = " + scale);
  k.line(2, "m = " + dt + "(-inf)");
  k.line(2, "l = " + dt + "(0.0)");
  k.line(2, "acc = " + dt + "(0.0)");
  k.line(2, std::string("for j in range(") + (n.attrs.getBool(AttrId::Causal, false) ? "min(i0 + 1, T)" : "T") + "):");
  k.line(3, "s = " + dt + "(0.0)");
  k.line(3, "for c in range(c0, c0 + D // " + H + "):");
  k.line(4, "s += q[i0, c] * k[j, c]");
  k.line(3, "s = s * scale");
  k.line(3, "m_new = max(m, s)");
  k.line(3, "alpha = exp(m - m_new)");
  k.line(3, "p = exp(s - m_new)");
  k.line(3, "l = l * alpha + p");
  k.line(3, "acc = acc * alpha + p * v[j, i1]");
  k.line(3, "m = m_new");
  k.line(2, "o[i0, i1] = acc / l");
  k.line(2, "if i1 % (E // " + H + ") == 0:");
  k.line(3, "lse[h, i0] = m + log(l)");
  source_ += k.str();
  plan_.steps.push_back({name, {tensorArg(q), tensorArg(kk), tensorArg(v), PlanArg::tensor(o), PlanArg::tensor(lse)}});
  return true;
}

// split_qkv of a matrix: when its results feed only stdlib attentions with its heads, no kernel:
// the attentions read the thirds as strided views of the operand (as PyTorch's split + view +
// transpose); else a copy into three matrices (graph/KernelForms.cpp).
bool PlanWriter::split(const Node& n) {
  const Value* x = n.operands[0];
  if (x->type.rank() != 2) return refuse(&n, "graph.split_qkv of rank other than 2 has no kernel yet");
  if (attentionTakesHeads(n, n.attrs.getInt(AttrId::Heads, 1))) {
    const Dim& E = n.result(0)->type.shape[1];
    for (unsigned i = 0; i < 3; ++i) columns_[n.result(i)] = {buffers_.at(x), E * Dim::constant(i), x->type.shape[1]};
    return true;
  }
  std::string name = nextKernel("split_qkv");
  PlanStep step{name, {tensorArg(x)}};
  for (unsigned i = 0; i < 3; ++i) step.args.push_back(PlanArg::tensor(allocate(n.result(i))));
  source_ += splitQKV(name, x->type.dtype);
  plan_.steps.push_back(std::move(step));
  return true;
}

// Whether every use of each result of `split` is as the same operand of a flash_attention with
// these heads that runs as the stdlib kernel, or of its gradient (which takes the same problems).
bool PlanWriter::attentionTakesHeads(const Node& split, int64_t heads) const {
  for (unsigned i = 0; i < 3; ++i) {
    const Value* r = split.result(i);
    if (r->users.empty()) return false;
    for (const Node* u : r->users)
      if (u->is(OpId::FlashAttentionGrad)) {
        if (u->attrs.getInt(AttrId::Heads, 1) != heads || u->operands[i] != r) return false;
      } else if (!u->is(OpId::FlashAttention) || u->attrs.getInt(AttrId::Heads, 1) != heads || u->operands[i] != r ||
                 !stdlibAttentionFits(*u)) {
        return false;
      }
  }
  return true;
}

}  // namespace tessera::graph::kernelgen
