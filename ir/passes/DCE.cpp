// dce: removes ops whose results are unused and whose removal cannot change behaviour (pure
// ops, allocations, and scf.if / scf.for / tile.range holding only such ops), innermost first,
// to a fixed point. Ops with effects (stores, barriers, copies, calls) always stay.
#include "ir/Pass.h"
#include "ir/passes/PassUtils.h"

namespace tessera::ir {

bool runDCE(Module& m, DiagnosticEngine&) {
  for (Operation* f : m.funcs())
    if (!f->regions.empty())
      for (int i = 0; i < 64 && eraseDeadOps(f->body()); ++i) {
      }
  return true;
}

}  // namespace tessera::ir
