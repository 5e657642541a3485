// irgen: the stage between sema and Tile IR. Lowers the typed AST (frontend/AST.h after
// sema/Sema.h's analyzeModule) to Tile IR (ir/IR.h). Every kernel that type-checks becomes a
// `tile.func` with the attributes codegen reads (`kernel`, `group = [..]`, `shared = N`); user
// functions that kernels call become `device` functions (the inline pass inlines them).
// Host-only functions are skipped. What cannot be lowered is reported with an err_lower_*
// diagnostic (irgen/IRGenDiagnostics.def); lowering never crashes on input that parsing and sema
// accepted. docs/tile-ir.md, "Lowering from the AST", describes how each construct lowers;
// irgen/FunctionContext.h says which file lowers what.
#pragma once

#include <memory>

#include "basic/Diagnostics.h"
#include "frontend/AST.h"
#include "ir/IR.h"

namespace tessera {

class SemaContext;

// Returns the module (possibly with fewer functions than the source when some were reported),
// or null when an error was reported. Autotuned kernels are lowered with the first candidate of
// each parameter.
std::unique_ptr<ir::Module> lowerToTileIR(const Module& ast, const SemaContext& sema, DiagnosticEngine& diags);

// Lowers kernel `kernel` of `ast` (analysed by `sema`) into `into` as the function `name`; the
// device functions it calls get names that `into` does not use yet. False after a diagnostic.
bool lowerKernelInto(const Module& ast, const SemaContext& sema, const std::string& kernel, const std::string& name,
                     ir::Module& into, DiagnosticEngine& diags);

// Autotuned kernels (@kernel.autotune): analyses and lowers the module once more per other
// candidate configuration of each tuned kernel, adding `<kernel>__at<i>` functions to `m`
// (irgen/Autotune.cpp; docs/tile-ir.md, "Autotune candidates"). False after an error.
bool lowerAutotuneCandidates(const Module& ast, const SemaContext& sema, ir::Module& m, DiagnosticEngine& diags);

}  // namespace tessera
