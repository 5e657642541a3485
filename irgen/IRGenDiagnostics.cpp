// The table of the diagnostics of lowering the typed AST to Tile IR (IRGenDiagnostics.def).
#include "irgen/IRGenDiagnostics.h"

namespace tessera {

const DiagInfo kIRGenDiagnostics[] = {
#define DIAG TESSERA_DIAG_ROW
#include "irgen/IRGenDiagnostics.def"
#undef DIAG
};

}  // namespace tessera
