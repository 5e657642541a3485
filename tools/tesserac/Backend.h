// The back half of tesserac: the Tile IR pipeline, then code generation, writing what --emit,
// -o and -H ask for.
#pragma once

#include "basic/Diagnostics.h"
#include "tools/tesserac/Options.h"

namespace tessera::ir {
class Module;
}

namespace tessera {

// Returns the process exit status.
int runBackend(ir::Module& m, const DriverOptions& opts, DiagnosticEngine& diags);

}  // namespace tessera
