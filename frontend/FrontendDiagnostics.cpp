// The table of the diagnostics of the scanner (LexDiagnostics.def) and the parser (ParseDiagnostics.def).
#include "frontend/FrontendDiagnostics.h"

namespace tessera {

const DiagInfo kLexDiagnostics[] = {
#define DIAG TESSERA_DIAG_ROW
#include "frontend/LexDiagnostics.def"
#undef DIAG
};

const DiagInfo kParseDiagnostics[] = {
#define DIAG TESSERA_DIAG_ROW
#include "frontend/ParseDiagnostics.def"
#undef DIAG
};

}  // namespace tessera
