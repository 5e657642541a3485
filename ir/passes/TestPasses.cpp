// Passes that exist only for tests of the pass manager (their names start with `test-`).
#include "ir/Pass.h"

namespace tessera::ir {

bool runTestDropTerminators(Module& m, DiagnosticEngine&) {
  for (Operation* f : m.funcs())
    if (!f->regions.empty())
      if (Operation* t = f->body().terminator(); t && t->id == OpId::FuncReturn) f->body().erase(t);
  return true;
}

}  // namespace tessera::ir
