// The diagnostics of lowering the typed AST to Tile IR (IRGenDiagnostics.def).
#pragma once

#include "basic/Diagnostics.h"

namespace tessera {

namespace diag {
enum IRGen : uint16_t {
#define DIAG TESSERA_DIAG_ENUMERATOR
#include "irgen/IRGenDiagnostics.def"
#undef DIAG
  NumIRGenDiagnostics
};
}  // namespace diag
TESSERA_DIAGNOSTIC_TABLE_DECL(IRGen)

}  // namespace tessera
