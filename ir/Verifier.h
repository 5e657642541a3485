// The Tile IR verifier: structure (op table counts, terminators, block arguments), dominance,
// types and attributes (one hook per op, named in ir/Ops.def), memory-space rules and barrier
// placement (through the uniformity analysis). Runs after parsing, after every pass under
// --verify-each, and always in debug builds.
#pragma once

#include "basic/Diagnostics.h"
#include "ir/IR.h"

namespace tessera::ir {

// Reports every problem found to `diags`; returns true when the module is valid.
bool verifyModule(Module& m, DiagnosticEngine& diags);

// The location to report for `op`: its own, or the nearest enclosing op's.
SourceLoc locationOf(const Operation* op);

}  // namespace tessera::ir
