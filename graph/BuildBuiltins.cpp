// Building graphs: host builtins. One handler per sema/Builtins.def id, found through the table
// at the end of this file; a builtin without a handler is reported as not supported in host
// functions.
#include <cmath>

#include "graph/BuildContext.h"

namespace tessera::graph {

class BuiltinCall {
 public:
  BuiltinCall(FunctionBuilder& b, const BuiltinInfo& info, const CallExpr* c, const std::vector<HValue>& args,
              const std::vector<std::pair<std::string, HValue>>& kwargs)
      : b(b), info(info), c(c), args(args), kwargs(kwargs) {}

  FunctionBuilder& b;
  const BuiltinInfo& info;
  const CallExpr* c;
  const std::vector<HValue>& args;
  const std::vector<std::pair<std::string, HValue>>& kwargs;

  SourceRange at() const { return c->range; }
  std::string name() const { return info.name; }

  // The argument given by position `pos` or keyword `kw` (null when absent).
  const HValue* get(size_t pos, const char* kw) const {
    for (const auto& [k, v] : kwargs)
      if (kw && k == kw) return &v;
    return pos < args.size() ? &args[pos] : nullptr;
  }
  // Refuses keywords the handler does not read (`**` signatures accept anything in sema).
  void allowKeywords(std::initializer_list<const char*> allowed) const {
    for (const auto& [k, v] : kwargs) {
      bool ok = false;
      for (const char* a : allowed) ok |= k == a;
      if (!ok) {
        b.diags().report(diag::err_graph_attr, at())
            << ("'" + name() + "'") << ("no keyword '" + k + "' (it takes: " + [&] {
                 std::string s;
                 for (const char* a : allowed) s += (s.empty() ? "" : ", ") + std::string(a);
                 return s.empty() ? std::string("none") : s;
               }() + ")");
        b.fail();
      }
    }
  }
  Value* tensor(size_t pos, const char* kw, const char* what) const {
    const HValue* h = get(pos, kw);
    if (!h) {
      b.diags().report(diag::err_graph_attr, at()) << ("'" + name() + "'") << what;
      b.fail();
    }
    return b.asTensor(*h, argRange(pos), what);
  }
  SourceRange argRange(size_t pos) const {
    size_t k = 0;
    for (const Argument& a : c->args)
      if (a.kind == Argument::Positional && k++ == pos) return a.range;
    return c->range;
  }
  double number(size_t pos, const char* kw, double dflt) const {
    const HValue* h = get(pos, kw);
    if (!h) return dflt;
    auto v = b.asConst(*h);
    if (!v || !v->isNumber()) {
      b.diags().report(diag::err_graph_attr, at())
          << ("'" + name() + "'") << (std::string(kw) + " as a compile-time number");
      b.fail();
    }
    return v->asDouble();
  }
  bool flag(const char* kw, bool dflt) const { return number(SIZE_MAX, kw, dflt ? 1 : 0) != 0; }
  std::string str(const char* kw, const std::string& dflt) const {
    const HValue* h = get(SIZE_MAX, kw);
    if (!h) return dflt;
    auto v = b.asConst(*h);
    if (!v || v->kind != ConstValue::Str) {
      b.diags().report(diag::err_graph_attr, at()) << ("'" + name() + "'") << (std::string(kw) + " as a string");
      b.fail();
    }
    return v->s;
  }
  // axis=None | int | tuple of ints -> the "axes" attribute (absent: all).
  void axes(Attrs& a) const {
    const HValue* h = get(SIZE_MAX, "axis");
    if (!h || h->is(HValue::Kind::None)) return;
    std::vector<HValue> items = h->is(HValue::Kind::Tuple) ? h->elems : std::vector<HValue>{*h};
    std::vector<int64_t> ax;
    for (const HValue& i : items) {
      auto v = b.asInt(i);
      if (!v) {
        b.diags().report(diag::err_graph_attr, at())
            << ("'" + name() + "'") << "axis as an integer or a tuple of integers";
        b.fail();
      }
      ax.push_back(*v);
    }
    a.set(AttrId::Axes, Attr::ints(ax));
  }
  Shape shape(const std::vector<HValue>& items) const {
    Shape s;
    for (const HValue& i : items) {
      if (i.is(HValue::Kind::Tuple)) {
        Shape inner = shape(i.elems);
        s.insert(s.end(), inner.begin(), inner.end());
        continue;
      }
      auto d = b.asDim(i);
      if (!d) {
        b.diags().report(diag::err_graph_attr, at()) << ("'" + name() + "'") << "a shape of integers or extents";
        b.fail();
      }
      s.push_back(*d);
    }
    return s;
  }

  HValue of(Value* v) const { return HValue::of(v); }

  // ---- handlers

  HValue matmul() {
    allowKeywords({"tile_shape", "transpose_a", "transpose_b"});
    Value* a = tensor(0, "a", "the left operand");
    Value* bb = tensor(1, "b", "the right operand");
    Attrs attrs;
    if (flag("transpose_a", false)) attrs.set(AttrId::TransposeA, Attr::b(true));
    if (flag("transpose_b", false)) attrs.set(AttrId::TransposeB, Attr::b(true));
    if (const HValue* ts = get(SIZE_MAX, "tile_shape")) {
      std::vector<int64_t> v;
      for (const HValue& i : ts->is(HValue::Kind::Tuple) ? ts->elems : std::vector<HValue>{*ts})
        if (auto x = b.asInt(i)) v.push_back(*x);
      attrs.set(AttrId::TileShape, Attr::ints(v));
    }
    return of(b.op(OpId::MatMul, {a, bb}, at(), attrs));
  }
  HValue rowOp(OpId id) {
    allowKeywords({"axis"});
    Value* x = tensor(0, "x", "the operand");
    double axis = number(SIZE_MAX, "axis", -1);
    if (axis != -1 && axis != static_cast<double>(x->type.rank()) - 1) {
      b.diags().report(diag::err_graph_unsupported, at())
          << (name() + " along an axis other than the last") << "; transpose the operand (op.transpose) first";
      b.fail();
    }
    return of(b.op(id, {x}, at()));
  }
  HValue norm(OpId id, bool hasBias) {
    if (hasBias)
      allowKeywords({"weight", "bias", "eps"});
    else
      allowKeywords({"weight", "eps"});
    std::vector<Value*> ops = {tensor(0, "x", "the operand")};
    const HValue* w = get(1, "weight");
    const HValue* bias = hasBias ? get(2, "bias") : nullptr;
    if (bias && !bias->is(HValue::Kind::None) && (!w || w->is(HValue::Kind::None))) {
      b.diags().report(diag::err_graph_attr, at()) << ("'" + name() + "'") << "a weight when it has a bias";
      b.fail();
    }
    if (w && !w->is(HValue::Kind::None)) ops.push_back(b.asTensor(*w, at(), "the weight"));
    if (bias && !bias->is(HValue::Kind::None)) ops.push_back(b.asTensor(*bias, at(), "the bias"));
    Attrs attrs;
    attrs.set(AttrId::Eps, Attr::f(number(SIZE_MAX, "eps", id == OpId::RMSNorm ? 1e-6 : 1e-5)));
    return of(b.op(id, ops, at(), attrs));
  }
  HValue flashAttention() {
    allowKeywords({"causal", "scale", "heads"});
    Value* q = tensor(0, "q", "q");
    Value* k = tensor(1, "k", "k");
    Value* v = tensor(2, "v", "v");
    Attrs attrs;
    // q, k, v split from one tensor by split_qkv(..., heads=n) take its heads unless given.
    int64_t split = 1;
    if (q->def && q->def->is(OpId::SplitQKV) && k->def == q->def && v->def == q->def)
      split = q->def->attrs.getInt(AttrId::Heads, 1);
    int64_t heads = static_cast<int64_t>(number(SIZE_MAX, "heads", static_cast<double>(split)));
    attrs.set(AttrId::Heads, Attr::i(heads));
    if (flag("causal", false)) attrs.set(AttrId::Causal, Attr::b(true));
    if (get(SIZE_MAX, "scale")) attrs.set(AttrId::Scale, Attr::f(number(SIZE_MAX, "scale", 1)));
    return of(b.opN(OpId::FlashAttention, {q, k, v}, at(), attrs)[0]);
  }
  HValue splitQKV() {
    allowKeywords({"heads"});
    Value* x = tensor(0, "qkv", "the operand");
    Attrs attrs;
    attrs.set(AttrId::Heads, Attr::i(static_cast<int64_t>(number(SIZE_MAX, "heads", 1))));
    std::vector<Value*> r = b.opN(OpId::SplitQKV, {x}, at(), attrs);
    return HValue::tuple({of(r[0]), of(r[1]), of(r[2])});
  }
  HValue reduce(OpId id) {
    allowKeywords({"axis", "keepdims"});
    Value* x = tensor(0, "x", "the operand");
    Attrs attrs;
    axes(attrs);
    if (flag("keepdims", false)) attrs.set(AttrId::Keepdims, Attr::b(true));
    return of(b.op(id, {x}, at(), attrs));
  }
  HValue unary(OpId id) {
    allowKeywords({});
    if (args.size() != 1) {
      b.diags().report(diag::err_graph_attr, at()) << ("'" + name() + "'") << "one operand";
      b.fail();
    }
    if (auto c = b.asConst(args[0]); c && c->isNumber()) return foldUnary(id, c->asDouble());
    return of(b.op(id, {b.asTensor(args[0], argRange(0), "the operand")}, at()));
  }
  HValue foldUnary(OpId id, double x) {
    double r = x;
    switch (id) {
      case OpId::Exp: r = std::exp(x); break;
      case OpId::Log: r = std::log(x); break;
      case OpId::Sqrt: r = std::sqrt(x); break;
      case OpId::Rsqrt: r = 1 / std::sqrt(x); break;
      case OpId::Tanh: r = std::tanh(x); break;
      case OpId::Sin: r = std::sin(x); break;
      case OpId::Cos: r = std::cos(x); break;
      case OpId::Erf: r = std::erf(x); break;
      case OpId::Abs: r = std::fabs(x); break;
      default:
        b.diags().report(diag::err_graph_unsupported, at()) << ("'" + name() + "' of a constant") << "";
        b.fail();
    }
    return HValue::constant(ConstValue::ofFloat(r));
  }
  HValue binaryOp(OpId id) {
    allowKeywords({});
    if (args.size() != 2) {
      b.diags().report(diag::err_graph_attr, at()) << ("'" + name() + "'") << "two operands on tensors";
      b.fail();
    }
    auto ca = b.asConst(args[0]), cb = b.asConst(args[1]);
    if (ca && cb && ca->isNumber() && cb->isNumber()) {
      double x = ca->asDouble(), y = cb->asDouble();
      bool ints = ca->kind == ConstValue::Int && cb->kind == ConstValue::Int;
      double r = id == OpId::Maximum ? std::max(x, y) : id == OpId::Minimum ? std::min(x, y) : std::pow(x, y);
      return HValue::constant(ints && id != OpId::Pow ? ConstValue::ofInt(static_cast<long long>(r))
                                                      : ConstValue::ofFloat(r));
    }
    DType like = args[0].is(HValue::Kind::Value)   ? args[0].value->type.dtype
                 : args[1].is(HValue::Kind::Value) ? args[1].value->type.dtype
                                                   : DType::FP32;
    Value* x = b.asValue(args[0], argRange(0), "the first operand", like);
    Value* y = b.asValue(args[1], argRange(1), "the second operand", like);
    return of(b.op(id, {x, y}, at()));
  }
  HValue transpose() {
    allowKeywords({"perm"});
    Value* x = tensor(0, "x", "the operand");
    Attrs attrs;
    if (const HValue* p = get(SIZE_MAX, "perm")) {
      std::vector<int64_t> perm;
      for (const HValue& i : p->is(HValue::Kind::Tuple) ? p->elems : std::vector<HValue>{*p})
        if (auto v = b.asInt(i)) perm.push_back(*v);
      attrs.set(AttrId::Perm, Attr::ints(perm));
    }
    return of(b.op(OpId::Transpose, {x}, at(), attrs));
  }
  HValue reshape() {
    allowKeywords({"shape"});
    Value* x = tensor(0, "x", "the operand");
    const HValue* s = get(1, "shape");
    if (!s) {
      b.diags().report(diag::err_graph_attr, at()) << ("'" + name() + "'") << "a shape";
      b.fail();
    }
    Attrs attrs;
    attrs.set(AttrId::Shape, Attr::dims(shape(s->is(HValue::Kind::Tuple) ? s->elems : std::vector<HValue>{*s})));
    return of(b.op(OpId::Reshape, {x}, at(), attrs));
  }
  HValue randn() {
    allowKeywords({"seed", "dtype"});
    Attrs attrs;
    attrs.set(AttrId::Shape, Attr::dims(shape(args)));
    attrs.set(AttrId::Seed, Attr::i(static_cast<int64_t>(number(SIZE_MAX, "seed", 0))));
    std::string d = "f32";
    if (const HValue* dt = get(SIZE_MAX, "dtype")) {
      if (dt->is(HValue::Kind::Dtype))
        d = dtypeName(dt->dtype);
      else if (auto c = b.asConst(*dt); c && c->kind == ConstValue::Str && lookupDType(c->s))
        d = dtypeName(*lookupDType(c->s));
    }
    attrs.set(AttrId::DType, Attr::s(d));
    return of(b.op(OpId::Randn, {}, at(), attrs));
  }
  HValue grad() {
    allowKeywords({});
    if (args.size() != 1 || !args[0].is(HValue::Kind::Function)) {
      b.diags().report(diag::err_graph_unsupported, at())
          << ("'tessera.grad' of " + (args.empty() ? std::string("nothing") : args[0].describe()))
          << "; it takes one host function (a 'def' of this module)";
      b.fail();
    }
    HValue h;
    h.kind = HValue::Kind::Grad;
    h.fn = args[0].fn;
    return h;
  }
  HValue collective(OpId id) {
    allowKeywords({"axis", "op", "deterministic", "dim", "mesh", "algo"});
    Value* x = tensor(0, "x", "the operand");
    Attrs attrs;
    attrs.set(AttrId::Axis, Attr::s(str("axis", "")));
    std::string o = str("op", "sum");
    if (o != "sum") {
      b.diags().report(diag::err_graph_unsupported, at())
          << ("op=\"" + o + "\" in a host collective") << "; only sums are";
      b.fail();
    }
    if (id != OpId::AllGather) attrs.set(AttrId::Op, Attr::s(o));
    if (id != OpId::AllReduce) attrs.set(AttrId::Dim, Attr::i(static_cast<int64_t>(number(SIZE_MAX, "dim", 0))));
    if (attrs.getStr(AttrId::Axis).empty()) {
      b.diags().report(diag::err_graph_attr, at()) << ("'" + name() + "'") << "a mesh axis (axis=\"dp\")";
      b.fail();
    }
    return of(b.op(id, {x}, at(), attrs));
  }
  HValue launchGrid() {
    HValue cfg;
    cfg.kind = HValue::Kind::Launch;
    const HValue* blocks = get(SIZE_MAX, "blocks");
    const HValue* threads = get(SIZE_MAX, "threads");
    if (blocks) cfg.elems.push_back(*blocks);
    cfg.gridRank = cfg.elems.size();
    if (threads) cfg.elems.push_back(*threads);
    return cfg;
  }
  HValue ceilDiv() {
    auto x = args.size() == 2 ? b.asDim(args[0]) : std::nullopt;
    auto y = args.size() == 2 ? b.asDim(args[1]) : std::nullopt;
    if (!x || !y) {
      b.diags().report(diag::err_graph_attr, at()) << "'ceil_div'" << "two integers or extents";
      b.fail();
    }
    return HValue::ofDim(Dim::binary(Dim::Op::CeilDiv, *x, *y));
  }
  HValue range() {
    std::vector<int64_t> v;
    for (const HValue& a : args) {
      auto i = b.asInt(a);
      if (!i) {
        b.diags().report(diag::err_graph_dynamic_control, at()) << "range";
        b.fail();
      }
      v.push_back(*i);
    }
    int64_t lo = v.size() > 1 ? v[0] : 0,
            hi = v.size() > 1 ? v[1]
                 : v.empty()  ? 0
                              : v[0],
            step = v.size() > 2 ? v[2] : 1;
    if (step == 0 || (static_cast<__int128>(hi) - lo) / step > 4096) {
      b.diags().report(diag::err_graph_unsupported, at()) << "a range of more than 4096 steps (or of step 0)" << "";
      b.fail();
    }
    std::vector<HValue> items;
    for (__int128 i = lo; step > 0 ? i < hi : i > hi; i += step)
      items.push_back(HValue::constant(ConstValue::ofInt(static_cast<int64_t>(i))));
    return HValue::tuple(std::move(items));
  }
  HValue len() {
    if (args.size() == 1 && args[0].is(HValue::Kind::Tuple))
      return HValue::constant(ConstValue::ofInt(static_cast<long long>(args[0].elems.size())));
    if (args.size() == 1 && args[0].is(HValue::Kind::Value) && args[0].value->type.rank() > 0)
      return HValue::ofDim(b.unifier().resolve(args[0].value->type.shape[0]));
    b.diags().report(diag::err_graph_attr, at()) << "'len'" << "a tuple or a tensor of rank 1 or more";
    b.fail();
  }
};

namespace {

using Handler = HValue (*)(BuiltinCall&);

struct Row {
  BuiltinId id;
  Handler handler;
};

// clang-format off
const Row kHandlers[] = {
  {BuiltinId::OpMatmul, [](BuiltinCall& c) { return c.matmul(); }},
  {BuiltinId::Gemm, [](BuiltinCall& c) { return c.matmul(); }},
  {BuiltinId::OpSoftmax, [](BuiltinCall& c) { return c.rowOp(OpId::Softmax); }},
  {BuiltinId::OpLogSoftmax, [](BuiltinCall& c) { return c.rowOp(OpId::LogSoftmax); }},
  {BuiltinId::RmsnormSafe, [](BuiltinCall& c) { return c.norm(OpId::RMSNorm, false); }},
  {BuiltinId::LayernormSafe, [](BuiltinCall& c) { return c.norm(OpId::LayerNorm, true); }},
  {BuiltinId::FlashAttention, [](BuiltinCall& c) { return c.flashAttention(); }},
  {BuiltinId::SplitQkv, [](BuiltinCall& c) { return c.splitQKV(); }},
  {BuiltinId::OpSum, [](BuiltinCall& c) { return c.reduce(OpId::ReduceSum); }},
  {BuiltinId::OpMean, [](BuiltinCall& c) { return c.reduce(OpId::ReduceMean); }},
  {BuiltinId::OpMax, [](BuiltinCall& c) { return c.reduce(OpId::ReduceMax); }},
  {BuiltinId::OpRelu, [](BuiltinCall& c) { return c.unary(OpId::Relu); }},
  {BuiltinId::OpGelu, [](BuiltinCall& c) { return c.unary(OpId::Gelu); }},
  {BuiltinId::OpSilu, [](BuiltinCall& c) { return c.unary(OpId::Silu); }},
  {BuiltinId::OpSigmoid, [](BuiltinCall& c) { return c.unary(OpId::Sigmoid); }},
  {BuiltinId::Exp, [](BuiltinCall& c) { return c.unary(OpId::Exp); }},
  {BuiltinId::Log, [](BuiltinCall& c) { return c.unary(OpId::Log); }},
  {BuiltinId::Sqrt, [](BuiltinCall& c) { return c.unary(OpId::Sqrt); }},
  {BuiltinId::Rsqrt, [](BuiltinCall& c) { return c.unary(OpId::Rsqrt); }},
  {BuiltinId::Tanh, [](BuiltinCall& c) { return c.unary(OpId::Tanh); }},
  {BuiltinId::Sin, [](BuiltinCall& c) { return c.unary(OpId::Sin); }},
  {BuiltinId::Cos, [](BuiltinCall& c) { return c.unary(OpId::Cos); }},
  {BuiltinId::Erf, [](BuiltinCall& c) { return c.unary(OpId::Erf); }},
  {BuiltinId::Abs, [](BuiltinCall& c) { return c.unary(OpId::Abs); }},
  {BuiltinId::Max, [](BuiltinCall& c) { return c.binaryOp(OpId::Maximum); }},
  {BuiltinId::Min, [](BuiltinCall& c) { return c.binaryOp(OpId::Minimum); }},
  {BuiltinId::Pow, [](BuiltinCall& c) { return c.binaryOp(OpId::Pow); }},
  {BuiltinId::OpTranspose, [](BuiltinCall& c) { return c.transpose(); }},
  {BuiltinId::OpReshape, [](BuiltinCall& c) { return c.reshape(); }},
  {BuiltinId::Randn, [](BuiltinCall& c) { return c.randn(); }},
  {BuiltinId::Grad, [](BuiltinCall& c) { return c.grad(); }},
  {BuiltinId::OpAllReduce, [](BuiltinCall& c) { return c.collective(OpId::AllReduce); }},
  {BuiltinId::AllReduce, [](BuiltinCall& c) { return c.collective(OpId::AllReduce); }},
  {BuiltinId::AllGather, [](BuiltinCall& c) { return c.collective(OpId::AllGather); }},
  {BuiltinId::ReduceScatter, [](BuiltinCall& c) { return c.collective(OpId::ReduceScatter); }},
  {BuiltinId::LaunchGrid, [](BuiltinCall& c) { return c.launchGrid(); }},
  {BuiltinId::CeilDiv, [](BuiltinCall& c) { return c.ceilDiv(); }},
  {BuiltinId::Range, [](BuiltinCall& c) { return c.range(); }},
  {BuiltinId::Len, [](BuiltinCall& c) { return c.len(); }},
};
// clang-format on

}  // namespace

HValue FunctionBuilder::builtin(const BuiltinInfo& info, const CallExpr* c, const std::vector<HValue>& args,
                                const std::vector<std::pair<std::string, HValue>>& kwargs) {
  for (const Row& r : kHandlers)
    if (r.id == info.id) {
      BuiltinCall call(*this, info, c, args, kwargs);
      return r.handler(call);
    }
  diags_.report(diag::err_graph_unsupported, c->range) << ("'" + std::string(info.name) + "'") << " yet";
  fail();
}

}  // namespace tessera::graph
