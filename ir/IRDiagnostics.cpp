// The table of the diagnostics of Tile IR: its parser, verifier and passes (IRDiagnostics.def).
#include "ir/IRDiagnostics.h"

namespace tessera {

const DiagInfo kIRDiagnostics[] = {
#define DIAG TESSERA_DIAG_ROW
#include "ir/IRDiagnostics.def"
#undef DIAG
};

}  // namespace tessera
