// The steps of products of a whole-tensor program (ir/passes/ProductPlan.h). The analysis reads
// the row loop that row-partition wrote:
//   tile.range %g * R, dim(Out, 0), %G * R { ^bb0(%rows): ... tile.store %v, Out[rows] }
// and walks back from the stored value: through elementwise ops, broadcasts and constants (the
// epilogue) to products, loads of parameters (row blocks P[rows] of [M, N] parameters, whole
// [N] vectors) and scalar parameters. A product's left operand is a row block of a parameter or a
// value the program computes, which is then materialised by a step of its own.
#include "ir/passes/ProductPlan.h"

#include <algorithm>
#include <map>
#include <set>

#include "ir/passes/PassUtils.h"

namespace tessera::ir {

namespace {

bool isOp(const Value* v, OpId id) { return v && v->defOp && v->defOp->id == id; }

bool isZero(const Value* v) {
  const Attribute* a = constantOf(v);
  return a && a->kind == AttrKind::Int && a->i == 0;
}

bool is16(ScalarKind k) { return k == ScalarKind::BF16 || k == ScalarKind::F16; }

bool isFloatOut(ScalarKind k) { return k == ScalarKind::F32 || is16(k); }

// A storage type the epilogue can read or write as it is: a scalar, or a policy without a scale
// or stochastic rounding (those need the element's position in the whole tensor).
bool plainElement(Type t) {
  if (t->kind != TypeKind::Num) return t->kind == TypeKind::Scalar;
  return t->scale == 0 && t->round != Rounding::Stochastic;
}

class Planner {
 public:
  Planner(Operation& f, std::string& why) : f_(f), fn_(f.body()), why_(why) {}

  std::optional<ProductPlan> run() {
    why_.clear();
    bool anyDot = false;
    f_.walk([&](Operation* o) { anyDot |= o->id == OpId::TileDot; });
    if (!anyDot || !findLoop()) return std::nullopt;
    if (!checkBody()) return std::nullopt;
    int step = -1;
    if (!build(store_->operand(0), StepMatrix{outIndex_, -1}, step)) return std::nullopt;
    std::set<const Operation*> planned;
    for (const ProductStep& s : plan_.steps)
      for (const StepProduct& p : s.products) planned.insert(p.dot);
    for (auto& op : loop_->body().ops)
      if (op->id == OpId::TileDot && !planned.count(op.get())) return fail("a product whose result is not stored");
    constexpr size_t kMaxSteps = 4;  // what the runtime's variant chains take
    if (plan_.steps.size() > kMaxSteps) return fail("more than four steps of products");
    renumberScratch();
    return plan_;
  }

 private:
  std::nullopt_t fail(const std::string& why) {
    if (why_.empty()) why_ = why;
    return std::nullopt;
  }
  bool refuse(const std::string& why) {
    fail(why);
    return false;
  }

  int paramOf(const Value* v) const {
    if (!v || !v->isBlockArg() || v->ownerBlock != &fn_) return -1;
    return static_cast<int>(v->index);
  }
  Type paramType(int p) const { return fn_.arg(static_cast<unsigned>(p))->type; }
  int wholeTensor(const Value* v, size_t rank) const {
    int p = paramOf(v);
    if (p < 0) return -1;
    Type t = paramType(p);
    return t->kind == TypeKind::Tensor && t->shape.size() == rank && t->space == MemSpace::Global ? p : -1;
  }

  // The row loop of a whole-tensor program over Out's rows and the store of Out's row block in it
  // (the loop `rows = g R, (g + G) R, ... < Out.shape[0]`). False (nothing to report) otherwise.
  bool findLoop() {
    for (auto& op : fn_.ops) {
      if (op->id == OpId::TileRange) {
        if (loop_) return false;
        loop_ = op.get();
      }
    }
    if (!loop_ || loop_->numOperands() != 3 || loop_->numResults() != 0 || loop_->body().numArgs() != 1) return false;
    rows_ = loop_->body().arg(0);
    for (auto& op : loop_->body().ops)
      if (op->id == OpId::TileStore) {
        if (store_) return false;
        store_ = op.get();
      }
    if (!store_) return false;
    Value* dst = store_->operand(1);
    if (isOp(dst, OpId::MemSlice) && isOp(dst->defOp->operand(0), OpId::MemSlice)) {
      Operation* s = dst->defOp;
      for (unsigned i = 1; i < s->numOperands(); ++i)
        if (!isZero(s->operand(i))) return false;
      if (dst->type->shape != s->operand(0)->type->shape) return false;
      dst = s->operand(0);
    }
    Value* out = rowBlock(dst);
    outIndex_ = out ? wholeTensor(out, 2) : -1;
    if (outIndex_ < 0) return false;
    auto scaled = [&](Value* v, OpId id) {
      if (!isOp(v, OpId::ArithMulI) || !isOp(v->defOp->operand(0), id)) return false;
      const Attribute* r = constantOf(v->defOp->operand(1));
      return r && r->kind == AttrKind::Int && dst->type->shape[0].isStatic() && r->i == dst->type->shape[0].size;
    };
    Value* end = loop_->operand(1);
    return isOp(end, OpId::MemDim) && end->defOp->operand(0) == out && end->defOp->intAttr(AttrId::Axis, -1) == 0 &&
           scaled(loop_->operand(0), OpId::TileGroupId) && scaled(loop_->operand(2), OpId::TileNumGroups);
  }

  // The loop holds pure ops, loads, products and the one store; the function outside it pure ops.
  bool checkBody() {
    for (auto& op : fn_.ops)
      if (op.get() != loop_ && op->id != OpId::FuncReturn && (!op->has(T_Pure) || !op->regions.empty()))
        return refuse(std::string("'") + op->name() + "' outside the row loop");
    for (auto& op : loop_->body().ops) {
      if (op.get() == store_ || op->id == OpId::ScfYield || op->id == OpId::TileLoad) continue;
      if (!op->regions.empty()) return refuse(std::string("control flow ('") + op->name() + "') in the program");
      if (!op->has(T_Pure)) return refuse(std::string("'") + op->name() + "' besides the store of the result");
    }
    return true;
  }

  // P for a row block `P[rows]` of parameter P (mem.slice P, rows, 0... over all other extents),
  // or its tile.load when `loaded`.
  Value* rowBlock(Value* v, bool loaded = false) const {
    if (loaded) {
      if (!isOp(v, OpId::TileLoad)) return nullptr;
      v = v->defOp->operand(0);
    }
    if (!isOp(v, OpId::MemSlice)) return nullptr;
    Operation* s = v->defOp;
    Value* p = s->operand(0);
    if (paramOf(p) < 0 || s->numOperands() < 2 || s->operand(1) != rows_) return nullptr;
    for (unsigned i = 2; i < s->numOperands(); ++i)
      if (!isZero(s->operand(i)) || v->type->shape[i - 1] != p->type->shape[i - 1]) return nullptr;
    return p;
  }

  // B of a product: a whole matrix parameter [K, N] (or its tile.load), or Bt.T of one [N, K].
  bool rightOperand(Value* r, StepProduct& p) {
    bool transposed = isOp(r, OpId::TileTranspose);
    if (transposed) r = r->defOp->operand(0);
    if (isOp(r, OpId::TileLoad)) r = r->defOp->operand(0);
    p.b = wholeTensor(r, 2);
    p.kMajor = transposed;
    if (p.b < 0) return refuse("the right operand of a product is not a whole matrix parameter (W, or Wt.T)");
    if (!plainElement(paramType(p.b)->elem) || !is16(baseScalar(paramType(p.b)->elem)))
      return refuse("a product's right operand is not bf16 or f16");
    return true;
  }

  // The extents of B: (K, N) as Dims and their references.
  std::pair<Dim, Dim> extentsOf(const StepProduct& p, ExtentRef& k, ExtentRef& n) const {
    const auto& s = paramType(p.b)->shape;
    k = {p.b, p.kMajor ? 1u : 0u};
    n = {p.b, p.kMajor ? 0u : 1u};
    return {s[k.axis], s[n.axis]};
  }

  bool product(Operation* dot, ProductStep& s, Dim& n) {
    for (const StepProduct& p : s.products)
      if (p.dot == dot) return true;
    if (dot->numOperands() != 2) return refuse("a product that accumulates into a third operand");
    if (baseScalar(dot->result()->type->elem) != ScalarKind::F32)
      return refuse("a product that does not accumulate in f32");
    StepProduct p;
    p.dot = dot;
    if (!rightOperand(dot->operand(1), p)) return false;
    ExtentRef kr, nr;
    auto [kd, nd] = extentsOf(p, kr, nr);
    ScalarKind bt = baseScalar(paramType(p.b)->elem);
    Value* left = dot->operand(0);
    StepMatrix a;
    Dim lk;
    if (Value* x = rowBlock(left); x || (x = rowBlock(left, true))) {
      int xp = paramOf(x);
      Type xt = paramType(xp);
      if (xt->shape.size() != 2 || !plainElement(xt->elem) || baseScalar(xt->elem) != bt)
        return refuse("a product's operands are not both bf16 or both f16 matrices");
      a.param = xp;
      lk = xt->shape[1];
    } else {
      if (left->type->kind != TypeKind::Tile || left->type->shape.size() != 2 ||
          !isFloatOut(baseScalar(left->type->elem)))
        return refuse("the left operand of a product is neither a row block of a parameter nor a float tile");
      lk = left->type->shape[1];
      int done = -1;
      a.scratch = materialise(left, bt, done);
      if (a.scratch < 0) return false;
    }
    if (lk != kd) return refuse("a product's operands do not share their inner extent");
    if (!s.products.empty()) {
      if (s.products.size() == 2) return refuse("more than two products in one epilogue");
      if (s.products[0].dot->operand(0) != left || s.a.param != a.param || s.a.scratch != a.scratch)
        return refuse("two products in one epilogue with different left operands");
      if (n != nd || paramType(s.products[0].b)->shape[s.k.axis] != kd)
        return refuse("two products in one epilogue of different extents");
    } else {
      s.a = a;
      s.k = kr;
      s.n = nr;
      n = nd;
    }
    s.products.push_back(p);
    return true;
  }

  // A load the epilogue reads per element: a row block of P [M, N] or a whole P [N] (their
  // extents are checked against the products' once those are known: leavesAgree).
  bool leaf(Value* v, ProductStep& s) {
    Value* view = v->defOp->operand(0);
    EpilogueLeaf l;
    l.value = v;
    if (Value* p = rowBlock(view)) {
      l.param = paramOf(p);
      l.kind = LeafKind::Element;
    } else if ((l.param = wholeTensor(view, 1)) >= 0) {
      l.kind = LeafKind::Column;
    } else {
      return refuse("the epilogue reads a tensor other than a row block or a whole vector");
    }
    if (!plainElement(paramType(l.param)->elem)) return refuse("the epilogue reads a tensor with a @scale");
    s.leaves.push_back(l);
    return true;
  }

  bool leavesAgree(const ProductStep& s, const Dim& n) {
    for (const EpilogueLeaf& l : s.leaves) {
      const auto& shape = paramType(l.param)->shape;
      if (l.kind == LeafKind::Element && (shape.size() != 2 || shape[1] != n))
        return refuse("a tensor the epilogue reads is not [M, N] of the product's extents");
      if (l.kind == LeafKind::Column && shape[0] != n)
        return refuse("a vector the epilogue reads is not as long as the product's rows");
    }
    return true;
  }

  // Post-order walk from `v` to the step's products and leaves; the ops between join the epilogue.
  bool closure(Value* v, Value* root, ProductStep& s, Dim& n, std::set<const Value*>& seen) {
    if (!seen.insert(v).second) return true;
    if (v != root && scratchOf_.count(v))
      return refuse("a value that is both a product's operand and read elementwise");
    if (v->isBlockArg()) {
      if (paramOf(v) < 0 || v->type->kind != TypeKind::Scalar)
        return refuse("the epilogue reads a value other than a parameter, a load or a product");
      s.leaves.push_back({v, paramOf(v), LeafKind::Scalar});
      return true;
    }
    Operation* op = v->defOp;
    if (op->id == OpId::TileDot) return product(op, s, n);
    if (op->id == OpId::TileLoad) return leaf(v, s);
    bool elementwise = op->has(T_Elementwise) || op->id == OpId::TileBroadcast || op->id == OpId::ArithConstant;
    if (!elementwise || op->numResults() != 1)
      return refuse(std::string("the epilogue has '") + op->name() + "', which is not applied element by element");
    if (op->id == OpId::ArithConvert && op->strAttr(AttrId::Round) == "stochastic")
      return refuse("a stochastic rounding in the epilogue");
    for (Value* x : op->operands)
      if (!closure(x, root, s, n, seen)) return false;
    s.epilogue.push_back(op);
    return true;
  }

  // Every tile value of the epilogue is [R, N] or [N] (a broadcast row).
  bool shapesAgree(const ProductStep& s, const Dim& n) {
    for (const Operation* op : s.epilogue) {
      Type t = op->result()->type;
      if (t->kind != TypeKind::Tile) continue;
      if (t->shape.empty() || t->shape.size() > 2 || t->shape.back() != n)
        return refuse("an epilogue value of another shape than the product's");
    }
    return true;
  }

  // The step that computes `v` into `out`: its products' steps first.
  bool build(Value* v, StepMatrix out, int& index) {
    ProductStep s;
    s.out = out;
    s.result = v;
    Dim n;
    std::set<const Value*> seen;
    if (!closure(v, v, s, n, seen)) return false;
    if (s.products.empty()) return refuse("a stored value that is not computed from a product");
    if (!shapesAgree(s, n) || !leavesAgree(s, n)) return false;
    s.m = {outIndex_, 0};
    Type rt = v->type;
    if (rt->kind != TypeKind::Tile || rt->shape.size() != 2 || rt->shape[1] != n)
      return refuse("a materialised value of another shape than its products'");
    if (out.param >= 0) {
      Type ot = paramType(out.param);
      if (ot->shape[1] != n) return refuse("the output's columns are not the product's");
      if (!isFloatOut(baseScalar(ot->elem)) || !plainElement(ot->elem))
        return refuse("the output is not f32, bf16 or f16 (with the default rounding and no @scale)");
      if (rt->elem != ot->elem) return refuse("the stored value is not of the output's type");
    }
    index = static_cast<int>(plan_.steps.size());
    if (out.scratch >= 0) plan_.scratch[static_cast<size_t>(out.scratch)].writtenBy = index;
    plan_.steps.push_back(std::move(s));
    return true;
  }

  // The scratch matrix of `v` (a product's left operand of type `elem`), planned with its step.
  int materialise(Value* v, ScalarKind elem, int& step) {
    if (auto it = scratchOf_.find(v); it != scratchOf_.end()) {
      if (plan_.scratch[static_cast<size_t>(it->second)].elem != elem)
        return refuse("a value is the left operand of products of different types"), -1;
      return it->second;
    }
    int j = static_cast<int>(plan_.scratch.size());
    ScratchMatrix m;
    m.elem = elem;
    m.rows = {outIndex_, 0};
    plan_.scratch.push_back(m);
    scratchOf_[v] = j;
    if (!build(v, StepMatrix{-1, j}, step)) return -1;
    plan_.scratch[static_cast<size_t>(j)].cols = plan_.steps[static_cast<size_t>(step)].n;
    return j;
  }

  // Scratch matrices numbered in the order their steps run (materialise numbers them as it
  // meets them, from the stored value back).
  void renumberScratch() {
    std::vector<int> order(plan_.scratch.size());
    for (size_t j = 0; j < order.size(); ++j) order[j] = static_cast<int>(j);
    std::sort(order.begin(), order.end(),
              [&](int x, int y) { return plan_.scratch[size_t(x)].writtenBy < plan_.scratch[size_t(y)].writtenBy; });
    std::vector<int> to(order.size());
    std::vector<ScratchMatrix> sorted;
    for (size_t j = 0; j < order.size(); ++j) {
      to[size_t(order[j])] = static_cast<int>(j);
      sorted.push_back(plan_.scratch[size_t(order[j])]);
    }
    plan_.scratch = sorted;
    for (ProductStep& s : plan_.steps)
      for (StepMatrix* x : {&s.a, &s.out})
        if (x->scratch >= 0) x->scratch = to[size_t(x->scratch)];
  }

  Operation& f_;
  Block& fn_;
  std::string& why_;
  Operation* loop_ = nullptr;
  Operation* store_ = nullptr;
  Value* rows_ = nullptr;
  int outIndex_ = -1;
  std::map<const Value*, int> scratchOf_;
  ProductPlan plan_;
};

}  // namespace

std::optional<ProductPlan> planProducts(Operation& func, std::string& why) {
  if (!func.hasAttr(AttrId::Kernel) || func.regions.empty()) return std::nullopt;
  return Planner(func, why).run();
}

}  // namespace tessera::ir
