// pipeline: software pipelining of `tile.range ... {prefetch = k}` into k stages of async copies.
//
// Input: a tile.range (loop-carried values are kept as they are) whose body starts its iteration by copying
// global slices into shared buffers (`async.copy %buf, %src` at the top level of the body, %buf
// an smem.alloc outside the loop, %src computed from the induction variable by pure ops),
// possibly followed by `async.wait` on those copies and a `tile.barrier`.
//
// Output, with S = k stages and each buffer B : !smem<T, [d...]> grown to B' : !smem<T, [S, d...]>:
//   prologue, for s in 0 .. S-2: if lb + s*step < ub { copy stage s into B'[s] }; async.commit
//   tile.range %iv = lb to ub step {stages = S}:
//     async.wait_pending {pending = S-2}  // the group of this iteration has landed
//     tile.barrier                        // visible to all; everyone is done with the old slot
//     it = (iv - lb) / step
//     if iv + (S-1)*step < ub { copy iteration it+S-1 into B'[(it+S-1) % S] }; async.commit
//     B := smem.stage B', it % S; the rest of the original body
//   async.wait_pending {pending = 0}
// Commit groups are issued unconditionally (an empty group when the guard is false), so the
// count in wait_pending is exact in every iteration. prefetch = 1 means no overlap: the
// attribute is dropped. Loops that do not have this shape are left as they are, with a warning.
#include <algorithm>
#include <unordered_map>
#include <unordered_set>

#include "basic/Remarks.h"
#include "ir/IRDiagnostics.h"
#include "ir/Pass.h"
#include "ir/Verifier.h"
#include "ir/passes/PassUtils.h"

namespace tessera::ir {

namespace {

// The buffers being multi-buffered, in the order of their copies (keeps output deterministic).
struct Grown {
  std::vector<std::pair<Value*, Value*>> list;  // old buffer -> buffer with a stage dimension
  bool has(Value* v) const {
    for (auto& p : list)
      if (p.first == v) return true;
    return false;
  }
  Value* get(Value* v) const {
    for (auto& p : list)
      if (p.first == v) return p.second;
    return nullptr;
  }
};

class Pipeliner {
 public:
  Pipeliner(Module& m, DiagnosticEngine& d) : m_(m), diags_(d), b_(m.ctx()) {}

  bool run() {
    std::vector<Operation*> loops;
    for (Operation* f : m_.funcs())
      f->walk([&](Operation* op) {
        if (op->id == OpId::TileRange) loops.push_back(op);
      });
    for (Operation* loop : loops) {
      Operation* f = loop;
      while (f->parentOp()) f = f->parentOp();
      remarks_ = !f->hasAttr(AttrId::AutotuneOf);  // candidates share their kernel's remarks
      if (loop->hasAttr(AttrId::Prefetch))
        pipeline(loop);
      else
        remarkUnasked(loop);
    }
    return true;
  }

 private:
  Module& m_;
  DiagnosticEngine& diags_;
  Builder b_;
  bool remarks_ = true;

  void remark(diag::Remark id, Operation* loop, std::vector<std::string> args) {
    if (!remarks_) return;
    DiagBuilder r = diags_.report(id, locationOf(loop));
    for (const std::string& a : args) r << a;
  }

  bool skip(Operation* loop, std::string_view why) {
    diags_.report(diag::warn_ir_not_pipelined, locationOf(loop)) << why;
    remark(diag::remark_not_pipelined, loop, {std::string(why)});
    return false;
  }

  // -Rpass-missed=pipeline: a loop whose body starts with copies into shared memory that waits
  // for them every iteration, since nobody asked for stages.
  void remarkUnasked(Operation* loop) {
    if (!remarks_ || loop->regions.size() != 1 || !diags_.remarkEnabled(diag::remark_not_pipelined)) return;
    for (auto& op : loop->body().ops)
      if (op->id == OpId::AsyncCopy) {
        diags_.report(diag::remark_not_pipelined, locationOf(loop))
            << "its tile.range has no prefetch=, so each iteration waits for its own copies (prefetch=2 or "
               "more overlaps them with the previous iteration's work)";
        return;
      }
  }

  bool definedOutside(const Value* v, const Operation* loop) {
    Block* blk = v->definingBlock();
    Operation* owner = blk ? blk->parentOp() : nullptr;
    return !(owner && owner->isInside(loop));
  }

  // Collects the pure ops of the loop body that `v` depends on (in body order), or fails.
  bool slice(Value* v, Operation* loop, std::unordered_set<Operation*>& ops) {
    if (definedOutside(v, loop) || v == loop->body().arg(0)) return true;
    Operation* d = v->defOp;
    if (!d || d->parent != &loop->body() || !d->has(T_Pure) || !d->regions.empty()) return false;
    if (!ops.insert(d).second) return true;
    for (Value* o : d->operands)
      if (!slice(o, loop, ops)) return false;
    return true;
  }

  // Clones the ops of `sliceOps` (in body order) and the copy, for induction value `iv`, into
  // stage `slot` of the multi-buffered `buf`.
  void emitCopies(Operation* loop, const std::vector<Operation*>& copies,
                  const std::unordered_set<Operation*>& sliceOps, Grown& grown, Value* iv, Value* slot) {
    IRMapping map;
    map[loop->body().arg(0)] = iv;
    for (auto& op : loop->body().ops)
      if (sliceOps.count(op.get())) b_.insert(op->clone(map));
    for (Operation* c : copies) {
      Value* big = grown.get(c->operand(0));
      Type stageType = m_.ctx().withShape(big->type, c->operand(0)->type->shape);
      Value* view = b_.create(OpId::SmemStage, {big, slot}, {stageType})->result();
      Value* src = map.count(c->operand(1)) ? map[c->operand(1)] : c->operand(1);
      b_.create(OpId::AsyncCopy, {view, src}, {m_.ctx().token()});
    }
  }

  bool pipeline(Operation* loop) {
    int64_t k = loop->intAttr(AttrId::Prefetch, 1);
    b_.setLoc(loop->loc);
    if (k <= 1) {
      loop->removeAttr(AttrId::Prefetch);
      remark(diag::remark_not_pipelined, loop, {"prefetch=1 asks for one stage: no overlap"});
      return true;
    }
    if (loop->numOperands() < 3 || loop->regions.size() != 1) return false;
    Block& body = loop->body();
    Operation* func = loop;
    while (func->parentOp()) func = func->parentOp();
    // Find the copies and check the shape.
    std::vector<Operation*> copies;
    bool nested = false;
    loop->walk([&](Operation* op) {
      if (op->id != OpId::AsyncCopy) return;
      if (op->parent == &body)
        copies.push_back(op);
      else
        nested = true;
    });
    if (nested) return skip(loop, "an async copy is under control flow inside the loop");
    if (copies.empty()) return skip(loop, "its body starts no async copy into shared memory");
    std::unordered_set<Operation*> sliceOps;
    Grown grown;
    std::unordered_set<Operation*> waits;
    for (Operation* c : copies) {
      Value* dst = c->operand(0);
      if (!dst->defOp || dst->defOp->id != OpId::SmemAlloc || dst->defOp->parent != &func->body())
        return skip(loop, "a copy's destination is not a shared allocation of the function");
      if (grown.has(dst)) return skip(loop, "two copies write the same shared buffer");
      grown.list.push_back({dst, nullptr});
      for (const Use& u : dst->uses)
        if (!u.user->isInside(loop)) return skip(loop, "a copied buffer is used outside the loop");
      if (!slice(c->operand(1), loop, sliceOps))
        return skip(loop, "a copy's source depends on more than the induction variable");
      for (const Use& u : c->result(0)->uses) {
        if (u.user->id != OpId::AsyncWait || u.user->parent != &body)
          return skip(loop, "a copy's token is used by something other than async.wait");
        waits.insert(u.user);
      }
    }
    for (Operation* w : waits)
      for (Value* t : w->operands)
        if (!t->defOp || std::find(copies.begin(), copies.end(), t->defOp) == copies.end())
          return skip(loop, "an async.wait also waits on other copies");

    Value *lb = loop->operand(0), *ub = loop->operand(1), *step = loop->operand(2);
    Type ivType = lb->type;
    // Multi-buffer: B -> B' with a leading stage dimension.
    for (auto& [buf, big] : grown.list) {
      Operation* alloc = buf->defOp;
      std::vector<Dim> shape = {Dim{k, {}}};
      for (const Dim& d : buf->type->shape) shape.push_back(d);
      b_.setInsertionPoint(alloc);
      Operation* na = b_.create(OpId::SmemAlloc, {}, {m_.ctx().withShape(buf->type, shape)}, alloc->attrs);
      na->result(0)->nameHint = buf->nameHint;
      big = na->result(0);
    }
    // Prologue.
    b_.setInsertionPoint(loop);
    for (int64_t s = 0; s + 1 < k; ++s) {
      Value* off = b_.binary(OpId::ArithMulI, b_.constInt(s, ivType), step);
      Value* ivS = b_.binary(OpId::ArithAddI, lb, off);
      Value* ok = b_.cmpi("slt", ivS, ub);
      Operation* guard = b_.create(OpId::ScfIf, {ok}, {});
      b_.setInsertionPointToEnd(guard->body(0));
      emitCopies(loop, copies, sliceOps, grown, ivS, b_.constIndex(s));
      b_.create(OpId::ScfYield, {}, {});
      b_.setInsertionPointToEnd(guard->body(1));
      b_.create(OpId::ScfYield, {}, {});
      b_.setInsertionPoint(loop);
      b_.create(OpId::AsyncCommit, {}, {});
    }
    // Steady state, at the top of the body.
    Value* iv = body.arg(0);
    b_.setInsertionPointToStart(body);
    b_.create(OpId::AsyncWaitPending, {}, {}, {{AttrId::Pending, Attribute::integer(k - 2)}});
    b_.create(OpId::TileBarrier, {}, {});
    Value* it = b_.binary(OpId::ArithDivSI, b_.binary(OpId::ArithSubI, iv, lb), step);
    Value* ivN = b_.binary(OpId::ArithAddI, iv, b_.binary(OpId::ArithMulI, b_.constInt(k - 1, ivType), step));
    Value* okN = b_.cmpi("slt", ivN, ub);
    Value* kConst = b_.constInt(k, ivType);
    Value* slotN = b_.binary(OpId::ArithRemSI, b_.binary(OpId::ArithAddI, it, b_.constInt(k - 1, ivType)), kConst);
    Value* slot = b_.binary(OpId::ArithRemSI, it, kConst);
    Operation* guard = b_.create(OpId::ScfIf, {okN}, {});
    Block::iterator after = body.find(guard);
    ++after;
    b_.setInsertionPointToEnd(guard->body(0));
    emitCopies(loop, copies, sliceOps, grown, ivN, slotN);
    b_.create(OpId::ScfYield, {}, {});
    b_.setInsertionPointToEnd(guard->body(1));
    b_.create(OpId::ScfYield, {}, {});
    b_.setInsertionPoint(after->get());
    Operation* commit = b_.create(OpId::AsyncCommit, {}, {});
    for (auto& [buf, big] : grown.list) {
      Value* cur = b_.create(OpId::SmemStage, {big, slot}, {buf->type})->result();
      cur->nameHint = buf->nameHint;
      // Every other use of the old buffer is in the loop (checked above).
      std::vector<Use> uses = buf->uses;
      for (const Use& u : uses)
        if (std::find(copies.begin(), copies.end(), u.user) == copies.end()) u.user->setOperand(u.index, cur);
    }
    // Drop the original copies and their waits, then a barrier that only guarded them.
    for (Operation* w : waits) body.erase(w);
    for (Operation* c : copies) body.erase(c);
    auto bit = body.find(commit);
    for (++bit; bit != body.ops.end();) {
      Operation* op = bit->get();
      ++bit;
      if (op->id == OpId::TileBarrier) {
        body.erase(op);
        break;
      }
      if (!op->has(T_Pure) && op->id != OpId::SmemStage) break;
    }
    for (auto& [buf, big] : grown.list) buf->defOp->parent->erase(buf->defOp);
    // Slice ops only the copies used.
    for (bool again = true; again;) {
      again = false;
      for (Operation* s : std::vector<Operation*>(sliceOps.begin(), sliceOps.end()))
        if (sliceOps.count(s) && resultsUnused(s)) {
          body.erase(s);
          sliceOps.erase(s);
          again = true;
        }
    }
    // Drain after the loop.
    b_.setInsertionPointAfter(loop);
    b_.create(OpId::AsyncWaitPending, {}, {}, {{AttrId::Pending, Attribute::integer(0)}});
    loop->removeAttr(AttrId::Prefetch);
    loop->setAttr(AttrId::Stages, Attribute::integer(k));
    remark(diag::remark_pipelined, loop, {std::to_string(k), std::to_string(grown.list.size())});
    return true;
  }
};

}  // namespace

bool runPipeline(Module& m, DiagnosticEngine& diags) { return Pipeliner(m, diags).run(); }

}  // namespace tessera::ir
