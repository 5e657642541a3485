// The shape hooks of graph/GraphOps.def (infer<Rule>).
#include "graph/ShapeRules.h"

#include <cctype>

namespace tessera::graph {

Dim Unifier::resolve(const Dim& d) const {
  if (bound.empty()) return d;
  return d.substitute([&](const std::string& s) -> std::optional<Dim> {
    auto it = bound.find(s);
    if (it == bound.end()) return std::nullopt;
    return resolve(it->second);
  });
}

Shape Unifier::resolve(const Shape& s) const {
  Shape out;
  for (const Dim& d : s) out.push_back(resolve(d));
  return out;
}

Type Unifier::resolve(const Type& t) const {
  Type r = t;
  r.shape = resolve(t.shape);
  return r;
}

bool Unifier::unify(const Dim& a0, const Dim& b0) {
  Dim a = resolve(a0), b = resolve(b0);
  if (a == b) return true;
  auto bindable = [&](const Dim& d, const Dim& other) {
    if (!d.isSymbol() || !flexible.count(d.name())) return false;
    std::set<std::string> syms;
    other.collectSymbols(syms);
    return !syms.count(d.name());  // no cycles
  };
  // Prefer binding a flexible symbol to a rigid extent (the annotation's name wins).
  if (bindable(b, a) && !(bindable(a, b) && a.isSymbol() && !b.isSymbol())) {
    bound[b.name()] = a;
    return true;
  }
  if (bindable(a, b)) {
    bound[a.name()] = b;
    return true;
  }
  return false;
}

DType accumulationDType(DType d) { return d == DType::FP64 ? DType::FP64 : DType::FP32; }

bool normalizeAxis(int64_t axis, size_t rank, int64_t& out) {
  int64_t r = static_cast<int64_t>(rank);
  if (axis < -r || axis >= r) return false;
  out = axis < 0 ? axis + r : axis;
  return true;
}

bool broadcastShapes(const Shape& a, const Shape& b, Shape& out, Unifier& u, std::string& error) {
  size_t n = std::max(a.size(), b.size());
  out.assign(n, Dim::constant(1));
  for (size_t i = 0; i < n; ++i) {
    bool hasA = i < a.size(), hasB = i < b.size();
    Dim da = hasA ? u.resolve(a[a.size() - 1 - i]) : Dim::constant(1);
    Dim db = hasB ? u.resolve(b[b.size() - 1 - i]) : Dim::constant(1);
    Dim& r = out[n - 1 - i];
    if (da.isConst() && da.value() == 1)
      r = db;
    else if (db.isConst() && db.value() == 1)
      r = da;
    else if (u.unify(da, db))
      r = u.resolve(da);
    else {
      error = "shapes " + shapeString(a) + " and " + shapeString(b) + " do not broadcast: extents '" + da.str() +
              "' and '" + db.str() + "' differ";
      return false;
    }
  }
  return true;
}

bool reduceAxes(const Type& t, const Attrs& attrs, std::vector<bool>& reduced, std::string& error) {
  reduced.assign(t.rank(), !attrs.has(AttrId::Axes));
  if (const Attr* a = attrs.get(AttrId::Axes)) {
    for (int64_t ax : a->asInts()) {
      int64_t n;
      if (!normalizeAxis(ax, t.rank(), n)) {
        error = "axis " + std::to_string(ax) + " is out of range for " + t.str();
        return false;
      }
      reduced[n] = true;
    }
  }
  return true;
}

namespace {

using Types = std::vector<Type>;
constexpr int64_t kMaxHeads = 1 << 16;

bool needTensor(const Type& t, const char* what, size_t minRank, std::string& error) {
  if (!t.isTensor()) {
    error = std::string(what) + " must be a tensor, not a scalar";
    return false;
  }
  if (t.rank() < minRank) {
    error = std::string(what) + " must have rank " + std::to_string(minRank) + " or more, but it is " + t.str();
    return false;
  }
  return true;
}

bool shapeAttr(const Attrs& attrs, Shape& out, std::string& error) {
  const Attr* a = attrs.get(AttrId::Shape);
  if (!a || !a->asDims(out)) {
    error = "needs a 'shape' attribute (a list of extents)";
    return false;
  }
  return true;
}

bool dtypeAttr(const Attrs& attrs, DType& out, std::string& error) {
  std::string s = attrs.getStr(AttrId::DType);
  auto d = lookupDType(s);
  if (!d) {
    error = "needs a 'dtype' attribute naming a dtype (got '" + s + "')";
    return false;
  }
  out = *d;
  return true;
}

bool inferElementwise(const Types& in, const Attrs&, Types& out, Unifier& u, std::string& error) {
  bool anyTensor = false;
  DType d = DType::FP32;
  bool first = true;
  Shape shape;
  for (const Type& t : in) {
    if (!t.isTensor()) continue;
    d = first ? t.dtype : promote(d, t.dtype);
    Shape s;
    if (!broadcastShapes(first ? t.shape : shape, t.shape, s, u, error)) return false;
    shape = s;
    first = false;
    anyTensor = true;
  }
  if (!anyTensor) {
    d = in[0].dtype;
    for (const Type& t : in) d = promote(d, t.dtype);
    out = {Type::scalar(d)};
    return true;
  }
  out = {Type::tensor(d, shape)};
  return true;
}

// graph.fused: elementwise broadcasting of the operands, and a body whose every reference names
// an operand or an earlier step (kernel generation splices them without further checks).
bool inferFused(const Types& in, const Attrs& attrs, Types& out, Unifier& u, std::string& error) {
  const Attr* body = attrs.get(AttrId::Body);
  if (!body || !body->isList() || body->asList().empty()) {
    error = "graph.fused needs {body}, a non-empty list of step expressions";
    return false;
  }
  const AttrList& steps = body->asList();
  for (size_t j = 0; j < steps.size(); ++j) {
    if (!steps[j].isStr()) {
      error = "step " + std::to_string(j) + " of graph.fused's body is not a string";
      return false;
    }
    const std::string& e = steps[j].asStr();
    for (size_t i = 0; i < e.size(); ++i) {
      if (e[i] != '$' && e[i] != '#') continue;
      size_t k = i + 1;
      while (k < e.size() && std::isdigit(static_cast<unsigned char>(e[k]))) ++k;
      size_t limit = e[i] == '$' ? in.size() : j;
      if (k == i + 1 || k - i > 6 || std::stoul(e.substr(i + 1, k - i - 1)) >= limit) {
        error = "step " + std::to_string(j) + " of graph.fused's body refers to '" + e.substr(i, k - i) +
                "', which is not " + (e[i] == '$' ? "an operand" : "an earlier step");
        return false;
      }
    }
  }
  if (!inferElementwise(in, attrs, out, u, error)) return false;
  if (!out[0].isTensor()) {
    error = "graph.fused needs a tensor operand";
    return false;
  }
  return true;
}

bool inferCast(const Types& in, const Attrs& attrs, Types& out, Unifier&, std::string& error) {
  DType d;
  if (!dtypeAttr(attrs, d, error)) return false;
  Type t = in[0];
  t.dtype = d;
  out = {t};
  return true;
}

bool inferBroadcastTo(const Types& in, const Attrs& attrs, Types& out, Unifier& u, std::string& error) {
  Shape target, b;
  if (!shapeAttr(attrs, target, error)) return false;
  if (in[0].isTensor() && (in[0].rank() > target.size() || !broadcastShapes(in[0].shape, target, b, u, error) ||
                           u.resolve(b) != u.resolve(target))) {
    if (error.empty()) error = "cannot broadcast " + in[0].str() + " to " + shapeString(target);
    return false;
  }
  out = {Type::tensor(in[0].dtype, target)};
  return true;
}

bool inferConstant(const Types&, const Attrs& attrs, Types& out, Unifier&, std::string& error) {
  DType d;
  if (!dtypeAttr(attrs, d, error)) return false;
  if (!attrs.has(AttrId::Value)) {
    error = "needs a 'value' attribute";
    return false;
  }
  out = {Type::scalar(d)};
  return true;
}

bool inferFill(const Types&, const Attrs& attrs, Types& out, Unifier&, std::string& error) {
  DType d;
  Shape s;
  if (!dtypeAttr(attrs, d, error) || !shapeAttr(attrs, s, error)) return false;
  out = {Type::tensor(d, s)};
  return true;
}

bool inferMatMul(const Types& in, const Attrs& attrs, Types& out, Unifier& u, std::string& error) {
  if (!needTensor(in[0], "the left operand of a matrix product", 2, error) ||
      !needTensor(in[1], "the right operand of a matrix product", 2, error))
    return false;
  Shape a = in[0].shape, b = in[1].shape;
  if (attrs.getBool(AttrId::TransposeA, false)) std::swap(a[a.size() - 1], a[a.size() - 2]);
  if (attrs.getBool(AttrId::TransposeB, false)) std::swap(b[b.size() - 1], b[b.size() - 2]);
  const Dim &m = a[a.size() - 2], &ka = a.back(), &kb = b[b.size() - 2], &n = b.back();
  if (!u.unify(ka, kb)) {
    error = "the inner extents of the matrix product differ: " + in[0].str() + " has '" + u.resolve(ka).str() +
            "' and " + in[1].str() + " has '" + u.resolve(kb).str() + "'";
    return false;
  }
  Shape batch(a.begin(), a.end() - 2);
  if (b.size() > 2) {
    Shape bb(b.begin(), b.end() - 2);
    if (bb.size() != batch.size()) {
      error = "the batch axes of the matrix product differ: " + in[0].str() + " and " + in[1].str() +
              " (a rank-2 right operand is shared by every batch)";
      return false;
    }
    for (size_t i = 0; i < bb.size(); ++i)
      if (!u.unify(batch[i], bb[i])) {
        error = "the batch extents of the matrix product differ: '" + u.resolve(batch[i]).str() + "' and '" +
                u.resolve(bb[i]).str() + "'";
        return false;
      }
  }
  if (in[0].dtype != in[1].dtype) {
    error = std::string("the operands of a matrix product have different dtypes (") + dtypeName(in[0].dtype) + " and " +
            dtypeName(in[1].dtype) + "): cast one";
    return false;
  }
  if (const Attr* ts = attrs.get(AttrId::TileShape)) {
    std::vector<int64_t> v = ts->asInts();
    if (v.size() != 3 || v[0] <= 0 || v[1] <= 0 || v[2] <= 0) {
      error = "tile_shape must be three positive integers (BM, BN, BK)";
      return false;
    }
  }
  Shape r = u.resolve(batch);
  r.push_back(u.resolve(m));
  r.push_back(u.resolve(n));
  out = {Type::tensor(in[0].dtype, r)};
  return true;
}

bool inferSameAsOperand(const Types& in, const Attrs&, Types& out, Unifier& u, std::string& error) {
  if (!needTensor(in[0], "the operand", 1, error)) return false;
  for (size_t i = 1; i < in.size(); ++i) {
    if (in[i].isScalar() || in[i].rank() != in[0].rank()) {
      error = "operand " + std::to_string(i) + " (" + in[i].str() + ") must have the shape of operand 0 (" +
              in[0].str() + ")";
      return false;
    }
    for (size_t d = 0; d < in[0].rank(); ++d)
      if (!u.unify(in[0].shape[d], in[i].shape[d])) {
        error = "operand " + std::to_string(i) + " (" + in[i].str() + ") must have the shape of operand 0 (" +
                in[0].str() + ")";
        return false;
      }
  }
  out = {u.resolve(in[0])};
  return true;
}

bool inferNorm(const Types& in, const Attrs&, Types& out, Unifier& u, std::string& error) {
  if (!needTensor(in[0], "the normalised operand", 1, error)) return false;
  const Dim& n = in[0].shape.back();
  for (size_t i = 1; i < in.size(); ++i) {
    const char* what = i == 1 ? "the weight" : "the bias";
    if (!needTensor(in[i], what, 1, error)) return false;
    if (in[i].rank() != 1 || !u.unify(in[i].shape[0], n)) {
      error = std::string(what) + " must be a vector of the last extent '" + u.resolve(n).str() + "', but it is " +
              in[i].str();
      return false;
    }
  }
  out = {u.resolve(in[0])};
  return true;
}

bool inferNormGrad(const Types& in, const Attrs& attrs, Types& out, Unifier& u, std::string& error) {
  Types x = {in[0], in[1]};
  if (!inferSameAsOperand(x, attrs, out, u, error)) return false;
  Shape w = {u.resolve(in[0].shape.back())};
  if (in.size() > 2) {
    Types norm = {in[0], in[2]};
    Types ignored;
    if (!inferNorm(norm, attrs, ignored, u, error)) return false;
  }
  out.push_back(Type::tensor(in.size() > 2 ? in[2].dtype : in[0].dtype, w));
  return true;
}

bool inferReduce(const Types& in, const Attrs& attrs, Types& out, Unifier& u, std::string& error) {
  if (!needTensor(in[0], "the reduced operand", 0, error)) return false;
  std::vector<bool> reduced;
  if (!reduceAxes(in[0], attrs, reduced, error)) return false;
  bool keep = attrs.getBool(AttrId::Keepdims, false);
  Shape s;
  for (size_t i = 0; i < in[0].rank(); ++i) {
    if (!reduced[i])
      s.push_back(u.resolve(in[0].shape[i]));
    else if (keep)
      s.push_back(Dim::constant(1));
  }
  out = {Type::tensor(in[0].dtype, s)};
  return true;
}

bool inferSumTo(const Types& in, const Attrs& attrs, Types& out, Unifier& u, std::string& error) {
  Shape target, b;
  if (!shapeAttr(attrs, target, error)) return false;
  if (!needTensor(in[0], "the operand", 0, error)) return false;
  if (target.size() > in[0].rank() || !broadcastShapes(target, in[0].shape, b, u, error) ||
      u.resolve(b) != u.resolve(in[0].shape)) {
    error = "cannot sum " + in[0].str() + " to " + shapeString(target) + ": the operand is not a broadcast of it";
    return false;
  }
  out = {Type::tensor(in[0].dtype, target)};
  return true;
}

bool inferFlashAttention(const Types& in, const Attrs& attrs, Types& out, Unifier& u, std::string& error) {
  const char* names[3] = {"q", "k", "v"};
  for (int i = 0; i < 3; ++i)
    if (!needTensor(in[i], names[i], 2, error)) return false;
  if (in[0].rank() != in[1].rank() || in[0].rank() != in[2].rank()) {
    error = "q, k and v must have the same rank (" + in[0].str() + ", " + in[1].str() + ", " + in[2].str() + ")";
    return false;
  }
  size_t r = in[0].rank();
  for (size_t i = 0; i + 2 < r; ++i)
    if (!u.unify(in[0].shape[i], in[1].shape[i]) || !u.unify(in[0].shape[i], in[2].shape[i])) {
      error = "the batch extents of q, k and v differ (" + in[0].str() + ", " + in[1].str() + ", " + in[2].str() + ")";
      return false;
    }
  if (!u.unify(in[0].shape[r - 1], in[1].shape[r - 1])) {
    error = "q and k must have the same last extent (" + in[0].str() + ", " + in[1].str() + ")";
    return false;
  }
  if (!u.unify(in[1].shape[r - 2], in[2].shape[r - 2])) {
    error = "k and v must have the same number of rows (" + in[1].str() + ", " + in[2].str() + ")";
    return false;
  }
  if (in[0].dtype != in[1].dtype || in[0].dtype != in[2].dtype) {
    error = "q, k and v must have the same dtype";
    return false;
  }
  int64_t heads = attrs.getInt(AttrId::Heads, 1);
  if (heads < 1 || heads > kMaxHeads) {
    error = "heads must be between 1 and " + std::to_string(kMaxHeads);
    return false;
  }
  for (int i : {0, 2}) {
    Dim e = u.resolve(in[i].shape[r - 1]);
    if (e.isConst() && e.value() % heads != 0) {
      error = std::string("the last extent of ") + names[i] + " (" + e.str() +
              ") is not divisible by heads = " + std::to_string(heads);
      return false;
    }
  }
  Shape o = u.resolve(in[0].shape);
  o.back() = u.resolve(in[2].shape[r - 1]);
  Shape lse(o.begin(), o.end() - 2);
  lse.push_back(Dim::constant(heads));
  lse.push_back(o[r - 2]);
  out = {Type::tensor(in[0].dtype, o), Type::tensor(accumulationDType(in[0].dtype), lse)};
  return true;
}

bool inferFlashAttentionGrad(const Types& in, const Attrs& attrs, Types& out, Unifier& u, std::string& error) {
  Types fwd;
  if (!inferFlashAttention({in[0], in[1], in[2]}, attrs, fwd, u, error)) return false;
  if (u.resolve(in[3]) != u.resolve(fwd[0]) || u.resolve(in[5]) != u.resolve(fwd[0]) ||
      u.resolve(in[4]) != u.resolve(fwd[1])) {
    error = "o, lse and do must have the types of flash_attention's results";
    return false;
  }
  out = {u.resolve(in[0]), u.resolve(in[1]), u.resolve(in[2])};
  return true;
}

bool inferTranspose(const Types& in, const Attrs& attrs, Types& out, Unifier& u, std::string& error) {
  if (!needTensor(in[0], "the transposed operand", 2, error)) return false;
  size_t r = in[0].rank();
  std::vector<int64_t> perm;
  if (const Attr* p = attrs.get(AttrId::Perm))
    perm = p->asInts();
  else {
    for (size_t i = 0; i < r; ++i) perm.push_back(static_cast<int64_t>(i));
    std::swap(perm[r - 1], perm[r - 2]);
  }
  std::vector<bool> seen(r, false);
  if (perm.size() != r) {
    error = "perm must have one entry per axis of " + in[0].str();
    return false;
  }
  Shape s;
  for (int64_t p : perm) {
    if (p < 0 || p >= static_cast<int64_t>(r) || seen[p]) {
      error = "perm must be a permutation of the axes of " + in[0].str();
      return false;
    }
    seen[p] = true;
    s.push_back(u.resolve(in[0].shape[p]));
  }
  out = {Type::tensor(in[0].dtype, s)};
  return true;
}

bool inferReshape(const Types& in, const Attrs& attrs, Types& out, Unifier& u, std::string& error) {
  Shape target;
  if (!shapeAttr(attrs, target, error) || !needTensor(in[0], "the reshaped operand", 0, error)) return false;
  Dim a = u.resolve(numElements(in[0].shape)), b = u.resolve(numElements(target));
  if (!sameProduct(a, b) && !u.unify(a, b)) {
    error = "cannot reshape " + in[0].str() + " (" + a.str() + " elements) to " + shapeString(target) + " (" + b.str() +
            " elements)";
    return false;
  }
  out = {Type::tensor(in[0].dtype, u.resolve(target))};
  return true;
}

bool inferSplitQKV(const Types& in, const Attrs& attrs, Types& out, Unifier& u, std::string& error) {
  if (!needTensor(in[0], "the operand of split_qkv", 1, error)) return false;
  Dim last = u.resolve(in[0].shape.back());
  int64_t heads = attrs.getInt(AttrId::Heads, 1);
  if (heads < 1 || heads > kMaxHeads) {
    error = "heads must be between 1 and " + std::to_string(kMaxHeads);
    return false;
  }
  if (last.isConst() && last.value() % (3 * heads) != 0) {
    error = "the last extent of " + in[0].str() + " must be divisible by 3 * heads = " + std::to_string(3 * heads);
    return false;
  }
  Shape s = u.resolve(in[0].shape);
  s.back() = last / Dim::constant(3);
  Type t = Type::tensor(in[0].dtype, s);
  out = {t, t, t};
  return true;
}

bool inferConcat(const Types& in, const Attrs& attrs, Types& out, Unifier& u, std::string& error) {
  if (!needTensor(in[0], "operand 0", 1, error)) return false;
  int64_t axis;
  if (!normalizeAxis(attrs.getInt(AttrId::Axis, -1), in[0].rank(), axis)) {
    error = "axis is out of range";
    return false;
  }
  Shape s = u.resolve(in[0].shape);
  for (size_t i = 1; i < in.size(); ++i) {
    if (!needTensor(in[i], "every operand", 1, error)) return false;
    bool ok = in[i].rank() == s.size() && in[i].dtype == in[0].dtype;
    for (size_t d = 0; ok && d < s.size(); ++d)
      if (static_cast<int64_t>(d) != axis) ok = u.unify(s[d], in[i].shape[d]);
    if (!ok) {
      error = "operand " + std::to_string(i) + " (" + in[i].str() + ") does not match " + in[0].str() +
              " outside the concatenated axis";
      return false;
    }
    s[axis] = s[axis] + u.resolve(in[i].shape[axis]);
  }
  out = {Type::tensor(in[0].dtype, u.resolve(s))};
  return true;
}

bool meshDim(const Types& in, const Attrs& attrs, int64_t& dim, std::string& axis, std::string& error) {
  if (!needTensor(in[0], "the operand of a collective", 1, error)) return false;
  axis = attrs.getStr(AttrId::Axis);
  // The axis's size becomes a shape symbol (N*tp), so it must be spelled as one.
  bool identifier = !axis.empty() && !isdigit(static_cast<unsigned char>(axis[0]));
  for (char c : axis) identifier &= isalnum(static_cast<unsigned char>(c)) || c == '_';
  identifier &= axis != "ceil_div";  // the one name extents reserve
  if (!identifier) {
    error = "needs a mesh 'axis' named by an identifier";
    return false;
  }
  if (!normalizeAxis(attrs.getInt(AttrId::Dim, 0), in[0].rank(), dim)) {
    error = "dim is out of range";
    return false;
  }
  return true;
}

bool inferGather(const Types& in, const Attrs& attrs, Types& out, Unifier& u, std::string& error) {
  int64_t dim;
  std::string axis;
  if (!meshDim(in, attrs, dim, axis, error)) return false;
  Type t = u.resolve(in[0]);
  t.shape[dim] = t.shape[dim] * Dim::symbol(axis);
  out = {t};
  return true;
}

bool inferScatter(const Types& in, const Attrs& attrs, Types& out, Unifier& u, std::string& error) {
  int64_t dim;
  std::string axis;
  if (!meshDim(in, attrs, dim, axis, error)) return false;
  Type t = u.resolve(in[0]);
  t.shape[dim] = t.shape[dim] / Dim::symbol(axis);
  out = {t};
  return true;
}

bool inferLaunch(const Types& in, const Attrs& attrs, Types& out, Unifier&, std::string& error) {
  out.clear();
  for (int64_t w : attrs.getInts(AttrId::Writes)) {
    if (w < 0 || w >= static_cast<int64_t>(in.size()) || !in[w].isTensor()) {
      error = "writes names argument " + std::to_string(w) + ", which is not a tensor argument";
      return false;
    }
    out.push_back(in[w]);
  }
  if (!attrs.get(AttrId::Kernel)) {
    error = "needs a 'kernel' attribute";
    return false;
  }
  return true;
}

bool inferStore(const Types& in, const Attrs&, Types& out, Unifier& u, std::string& error) {
  out.clear();
  if (!in[0].isTensor()) {
    error = "the destination must be a tensor parameter";
    return false;
  }
  if (in[1].isTensor()) {
    Shape b;
    if (!broadcastShapes(in[1].shape, in[0].shape, b, u, error) || u.resolve(b) != u.resolve(in[0].shape)) {
      error = "a value of type " + in[1].str() + " cannot be stored into " + in[0].str();
      return false;
    }
  }
  return true;
}

}  // namespace

bool inferResultTypes(OpId op, const std::vector<Type>& types, const Attrs& attrs, std::vector<Type>& results,
                      Unifier& u, std::string& error) {
  const OpInfo& info = opInfo(op);
  if (static_cast<int>(types.size()) < info.minOperands ||
      (info.maxOperands >= 0 && static_cast<int>(types.size()) > info.maxOperands)) {
    error = "takes " + std::to_string(info.minOperands) +
            (info.maxOperands == info.minOperands ? ""
             : info.maxOperands < 0               ? " or more"
                                                  : " to " + std::to_string(info.maxOperands)) +
            (info.maxOperands == 1 ? " operand" : " operands") + ", not " + std::to_string(types.size());
    return false;
  }
  bool ok = false;
  switch (op) {
#define GRAPH_OP(ID, NAME, MINOPS, MAXOPS, RESULTS, TRAITS, RULE, ADJOINT, KERNEL, ATTRS, DOC) \
  case OpId::ID: ok = infer##RULE(types, attrs, results, u, error); break;
#include "graph/GraphOps.def"
    case OpId::NumOps: break;
  }
  if (!ok) return false;
  for (Type& t : results) t = u.resolve(t);
  return true;
}

}  // namespace tessera::graph
