// chain-form: recognises whole-tensor tile programs that are a chain of two products with bias
// and activation epilogues (spec execution model v2, 5; examples/fused_mlp.tessera):
//
//   Hid = tile.relu(tile.dot(X, W1) + b1)      # + b1 and the relu each optional
//   Out[:] = tile.dot(Hid, W2) + b2            # + b2 optional
//
// and records it on the function as `chain_form = [x, w1, b1, w2, b2, out, relu]` (parameter
// indices; -1 for an absent bias; relu 1 or 0). Code generation may then run the program on
// sm_90a as two launches of the Hopper GEMM form (codegen/hopper/HopperGemm.cpp) with the bias, relu
// and rounding in their epilogues and Hid in a scratch matrix between them (docs/codegen.md,
// "Hopper form of a chain of products"). The pass reads the row loop that row-partition wrote:
//   - the function body is pure ops and one tile.range over the rows of Out (from
//     tile.group_id * R in steps of tile.num_groups * R), whose block argument `rows` slices
//     X[rows : rows+R, 0 : D] and Out[rows : rows+R, 0 : E];
//   - the only effect in the loop is the store of convert?(P2) into (a full slice of) Out's
//     rows, where P2 = tile.dot(H, W2) [+ broadcast(convert?(tile.load b2))],
//     H = relu?(P1), P1 = tile.dot(X rows, W1) [+ broadcast(convert?(tile.load b1))];
//   - X, W1, W2 are all bf16 or all f16, Out bf16, f16 or f32 with the default rounding, the
//     biases rank-1 float tensors; the extents agree (X [M, D], W1 [D, H], W2 [H, E], Out [M, E],
//     b1 [H], b2 [E]).
// A program with two tile.dot that is not in the form gets `chain_form_missed` with the reason
// (-Rpass-missed=tensor-cores). It changes no IR but the attributes.
#include "ir/Pass.h"
#include "ir/passes/PassUtils.h"

namespace tessera::ir {

namespace {

bool isOp(const Value* v, OpId id) { return v && v->defOp && v->defOp->id == id; }

bool isZero(const Value* v) {
  const Attribute* a = constantOf(v);
  return a && a->kind == AttrKind::Int && a->i == 0;
}

int paramIndex(const Value* v, Block& body) {
  if (!v || !v->isBlockArg() || v->ownerBlock != &body) return -1;
  return static_cast<int>(v->index);
}

bool isMatrix(const Value* t) {
  return t && t->type->kind == TypeKind::Tensor && t->type->shape.size() == 2 && t->type->space == MemSpace::Global;
}

bool isFloat(ScalarKind k) { return k == ScalarKind::BF16 || k == ScalarKind::F16 || k == ScalarKind::F32; }

struct Chain {
  int x = -1, w1 = -1, b1 = -1, w2 = -1, b2 = -1, out = -1;
  bool relu = false;
};

// `v` is a tile.dot of two operands without attributes; its operands.
bool matchDot(Value* v, Value*& lhs, Value*& rhs) {
  if (!isOp(v, OpId::TileDot)) return false;
  Operation* d = v->defOp;
  if (d->numOperands() != 2 || d->hasAttr(AttrId::TransposeB)) return false;
  lhs = d->operand(0);
  rhs = d->operand(1);
  return true;
}

// `v` is `dot [+ broadcast(convert?(tile.load bias))]`: the dot's value, and the bias parameter
// (-1 when none).
bool matchBiased(Value* v, Block& fn, Value*& dot, int& bias) {
  bias = -1;
  dot = v;
  if (!isOp(v, OpId::ArithAddF)) return true;
  Value* l = v->defOp->operand(0);
  Value* r = v->defOp->operand(1);
  if (!isOp(r, OpId::TileBroadcast)) std::swap(l, r);
  if (!isOp(r, OpId::TileBroadcast)) return false;
  Value* b = r->defOp->operand(0);
  if (isOp(b, OpId::ArithConvert)) b = b->defOp->operand(0);
  if (!isOp(b, OpId::TileLoad) || b->defOp->numOperands() != 1) return false;
  Value* t = b->defOp->operand(0);
  bias = paramIndex(t, fn);
  if (bias < 0 || t->type->kind != TypeKind::Tensor || t->type->shape.size() != 1 ||
      !isFloat(baseScalar(t->type->elem)))
    return false;
  dot = l;
  return true;
}

// The loop visits every row block of `Out` once: rows = g R, (g + G) R, ... < Out.shape[0] for
// g = tile.group_id, G = tile.num_groups and R the blocks' rows.
bool coversRows(Operation* loop, Value* Out, const Dim& rowsPerBlock) {
  if (!rowsPerBlock.isStatic() || loop->numOperands() != 3) return false;
  auto scaled = [&](Value* v, OpId id) {
    if (!isOp(v, OpId::ArithMulI) || !isOp(v->defOp->operand(0), id)) return false;
    const Attribute* r = constantOf(v->defOp->operand(1));
    return r && r->kind == AttrKind::Int && r->i == rowsPerBlock.size;
  };
  Value* end = loop->operand(1);
  bool dimOk = isOp(end, OpId::MemDim) && end->defOp->operand(0) == Out && end->defOp->intAttr(AttrId::Axis, -1) == 0;
  if (!dimOk) {
    const Attribute* e = constantOf(end);
    dimOk = e && e->kind == AttrKind::Int && Out->type->shape[0].isStatic() && e->i == Out->type->shape[0].size;
  }
  return dimOk && scaled(loop->operand(0), OpId::TileGroupId) && scaled(loop->operand(2), OpId::TileNumGroups);
}

// The row loop and the store in it. `why` says what is not in the form.
bool matchChain(Operation* func, Chain& c, std::string& why) {
  Block& fn = func->body();
  Operation* loop = nullptr;
  for (auto& op : fn.ops) {
    if (op->id == OpId::TileRange) {
      if (loop) return false;
      loop = op.get();
    } else if (op->id != OpId::FuncReturn && (!op->has(T_Pure) || !op->regions.empty())) {
      return false;
    }
  }
  if (!loop || loop->regions.empty() || loop->numResults() != 0) return false;
  Block& body = loop->body();
  if (body.numArgs() != 1) return false;
  Value* rows = body.arg(0);
  Operation* store = nullptr;
  for (auto& op : body.ops) {
    if (op->id == OpId::TileStore) {
      if (store) return false;
      store = op.get();
    } else if (op->id != OpId::ScfYield && (!op->has(T_Pure) || !op->regions.empty())) {
      if (op->id != OpId::TileLoad && op->id != OpId::TileDot) return false;
    }
  }
  if (!store || store->numOperands() != 2) return false;
  // Out's rows: the store's target is Out[rows:, 0:] or a full slice of it.
  Value* dst = store->operand(1);
  if (isOp(dst, OpId::MemSlice) && dst->defOp->numOperands() == 3 && isOp(dst->defOp->operand(0), OpId::MemSlice)) {
    if (!isZero(dst->defOp->operand(1)) || !isZero(dst->defOp->operand(2)) ||
        dst->type->shape != dst->defOp->operand(0)->type->shape)
      return false;
    dst = dst->defOp->operand(0);
  }
  auto rowSlice = [&](Value* s) -> Value* {
    if (!isOp(s, OpId::MemSlice) || s->defOp->numOperands() != 3 || s->defOp->operand(1) != rows) return nullptr;
    Value* t = s->defOp->operand(0);
    if (!isZero(s->defOp->operand(2)) || !isMatrix(t) || s->type->shape.size() != 2 ||
        s->type->shape[1] != t->type->shape[1])
      return nullptr;
    return t;
  };
  Value* Out = rowSlice(dst);
  if (!Out || !coversRows(loop, Out, dst->type->shape[0])) return false;
  Value* stored = store->operand(0);
  if (isOp(stored, OpId::ArithConvert)) stored = stored->defOp->operand(0);
  Value *p2 = nullptr, *h = nullptr, *W2 = nullptr, *p1 = nullptr, *xr = nullptr, *W1 = nullptr;
  if (!Out || !matchBiased(stored, fn, p2, c.b2) || !matchDot(p2, h, W2)) return false;
  why = "";  // two chained products: from here on a mismatch is reported
  c.relu = isOp(h, OpId::MathRelu);
  if (c.relu) h = h->defOp->operand(0);
  if (!matchBiased(h, fn, p1, c.b1) || !matchDot(p1, xr, W1)) {
    why = "the second product's left operand is not relu?(tile.dot(X, W1) [+ b1])";
    return false;
  }
  Value* X = rowSlice(xr);
  c.x = paramIndex(X, fn);
  c.w1 = paramIndex(W1, fn);
  c.w2 = paramIndex(W2, fn);
  c.out = paramIndex(Out, fn);
  if (c.x < 0 || c.w1 < 0 || c.w2 < 0 || c.out < 0 || !isMatrix(W1) || !isMatrix(W2)) {
    why = "the products' operands are not whole tensor parameters X[M, D], W1[D, H], W2[H, E]";
    return false;
  }
  ScalarKind in = baseScalar(X->type->elem);
  if ((in != ScalarKind::BF16 && in != ScalarKind::F16) || baseScalar(W1->type->elem) != in ||
      baseScalar(W2->type->elem) != in) {
    why = "X, W1 and W2 are not all bf16 or all f16";
    return false;
  }
  Type oe = Out->type->elem;
  if (!isFloat(baseScalar(oe)) ||
      (oe->kind == TypeKind::Num &&
       (oe->scale != 0 || oe->saturate || (oe->round != Rounding::Default && oe->round != Rounding::NearestEven)))) {
    why = "Out is not bf16, f16 or f32 with the default rounding";
    return false;
  }
  for (Value* t : {X, W1, W2})
    if (t->type->elem->kind == TypeKind::Num && t->type->elem->scale != 0) {
      why = "an operand has a @scale";
      return false;
    }
  const auto &xs = X->type->shape, &w1s = W1->type->shape, &w2s = W2->type->shape, &os = Out->type->shape;
  if (xs[1] != w1s[0] || w1s[1] != w2s[0] || w2s[1] != os[1] || xs[0] != os[0] ||
      (c.b1 >= 0 && fn.arg(c.b1)->type->shape[0] != w1s[1]) || (c.b2 >= 0 && fn.arg(c.b2)->type->shape[0] != os[1])) {
    why = "the extents are not X[M, D], W1[D, H], b1[H], W2[H, E], b2[E], Out[M, E] with the same names";
    return false;
  }
  return true;
}

}  // namespace

bool runChainForm(Module& m, DiagnosticEngine&) {
  for (Operation* f : m.funcs()) {
    if (!f->hasAttr(AttrId::Kernel) || f->regions.empty()) continue;
    f->removeAttr(AttrId::ChainForm);
    f->removeAttr(AttrId::ChainFormMissed);
    if (f->hasAttr(AttrId::MmaForm) || f->hasAttr(AttrId::AttentionForm)) continue;
    Chain c;
    std::string why = "none";
    if (matchChain(f, c, why)) {
      f->setAttr(AttrId::ChainForm, Attribute::ints({c.x, c.w1, c.b1, c.w2, c.b2, c.out, c.relu ? 1 : 0}));
      continue;
    }
    if (why.empty()) why = "the program is not a chain of two products in the form of docs/codegen.md";
    if (why != "none") f->setAttr(AttrId::ChainFormMissed, Attribute::string(why));
  }
  return true;
}

}  // namespace tessera::ir
