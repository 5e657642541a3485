// Code generation's remarks for the language server (Remarks.cpp).
#pragma once

#include "lsp/Analysis.h"

namespace tessera::lsp {

// Adds the remarks of lowering `a` for the GPU (sm_90a) to its diagnostics; nothing if it has
// errors.
void addCodegenRemarks(Analysis& a);

}  // namespace tessera::lsp
