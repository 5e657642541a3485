// attention-form: recognises kernels that are exactly the online-softmax attention loop of
// examples/flash_attention.tessera (and stdlib.nn's flash_attention kernels) and records it on the
// function as
//   attention_form = [q, k, v, o, scale, lse, causal]
// (parameter indices of Q, K, V, O and the f32 scale, of the optional log-sum-exp output or -1,
// and 1 for the causal mask). Code generation may then emit another form of the same computation:
// on sm_90a a warp-specialised FlashAttention kernel on wgmma and TMA with every tile value in
// registers (codegen/hopper/HopperAttention.cpp, docs/codegen.md "Hopper form of attention"). The pass
// runs before `pipeline`, on the IR that lowering and the cleanups wrote, and checks everything
// the other form relies on, by data flow (LICM may have hoisted the invariant parts):
//   - one tile.range over the groups; its unit u is (b, h, query block) with the query block
//     fastest: qb = (u % nq) * 128, h = (u / nq) % H, b = u / nq / H, nq = ceil(S / 128);
//   - Q[b, h, qb] (128 x D rows), and a key loop kb = 0 .. S (causal: .. min(S, qb + 128)) in
//     steps of BKV carrying m = -inf, l = 0, acc = 0 whose body is
//       s = tile.dot(q, K[b, h, kb].T) * scale  (causal: where(kb + j <= qb + i, ..., -inf))
//       m_new = max(m, tile.max(s, axis=1)); p = exp(s - m_new[:, None]); alpha = exp(m - m_new)
//       l = l * alpha + tile.sum(p, axis=1); acc = acc * alpha[:, None] + tile.dot(T(p), V[b, h, kb])
//     with T the 16-bit type of Q, K and V;
//   - after it, O[b, h, qb] = acc / l[:, None] (converted to O's type) and optionally
//     LSE[b, h, qb] = m + log(l);
//   - Q, K, V, O of one shape [B, H, S, D] (the launch checks then make their extents agree), D
//     64 or 128 or symbolic (code generation emits both and the runtime picks by D);
//   - nothing else in the function has an effect.
// It changes no IR but the attributes. A kernel that computes attention (a tile.dot inside a loop
// next to exp) and misses the form gets `attention_form_missed` with the reason, which the
// -Rpass-missed=tensor-cores remark shows.
#include <algorithm>
#include <cmath>
#include <functional>

#include "ir/Pass.h"
#include "ir/passes/AttentionMatch.h"
#include "ir/passes/PassUtils.h"

namespace tessera::ir {

namespace {

using namespace attn;

struct Form {
  Value *Q = nullptr, *K = nullptr, *V = nullptr, *O = nullptr, *LSE = nullptr, *scale = nullptr;
  const Value *b = nullptr, *h = nullptr, *qb = nullptr;  // the unit's coordinates (stripped)
  bool causal = false;
};

bool isBlockSlice(const Value* v, const Value* tensor, const Form& f, const Value* at, int64_t rows) {
  return attn::isBlockSlice(v, tensor, f.b, f.h, at, rows);
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
  bool matchUnit(Operation* outer, Form& f);
  bool matchScores(const Value* s, Value* kb, Form& f, int64_t bkv);
  bool matchKeyLoop(Operation* loop, Form& f);
  bool matchEpilogue(Operation* outer, Operation* loop, Form& f);
  bool effectsOnlyFrom(const std::vector<Operation*>& allowed);

  Operation* func_;
  Block& body_;
  std::string& why_;
  Operation* oStore_ = nullptr;
  Operation* lseStore_ = nullptr;
};

// The unit decomposition: q = Q[b, h, qb] with qb = (u % nq) * 128, h = (u / nq) % H,
// b = u / nq / H over u in [group, nq * B * H) by num_groups.
bool Matcher::matchUnit(Operation* outer, Form& f) {
  Value* u = outer->body().arg(0);
  const Value* qb = strip(f.qb);
  if (!isOp(qb, OpId::ArithMulI) || !isInt(opnd(qb, 1), 128) || !isOp(opnd(qb, 0), OpId::ArithRemSI))
    return fail("the query blocks are not 128 rows of Q taken in order");
  const Value* rem = opnd(qb, 0);
  const Value* nq = opnd(rem, 1);
  if (opnd(rem, 0) != u) return fail("the query block is not the fastest part of the group's unit");
  const Value *h = strip(f.h), *b = strip(f.b);
  if (!isOp(h, OpId::ArithRemSI) || !isOp(b, OpId::ArithDivSI))
    return fail("the unit is not (batch, head, query block)");
  const Value* uq = opnd(h, 0);
  if (!isOp(uq, OpId::ArithDivSI) || opnd(uq, 0) != u || opnd(uq, 1) != nq || opnd(b, 0) != uq ||
      opnd(b, 1) != opnd(h, 1) || !isDim(opnd(h, 1), f.Q, 1))
    return fail("the unit is not (batch, head, query block) of Q");
  // nq = ceil(S / 128) and the loop covers nq * B * H units from tile.group_id by num_groups.
  if (!binary(
          nq, OpId::ArithDivSI,
          [&](const Value* x) {
            return binary(
                x, OpId::ArithAddI, [&](const Value* d) { return isDim(d, f.Q, 2); },
                [](const Value* c) { return isInt(c, 127); }, false);
          },
          [](const Value* c) { return isInt(c, 128); }, false))
    return fail("the query blocks do not cover Q's sequence in blocks of 128");
  Value* total = outer->operand(1);
  bool covers = binary(
      total, OpId::ArithMulI,
      [&](const Value* x) {
        return binary(
            x, OpId::ArithMulI, [&](const Value* a) { return a == nq; },
            [&](const Value* d) { return isDim(d, f.Q, 0); }, true);
      },
      [&](const Value* d) { return isDim(d, f.Q, 1); }, true);
  if (!covers || !isOp(outer->operand(0), OpId::TileGroupId) || !isOp(outer->operand(2), OpId::TileNumGroups))
    return fail("the group loop does not walk every (batch, head, query block) once");
  return true;
}

// s = dot(q, K[b, h, kb].T) * scale, or where(kb + j <= qb + i, that, -inf) when causal.
bool Matcher::matchScores(const Value* s, Value* kb, Form& f, int64_t bkv) {
  std::string why;
  s = peelCausalMask(s, kb, bkv, f.qb, 128, f.causal, why);
  if (!s) return fail(why);
  auto isDot = [&](const Value* d) {
    if (!isOp(d, OpId::TileDot) || d->defOp->numOperands() != 2 || baseScalar(d->type->elem) != ScalarKind::F32)
      return false;
    const Value* kt = opnd(d, 1);
    if (opnd(d, 0) != f.Q && !(isBlockSlice(opnd(d, 0), f.Q, f, f.qb, 128))) return false;
    if (!isOp(kt, OpId::TileTranspose) || !isOp(opnd(kt, 0), OpId::TileLoad)) return false;
    return isBlockSlice(opnd(opnd(kt, 0), 0), f.K, f, kb, bkv);
  };
  auto isScale = [&](const Value* x) {
    const Value* sc = unbroadcast(x);
    if (!sc->isBlockArg() || sc->ownerBlock != &body_ || baseScalar(sc->type) != ScalarKind::F32) return false;
    f.scale = const_cast<Value*>(sc);
    return true;
  };
  if (!binary(s, OpId::ArithMulF, isDot, isScale, true))
    return fail("the scores are not tile.dot(q, K[b, h, kb].T) * scale with an f32 scale parameter");
  return true;
}

bool Matcher::matchKeyLoop(Operation* loop, Form& f) {
  Block& lb = loop->body();
  if (loop->numOperands() != 6 || loop->numResults() != 3 || lb.numArgs() != 4)
    return fail("the key loop does not carry exactly m, l and acc");
  const Attribute* step = constantOf(loop->operand(2));
  if (!isInt(loop->operand(0), 0) || !step || step->kind != AttrKind::Int || step->i <= 0)
    return fail("the key loop does not start at 0 with a constant step");
  int64_t bkv = step->i;
  Value *kb = lb.arg(0), *m = lb.arg(1), *l = lb.arg(2), *acc = lb.arg(3);
  if (!isFloat(unbroadcast(loop->operand(3)), -INFINITY) || !isFloat(unbroadcast(loop->operand(4)), 0.0) ||
      !isFloat(unbroadcast(loop->operand(5)), 0.0) || m->type->shape.size() != 1 || acc->type->shape.size() != 2)
    return fail("m, l and acc do not start at -inf, 0 and 0");
  Operation* yield = lb.terminator();
  if (!yield || yield->numOperands() != 3) return fail("the key loop does not yield m, l and acc");
  const Value *mNew = yield->operand(0), *lNew = yield->operand(1), *accNew = yield->operand(2);
  // m_new = max(m, tile.max(s, axis=1)).
  const Value* s = nullptr;
  auto isRowMax = [&](const Value* r) {
    if (!isOp(r, OpId::TileReduce) || r->defOp->strAttr(AttrId::Kind) != "max" ||
        r->defOp->intAttr(AttrId::Axis, -1) != 1)
      return false;
    s = opnd(r, 0);
    return true;
  };
  if (!binary(mNew, OpId::ArithMaxF, [&](const Value* x) { return x == m; }, isRowMax, true))
    return fail("m is not max(m, tile.max(s, axis=1))");
  if (!matchScores(s, kb, f, bkv)) return false;
  // p = exp(s - m_new[:, None]); alpha = exp(m - m_new).
  const Value* p = nullptr;
  auto isP = [&](const Value* x) {
    if (!isOp(x, OpId::MathExp) || !binary(
                                       opnd(x, 0), OpId::ArithSubF, [&](const Value* a) { return a == s; },
                                       [&](const Value* c) { return rowBroadcastOf(c) == mNew; }, false))
      return false;
    p = x;
    return true;
  };
  auto isAlpha = [&](const Value* x) {
    return isOp(x, OpId::MathExp) && binary(
                                         opnd(x, 0), OpId::ArithSubF, [&](const Value* a) { return a == m; },
                                         [&](const Value* c) { return c == mNew; }, false);
  };
  auto isRowSum = [&](const Value* r) {
    return isOp(r, OpId::TileReduce) && r->defOp->strAttr(AttrId::Kind) == "sum" &&
           r->defOp->intAttr(AttrId::Axis, -1) == 1 && isP(opnd(r, 0));
  };
  // l * alpha (both rows) and acc * alpha[:, None] (alpha along acc's columns, never its rows).
  auto scaled = [&](const Value* carried, bool rowBroadcast) {
    return [&, carried, rowBroadcast](const Value* x) {
      return binary(
          x, OpId::ArithMulF, [&](const Value* a) { return a == carried; },
          [&](const Value* a) { return isAlpha(rowBroadcast ? rowBroadcastOf(a) : a); }, true);
    };
  };
  if (!binary(lNew, OpId::ArithAddF, scaled(l, false), isRowSum, true))
    return fail("l is not l * exp(m - m_new) + tile.sum(exp(s - m_new[:, None]), axis=1)");
  ScalarKind in = baseScalar(f.Q->type->elem);
  auto isPV = [&](const Value* d) {
    if (!isOp(d, OpId::TileDot) || d->defOp->numOperands() != 2 || baseScalar(d->type->elem) != ScalarKind::F32)
      return false;
    const Value* pc = opnd(d, 0);
    return isOp(pc, OpId::ArithConvert) && baseScalar(pc->type->elem) == in && opnd(pc, 0) == p &&
           isBlockSlice(opnd(d, 1), f.V, f, kb, bkv);
  };
  if (!binary(accNew, OpId::ArithAddF, scaled(acc, true), isPV, true))
    return fail("acc is not acc * alpha[:, None] + tile.dot(p converted to Q's type, V[b, h, kb])");
  // The loop's end: S, or min(S, qb + 128) when causal.
  Value* end = loop->operand(1);
  bool endOk = f.causal ? binary(
                              end, OpId::ArithMinSI, [&](const Value* d) { return isDim(d, f.K, 2); },
                              [&](const Value* x) {
                                return binary(
                                    strip(x), OpId::ArithAddI, [&](const Value* a) { return same(a, f.qb); },
                                    [](const Value* c) { return isInt(c, 128); }, true);
                              },
                              true)
                        : isDim(end, f.K, 2);
  if (!endOk)
    return fail(f.causal ? "the causal key loop does not stop at min(S, qb + 128)"
                         : "the key loop does not run over all of K's sequence");
  return true;
}

// O[b, h, qb] = convert(acc / l[:, None]) and optionally LSE[b, h, qb] = m + log(l).
bool Matcher::matchEpilogue(Operation* outer, Operation* loop, Form& f) {
  for (auto& op : outer->body().ops) {
    if (op->id != OpId::TileStore) continue;
    Value* v = op->operand(0);
    if (isOp(v, OpId::ArithConvert)) v = opnd(v, 0);
    Value* dst = op->operand(1);
    bool isO = binary(
        v, OpId::ArithDivF, [&](const Value* a) { return a == loop->result(2); },
        [&](const Value* x) { return rowBroadcastOf(x) == loop->result(1); }, false);
    bool isLse = binary(
        v, OpId::ArithAddF, [&](const Value* a) { return a == loop->result(0); },
        [&](const Value* x) { return isOp(x, OpId::MathLog) && opnd(x, 0) == loop->result(1); }, true);
    if (isO && !oStore_ && isOp(dst, OpId::MemSlice)) {
      oStore_ = op.get();
      f.O = opnd(dst, 0);
      if (!isBlockSlice(dst, f.O, f, f.qb, 128)) return fail("the output is not stored to O[b, h, qb]");
    } else if (isLse && !lseStore_ && isOp(dst, OpId::MemSlice)) {
      lseStore_ = op.get();
      f.LSE = opnd(dst, 0);
      if (f.LSE->type->shape.size() != 3 || baseScalar(f.LSE->type->elem) != ScalarKind::F32 ||
          !isBlockSlice(dst, f.LSE, f, f.qb, 128) || op->operand(0) != v)
        return fail("the log-sum-exp is not stored as f32 to LSE[b, h, qb] of an [B, H, S] tensor");
    } else {
      return fail("a store besides O[b, h, qb] = acc / l[:, None] and LSE[b, h, qb] = m + log(l)");
    }
  }
  if (!oStore_) return fail("acc / l[:, None] is not stored to O[b, h, qb]");
  return true;
}

// Every op with an effect (writes, barriers, calls, nested control flow) is one of `allowed`.
bool Matcher::effectsOnlyFrom(const std::vector<Operation*>& allowed) {
  return attn::effectsOnlyFrom(func_, allowed, "the attention loop and its stores", why_);
}

bool Matcher::match(Form& f) {
  Operation *outer = nullptr, *loop = nullptr;
  if (!findLoopNest(body_, "query block", "the query block", "key loop", outer, loop, why_)) return false;
  // Q, K, V from the scores: dot(Q[b, h, qb], load(K[b, h, kb]).T), V from the P V product.
  Operation* yield = loop->body().terminator();
  const Value* mNew = yield && yield->numOperands() == 3 ? yield->operand(0) : nullptr;
  const Value* s = mNew && isOp(mNew, OpId::ArithMaxF) ? opnd(mNew, 1) : nullptr;
  if (s && isOp(s, OpId::TileReduce)) s = opnd(s, 0);
  if (s && isOp(s, OpId::ArithSelect)) s = opnd(s, 1);
  const Value* dot = nullptr;
  if (s && isOp(s, OpId::ArithMulF)) dot = isOp(opnd(s, 0), OpId::TileDot) ? opnd(s, 0) : opnd(s, 1);
  if (!dot || !isOp(dot, OpId::TileDot) || !isOp(opnd(dot, 0), OpId::MemSlice))
    return fail("the key loop is not online softmax over tile.dot(Q[b, h, qb], K[b, h, kb].T)");
  const Value* qs = opnd(dot, 0);
  f.Q = opnd(qs, 0);
  if (qs->defOp->numOperands() != 5) return fail("Q is not an [B, H, S, D] tensor");
  f.b = strip(qs->defOp->operand(1));
  f.h = strip(qs->defOp->operand(2));
  f.qb = strip(qs->defOp->operand(3));
  const Value* kt = opnd(dot, 1);
  if (!isOp(kt, OpId::TileTranspose) || !isOp(opnd(kt, 0), OpId::TileLoad) ||
      !isOp(opnd(opnd(kt, 0), 0), OpId::MemSlice))
    return fail("the scores do not read K[b, h, kb].T");
  f.K = opnd(opnd(opnd(kt, 0), 0), 0);
  const Value* accNew = yield->operand(2);
  for (const Value* x : {isOp(accNew, OpId::ArithAddF) ? opnd(accNew, 0) : nullptr,
                         isOp(accNew, OpId::ArithAddF) ? opnd(accNew, 1) : nullptr})
    if (isOp(x, OpId::TileDot) && isOp(opnd(x, 1), OpId::MemSlice)) f.V = opnd(opnd(x, 1), 0);
  if (!f.V) return fail("acc does not add tile.dot(p, V[b, h, kb])");
  for (Value* t : {f.Q, f.K, f.V})
    if (paramIndex(t, body_) < 0 || t->type->kind != TypeKind::Tensor || t->type->shape.size() != 4 ||
        t->type->space != MemSpace::Global)
      return fail("Q, K and V are not [B, H, S, D] tensor parameters");
  ScalarKind in = baseScalar(f.Q->type->elem);
  if ((in != ScalarKind::BF16 && in != ScalarKind::F16) || baseScalar(f.K->type->elem) != in ||
      baseScalar(f.V->type->elem) != in)
    return fail("Q, K and V are not all bf16 or all f16");
  if (f.K->type->shape != f.Q->type->shape || f.V->type->shape != f.Q->type->shape)
    return fail("Q, K and V do not have one shape [B, H, S, D]");
  const Dim& d = f.Q->type->shape[3];
  if (d.isStatic() && d.size != 64 && d.size != 128) return fail("the head dimension is not 64 or 128");
  if (!matchUnit(outer, f) || !matchKeyLoop(loop, f) || !matchEpilogue(outer, loop, f)) return false;
  Type o = f.O->type;
  if (paramIndex(f.O, body_) < 0 || o->kind != TypeKind::Tensor || o->shape != f.Q->type->shape ||
      o->space != MemSpace::Global)
    return fail("O is not an [B, H, S, D] tensor parameter of Q's shape");
  ScalarKind out = baseScalar(o->elem);
  if (out != in && out != ScalarKind::F32) return fail("O is not of Q's type or f32");
  Type oe = o->elem;
  if (oe->kind == TypeKind::Num &&
      (oe->scale != 0 || oe->saturate || (oe->round != Rounding::Default && oe->round != Rounding::NearestEven)))
    return fail("O's store policy (" + printType(oe) + ") is applied by the portable form only");
  for (Value* t : {f.Q, f.K, f.V})
    if (t->type->elem->kind == TypeKind::Num && t->type->elem->scale != 0)
      return fail("a scaled operand (" + printType(t->type->elem) + ") is read by the portable form only");
  if (f.LSE && (paramIndex(f.LSE, body_) < 0 || f.LSE->type->shape[0] != o->shape[0] ||
                f.LSE->type->shape[1] != o->shape[1] || f.LSE->type->shape[2] != o->shape[2]))
    return fail("LSE is not an f32 [B, H, S] tensor parameter");
  std::vector<Operation*> allowed{outer, loop, oStore_};
  if (lseStore_) allowed.push_back(lseStore_);
  return effectsOnlyFrom(allowed);
}

// A kernel worth a missed remark: a tile.dot and an exp inside a loop (attention-like).
bool looksLikeAttention(Operation* f) {
  bool dot = false, exp = false;
  f->walk([&](Operation* op) {
    if (op->id == OpId::TileDot && op->parentOp() && op->parentOp()->id == OpId::TileRange &&
        op->parentOp()->parentOp() && op->parentOp()->parentOp()->id == OpId::TileRange)
      dot = true;
    exp |= op->id == OpId::MathExp || op->id == OpId::MathExp2;
  });
  return dot && exp;
}

}  // namespace

bool runAttentionForm(Module& m, DiagnosticEngine&) {
  for (Operation* f : m.funcs()) {
    if (!f->hasAttr(AttrId::Kernel) || f->regions.empty()) continue;
    f->removeAttr(AttrId::AttentionForm);
    f->removeAttr(AttrId::AttentionFormMissed);
    Form form;
    std::string why;
    Block& body = f->body();
    if (Matcher(f, why).match(form)) {
      f->setAttr(AttrId::AttentionForm,
                 Attribute::ints({paramIndex(form.Q, body), paramIndex(form.K, body), paramIndex(form.V, body),
                                  paramIndex(form.O, body), paramIndex(form.scale, body),
                                  form.LSE ? paramIndex(form.LSE, body) : -1, form.causal ? 1 : 0}));
      continue;
    }
    if (looksLikeAttention(f)) f->setAttr(AttrId::AttentionFormMissed, Attribute::string(why));
  }
  return true;
}

}  // namespace tessera::ir
