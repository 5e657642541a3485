#include "graph/KernelGen.h"

#include <cctype>
#include <cmath>
#include <cstdio>
#include <limits>
#include <map>
#include <set>
#include <sstream>

#include "graph/GraphDiagnostics.h"
#include "graph/KernelForms.h"
#include "graph/Printer.h"
#include "graph/ShapeRules.h"

namespace tessera::graph {

namespace {

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

// One generated kernel: its parameters in order and its body, written as Tessera source.
class KernelText {
 public:
  explicit KernelText(std::string name) : name_(std::move(name)) {}
  // A tensor parameter with the given extents (symbols of this kernel or constants).
  std::string tensor(const std::string& name, DType d, const std::vector<std::string>& extents, bool mut = false) {
    std::string p = name + ": " + (mut ? "mut " : "") + dtypeName(d) + "[";
    for (size_t i = 0; i < extents.size(); ++i) p += (i ? ", " : "") + extents[i];
    params_.push_back(p + "]");
    return name;
  }
  void scalar(const std::string& name, DType d) { params_.push_back(name + ": " + dtypeName(d)); }
  void line(int indent, const std::string& text) { body_ += std::string(4 * indent, ' ') + text + "\n"; }
  std::string str() const {
    std::string s = "@kernel\ndef " + name_ + "(";
    for (size_t i = 0; i < params_.size(); ++i) s += (i ? ", " : "") + params_[i];
    return s + "):\n" + body_ + "\n";
  }

 private:
  std::string name_;
  std::vector<std::string> params_;
  std::string body_;
};

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

std::string indexList(size_t rank, size_t skip = 0) {
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

class PlanWriter {
 public:
  PlanWriter(const Graph& g, std::string& source, DiagnosticEngine& diags) : g_(g), source_(source), diags_(diags) {}

  bool run(HostPlan& plan) {
    plan_.name = g_.name;
    for (size_t i = 0; i < g_.params.size(); ++i) {
      const Param& p = g_.params[i];
      plan_.params.push_back({p.value->name, p.value->type.isTensor(), p.value->type.dtype, p.value->type.shape,
                              p.access != Access::Read});
      if (p.value->type.isTensor())
        buffers_[p.value.get()] = {PlanBuffer::Kind::Param, static_cast<unsigned>(i)};
      else
        scalarParams_[p.value.get()] = static_cast<unsigned>(i);
    }
    for (const Value* r : g_.results) {
      if (!r->type.isTensor()) return refuse(nullptr, "it returns a scalar, which entry points do not return yet");
      plan_.outputs.push_back({r->type.dtype, planShape(r->type)});
    }
    claimed_.assign(g_.results.size(), false);
    for (const auto& n : g_.nodes)
      if (!node(*n)) return false;
    for (size_t i = 0; i < g_.results.size(); ++i)
      if (!claimed_[i] && !copyResult(i)) return false;
    if (!symbolsBound()) return false;
    plan_.signature = signature();
    plan = std::move(plan_);
    return true;
  }

 private:
  bool refuse(const Node* n, const std::string& why) {
    diags_.report(diag::warn_graph_no_entry, n ? n->loc : g_.loc) << g_.name << why;
    return false;
  }
  static bool supportedDType(DType d) { return d == DType::FP32 || d == DType::FP64; }

  // <function>__k<step>_<op>, spelled as a Tessera identifier whatever the graph's name is.
  std::string nextKernel(const char* what) {
    std::string name = g_.name + "__k" + std::to_string(plan_.steps.size()) + "_" + what;
    for (char& c : name)
      if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_') c = '_';
    return std::isdigit(static_cast<unsigned char>(name[0])) ? "_" + name : name;
  }
  // The buffer of a node result: the caller's result when the graph returns it (the first
  // result that names it); the caller's tensor when plan-memory stores it in place; the slot
  // plan-memory gave it ({buffers}); else a temporary of its own.
  PlanBuffer allocate(const Value* v) {
    for (size_t i = 0; i < g_.results.size(); ++i)
      if (g_.results[i] == v && !claimed_[i]) {
        claimed_[i] = true;
        return buffers_[v] = {PlanBuffer::Kind::Output, static_cast<unsigned>(i)};
      }
    if (v->users.size() == 1 && v->users[0]->is(OpId::Store) && v->users[0]->attrs.getBool("in_place", false))
      return buffers_[v] = buffers_.at(v->users[0]->operands[0]);
    int64_t slot = -1;
    if (const Attr* b = v->def ? v->def->attrs.get("buffers") : nullptr)
      if (b->isList() && v->index < b->asList().size() && b->asList()[v->index].isInt())
        slot = b->asList()[v->index].asInt();
    if (slot >= 0 && slots_.count(slot) && plan_.temps[slots_[slot]].dtype == v->type.dtype &&
        plan_.temps[slots_[slot]].shape == planShape(v->type))
      return buffers_[v] = {PlanBuffer::Kind::Temp, slots_[slot]};
    plan_.temps.push_back({v->type.dtype, planShape(v->type)});
    unsigned t = static_cast<unsigned>(plan_.temps.size() - 1);
    if (slot >= 0) slots_[slot] = t;
    return buffers_[v] = {PlanBuffer::Kind::Temp, t};
  }
  PlanArg tensorArg(const Value* v) { return {PlanArg::Kind::Tensor, buffers_.at(v), 0}; }

  // The extents of what the entry point allocates must follow from its parameters' shapes.
  bool symbolsBound() {
    std::set<std::string> bound, used;
    for (const PlanParam& p : plan_.params)
      for (const Dim& d : p.shape)
        if (d.isSymbol()) bound.insert(d.name());
    for (const auto* list : {&plan_.outputs, &plan_.temps})
      for (const PlanTensor& t : *list)
        for (const Dim& d : t.shape) d.collectSymbols(used);
    for (const PlanStep& s : plan_.steps)
      for (const PlanArg& a : s.args)
        if (a.kind == PlanArg::Kind::Extent) a.extent.collectSymbols(used);
    for (const std::string& s : used)
      if (!bound.count(s))
        return refuse(nullptr,
                      "extent '" + s + "' is not the extent of a parameter, so a call cannot size its results");
    return true;
  }
  std::string signature() const {
    std::string s = g_.name + "(";
    for (size_t i = 0; i < g_.params.size(); ++i) {
      const Param& p = g_.params[i];
      s += (i ? ", " : "") + p.value->name + ": " +
           (p.access != Access::Read ? std::string(accessName(p.access)) + " " : "") + p.value->type.str();
    }
    s += ") -> (";
    for (size_t i = 0; i < g_.results.size(); ++i) s += (i ? ", " : "") + g_.results[i]->type.str();
    return s + ")";
  }
  bool node(const Node& n);
  bool elementwise(const Node* n, const std::string& label, const std::vector<std::string>& steps,
                   const std::vector<const Value*>& operands, const Value* out, PlanBuffer outBuffer);
  bool matmul(const Node& n);
  bool rows(const Node& n);
  bool stdlibRowsNode(const Node& n);
  PlanBuffer filledTemp(DType d, const Dim& extent, double value);
  bool attention(const Node& n);
  bool referenceAttention(const Node& n, const std::string& name);
  bool rowsGrad(const Node& n);
  bool rmsnormGrad(const Node& n);
  bool sumTo(const Node& n);
  bool reduce(const Node& n);
  bool transpose(const Node& n);
  bool split(const Node& n);
  bool reshape(const Node& n);
  bool copyResult(size_t i);

  const Graph& g_;
  std::string& source_;
  DiagnosticEngine& diags_;
  HostPlan plan_;
  std::map<const Value*, PlanBuffer> buffers_;
  std::map<const Value*, unsigned> scalarParams_;
  std::map<int64_t, unsigned> slots_;  // plan-memory's slots -> temporaries
  std::vector<bool> claimed_;
  bool usesStdlibNN_ = false;

 public:
  bool usesStdlibNN() const { return usesStdlibNN_; }
};

bool PlanWriter::node(const Node& n) {
  for (const auto& r : n.results)
    if (r->type.isTensor() && !supportedDType(r->type.dtype))
      return refuse(&n, std::string(n.info().name) + " on " + dtypeName(r->type.dtype) +
                            " tensors has no kernel yet (f32 and f64 do)");
  if (n.is(OpId::Constant) || n.is(OpId::DimValue)) return true;  // folds into the kernels that use it
  if (n.is(OpId::Store)) {
    // The stored value is the parameter's final value (for Region[reduce_sum], the builder
    // already added the old one): a copy into the caller's tensor.
    const Value* dst = n.operands[0];
    if (n.attrs.getBool("in_place", false)) return true;  // plan-memory: computed into the parameter
    return elementwise(&n, "store", {"$0"}, {n.operands[1]}, dst, buffers_.at(dst));
  }
  if (n.is(OpId::Fill)) {
    PlanBuffer b = allocate(n.result());
    return elementwise(&n, "fill", {literal(n.attrs.getFloat("value", 0))}, {}, n.result(), b);
  }
  if (n.has(T_Elementwise) && n.info().expr && !n.is(OpId::Cast) && !n.is(OpId::BroadcastTo)) {
    std::vector<const Value*> ops(n.operands.begin(), n.operands.end());
    PlanBuffer b = allocate(n.result());
    return elementwise(&n, n.info().name + 6, {n.info().expr}, ops, n.result(), b);
  }
  if (n.is(OpId::Fused)) {
    std::vector<const Value*> ops(n.operands.begin(), n.operands.end());
    std::vector<std::string> steps;
    for (const Attr& a : n.attrs.get("body")->asList()) steps.push_back(a.asStr());
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
    const Attr* dimValue = v->def && v->def->is(OpId::DimValue) ? v->def->attrs.get("value") : nullptr;
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
      double c = v->def->attrs.getFloat("value", 0);
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

// y = a @ b (operands read transposed per {transpose_a, transpose_b}): f32 in the tiled form
// (graph/KernelForms.cpp); tile_shape is a hint the form does not take yet.
bool PlanWriter::matmul(const Node& n) {
  const Value *a = n.operands[0], *b = n.operands[1];
  if (a->type.rank() != 2 || b->type.rank() != 2)
    return refuse(&n, "a batched graph.matmul has no kernel yet (two matrices do)");
  if (a->type.dtype != n.result()->type.dtype || b->type.dtype != n.result()->type.dtype)
    return refuse(&n, "graph.matmul of mixed dtypes has no kernel yet");
  DType d = n.result()->type.dtype;
  bool ta = n.attrs.getBool("transpose_a", false), tb = n.attrs.getBool("transpose_b", false);
  std::string name = nextKernel("matmul");
  PlanBuffer out = allocate(n.result());
  plan_.steps.push_back({name, {tensorArg(a), tensorArg(b), {PlanArg::Kind::Tensor, out, 0}}});
  if (d == DType::FP32) {
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
  if (d == DType::FP32) return stdlibRowsNode(n);
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
    safeInvRms(k, 2, "i0", dt, n.attrs.getFloat("eps", 1e-6));
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

// An f32 row op through stdlib.nn's row helpers (graph/KernelForms.cpp). The norms' missing
// weight is a tensor of ones and layernorm's missing bias one of zeros, so the one stdlib form
// serves every variant.
bool PlanWriter::stdlibRowsNode(const Node& n) {
  const Value* x = n.operands[0];
  RowsForm form = n.is(OpId::Softmax)      ? RowsForm::Softmax
                  : n.is(OpId::LogSoftmax) ? RowsForm::LogSoftmax
                  : n.is(OpId::RMSNorm)    ? RowsForm::RMSNorm
                                           : RowsForm::LayerNorm;
  for (const Value* v : n.operands)
    if (v->type.dtype != DType::FP32) return refuse(&n, "a weight of another dtype has no kernel form yet");
  PlanStep step{"", {tensorArg(x)}};
  const Dim& C = x->type.shape[1];
  if (form == RowsForm::RMSNorm || form == RowsForm::LayerNorm) {
    step.args.push_back(n.operands.size() > 1 ? tensorArg(n.operands[1])
                                              : PlanArg{PlanArg::Kind::Tensor, filledTemp(DType::FP32, C, 1.0), 0});
    if (form == RowsForm::LayerNorm)
      step.args.push_back(n.operands.size() > 2 ? tensorArg(n.operands[2])
                                                : PlanArg{PlanArg::Kind::Tensor, filledTemp(DType::FP32, C, 0.0), 0});
  }
  step.kernel = nextKernel(n.info().name + 6);
  step.args.push_back({PlanArg::Kind::Tensor, allocate(n.result()), 0});
  source_ += stdlibRows(step.kernel, form, literal(n.attrs.getFloat("eps", 1e-6)));
  usesStdlibNN_ = true;
  plan_.steps.push_back(std::move(step));
  return true;
}

// A temporary vector of `extent` elements, all `value` (one fill kernel).
PlanBuffer PlanWriter::filledTemp(DType d, const Dim& extent, double value) {
  plan_.temps.push_back({d, {extent}});
  PlanBuffer b{PlanBuffer::Kind::Temp, static_cast<unsigned>(plan_.temps.size() - 1)};
  std::string name = nextKernel("fill");
  KernelText k(name);
  k.tensor("y", d, {"d0"}, true);
  decomposeIndex(k, {"d0"});
  k.line(2, "y[i0] = " + std::string(dtypeName(d)) + "(" + literal(value) + ")");
  source_ += k.str();
  plan_.steps.push_back({name, {{PlanArg::Kind::Tensor, b, 0}}});
  return b;
}

// {scale} as Tessera source; by default 1/sqrt(D), D the kernel's head extent.
std::string attentionScale(const Node& n, const std::string& dt) {
  return n.attrs.has("scale") ? dt + "(" + literal(n.attrs.getFloat("scale", 1)) + ")"
                              : dt + "(1.0) / sqrt(" + dt + "(D))";
}

// o = softmax(scale * q k^T) v per head (heads side by side in the last axes; the default scale
// is 1/sqrt of the head dim): f32 in the tiled form (graph/KernelForms.cpp) when the head dims
// are constants or there is one head, else (and for f64) the reference form.
bool PlanWriter::attention(const Node& n) {
  const Value *q = n.operands[0], *kk = n.operands[1], *v = n.operands[2];
  DType d = q->type.dtype;
  for (const Value* x : {q, kk, v})
    if (x->type.rank() != 2 || x->type.dtype != d)
      return refuse(&n, "graph.flash_attention of other than three matrices of one dtype has no kernel yet");
  if (n.result(1)->type.dtype != d) return refuse(&n, "a log-sum-exp of another dtype has no kernel yet");
  std::string dt = dtypeName(d);
  std::string name = nextKernel("flash_attention");
  int64_t heads = n.attrs.getInt("heads", 1);
  const Dim &D = q->type.shape[1], &E = v->type.shape[1];
  // The tiled form needs constant head dims when there are several heads.
  bool constHeads = heads == 1 || (D.isConst() && E.isConst());
  if (d != DType::FP32 || !constHeads) return referenceAttention(n, name);
  PlanBuffer o = allocate(n.result(0));
  PlanBuffer lse = allocate(n.result(1));
  std::string scale = heads == 1 ? attentionScale(n, dt)
                                 : n.attrs.has("scale") ? attentionScale(n, dt)
                                                        : dt + "(" + literal(1.0 / std::sqrt(double(D.value() / heads))) + ")";
  source_ += tiledAttention(name, d, scale, n.attrs.getBool("causal", false), heads,
                            heads == 1 ? 0 : D.value() / heads, heads == 1 ? 0 : E.value() / heads);
  plan_.steps.push_back(
      {name,
       {tensorArg(q), tensorArg(kk), tensorArg(v), {PlanArg::Kind::Tensor, o, 0}, {PlanArg::Kind::Tensor, lse, 0}}});
  return true;
}

// The reference form (f64: tile.dot accumulates in f32): one tile per output element, the
// online softmax over the keys in order; lse[0, i] = m + log(l), written by column 0's tiles.
bool PlanWriter::referenceAttention(const Node& n, const std::string& name) {
  const Value *q = n.operands[0], *kk = n.operands[1], *v = n.operands[2];
  DType d = q->type.dtype;
  std::string dt = dtypeName(d);
  int64_t heads = n.attrs.getInt("heads", 1);
  std::string H = std::to_string(heads);
  KernelText k(name);
  k.tensor("q", d, {"S", "D"});
  k.tensor("k", d, {"T", "D"});
  k.tensor("v", d, {"T", "E"});
  k.tensor("o", d, {"S", "E"}, true);
  k.tensor("lse", d, {H, "S"}, true);
  PlanBuffer o = allocate(n.result(0));
  PlanBuffer lse = allocate(n.result(1));
  decomposeIndex(k, {"S", "E"});
  // Head h = i1 // (E / heads) reads columns h * (D / heads) ... of q and k.
  k.line(2, "h = i1 // (E // " + H + ")");
  k.line(2, "c0 = h * (D // " + H + ")");
  std::string scale = n.attrs.has("scale") ? attentionScale(n, dt) : dt + "(1.0) / sqrt(" + dt + "(D // " + H + "))";
  k.line(2, "scale = " + scale);
  k.line(2, "m = " + dt + "(-inf)");
  k.line(2, "l = " + dt + "(0.0)");
  k.line(2, "acc = " + dt + "(0.0)");
  k.line(2, std::string("for j in range(") + (n.attrs.getBool("causal", false) ? "min(i0 + 1, T)" : "T") + "):");
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
  plan_.steps.push_back(
      {name,
       {tensorArg(q), tensorArg(kk), tensorArg(v), {PlanArg::Kind::Tensor, o, 0}, {PlanArg::Kind::Tensor, lse, 0}}});
  return true;
}

// y[i...] = x[i permuted]: a copy in the output's layout.
bool PlanWriter::transpose(const Node& n) {
  const Value* x = n.operands[0];
  size_t r = x->type.rank();
  if (r < 2 || r > 4) return refuse(&n, "graph.transpose of rank other than 2 to 4 has no kernel yet");
  std::vector<int64_t> perm;
  if (const Attr* p = n.attrs.get("perm"))
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

// split_qkv of a matrix: a copy into three matrices (graph/KernelForms.cpp).
bool PlanWriter::split(const Node& n) {
  const Value* x = n.operands[0];
  if (x->type.rank() != 2) return refuse(&n, "graph.split_qkv of rank other than 2 has no kernel yet");
  std::string name = nextKernel("split_qkv");
  PlanStep step{name, {tensorArg(x)}};
  for (unsigned i = 0; i < 3; ++i) step.args.push_back({PlanArg::Kind::Tensor, allocate(n.result(i)), 0});
  source_ += splitQKV(name, x->type.dtype);
  plan_.steps.push_back(std::move(step));
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
// Two kernels: one tile per element of dx, one per element of dw (rows summed in order).
bool PlanWriter::rmsnormGrad(const Node& n) {
  const Value *x = n.operands[0], *g = n.operands[1];
  bool weight = n.operands.size() > 2;
  if (x->type.rank() != 2) return refuse(&n, "graph.rmsnorm_grad of rank other than 2 has no kernel yet");
  DType d = x->type.dtype;
  for (const Value* v : n.operands)
    if (v->type.dtype != d) return refuse(&n, "graph.rmsnorm_grad of mixed dtypes has no kernel yet");
  std::string dt = dtypeName(d);
  double eps = n.attrs.getFloat("eps", 1e-6);
  for (int part = 0; part < 2; ++part) {
    std::string name = nextKernel(part == 0 ? "rmsnorm_grad_x" : "rmsnorm_grad_w");
    KernelText k(name);
    k.tensor("x", d, {"R", "C"});
    k.tensor("g", d, {"R", "C"});
    PlanStep step{name, {tensorArg(x), tensorArg(g)}};
    if (weight) {
      k.tensor("w", d, {"C"});
      step.args.push_back(tensorArg(n.operands[2]));
    }
    if (part == 0) {
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
    } else {
      k.tensor("dw", d, {"C"}, true);
      step.args.push_back({PlanArg::Kind::Tensor, allocate(n.result(1)), 0});
      decomposeIndex(k, {"C"});
      k.line(2, "acc = " + dt + "(0.0)");
      k.line(2, "for r in range(R):");
      safeInvRms(k, 3, "r", dt, eps);
      k.line(3, "acc += g[r, i0] * x[r, i0] * inv");
      k.line(2, "dw[i0] = acc");
    }
    source_ += k.str();
    plan_.steps.push_back(std::move(step));
  }
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
  bool keep = n.attrs.getBool("keepdims", false);
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

}  // namespace

void generateHostCode(const GraphModule& m, GeneratedHostCode& out, DiagnosticEngine& diags) {
  bool usesStdlibNN = false;
  for (const auto& g : m.graphs) {
    std::string source;
    HostPlan plan;
    PlanWriter w(*g, source, diags);
    if (!w.run(plan)) continue;
    usesStdlibNN |= w.usesStdlibNN();
    out.source += source;
    out.plans.push_back(std::move(plan));
  }
  if (usesStdlibNN) out.source = kStdlibNNImport + out.source;
}

}  // namespace tessera::graph
