// smem-plan: lays out the shared memory of each function.
//   1. Swizzles: a buffer whose type asks for `swizzle = xor` gets a concrete XOR pattern chosen
//      from its row size (last extent x element bytes): 128-byte multiples -> xor128, 64 ->
//      xor64, 32 -> xor32, else none. The type changes everywhere it flows (views, loops).
//   2. Sizes and alignment: bytes = elements x element size (sub-byte types packed); alignment
//      is the `align` attribute, else 16 bytes (cp.async), raised to the swizzle's period
//      (xor32: 256, xor64: 512, xor128: 1024) so the XOR phase starts at a row group.
//   3. Liveness: a buffer is live from its allocation's first use to its last use, following
//      its views (smem.stage, mem.slice) and loop-carried copies; a use inside a loop keeps it
//      live for the whole outermost such loop.
//   4. Offsets: first fit, in order of first use, over buffers whose live ranges overlap, so
//      buffers with disjoint lifetimes share bytes. Each smem.alloc gets `offset`; the function
//      gets `shared_used`; going over its `shared` budget (or the 227 KiB of an H100/H200
//      group) is an error.
//   5. Group reductions (tile.group_reduce) get their scratch after the buffers and the
//      declared budget: the function's `group_scratch` offset.
#include <algorithm>
#include <unordered_map>
#include <unordered_set>

#include "ir/IRDiagnostics.h"
#include "ir/Pass.h"
#include "ir/Verifier.h"
#include "ir/passes/PassUtils.h"

namespace tessera::ir {

namespace {

constexpr int64_t kDeviceLimit = 232448;  // 227 KiB: max dynamic shared memory per group, sm_90

Swizzle chooseSwizzle(Type t) {
  if (t->shape.empty() || !t->shape.back().isStatic()) return Swizzle::None;
  int64_t row = t->shape.back().size * elementBytes(t);
  if (row > 0 && row % 128 == 0) return Swizzle::Xor128;
  if (row > 0 && row % 64 == 0) return Swizzle::Xor64;
  if (row > 0 && row % 32 == 0) return Swizzle::Xor32;
  return Swizzle::None;
}

Type resolve(IRContext& ctx, Type t) {
  if (t->kind != TypeKind::Smem || t->swizzle != Swizzle::Auto) return t;
  return ctx.withSwizzle(t, chooseSwizzle(t));
}

int64_t bufferBytes(Type t) {
  int64_t n = staticElementCount(t);
  if (n < 0) return -1;
  Type e = elementType(t);
  unsigned bits = isScalar(e) ? scalarBits(baseScalar(e)) : 8;
  if (bits == 1) bits = 8;  // i1 stored as bytes
  if (n > INT64_MAX / 8 / static_cast<int64_t>(bits)) return -1;
  return (n * bits + 7) / 8;
}

int64_t alignmentOf(Operation* alloc, Type t) {
  int64_t a = std::max<int64_t>(16, alloc->intAttr(AttrId::Align, 16));
  switch (t->swizzle) {
    case Swizzle::Xor32: a = std::max<int64_t>(a, 256); break;
    case Swizzle::Xor64: a = std::max<int64_t>(a, 512); break;
    case Swizzle::Xor128: a = std::max<int64_t>(a, 1024); break;
    default: break;
  }
  return a;
}

// Values that alias `root` (views of it and loop-carried copies of it), including `root`.
std::vector<Value*> aliases(Value* root) {
  std::vector<Value*> out = {root};
  std::unordered_set<Value*> seen = {root};
  auto add = [&](Value* v) {
    if (v && seen.insert(v).second) out.push_back(v);
  };
  for (size_t i = 0; i < out.size(); ++i) {
    Value* v = out[i];
    for (const Use& u : v->uses) {
      Operation* user = u.user;
      if (user->has(T_ViewLike) && u.index == 0 && user->numResults() == 1) add(user->result(0));
      if ((user->id == OpId::ScfFor || user->id == OpId::TileRange) && u.index >= 3 && !user->regions.empty()) {
        unsigned k = u.index - 3;
        if (k + 1 < user->body().numArgs()) add(user->body().arg(k + 1));
        if (k < user->numResults()) add(user->result(k));
      }
      if (user->id == OpId::ScfYield || user->id == OpId::ScfCondition) {
        Operation* parent = user->parentOp();
        unsigned k = user->id == OpId::ScfCondition ? u.index - 1 : u.index;
        if (user->id == OpId::ScfCondition && u.index == 0) continue;
        if (!parent) continue;
        if ((parent->id == OpId::ScfFor || parent->id == OpId::TileRange) && k + 1 < parent->body().numArgs())
          add(parent->body().arg(k + 1));
        if (k < parent->numResults()) add(parent->result(k));
        if (parent->id == OpId::ScfWhile && parent->regions.size() == 2) {
          Block& target = user->id == OpId::ScfCondition ? parent->body(1) : parent->body(0);
          if (k < target.numArgs()) add(target.arg(k));
        }
      }
      if (user->id == OpId::ScfWhile && u.index < user->body(0).numArgs()) add(user->body(0).arg(u.index));
    }
  }
  return out;
}

struct Buffer {
  Operation* alloc;
  int64_t bytes, align, first, last, offset = 0;
};

class Planner {
 public:
  Planner(Module& m, DiagnosticEngine& d) : m_(m), diags_(d) {}

  bool run() {
    for (Operation* f : m_.funcs())
      if (!f->regions.empty()) plan(f);
    return ok_;
  }

 private:
  Module& m_;
  DiagnosticEngine& diags_;
  bool ok_ = true;
  std::unordered_map<const Operation*, std::pair<int64_t, int64_t>> span_;  // pre-order [first, last]

  int64_t number(Operation* op, int64_t n) {
    int64_t first = n++;
    for (auto& r : op->regions)
      for (auto& inner : r->block().ops) n = number(inner.get(), n);
    span_[op] = {first, n - 1};
    return n;
  }

  void plan(Operation* f) {
    // 1. swizzles
    IRContext& ctx = m_.ctx();
    f->walk([&](Operation* op) {
      // A view keeps the layout of what it views (a slice of an xor128 buffer is xor128).
      if (op->has(T_ViewLike) && op->numOperands() >= 1 && op->numResults() == 1 &&
          op->operand(0)->type->kind == TypeKind::Smem && op->result(0)->type->kind == TypeKind::Smem) {
        op->result(0)->type = ctx.withShape(op->operand(0)->type, op->result(0)->type->shape);
        return;
      }
      for (auto& r : op->results) r->type = resolve(ctx, r->type);
      for (auto& reg : op->regions)
        for (auto& a : reg->block().args) a->type = resolve(ctx, a->type);
    });
    // 2-3. sizes, alignment, live ranges
    span_.clear();
    number(f, 0);
    std::vector<Buffer> bufs;
    for (auto& op : f->body().ops) {
      if (op->id != OpId::SmemAlloc || op->numResults() != 1) continue;
      Buffer b{op.get(), bufferBytes(op->result(0)->type), alignmentOf(op.get(), op->result(0)->type), 0, 0};
      if (b.bytes < 0) continue;  // the verifier rejects non-static buffers
      b.first = b.last = span_[op.get()].first;
      bool used = false;
      for (Value* v : aliases(op->result(0)))
        for (const Use& u : v->uses) {
          // The outermost loop around the use (below the function) extends the range.
          Operation* at = u.user;
          for (Operation* p = u.user->parentOp(); p && p != f; p = p->parentOp())
            if (p->has(T_Loop) || p->id == OpId::ScfWhile) at = p;
          auto s = span_[at];
          if (!used) b.first = s.first;
          used = true;
          b.first = std::min(b.first, s.first);
          b.last = std::max(b.last, s.second);
        }
      bufs.push_back(b);
    }
    // 4. first fit in order of first use
    std::vector<Buffer*> order;
    for (Buffer& b : bufs) order.push_back(&b);
    std::stable_sort(order.begin(), order.end(), [](Buffer* a, Buffer* b) { return a->first < b->first; });
    std::vector<Buffer*> placed;
    int64_t total = 0;
    for (Buffer* b : order) {
      std::vector<Buffer*> live;
      for (Buffer* p : placed)
        if (!(p->last < b->first || b->last < p->first)) live.push_back(p);
      std::sort(live.begin(), live.end(), [](Buffer* x, Buffer* y) { return x->offset < y->offset; });
      int64_t off = 0;
      for (bool moved = true; moved;) {
        moved = false;
        off = (off + b->align - 1) / b->align * b->align;
        for (Buffer* p : live)
          if (off < p->offset + p->bytes && p->offset < off + b->bytes) {
            off = p->offset + p->bytes;
            moved = true;
          }
      }
      b->offset = off;
      placed.push_back(b);
      total = std::max(total, off + b->bytes);
    }
    for (Buffer& b : bufs) b.alloc->setAttr(AttrId::Offset, Attribute::integer(b.offset));
    if (!bufs.empty()) {
      f->setAttr(AttrId::SharedUsed, Attribute::integer(total));
      int64_t budget = f->intAttr(AttrId::Shared, kDeviceLimit);
      budget = std::min(budget, kDeviceLimit);
      if (total > budget) {
        ok_ = false;
        diags_.report(diag::err_ir_smem_budget, locationOf(f)) << f->funcName() << total << budget;
      }
    }
    placeGroupScratch(f, total);
  }

  // 5. Group reductions' scratch: after the buffers and the declared budget (it is the
  // compiler's, not counted against the program's `shared(...)`), within the device limit.
  void placeGroupScratch(Operation* f, int64_t total) {
    bool reduces = false;
    f->walk([&](Operation* op) { reduces |= op->id == OpId::TileGroupReduce; });
    const Attribute* group = f->attr(AttrId::Group);
    if (!reduces || !group) return;
    int64_t tiles = 1;
    for (const Attribute& d : group->array) tiles *= d.i;
    int64_t at = (std::max(total, f->intAttr(AttrId::Shared, 0)) + 15) / 16 * 16;
    int64_t end = at + groupReduceScratchBytes(tiles);
    f->setAttr(AttrId::GroupScratch, Attribute::integer(at));
    if (end > kDeviceLimit) {
      ok_ = false;
      diags_.report(diag::err_ir_smem_budget, locationOf(f)) << f->funcName() << end << kDeviceLimit;
    }
  }
};

}  // namespace

bool runSmemPlan(Module& m, DiagnosticEngine& diags) { return Planner(m, diags).run(); }

}  // namespace tessera::ir
