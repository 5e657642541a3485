// The back half of tesserac: the Tile IR pipeline, then code generation, writing what --emit,
// -o and -H ask for.
#pragma once

#include <vector>

#include "basic/Diagnostics.h"
#include "codegen/host/HostEntry.h"
#include "tools/tesserac/Options.h"

namespace tessera::ir {
class Module;
}

namespace tessera {

// Returns the process exit status.
// `entries`: the entry points of the module's host functions (hostgen/HostFunctions.h).
int runBackend(ir::Module& m, const DriverOptions& opts, DiagnosticEngine& diags,
               std::vector<codegen::HostEntry> entries = {});

}  // namespace tessera
