// attention-backward-form: recognises kernels that are exactly one of the two kernels of
// FlashAttention-2's backward (stdlib/nn.tessera's flash_attention_grad_kv_<dt> and
// flash_attention_grad_q_<dt>) and records it on the function as
//   attention_bwd_form = [kind, q, k, v, o, do, lse, out1, out2, scale, causal]
// (kind 0: the key/value kernel, out1 = dK, out2 = dV; kind 1: the query kernel, out1 = dQ,
// out2 = -1; the others parameter indices, causal 1 for the causal mask). Code generation may then
// emit another form of the same computation: on sm_90a a warp-specialised wgmma kernel with every
// tile value in registers (codegen/hopper/HopperAttentionBwd.cpp, docs/codegen.md "Hopper form of the
// attention backward"). The pass checks, by data flow on the IR after the cleanups:
//   - one tile.range over the groups whose unit is (b, h, fixed block) with the block fastest
//     (fixed: keys of K for the key/value kernel, queries of Q for the query kernel), every
//     (batch, head, block) once;
//   - one block loop inside it from 0 over the other sequence (the query kernel's causal loop may
//     stop at min(S, qb + rows)) carrying dK and dV, or dQ, from 0, whose body is
//       s = tile.dot(Q[b, h, qb], K[b, h, kb].T) * scale  (causal: where(kb + j <= qb + i, ..., -inf))
//       p = exp(s - LSE[b, h, qb][:, None])
//       di = tile.sum(f32(dO[b, h, qb]) * f32(O[b, h, qb]), axis=1)
//       ds = p * (tile.dot(dO[b, h, qb], V[b, h, kb].T) - di[:, None])
//       dV += tile.dot(T(p).T, dO[b, h, qb]); dK += tile.dot(T(ds).T, Q[b, h, qb])   (key/value)
//       dQ += tile.dot(T(ds), K[b, h, kb])                                            (query)
//     with T the 16-bit type of the operands;
//   - after it dK[b, h, kb] = dK * scale and dV[b, h, kb] = dV, or dQ[b, h, qb] = dQ * scale;
//   - Q, K, V, O, dO and the outputs of one shape [B, H, S, D] and one type (bf16 or f16), D 64,
//     128 or symbolic, LSE f32 [B, H, S]; nothing else in the function has an effect.
// A causal key/value kernel that walks every query block is still the form: the blocks wholly
// above the diagonal add p = 0 and ds = 0, and the other form skips them. It changes no IR but the
// attributes. A kernel that looks like an attention backward (a block loop with a dot of a
// transposed, converted exp) and misses the form gets `attention_bwd_form_missed` with the reason,
// which the -Rpass-missed=tensor-cores remark shows.
#include <cmath>

#include "ir/Pass.h"
#include "ir/passes/AttentionMatch.h"
#include "ir/passes/PassUtils.h"

namespace tessera::ir {

namespace {

using namespace attn;

struct Form {
  bool kv = false;
  Value *Q = nullptr, *K = nullptr, *V = nullptr, *O = nullptr, *dO = nullptr, *LSE = nullptr;
  Value *out1 = nullptr, *out2 = nullptr, *scale = nullptr;
  const Value *b = nullptr, *h = nullptr, *fixed = nullptr, *stream = nullptr;  // stripped
  int64_t fixedRows = 0, streamRows = 0;
  bool causal = false;
  const Value* qb() const { return kv ? stream : fixed; }
  const Value* kb() const { return kv ? fixed : stream; }
  int64_t qRows() const { return kv ? streamRows : fixedRows; }
  int64_t kRows() const { return kv ? fixedRows : streamRows; }
};

// The memref a dot operand reads: a mem.slice, directly or through tile.load.
const Value* sliceOf(const Value* v) {
  if (isOp(v, OpId::TileLoad)) v = opnd(v, 0);
  return isOp(v, OpId::MemSlice) ? v : nullptr;
}

class Matcher {
 public:
  Matcher(Operation* func, std::string& why) : func_(func), body_(func->body()), why_(why) {}
  bool match(Form& f);

 private:
  bool fail(std::string why) {
    why_ = std::move(why);
    return false;
  }
  bool slice(const Value* v, const Value* tensor, const Form& f, const Value* at, int64_t rows) {
    const Value* s = sliceOf(v);
    return s && isBlockSlice(s, tensor, f.b, f.h, at, rows);
  }
  bool findProducts(Operation* loop, Form& f);
  bool findBlocks(Operation* loop, Form& f);
  bool matchUnit(Operation* outer, Form& f);
  bool matchScores(const Value* s, Form& f);
  bool matchGradients(Form& f);
  bool matchLoop(Operation* loop, Form& f);
  bool matchEpilogue(Operation* outer, Operation* loop, Form& f);
  bool checkTypes(Form& f);

  Operation* func_;
  Block& body_;
  std::string& why_;
  const Value *p_ = nullptr, *ds_ = nullptr;            // exp(s - lse) and p * (dP - di)
  const Value *dsRight_ = nullptr, *pRight_ = nullptr;  // the right operands of their products
  const Value *dsConv_ = nullptr, *pConv_ = nullptr;    // their conversions for the products
  unsigned dsIndex_ = 0, pIndex_ = 0;                   // the carried gradients they update
  std::vector<Operation*> stores_;
};

// dQ' = dQ + dot(T(ds), K[b, h, kb]) (query kernel), or dK' = dK + dot(T(ds).T, Q[b, h, qb]) and
// dV' = dV + dot(T(p).T, dO[b, h, qb]) (key/value kernel), in either order.
bool Matcher::findProducts(Operation* loop, Form& f) {
  Block& lb = loop->body();
  Operation* yield = lb.terminator();
  unsigned carried = loop->numResults();
  if ((carried != 1 && carried != 2) || !yield || yield->numOperands() != carried || lb.numArgs() != carried + 1 ||
      loop->numOperands() != 3 + carried)
    return fail("the block loop does not carry dQ, or dK and dV");
  f.kv = carried == 2;
  for (unsigned i = 0; i < carried; ++i) {
    if (!isFloat(unbroadcast(loop->operand(3 + i)), 0.0)) return fail("the gradients do not start at 0");
    const Value* term = nullptr;
    if (!binary(
            yield->operand(i), OpId::ArithAddF, [&](const Value* a) { return a == lb.arg(i + 1); },
            [&](const Value* d) { return isOp(d, OpId::TileDot) && d->defOp->numOperands() == 2 && (term = d); }, true))
      return fail("a carried gradient is not itself plus a tile.dot");
    const Value* a = opnd(term, 0);
    if (f.kv && !isOp(a, OpId::TileTranspose)) return fail("dK or dV does not add a product of a transposed tile");
    if (f.kv) a = opnd(a, 0);
    if (!isOp(a, OpId::ArithConvert) || baseScalar(term->type->elem) != ScalarKind::F32)
      return fail("the products' left operands are not converted to the operands' type");
    const Value* x = opnd(a, 0);
    if (f.kv && isOp(x, OpId::MathExp)) {
      p_ = x;
      pConv_ = a;
      pRight_ = opnd(term, 1);
      pIndex_ = i;
    } else {
      ds_ = x;
      dsConv_ = a;
      dsRight_ = opnd(term, 1);
      dsIndex_ = i;
    }
  }
  if (!ds_ || (f.kv && !p_)) return fail("the block loop does not add dot(ds, ...) and, for dK and dV, dot(p.T, dO)");
  if (!isOp(ds_, OpId::ArithMulF)) return fail("ds is not p * (dP - di[:, None])");
  const Value* pp = isOp(opnd(ds_, 0), OpId::MathExp) ? opnd(ds_, 0) : opnd(ds_, 1);
  if (p_ && pp != p_) return fail("dV and dK do not use the same p");
  p_ = pp;
  return true;
}

// Q, K and the unit's coordinates from the scores dot(Q[b, h, qb], load(K[b, h, kb]).T) inside p.
bool Matcher::findBlocks(Operation* loop, Form& f) {
  const Value* s = isOp(p_, OpId::MathExp) && isOp(opnd(p_, 0), OpId::ArithSubF) ? opnd(opnd(p_, 0), 0) : nullptr;
  if (s && isOp(s, OpId::ArithSelect)) s = opnd(s, 1);
  const Value* dot = nullptr;
  if (s && isOp(s, OpId::ArithMulF)) dot = isOp(opnd(s, 0), OpId::TileDot) ? opnd(s, 0) : opnd(s, 1);
  if (!dot || !isOp(dot, OpId::TileDot) || !sliceOf(opnd(dot, 0)) || !isOp(opnd(dot, 1), OpId::TileTranspose) ||
      !sliceOf(opnd(opnd(dot, 1), 0)))
    return fail("p is not exp of tile.dot(Q[b, h, qb], K[b, h, kb].T) * scale minus the log-sum-exp");
  const Value *qs = sliceOf(opnd(dot, 0)), *ks = sliceOf(opnd(opnd(dot, 1), 0));
  if (qs->defOp->numOperands() != 5 || ks->defOp->numOperands() != 5)
    return fail("Q and K are not [B, H, S, D] tensors");
  f.Q = opnd(qs, 0);
  f.K = opnd(ks, 0);
  f.b = strip(qs->defOp->operand(1));
  f.h = strip(qs->defOp->operand(2));
  const Value *qb = strip(qs->defOp->operand(3)), *kb = strip(ks->defOp->operand(3));
  f.fixed = f.kv ? kb : qb;
  f.stream = f.kv ? qb : kb;
  const Value* fixedSlice = f.kv ? ks : qs;
  const Attribute* step = constantOf(loop->operand(2));
  if (!same(f.stream, loop->body().arg(0)) || !isInt(loop->operand(0), 0) || !step || step->kind != AttrKind::Int ||
      step->i <= 0)
    return fail("the block loop does not walk the other sequence from 0 in constant steps");
  f.streamRows = step->i;
  f.fixedRows = fixedSlice->type->shape[0].isStatic() ? fixedSlice->type->shape[0].size : 0;
  if (f.fixedRows <= 0) return fail("the fixed block has no constant number of rows");
  return true;
}

// The unit decomposition: block = (u % n) * rows, h = (u / n) % H, b = u / n / H over u in
// [group, n * B * H) by num_groups, n = ceil(S / rows), of the fixed tensor (K or Q).
bool Matcher::matchUnit(Operation* outer, Form& f) {
  Value* u = outer->body().arg(0);
  Value* T = f.kv ? f.K : f.Q;
  const Value* blk = strip(f.fixed);
  if (!isOp(blk, OpId::ArithMulI) || !isInt(opnd(blk, 1), f.fixedRows) || !isOp(opnd(blk, 0), OpId::ArithRemSI))
    return fail("the fixed blocks are not taken in order");
  const Value* rem = opnd(blk, 0);
  const Value* n = opnd(rem, 1);
  if (opnd(rem, 0) != u) return fail("the block is not the fastest part of the group's unit");
  const Value *h = strip(f.h), *b = strip(f.b);
  if (!isOp(h, OpId::ArithRemSI) || !isOp(b, OpId::ArithDivSI)) return fail("the unit is not (batch, head, block)");
  const Value* un = opnd(h, 0);
  if (!isOp(un, OpId::ArithDivSI) || opnd(un, 0) != u || opnd(un, 1) != n || opnd(b, 0) != un ||
      opnd(b, 1) != opnd(h, 1) || !isDim(opnd(h, 1), T, 1))
    return fail("the unit is not (batch, head, block)");
  if (!binary(
          n, OpId::ArithDivSI,
          [&](const Value* x) {
            return binary(
                x, OpId::ArithAddI, [&](const Value* d) { return isDim(d, T, 2); },
                [&](const Value* c) { return isInt(c, f.fixedRows - 1); }, false);
          },
          [&](const Value* c) { return isInt(c, f.fixedRows); }, false))
    return fail("the blocks do not cover the sequence");
  bool covers = binary(
      outer->operand(1), OpId::ArithMulI,
      [&](const Value* x) {
        return binary(
            x, OpId::ArithMulI, [&](const Value* a) { return a == n; }, [&](const Value* d) { return isDim(d, T, 0); },
            true);
      },
      [&](const Value* d) { return isDim(d, T, 1); }, true);
  if (!covers || !isOp(outer->operand(0), OpId::TileGroupId) || !isOp(outer->operand(2), OpId::TileNumGroups))
    return fail("the group loop does not walk every (batch, head, block) once");
  return true;
}

// s = dot(Q[b, h, qb], K[b, h, kb].T) * scale, or where(kb + j <= qb + i, that, -inf) when causal.
bool Matcher::matchScores(const Value* s, Form& f) {
  std::string why;
  s = peelCausalMask(s, f.kb(), f.kRows(), f.qb(), f.qRows(), f.causal, why);
  if (!s) return fail(why);
  auto isDot = [&](const Value* d) {
    if (!isOp(d, OpId::TileDot) || d->defOp->numOperands() != 2 || baseScalar(d->type->elem) != ScalarKind::F32)
      return false;
    const Value* kt = opnd(d, 1);
    return slice(opnd(d, 0), f.Q, f, f.qb(), f.qRows()) && isOp(kt, OpId::TileTranspose) &&
           slice(opnd(kt, 0), f.K, f, f.kb(), f.kRows());
  };
  auto isScale = [&](const Value* x) {
    const Value* sc = unbroadcast(x);
    if (!sc->isBlockArg() || sc->ownerBlock != &body_ || baseScalar(sc->type) != ScalarKind::F32) return false;
    f.scale = const_cast<Value*>(sc);
    return true;
  };
  if (!binary(s, OpId::ArithMulF, isDot, isScale, true))
    return fail("the scores are not tile.dot(Q[b, h, qb], K[b, h, kb].T) * scale with an f32 scale parameter");
  return true;
}

// p = exp(s - LSE[b, h, qb][:, None]); ds = p * (dot(dO[b, h, qb], V[b, h, kb].T) - di[:, None])
// with di = tile.sum(f32(dO[b, h, qb]) * f32(O[b, h, qb]), axis=1); the products' right operands
// are K[b, h, kb] (dQ), Q[b, h, qb] (dK) and dO[b, h, qb] (dV).
bool Matcher::matchGradients(Form& f) {
  auto isLse = [&](const Value* x) {
    const Value* l = rowBroadcastOf(x);
    if (!isOp(l, OpId::TileLoad) || !isOp(opnd(l, 0), OpId::MemSlice)) return false;
    f.LSE = opnd(opnd(l, 0), 0);
    return isBlockSlice(opnd(l, 0), f.LSE, f.b, f.h, f.qb(), f.qRows());
  };
  const Value* s = opnd(opnd(p_, 0), 0);
  if (!isLse(opnd(opnd(p_, 0), 1))) return fail("p is not exp(s - LSE[b, h, qb][:, None])");
  if (!matchScores(s, f)) return false;
  Value* tensors[2] = {nullptr, nullptr};
  auto f32Of = [&](const Value* x, unsigned i) {
    if (!isOp(x, OpId::ArithConvert) || baseScalar(x->type->elem) != ScalarKind::F32) return false;
    const Value* l = opnd(x, 0);
    if (!isOp(l, OpId::TileLoad) || !isOp(opnd(l, 0), OpId::MemSlice)) return false;
    tensors[i] = opnd(opnd(l, 0), 0);
    return isBlockSlice(opnd(l, 0), tensors[i], f.b, f.h, f.qb(), f.qRows());
  };
  auto isDi = [&](const Value* x) {
    const Value* r = rowBroadcastOf(x);
    if (!isOp(r, OpId::TileReduce) || r->defOp->strAttr(AttrId::Kind) != "sum" ||
        r->defOp->intAttr(AttrId::Axis, -1) != 1)
      return false;
    const Value* m = opnd(r, 0);
    return isOp(m, OpId::ArithMulF) && f32Of(opnd(m, 0), 0) && f32Of(opnd(m, 1), 1);
  };
  auto isDp = [&](const Value* d) {
    if (!isOp(d, OpId::TileDot) || d->defOp->numOperands() != 2 || baseScalar(d->type->elem) != ScalarKind::F32)
      return false;
    const Value *gs = sliceOf(opnd(d, 0)), *vt = opnd(d, 1);
    if (!gs || !isOp(vt, OpId::TileTranspose) || !sliceOf(opnd(vt, 0))) return false;
    f.dO = opnd(gs, 0);
    f.V = opnd(sliceOf(opnd(vt, 0)), 0);
    return slice(opnd(d, 0), f.dO, f, f.qb(), f.qRows()) && slice(opnd(vt, 0), f.V, f, f.kb(), f.kRows());
  };
  auto isFactor = [&](const Value* x) { return binary(x, OpId::ArithSubF, isDp, isDi, false); };
  if (!binary(ds_, OpId::ArithMulF, [&](const Value* a) { return a == p_; }, isFactor, true))
    return fail("ds is not p * (tile.dot(dO[b, h, qb], V[b, h, kb].T) - di[:, None])");
  if (tensors[0] != f.dO) std::swap(tensors[0], tensors[1]);
  if (tensors[0] != f.dO || tensors[1] == f.dO)
    return fail("di is not tile.sum(f32(dO[b, h, qb]) * f32(O[b, h, qb]), axis=1)");
  f.O = tensors[1];
  bool rightOk = f.kv ? slice(dsRight_, f.Q, f, f.qb(), f.qRows()) && slice(pRight_, f.dO, f, f.qb(), f.qRows())
                      : slice(dsRight_, f.K, f, f.kb(), f.kRows());
  if (!rightOk)
    return fail(f.kv ? "dK and dV do not add tile.dot(ds.T, Q[b, h, qb]) and tile.dot(p.T, dO[b, h, qb])"
                     : "dQ does not add tile.dot(ds, K[b, h, kb])");
  return true;
}

// The block loop runs over the whole other sequence; the query kernel's causal loop may stop at
// min(S, qb + rows).
bool Matcher::matchLoop(Operation* loop, Form& f) {
  Value* end = loop->operand(1);
  Value* T = f.kv ? f.Q : f.K;
  if (isDim(end, T, 2)) return true;
  bool stops = !f.kv && f.causal &&
               binary(
                   end, OpId::ArithMinSI, [&](const Value* d) { return isDim(d, T, 2); },
                   [&](const Value* x) {
                     return binary(
                         strip(x), OpId::ArithAddI, [&](const Value* a) { return same(a, f.fixed); },
                         [&](const Value* c) { return isInt(c, f.fixedRows); }, true);
                   },
                   true);
  return stops || fail("the block loop does not run over all of the other sequence");
}

// dQ[b, h, qb] = T(dQ * scale), or dK[b, h, kb] = T(dK * scale) and dV[b, h, kb] = T(dV).
bool Matcher::matchEpilogue(Operation* outer, Operation* loop, Form& f) {
  for (auto& op : outer->body().ops) {
    if (op->id != OpId::TileStore) continue;
    const Value* v = op->operand(0);
    if (isOp(v, OpId::ArithConvert)) v = opnd(v, 0);
    const Value* dst = op->operand(1);
    Value* t = isOp(dst, OpId::MemSlice) ? opnd(dst, 0) : nullptr;
    bool scaled = binary(
        v, OpId::ArithMulF, [&](const Value* a) { return a == loop->result(dsIndex_); },
        [&](const Value* x) { return unbroadcast(x) == f.scale; }, true);
    bool plain = f.kv && v == loop->result(pIndex_);
    if (!t || !(scaled || plain) || !isBlockSlice(dst, t, f.b, f.h, f.fixed, f.fixedRows) || (scaled ? f.out1 : f.out2))
      return fail(f.kv ? "a store besides dK[b, h, kb] = dK * scale and dV[b, h, kb] = dV"
                       : "a store besides dQ[b, h, qb] = dQ * scale");
    (scaled ? f.out1 : f.out2) = t;
    stores_.push_back(op.get());
  }
  if (!f.out1 || (f.kv && !f.out2))
    return fail(f.kv ? "dK * scale and dV are not both stored" : "dQ * scale is not stored");
  return true;
}

bool Matcher::checkTypes(Form& f) {
  std::vector<Value*> tensors{f.Q, f.K, f.V, f.O, f.dO, f.out1};
  if (f.kv) tensors.push_back(f.out2);
  ScalarKind in = baseScalar(f.Q->type->elem);
  for (Value* t : tensors) {
    if (paramIndex(t, body_) < 0 || t->type->kind != TypeKind::Tensor || t->type->space != MemSpace::Global ||
        t->type->shape != f.Q->type->shape || t->type->shape.size() != 4)
      return fail("Q, K, V, O, dO and the gradients are not [B, H, S, D] tensor parameters of one shape");
    Type e = t->type->elem;
    if (baseScalar(e) != in || (in != ScalarKind::BF16 && in != ScalarKind::F16))
      return fail("Q, K, V, O, dO and the gradients are not all bf16 or all f16");
    if (e->kind == TypeKind::Num &&
        (e->scale != 0 || e->saturate || (e->round != Rounding::Default && e->round != Rounding::NearestEven)))
      return fail("a scaled or rounded element type (" + printType(e) + ") is handled by the portable form only");
  }
  const Dim& d = f.Q->type->shape[3];
  if (d.isStatic() && d.size != 64 && d.size != 128) return fail("the head dimension is not 64 or 128");
  Type l = f.LSE->type;
  if (paramIndex(f.LSE, body_) < 0 || l->shape.size() != 3 || baseScalar(l->elem) != ScalarKind::F32 ||
      l->shape[0] != f.Q->type->shape[0] || l->shape[1] != f.Q->type->shape[1] || l->shape[2] != f.Q->type->shape[2])
    return fail("LSE is not an f32 [B, H, S] tensor parameter");
  return true;
}

bool Matcher::match(Form& f) {
  Operation *outer = nullptr, *loop = nullptr;
  if (!findLoopNest(body_, "block", "the unit", "block loop", outer, loop, why_)) return false;
  if (!findProducts(loop, f) || !findBlocks(loop, f) || !matchGradients(f) || !matchUnit(outer, f) ||
      !matchLoop(loop, f) || !matchEpilogue(outer, loop, f) || !checkTypes(f))
    return false;
  // p and ds are rounded to the operands' type for their products (as the other form does).
  ScalarKind in = baseScalar(f.Q->type->elem);
  for (const Value* c : {dsConv_, f.kv ? pConv_ : dsConv_})
    if (baseScalar(c->type->elem) != in) return fail("p or ds is not rounded to the operands' type for its product");
  std::vector<Operation*> allowed{outer, loop};
  allowed.insert(allowed.end(), stores_.begin(), stores_.end());
  return effectsOnlyFrom(func_, allowed, "the attention backward loop and its stores", why_);
}

// A kernel worth a missed remark: a tile.dot of a (converted, transposed) product with an exp,
// such as ds = p * (...), in a loop inside a group loop.
bool looksLikeAttentionBackward(Operation* f) {
  bool found = false;
  f->walk([&](Operation* op) {
    if (op->id != OpId::TileDot || !op->parentOp() || op->parentOp()->id != OpId::TileRange ||
        !op->parentOp()->parentOp() || op->parentOp()->parentOp()->id != OpId::TileRange)
      return;
    const Value* a = op->operand(0);
    if (isOp(a, OpId::TileTranspose)) a = opnd(a, 0);
    if (isOp(a, OpId::ArithConvert)) a = opnd(a, 0);
    found |= isOp(a, OpId::ArithMulF) && (isOp(opnd(a, 0), OpId::MathExp) || isOp(opnd(a, 1), OpId::MathExp));
  });
  return found;
}

}  // namespace

bool runAttentionBackwardForm(Module& m, DiagnosticEngine&) {
  for (Operation* f : m.funcs()) {
    if (!f->hasAttr(AttrId::Kernel) || f->regions.empty()) continue;
    f->removeAttr(AttrId::AttentionBwdForm);
    f->removeAttr(AttrId::AttentionBwdFormMissed);
    if (f->hasAttr(AttrId::AttentionForm) || !looksLikeAttentionBackward(f)) continue;
    Form form;
    std::string why;
    Block& body = f->body();
    if (Matcher(f, why).match(form)) {
      f->setAttr(AttrId::AttentionBwdForm,
                 Attribute::ints({form.kv ? 0 : 1, paramIndex(form.Q, body), paramIndex(form.K, body),
                                  paramIndex(form.V, body), paramIndex(form.O, body), paramIndex(form.dO, body),
                                  paramIndex(form.LSE, body), paramIndex(form.out1, body),
                                  form.kv ? paramIndex(form.out2, body) : -1, paramIndex(form.scale, body),
                                  form.causal ? 1 : 0}));
      continue;
    }
    f->setAttr(AttrId::AttentionBwdFormMissed, Attribute::string(why));
  }
  return true;
}

}  // namespace tessera::ir
