// The table of the diagnostics of semantic analysis (SemaDiagnostics.def).
#include "sema/SemaDiagnostics.h"

namespace tessera {

const DiagInfo kSemaDiagnostics[] = {
#define DIAG TESSERA_DIAG_ROW
#include "sema/SemaDiagnostics.def"
#undef DIAG
};

}  // namespace tessera
