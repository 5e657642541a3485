#include "graph/KernelGen.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <limits>

#include "graph/KernelForms.h"
#include "graph/PlanWriter.h"
#include "graph/Printer.h"
#include "graph/ShapeRules.h"

namespace tessera::graph {

namespace kernelgen {

// A double as Tessera source that reads back to the same value at the kernel's dtype.
std::string literal(double v) {
  if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.17g", v);
  std::string s = buf;
  if (s.find_first_of(".en") == std::string::npos) s += ".0";
  return s;
}

// The shape a value has in the plan and in kernels: a rank-0 tensor is one element of shape [1]
// (kernel parameters have at least one axis).
Shape planShape(const Type& t) { return t.rank() == 0 ? Shape{Dim::constant(1)} : t.shape; }

// "($0 + #1)" with each $i replaced by terms[i] and each #j by the local of step j (graph.fused).
std::string splice(const std::string& expr, const std::vector<std::string>& terms) {
  std::string out;
  for (size_t i = 0; i < expr.size(); ++i) {
    size_t k = i + 1;
    while (k < expr.size() && std::isdigit(static_cast<unsigned char>(expr[k]))) ++k;
    if ((expr[i] != '$' && expr[i] != '#') || k == i + 1) {
      out += expr[i];
      continue;
    }
    std::string index = expr.substr(i + 1, k - i - 1);
    out += expr[i] == '$' ? "(" + terms[std::stoul(index)] + ")" : "s" + index;
    i = k - 1;
  }
  return out;
}

// The index variables i0..i{r-1} of an output of extents d[] from the tile's linear id, inside
// `if t < numel:` at indent 2. Returns the guard's product.
void decomposeIndex(KernelText& k, const std::vector<std::string>& d) {
  k.line(1, "t = tile.linear_id()");
  std::string numel;
  for (size_t i = 0; i < d.size(); ++i) numel += (i ? " * " : "") + d[i];
  k.line(1, "if t < " + numel + ":");
  std::string stride;
  for (size_t i = d.size(); i-- > 0;) {
    std::string idx = stride.empty() ? "t" : "(t // (" + stride + "))";
    k.line(2, "i" + std::to_string(i) + " = " + (i == 0 ? idx : idx + " % " + d[i]));
    stride = stride.empty() ? d[i] : stride + " * " + d[i];
  }
}

std::string indexList(size_t rank, size_t skip) {
  std::string s;
  for (size_t i = skip; i < rank; ++i) s += (i > skip ? ", " : "") + ("i" + std::to_string(i));
  return s;
}

// inv = 1 / sqrt(mean(x[row]^2) + eps) for row `row` of x (C columns), computed as
// stdlib.nn.rmsnorm_safe does: statistics of x / max|x|, so no square overflows.
void safeInvRms(KernelText& k, int at, const std::string& row, const std::string& dt, double epsValue) {
  std::string eps = dt + "(" + literal(epsValue) + ")";
  k.line(at, "a = " + dt + "(0.0)");
  k.line(at, "for c in range(C):");
  k.line(at + 1, "a = max(a, abs(x[" + row + ", c]))");
  k.line(at, "a = " + dt + "(1.0) if a == 0.0 else a");
  k.line(at, "ms = " + dt + "(0.0)");
  k.line(at, "for c in range(C):");
  k.line(at + 1, "u = x[" + row + ", c] / a");
  k.line(at + 1, "ms += u * u");
  k.line(at, "ms = ms / " + dt + "(C)");
  k.line(at, "q = ms + (" + eps + " / a) / a if a >= 1.0 else (a * a) * ms + " + eps);
  k.line(at, "s = " + dt + "(1.0) / a if a >= 1.0 else " + dt + "(1.0)");
  k.line(at, "inv = " + dt + "(0.0) if q == 0.0 else s / sqrt(q)");
}
bool PlanWriter::node(const Node& n) {
  for (const auto& r : n.results)
    if (r->type.isTensor() && !supportedDType(r->type.dtype))
      return refuse(&n, std::string(n.info().name) + " on " + dtypeName(r->type.dtype) +
                            " tensors has no kernel yet (bf16, f16, f32 and f64 do)");
  if (n.is(OpId::Constant) || n.is(OpId::DimValue)) return true;  // folds into the kernels that use it
  if (n.is(OpId::Store)) {
    // The stored value is the parameter's final value (for Region[reduce_sum], the builder
    // already added the old one): a copy into the caller's tensor.
    const Value* dst = n.operands[0];
    if (n.attrs.getBool(AttrId::InPlace, false)) return true;  // plan-memory: computed into the parameter
    return elementwise(&n, "store", {"$0"}, {n.operands[1]}, dst, buffers_.at(dst));
  }
  if (n.is(OpId::Fill)) {
    PlanBuffer b = allocate(n.result());
    return elementwise(&n, "fill", {literal(n.attrs.getFloat(AttrId::Value, 0))}, {}, n.result(), b);
  }
  if (n.has(T_Elementwise) && n.info().expr && !n.is(OpId::Cast) && !n.is(OpId::BroadcastTo)) {
    std::vector<const Value*> ops(n.operands.begin(), n.operands.end());
    PlanBuffer b = allocate(n.result());
    return elementwise(&n, n.info().name + 6, {n.info().expr}, ops, n.result(), b);
  }
  if (n.is(OpId::Fused)) {
    std::vector<const Value*> ops(n.operands.begin(), n.operands.end());
    std::vector<std::string> steps;
    for (const Attr& a : n.attrs.get(AttrId::Body)->asList()) steps.push_back(a.asStr());
    PlanBuffer b = allocate(n.result());
    return elementwise(&n, "fused", steps, ops, n.result(), b);
  }
  if (n.is(OpId::BroadcastTo)) {
    PlanBuffer b = allocate(n.result());
    return elementwise(&n, "broadcast_to", {"$0"}, {n.operands[0]}, n.result(), b);
  }
  switch (n.op) {
    case OpId::MatMul: return matmul(n);
    case OpId::Softmax:
    case OpId::LogSoftmax:
    case OpId::RMSNorm:
    case OpId::LayerNorm: return rows(n);
    case OpId::SoftmaxGrad:
    case OpId::LogSoftmaxGrad: return rowsGrad(n);
    case OpId::RMSNormGrad: return rmsnormGrad(n);
    case OpId::SumTo: return sumTo(n);
    case OpId::ReduceSum:
    case OpId::ReduceMean:
    case OpId::ReduceMax: return reduce(n);
    case OpId::FlashAttention: return attention(n);
    case OpId::FlashAttentionGrad: return attentionGrad(n);
    case OpId::Concat: return concat(n);
    case OpId::Transpose: return transpose(n);
    case OpId::SplitQKV: return split(n);
    case OpId::Reshape: return reshape(n);
    default: return refuse(&n, std::string(n.info().name) + " has no kernel yet");
  }
}

// out[i...] = expr(operands broadcast to out's shape).
bool PlanWriter::elementwise(const Node* n, const std::string& label, const std::vector<std::string>& steps,
                             const std::vector<const Value*>& operands, const Value* out, PlanBuffer outBuffer) {
  const Type& ot = out->type;
  if (ot.rank() > 4)
    return refuse(n, label + " of rank " + std::to_string(ot.rank()) + " has no kernel yet (ranks 0 to 4 do)");
  Shape oshape = planShape(ot);
  size_t r = oshape.size();
  DType d = ot.dtype;
  std::string name = nextKernel(label.c_str());
  KernelText k(name);
  std::vector<std::string> dims;
  for (size_t i = 0; i < r; ++i) dims.push_back("d" + std::to_string(i));
  PlanStep step{name, {}};
  std::vector<std::string> terms;
  for (size_t a = 0; a < operands.size(); ++a) {
    const Value* v = operands[a];
    std::string pn = "a" + std::to_string(a);
    const Attr* dimValue = v->def && v->def->is(OpId::DimValue) ? v->def->attrs.get(AttrId::Value) : nullptr;
    if (dimValue && dimValue->isStr()) {
      // An extent known when the function runs (a mean's count): an i64 argument of the launch.
      bool ok = false;
      Dim e = parseDimSpelling(dimValue->asStr(), ok);
      if (!ok) return refuse(n, "the extent '" + dimValue->asStr() + "' cannot be evaluated");
      k.scalar(pn, DType::INT64);
      PlanArg arg{PlanArg::Kind::Extent, {}, 0};
      arg.extent = e;
      step.args.push_back(arg);
      terms.push_back(std::string(dtypeName(d)) + "(" + pn + ")");
      continue;
    }
    if (v->def && (v->def->is(OpId::Constant) || v->def->is(OpId::DimValue))) {
      double c = v->def->attrs.getFloat(AttrId::Value, 0);
      if (std::isnan(c)) return refuse(n, "a NaN constant has no kernel form yet");
      if (d == DType::FP32 && std::fabs(c) > std::numeric_limits<float>::max()) c = c > 0 ? INFINITY : -INFINITY;
      terms.push_back(std::string(dtypeName(d)) + "(" + literal(c) + ")");
      continue;
    }
    if (v->type.isScalar()) {
      auto it = scalarParams_.find(v);
      if (it == scalarParams_.end()) return refuse(n, "a scalar computed in the function has no kernel form yet");
      k.scalar(pn, v->type.dtype);
      step.args.push_back({PlanArg::Kind::ScalarParam, {}, it->second});
      terms.push_back(std::string(dtypeName(d)) + "(" + pn + ")");
      continue;
    }
    if (v->type.dtype != d) return refuse(n, "operands of another dtype than the result have no kernel form yet");
    auto own = buffers_.find(v);
    if (own != buffers_.end() && own->second.kind == outBuffer.kind && own->second.index == outBuffer.index &&
        planShape(v->type) == oshape) {
      // Computed in place (plan-memory): the element is read through y before it is written.
      terms.push_back("y[" + indexList(r) + "]");
      continue;
    }
    Shape vshape = planShape(v->type);
    size_t q = vshape.size();
    std::vector<std::string> ext, idx;
    for (size_t ax = 0; ax < q; ++ax) {
      size_t oa = ax + (r - q);
      if (vshape[ax] == oshape[oa]) {
        ext.push_back(dims[oa]);
        idx.push_back("i" + std::to_string(oa));
      } else if (vshape[ax].isConst() && vshape[ax].value() == 1) {
        ext.push_back("1");
        idx.push_back("0");
      } else {
        return refuse(n, "broadcasting " + v->type.str() + " to " + ot.str() + " has no kernel form yet");
      }
    }
    k.tensor(pn, d, ext);
    step.args.push_back(tensorArg(v));
    std::string term = pn + "[";
    for (size_t i = 0; i < idx.size(); ++i) term += (i ? ", " : "") + idx[i];
    terms.push_back(term + "]");
  }
  k.tensor("y", d, dims, true);
  step.args.push_back({PlanArg::Kind::Tensor, outBuffer, 0});
  decomposeIndex(k, dims);
  std::string at = "y[" + indexList(r) + "]";
  // Each step rounds to the dtype, as the separate kernels of a fused chain would.
  for (size_t j = 0; j + 1 < steps.size(); ++j)
    k.line(2, "s" + std::to_string(j) + " = " + std::string(dtypeName(d)) + "(" + splice(steps[j], terms) + ")");
  k.line(2, at + " = " + std::string(dtypeName(d)) + "(" + splice(steps.back(), terms) + ")");
  source_ += k.str();
  plan_.steps.push_back(std::move(step));
  return true;
}

// y[i...] = x[i permuted]: a copy in the output's layout.
bool PlanWriter::transpose(const Node& n) {
  const Value* x = n.operands[0];
  size_t r = x->type.rank();
  if (r < 2 || r > 4) return refuse(&n, "graph.transpose of rank other than 2 to 4 has no kernel yet");
  std::vector<int64_t> perm;
  if (const Attr* p = n.attrs.get(AttrId::Perm))
    perm = p->asInts();
  else {
    for (size_t i = 0; i < r; ++i) perm.push_back(static_cast<int64_t>(i));
    std::swap(perm[r - 1], perm[r - 2]);
  }
  DType d = x->type.dtype;
  std::string name = nextKernel("transpose");
  KernelText k(name);
  std::vector<std::string> dims(r), in(r), idx(r);
  for (size_t i = 0; i < r; ++i) dims[i] = "d" + std::to_string(i);
  for (size_t i = 0; i < r; ++i) {
    size_t src = static_cast<size_t>(perm[i] < 0 ? perm[i] + static_cast<int64_t>(r) : perm[i]);
    in[src] = dims[i];
    idx[src] = "i" + std::to_string(i);
  }
  k.tensor("x", d, in);
  k.tensor("y", d, dims, true);
  PlanBuffer out = allocate(n.result());
  decomposeIndex(k, dims);
  std::string at;
  for (size_t i = 0; i < r; ++i) at += (i ? ", " : "") + idx[i];
  k.line(2, "y[" + indexList(r) + "] = x[" + at + "]");
  source_ += k.str();
  plan_.steps.push_back({name, {tensorArg(x), {PlanArg::Kind::Tensor, out, 0}}});
  return true;
}

// reshape: a copy (views come later); element t of y, in row-major order, is element t of x.
bool PlanWriter::reshape(const Node& n) {
  const Value* x = n.operands[0];
  Shape xs = planShape(x->type), ys = planShape(n.result()->type);
  if (xs.size() > 4 || ys.size() > 4) return refuse(&n, "graph.reshape above rank 4 has no kernel yet");
  DType d = x->type.dtype;
  std::string name = nextKernel("reshape");
  KernelText k(name);
  std::vector<std::string> xe, ye;
  for (size_t i = 0; i < xs.size(); ++i) xe.push_back("e" + std::to_string(i));
  for (size_t i = 0; i < ys.size(); ++i) ye.push_back("d" + std::to_string(i));
  k.tensor("x", d, xe);
  k.tensor("y", d, ye, true);
  PlanStep step{name, {tensorArg(x), {PlanArg::Kind::Tensor, allocate(n.result()), 0}}};
  decomposeIndex(k, ye);
  std::string stride, xi;
  for (size_t i = xs.size(); i-- > 0;) {
    std::string idx = stride.empty() ? "t" : "(t // (" + stride + "))";
    k.line(2, "j" + std::to_string(i) + " = " + (i == 0 ? idx : idx + " % " + xe[i]));
    stride = stride.empty() ? xe[i] : stride + " * " + xe[i];
  }
  for (size_t i = 0; i < xs.size(); ++i) xi += (i ? ", " : "") + ("j" + std::to_string(i));
  k.line(2, "y[" + indexList(ys.size()) + "] = x[" + xi + "]");
  source_ += k.str();
  plan_.steps.push_back(std::move(step));
  return true;
}

// concat of matrices along the last axis (split_qkv's adjoint): one tile per element of y copies
// the element of the operand whose columns hold it.
bool PlanWriter::concat(const Node& n) {
  if (viewConcats_.count(&n)) return true;  // its operands were written into its result (attentionGrad)
  const Value* x0 = n.operands[0];
  int64_t axis = n.attrs.getInt(AttrId::Axis, -1);
  for (const Value* x : n.operands)
    if (x->type.rank() != 2 || x->type.dtype != x0->type.dtype || (axis != -1 && axis != 1))
      return refuse(&n, "graph.concat other than of matrices of one dtype along the last axis has no kernel yet");
  DType d = x0->type.dtype;
  std::string name = nextKernel("concat");
  KernelText k(name);
  PlanStep step{name, {}};
  for (size_t i = 0; i < n.operands.size(); ++i) {
    k.tensor("x" + std::to_string(i), d, {"R", "C" + std::to_string(i)});
    step.args.push_back(tensorArg(n.operands[i]));
  }
  k.tensor("y", d, {"R", "T"}, true);
  step.args.push_back({PlanArg::Kind::Tensor, allocate(n.result()), 0});
  decomposeIndex(k, {"R", "T"});
  std::string first = "0";
  for (size_t i = 0; i < n.operands.size(); ++i) {
    std::string c = "C" + std::to_string(i);
    k.line(2, "j = i1 - (" + first + ")");
    k.line(2, "if j >= 0:");
    k.line(3, "if j < " + c + ":");
    k.line(4, "y[i0, i1] = x" + std::to_string(i) + "[i0, j]");
    first += " + " + c;
  }
  source_ += k.str();
  plan_.steps.push_back(std::move(step));
  return true;
}

// softmax_grad: dx = y * (g - sum(g * y)); log_softmax_grad: dx = g - exp(y) * sum(g), per row
// (operands y, g).
bool PlanWriter::rowsGrad(const Node& n) {
  const Value *y = n.operands[0], *g = n.operands[1];
  if (y->type.rank() != 2 || g->type.dtype != y->type.dtype)
    return refuse(&n, std::string(n.info().name) + " of rank other than 2 has no kernel yet");
  DType d = y->type.dtype;
  std::string dt = dtypeName(d);
  std::string name = nextKernel(n.info().name + 6);
  KernelText k(name);
  k.tensor("y", d, {"R", "C"});
  k.tensor("g", d, {"R", "C"});
  k.tensor("dx", d, {"R", "C"}, true);
  PlanStep step{name, {tensorArg(y), tensorArg(g), {PlanArg::Kind::Tensor, allocate(n.result()), 0}}};
  decomposeIndex(k, {"R", "C"});
  bool soft = n.is(OpId::SoftmaxGrad);
  k.line(2, "s = " + dt + "(0.0)");
  k.line(2, "for c in range(C):");
  k.line(3, soft ? "s += g[i0, c] * y[i0, c]" : "s += g[i0, c]");
  k.line(2, soft ? "dx[i0, i1] = y[i0, i1] * (g[i0, i1] - s)" : "dx[i0, i1] = g[i0, i1] - exp(y[i0, i1]) * s");
  source_ += k.str();
  plan_.steps.push_back(std::move(step));
  return true;
}

// rmsnorm_grad (operands x, g[, w]; results dx, dw), statistics recomputed per row:
//   dx[r, j] = inv_r (g w)[r, j] - x[r, j] inv_r^3 mean_k((g w)[r, k] x[r, k])
//   dw[j]    = sum_r g[r, j] x[r, j] inv_r
// dx: stdlib.nn.rmsnorm_safe_grad_<dt> (f32, bf16, f16), one group per row; f64: one tile per
// element. dw (only when something uses it): a two-stage column reduction (rmsnormWeightGrad).
bool PlanWriter::rmsnormGrad(const Node& n) {
  const Value *x = n.operands[0], *g = n.operands[1];
  bool weight = n.operands.size() > 2;
  if (x->type.rank() != 2) return refuse(&n, "graph.rmsnorm_grad of rank other than 2 has no kernel yet");
  DType d = x->type.dtype;
  for (const Value* v : n.operands)
    if (v->type.dtype != d) return refuse(&n, "graph.rmsnorm_grad of mixed dtypes has no kernel yet");
  std::string dt = dtypeName(d);
  double eps = n.attrs.getFloat(AttrId::Eps, 1e-6);
  bool wantDw =
      !n.result(1)->users.empty() || std::find(g_.results.begin(), g_.results.end(), n.result(1)) != g_.results.end();
  if (d != DType::FP64) {
    // dx: stdlib.nn.rmsnorm_safe_grad_<dt>, one group per row (a norm without weight gets ones).
    PlanStep step = stdlibStep("rmsnorm_safe_grad_" + dt);
    step.args = {tensorArg(x),
                 weight ? tensorArg(n.operands[2]) : PlanArg::tensor(filledTemp(d, x->type.shape[1], 1.0)),
                 tensorArg(g), PlanArg::tensor(allocate(n.result(0))), PlanArg::constant(eps, DType::FP32)};
    plan_.steps.push_back(std::move(step));
  } else {
    // dx at f64: one tile per element, the row's statistics recomputed.
    std::string name = nextKernel("rmsnorm_grad_x");
    KernelText k(name);
    k.tensor("x", d, {"R", "C"});
    k.tensor("g", d, {"R", "C"});
    PlanStep step{name, {tensorArg(x), tensorArg(g)}};
    if (weight) {
      k.tensor("w", d, {"C"});
      step.args.push_back(tensorArg(n.operands[2]));
    }
    k.tensor("dx", d, {"R", "C"}, true);
    step.args.push_back({PlanArg::Kind::Tensor, allocate(n.result(0)), 0});
    decomposeIndex(k, {"R", "C"});
    safeInvRms(k, 2, "i0", dt, eps);
    k.line(2, "gx = " + dt + "(0.0)");
    k.line(2, "for c in range(C):");
    k.line(3, std::string("gx += ") + (weight ? "g[i0, c] * w[c]" : "g[i0, c]") + " * x[i0, c]");
    k.line(2, "gx = gx / " + dt + "(C)");
    k.line(2, std::string("dx[i0, i1] = inv * ") + (weight ? "g[i0, i1] * w[i1]" : "g[i0, i1]") +
                  " - x[i0, i1] * (inv * inv * inv) * gx");
    source_ += k.str();
    plan_.steps.push_back(std::move(step));
  }
  // dw only when something uses it (a norm without weight has an unused one).
  return wantDw ? rmsnormWeightGrad(n, dt, eps) : true;
}

// dw[j] = sum_r g[r, j] x[r, j] inv_r of rmsnorm_grad `n` (operands x, g[, w]) as a deterministic
// column reduction in two stages, all at the dtype: the rows' inv (one tile per row), partial
// sums over blocks of kDwRows rows (one tile per block and column: consecutive tiles read
// consecutive columns) and the sum of the partials in block order (one tile per column).
bool PlanWriter::rmsnormWeightGrad(const Node& n, const std::string& dt, double eps) {
  const Value *x = n.operands[0], *g = n.operands[1];
  DType d = x->type.dtype;
  const Dim &R = x->type.shape[0], &C = x->type.shape[1];
  const std::string rows = std::to_string(kDwRows);
  plan_.temps.push_back({d, {R}});
  PlanBuffer inv{PlanBuffer::Kind::Temp, static_cast<unsigned>(plan_.temps.size() - 1)};
  plan_.temps.push_back({d, {Dim::binary(Dim::Op::CeilDiv, R, Dim::constant(kDwRows)), C}});
  PlanBuffer part{PlanBuffer::Kind::Temp, static_cast<unsigned>(plan_.temps.size() - 1)};
  std::string name = nextKernel("rmsnorm_grad_inv");
  KernelText k0(name);
  k0.tensor("x", d, {"R", "C"});
  k0.tensor("rinv", d, {"R"}, true);
  decomposeIndex(k0, {"R"});
  safeInvRms(k0, 2, "i0", dt, eps);
  k0.line(2, "rinv[i0] = inv");
  source_ += k0.str();
  plan_.steps.push_back({name, {tensorArg(x), PlanArg::tensor(inv)}});
  name = nextKernel("rmsnorm_grad_w_rows");
  KernelText k1(name);
  k1.tensor("x", d, {"R", "C"});
  k1.tensor("g", d, {"R", "C"});
  k1.tensor("rinv", d, {"R"});
  k1.tensor("part", d, {"P", "C"}, true);
  decomposeIndex(k1, {"P", "C"});
  k1.line(2, "acc = " + dt + "(0.0)");
  k1.line(2, "for r in range(i0 * " + rows + ", min(i0 * " + rows + " + " + rows + ", R)):");
  k1.line(3, "acc += g[r, i1] * x[r, i1] * rinv[r]");
  k1.line(2, "part[i0, i1] = acc");
  source_ += k1.str();
  plan_.steps.push_back({name, {tensorArg(x), tensorArg(g), PlanArg::tensor(inv), PlanArg::tensor(part)}});
  name = nextKernel("rmsnorm_grad_w");
  KernelText k2(name);
  k2.tensor("part", d, {"P", "C"});
  k2.tensor("dw", d, {"C"}, true);
  decomposeIndex(k2, {"C"});
  k2.line(2, "acc = " + dt + "(0.0)");
  k2.line(2, "for p in range(P):");
  k2.line(3, "acc += part[p, i0]");
  k2.line(2, "dw[i0] = acc");
  source_ += k2.str();
  plan_.steps.push_back({name, {PlanArg::tensor(part), PlanArg::tensor(allocate(n.result(1)))}});
  return true;
}

// sum_to: y[i...] = the sum of x over the axes that broadcasting to x's shape added (leading)
// or stretched (extent 1 in y), in index order.
bool PlanWriter::sumTo(const Node& n) {
  const Value* x = n.operands[0];
  const Type& ot = n.result()->type;
  size_t r = x->type.rank(), q = ot.rank();
  if (q == 0 || r > 4) return refuse(&n, "graph.sum_to to rank 0 or from rank above 4 has no kernel yet");
  DType d = ot.dtype;
  std::string dt = dtypeName(d);
  std::string name = nextKernel("sum_to");
  KernelText k(name);
  std::vector<std::string> ext(r), idx(r), yExt;
  std::vector<size_t> loops;
  for (size_t i = 0; i < q; ++i) yExt.push_back("d" + std::to_string(i));
  for (size_t ax = 0; ax < r; ++ax) {
    bool inY = ax >= r - q;
    size_t oa = inY ? ax - (r - q) : 0;
    if (inY && ot.shape[oa] == x->type.shape[ax]) {
      ext[ax] = yExt[oa];
      idx[ax] = "i" + std::to_string(oa);
      continue;
    }
    if (inY && !(ot.shape[oa].isConst() && ot.shape[oa].value() == 1))
      return refuse(&n, "graph.sum_to between these shapes has no kernel yet");
    if (inY) yExt[oa] = "1";
    ext[ax] = "e" + std::to_string(ax);
    idx[ax] = "u" + std::to_string(ax);
    loops.push_back(ax);
  }
  k.tensor("x", d, ext);
  k.tensor("y", d, yExt, true);
  PlanStep step{name, {tensorArg(x), {PlanArg::Kind::Tensor, allocate(n.result()), 0}}};
  decomposeIndex(k, yExt);
  k.line(2, "acc = " + dt + "(0.0)");
  int at = 2;
  for (size_t ax : loops) k.line(at++, "for " + idx[ax] + " in range(" + ext[ax] + "):");
  std::string xi;
  for (size_t i = 0; i < r; ++i) xi += (i ? ", " : "") + idx[i];
  k.line(at, "acc += x[" + xi + "]");
  k.line(2, "y[" + indexList(q) + "] = acc");
  source_ += k.str();
  plan_.steps.push_back(std::move(step));
  return true;
}

// reduce_sum / reduce_mean / reduce_max over {axes} (all when absent), {keepdims}: one tile per
// output element loops over the reduced axes in index order at the dtype (the reference form);
// a mean divides the sum by the product of the reduced extents.
bool PlanWriter::reduce(const Node& n) {
  const Value* x = n.operands[0];
  size_t r = x->type.rank();
  if (r == 0 || r > 4) return refuse(&n, std::string(n.info().name) + " of rank 0 or above 4 has no kernel yet");
  std::vector<bool> reduced;
  std::string error;
  if (!reduceAxes(x->type, n.attrs, reduced, error)) return refuse(&n, error);
  bool keep = n.attrs.getBool(AttrId::Keepdims, false);
  DType d = x->type.dtype;
  std::string dt = dtypeName(d);
  std::string name = nextKernel(n.info().name + 6);
  KernelText k(name);
  std::vector<std::string> ext(r), idx(r), yExt;
  std::string count = "1";
  for (size_t ax = 0; ax < r; ++ax) {
    if (!reduced[ax]) {
      ext[ax] = "d" + std::to_string(yExt.size());
      idx[ax] = "i" + std::to_string(yExt.size());
      yExt.push_back(ext[ax]);
      continue;
    }
    ext[ax] = "e" + std::to_string(ax);
    idx[ax] = "u" + std::to_string(ax);
    count += " * " + ext[ax];
    if (keep) yExt.push_back("1");
  }
  bool scalar = yExt.empty();
  if (scalar) yExt.push_back("1");  // rank 0: one element (planShape)
  k.tensor("x", d, ext);
  k.tensor("y", d, yExt, true);
  PlanStep step{name, {tensorArg(x), {PlanArg::Kind::Tensor, allocate(n.result()), 0}}};
  decomposeIndex(k, yExt);
  // Output indices of kept axes of extent 1 (keepdims) are 0, which decomposeIndex gives.
  bool max = n.is(OpId::ReduceMax);
  k.line(2, "acc = " + dt + (max ? "(-inf)" : "(0.0)"));
  int at = 2;
  for (size_t ax = 0; ax < r; ++ax)
    if (reduced[ax]) k.line(at++, "for " + idx[ax] + " in range(" + ext[ax] + "):");
  std::string xi;
  for (size_t i = 0; i < r; ++i) xi += (i ? ", " : "") + idx[i];
  k.line(at, max ? "acc = max(acc, x[" + xi + "])" : "acc += x[" + xi + "]");
  std::string yi = scalar ? "0" : indexList(yExt.size());
  if (n.is(OpId::ReduceMean)) k.line(2, "acc = acc / " + dt + "(" + count + ")");
  k.line(2, "y[" + yi + "] = acc");
  source_ += k.str();
  plan_.steps.push_back(std::move(step));
  return true;
}

// A result that no node wrote into the caller's buffer (a parameter returned, a value
// returned twice) is copied into it.
bool PlanWriter::copyResult(size_t i) {
  const Value* r = g_.results[i];
  if (!buffers_.count(r)) return refuse(r->def, "a returned value has no buffer");
  claimed_[i] = true;
  return elementwise(r->def, "copy", {"$0"}, {r}, r, {PlanBuffer::Kind::Output, static_cast<unsigned>(i)});
}

}  // namespace kernelgen

void generateHostCode(const GraphModule& m, GeneratedHostCode& out, DiagnosticEngine& diags) {
  bool usesStdlibNN = false;
  for (const auto& g : m.graphs) {
    std::string source;
    HostPlan plan;
    kernelgen::PlanWriter w(*g, source, diags);
    if (!w.run(plan)) continue;
    usesStdlibNN |= w.usesStdlibNN();
    out.source += source;
    out.plans.push_back(std::move(plan));
  }
  if (usesStdlibNN) out.source = kStdlibNNImport + out.source;
}

}  // namespace tessera::graph
