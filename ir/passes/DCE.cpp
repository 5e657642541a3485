// dce: removes ops whose results are unused and whose removal cannot change behaviour (pure
// ops, allocations, and scf.if / scf.for / tile.range holding only such ops), innermost first,
// to a fixed point. Ops with effects (stores, barriers, copies, calls) always stay.
#include "ir/Pass.h"
#include "ir/passes/PassUtils.h"

namespace tessera::ir {

namespace {

bool sweep(Block& b) {
  bool changed = false;
  std::vector<Operation*> ops;
  for (auto& o : b.ops) ops.push_back(o.get());
  for (auto it = ops.rbegin(); it != ops.rend(); ++it) {
    Operation* op = *it;
    for (auto& r : op->regions) changed |= sweep(r->block());
    if (!op->has(T_Terminator) && resultsUnused(op) && isRemovableWhenDead(op)) {
      b.erase(op);
      changed = true;
    }
  }
  return changed;
}

}  // namespace

bool runDCE(Module& m, DiagnosticEngine&) {
  for (Operation* f : m.funcs())
    if (!f->regions.empty())
      for (int i = 0; i < 64 && sweep(f->body()); ++i) {
      }
  return true;
}

}  // namespace tessera::ir
