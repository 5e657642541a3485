// The diagnostics of semantic analysis (SemaDiagnostics.def).
#pragma once

#include "basic/Diagnostics.h"

namespace tessera {

namespace diag {
enum Sema : uint16_t {
#define DIAG TESSERA_DIAG_ENUMERATOR
#include "sema/SemaDiagnostics.def"
#undef DIAG
  NumSemaDiagnostics
};
}  // namespace diag
TESSERA_DIAGNOSTIC_TABLE_DECL(Sema)

}  // namespace tessera
