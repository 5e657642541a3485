// uniformity: runs the uniformity analysis (ir/Uniformity.h) on every function, marks each op
// with a divergent result with the unit attribute `divergent` (and removes stale marks), and
// reports every group collective or barrier under divergent control flow.
#include "ir/Uniformity.h"

#include "ir/IRDiagnostics.h"
#include "ir/Pass.h"
#include "ir/Verifier.h"

namespace tessera::ir {

bool runUniformity(Module& m, DiagnosticEngine& diags) {
  bool ok = true;
  for (Operation* f : m.funcs()) {
    UniformityResult u = analyzeUniformity(m, f);
    f->walk([&](Operation* op) {
      bool d = false;
      for (auto& r : op->results) d = d || u.isDivergent(r.get());
      if (d)
        op->setAttr(AttrId::Divergent, Attribute::unit());
      else
        op->removeAttr(AttrId::Divergent);
    });
    for (auto& v : u.violations) {
      ok = false;
      auto d = diags.report(diag::err_ir_barrier_divergent, locationOf(v.op));
      d << v.op->name();
      SourceLoc at = v.cause->defOp ? locationOf(v.cause->defOp) : locationOf(v.cause->ownerBlock->parentOp());
      d.note(diag::note_ir_divergent_here, SourceRange(at, SourceLoc{at.offset + 1}));
    }
  }
  return ok;
}

}  // namespace tessera::ir
