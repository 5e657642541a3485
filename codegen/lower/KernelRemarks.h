// The remarks code generation made while lowering kernels (KernelInterface::remarks and the tile
// values kept in the workspace), emitted through the diagnostics engine, whose filter
// (-Rpass=, -Rpass-missed=, -Rpass-analysis=) keeps those asked for. Used by tesserac and the
// language server.
#pragma once

#include <vector>

#include "basic/Diagnostics.h"
#include "codegen/lower/KernelInterface.h"
#include "ir/IR.h"

namespace tessera::codegen {

// `where`: "on the GPU" or "on the CPU executor", the target lowered first.
void emitKernelRemarks(ir::Module& m, const std::vector<KernelInterface>& kernels, const char* where,
                       DiagnosticEngine& diags);

}  // namespace tessera::codegen
