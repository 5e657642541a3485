// mma-form: recognises kernels that are exactly one canonical tile.mma loop (the loop that
// `for m, n, k in tile.mma(A, B, C, BM=, BN=, BK=)` lowers to) and records it on the function as
// `mma_form = [a, b, c, BM, BN, BK, tb]` (parameter indices of A, B, C, the loop's block sizes,
// and tb = 1 when B is given K-major, `Bt.T`: tile.mma {transpose_b} of Bt's blocks).
// Code generation may then emit another form of the same computation: on sm_90a a persistent,
// warp-specialised wgmma + TMA kernel (codegen/hopper/HopperGemm.cpp, docs/codegen.md). The pass runs
// before `pipeline`, on the loop as lowering wrote it, and checks everything the other form
// relies on:
//   - the body is: slices A[m0 : m0+BM, k : k+BK] and B[k : k+BK, n0 : n0+BN] (or, with
//     {transpose_b}, Bt[n0 : n0+BN, k : k+BK]), their async copies into two shared buffers, a
//     wait, a barrier, tile.mma of the buffers into the carried accumulator, a barrier, the yield;
//   - A and B are both bf16, both f16, or both fp8 (e4m3 or e5m2) with B K-major (wgmma reads
//     8-bit operands K-major only);
//   - the loop runs k from 0 to A's extent 1 in steps of BK from a zero accumulator;
//   - after it, the accumulator (converted or not) is stored to C[m0 : m0+BM, n0 : n0+BN];
//   - (m0, n0) is the group's tile in C's row-major grid of BM x BN tiles: m0 = g / nt * BM,
//     n0 = g % nt * BN with nt = ceil(C.shape[1] / BN) and g = tile.group_id;
//   - nothing else in the function has an effect (every other op is pure or the two buffers).
// It changes no IR but the attribute.
#include "ir/Pass.h"
#include "ir/passes/PassUtils.h"

namespace tessera::ir {

namespace {

bool isInt(const Value* v, int64_t value) {
  const Attribute* a = constantOf(v);
  return a && a->kind == AttrKind::Int && a->i == value;
}

bool isOp(const Value* v, OpId id) { return v && v->defOp && v->defOp->id == id; }

// `v` is mem.dim `tensor` {axis}.
bool isDim(const Value* v, const Value* tensor, int64_t axis) {
  return isOp(v, OpId::MemDim) && v->defOp->operand(0) == tensor && v->defOp->intAttr(AttrId::Axis, -1) == axis;
}

// A function argument (block argument of the function body) and its index.
int paramIndex(const Value* v, Block& body) {
  if (!v || !v->isBlockArg() || v->ownerBlock != &body) return -1;
  return static_cast<int>(v->index);
}

bool sliceSizes(const Operation* s, int64_t r, int64_t c) {
  const Attribute* a = s->attr(AttrId::Sizes);
  return a && a->kind == AttrKind::Array && a->array.size() == 2 && a->array[0].i == r && a->array[1].i == c;
}

bool is16BitFloat(Type t) {
  ScalarKind k = baseScalar(t);
  return k == ScalarKind::BF16 || k == ScalarKind::F16;
}

struct Form {
  int a = -1, b = -1, c = -1;
  int64_t bm = 0, bn = 0, bk = 0;
  bool tb = false;
};

// The loop body, op by op.
bool matchBody(Operation* loop, Value* A, Value* B, Value*& m0, Value*& n0, Value*& sA, Value*& sB, Form& f) {
  Block& body = loop->body();
  if (body.numArgs() != 2) return false;
  std::vector<Operation*> ops;
  for (auto& op : body.ops) ops.push_back(op.get());
  if (ops.size() != 9 || ops[6]->numOperands() != 3) return false;
  Operation *slA = ops[0], *slB = ops[1], *cpA = ops[2], *cpB = ops[3], *wait = ops[4], *bar1 = ops[5], *mma = ops[6],
            *bar2 = ops[7], *yield = ops[8];
  Value* k = body.arg(0);
  if (slA->id != OpId::MemSlice || slA->numOperands() != 3 || slA->operand(0) != A || slA->operand(2) != k ||
      !sliceSizes(slA, f.bm, f.bk))
    return false;
  f.tb = ops[6]->hasAttr(AttrId::TransposeB);
  if (slB->id != OpId::MemSlice || slB->numOperands() != 3 || slB->operand(0) != B || slB->operand(f.tb ? 2 : 1) != k ||
      !(f.tb ? sliceSizes(slB, f.bn, f.bk) : sliceSizes(slB, f.bk, f.bn)))
    return false;
  m0 = slA->operand(1);
  n0 = slB->operand(f.tb ? 1 : 2);
  if (cpA->id != OpId::AsyncCopy || cpA->operand(1) != slA->result() || cpB->id != OpId::AsyncCopy ||
      cpB->operand(1) != slB->result())
    return false;
  sA = cpA->operand(0);
  sB = cpB->operand(0);
  if (wait->id != OpId::AsyncWait || bar1->id != OpId::TileBarrier || bar2->id != OpId::TileBarrier) return false;
  if (mma->id != OpId::TileMma || mma->operand(0) != sA || mma->operand(1) != sB || mma->operand(2) != body.arg(1))
    return false;
  return yield->id == OpId::ScfYield && yield->numOperands() == 1 && yield->operand(0) == mma->result();
}

// m0 = g / nt * BM and n0 = g % nt * BN, nt = ceil(C.shape[1] / BN), g = tile.group_id.
bool matchTileIndex(Value* m0, Value* n0, Value* C, const Form& f) {
  if (!isOp(m0, OpId::ArithMulI) || !isOp(n0, OpId::ArithMulI)) return false;
  if (!isInt(m0->defOp->operand(1), f.bm) || !isInt(n0->defOp->operand(1), f.bn)) return false;
  Value* q = m0->defOp->operand(0);
  Value* r = n0->defOp->operand(0);
  if (!isOp(q, OpId::ArithDivSI) || !isOp(r, OpId::ArithRemSI)) return false;
  Value* g = q->defOp->operand(0);
  Value* nt = q->defOp->operand(1);
  if (!isOp(g, OpId::TileGroupId) || r->defOp->operand(0) != g || r->defOp->operand(1) != nt) return false;
  if (!isOp(nt, OpId::ArithDivSI) || !isInt(nt->defOp->operand(1), f.bn)) return false;
  Value* sum = nt->defOp->operand(0);
  if (!isOp(sum, OpId::ArithAddI) || !isInt(sum->defOp->operand(1), f.bn - 1)) return false;
  Value* n = sum->defOp->operand(0);
  if (isDim(n, C, 1)) return true;
  const Attribute* cn = constantOf(n);
  return cn && C->type->shape[1].isStatic() && cn->i == C->type->shape[1].size;
}

// `why` says what is not in the form, where a user can change it.
bool matchFunction(Operation* func, Form& f, std::string& why) {
  why = "the kernel is not one canonical tile.mma loop stored to C (docs/codegen.md)";
  Block& body = func->body();
  Operation* loop = nullptr;
  Operation* store = nullptr;
  for (auto& op : body.ops) {
    if (op->id == OpId::TileRange) {
      if (loop) return false;
      loop = op.get();
    } else if (op->id == OpId::TileStore) {
      if (store) return false;
      store = op.get();
    } else if (op->id == OpId::SmemAlloc || op->id == OpId::FuncReturn) {
    } else if (!op->has(T_Pure) || !op->regions.empty()) {
      why = "'" + std::string(op->name()) + "' has an effect besides the tile.mma loop and its store";
      return false;  // anything with an effect besides the loop and the store
    }
  }
  if (loop && store && !loop->hasAttr(AttrId::Prefetch)) why = "its tile.mma loop has no prefetch=";
  if (!loop || !store || loop->regions.empty() || !loop->hasAttr(AttrId::Prefetch) || loop->numOperands() != 4 ||
      loop->numResults() != 1 || store->numOperands() != 2)
    return false;
  // The store: C[m0:m0+BM, n0:n0+BN] = convert?(loop result).
  Value* stored = store->operand(0);
  if (isOp(stored, OpId::ArithConvert)) stored = stored->defOp->operand(0);
  if (stored != loop->result(0)) return false;
  Value* cSlice = store->operand(1);
  if (!isOp(cSlice, OpId::MemSlice) || cSlice->defOp->numOperands() != 3) return false;
  Value* C = cSlice->defOp->operand(0);
  // The loop: k = 0 .. A.shape[1] step BK from a zero accumulator.
  Type acc = loop->result(0)->type;
  if (acc->kind != TypeKind::Frag || acc->shape.size() != 2 || !acc->shape[0].isStatic() || !acc->shape[1].isStatic() ||
      baseScalar(acc->elem) != ScalarKind::F32)
    return false;
  f.bm = acc->shape[0].size;
  f.bn = acc->shape[1].size;
  const Attribute* step = constantOf(loop->operand(2));
  if (!step || step->kind != AttrKind::Int || step->i <= 0) return false;
  f.bk = step->i;
  Value* init = loop->operand(3);
  if (!isInt(loop->operand(0), 0) || !isOp(init, OpId::TileBroadcast)) return false;
  const Attribute* zero = constantOf(init->defOp->operand(0));
  if (!zero || zero->kind != AttrKind::Float || zero->f != 0.0) return false;
  Block& lb = loop->body();
  if (lb.ops.size() < 2) return false;
  Operation* first = lb.ops.begin()->get();
  Operation* second = std::next(lb.ops.begin())->get();
  if (first->id != OpId::MemSlice || second->id != OpId::MemSlice) return false;
  Value* A = first->operand(0);
  Value* B = second->operand(0);
  Value *m0 = nullptr, *n0 = nullptr, *sA = nullptr, *sB = nullptr;
  if (!matchBody(loop, A, B, m0, n0, sA, sB, f)) return false;
  if (!sliceSizes(cSlice->defOp, f.bm, f.bn) || cSlice->defOp->operand(1) != m0 || cSlice->defOp->operand(2) != n0)
    return false;
  if (!isDim(loop->operand(1), A, 1)) {
    const Attribute* kc = constantOf(loop->operand(1));
    if (!kc || !A->type->shape[1].isStatic() || kc->i != A->type->shape[1].size) return false;
  }
  if (!isOp(sA, OpId::SmemAlloc) || !isOp(sB, OpId::SmemAlloc)) return false;
  f.a = paramIndex(A, body);
  f.b = paramIndex(B, body);
  f.c = paramIndex(C, body);
  if (f.a < 0 || f.b < 0 || f.c < 0) return false;
  for (Value* t : {A, B, C})
    if (t->type->kind != TypeKind::Tensor || t->type->shape.size() != 2 || t->type->space != MemSpace::Global)
      return false;
  ScalarKind in = baseScalar(A->type->elem);
  bool fp8 = in == ScalarKind::F8E4M3 || in == ScalarKind::F8E5M2;
  if ((!is16BitFloat(A->type->elem) && !fp8) || in != baseScalar(B->type->elem)) {
    why = "A and B are not both bf16, both f16 or both fp8 of one kind";
    return false;
  }
  if (fp8 && !f.tb) {
    why = "fp8 tensor cores read B K-major: pass B as Bt[N, K] and write 'Bt.T' in the tile.mma loop";
    return false;
  }
  ScalarKind out = baseScalar(C->type->elem);
  if (out != ScalarKind::F32 && !is16BitFloat(C->type->elem)) {
    why = "C is not f32, bf16 or f16";
    return false;
  }
  // The Hopper epilogue rounds to nearest even and applies C's @scale; other store policies
  // (@round(toward_zero), @stochastic_round, @saturate) only the portable form applies.
  Type ce = C->type->elem;
  if (ce->kind == TypeKind::Num &&
      ((ce->round != Rounding::Default && ce->round != Rounding::NearestEven) || ce->saturate)) {
    why = "C's rounding policy (" + printType(ce) + ") is applied by the portable form only";
    return false;
  }
  return matchTileIndex(m0, n0, C, f);
}

}  // namespace

bool runMmaForm(Module& m, DiagnosticEngine&) {
  for (Operation* f : m.funcs()) {
    if (!f->hasAttr(AttrId::Kernel) || f->regions.empty()) continue;
    f->removeAttr(AttrId::MmaForm);
    f->removeAttr(AttrId::MmaFormMissed);
    Form form;
    std::string why;
    if (matchFunction(f, form, why)) {
      f->setAttr(AttrId::MmaForm,
                 Attribute::ints({form.a, form.b, form.c, form.bm, form.bn, form.bk, form.tb ? 1 : 0}));
      continue;
    }
    // Why a kernel with a tile.mma has no form, said on the IR this pass saw (later passes, the
    // pipeline's above all, change the loop); code generation's -Rpass-missed remark reads it.
    bool hasMma = false;
    f->walk([&](Operation* op) { hasMma |= op->id == OpId::TileMma; });
    if (hasMma) f->setAttr(AttrId::MmaFormMissed, Attribute::string(why));
  }
  return true;
}

std::string mmaFormMismatch(Operation& f) {
  Form form;
  std::string why;
  if (f.hasAttr(AttrId::MmaFormMissed)) return f.strAttr(AttrId::MmaFormMissed);
  if (f.regions.empty()) return "the kernel has no body";
  return matchFunction(&f, form, why) ? std::string() : why;
}

}  // namespace tessera::ir
