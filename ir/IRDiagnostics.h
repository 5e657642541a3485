// The diagnostics of Tile IR: its parser, verifier and passes (IRDiagnostics.def).
#pragma once

#include "basic/Diagnostics.h"

namespace tessera {

namespace diag {
enum IR : uint16_t {
#define DIAG TESSERA_DIAG_ENUMERATOR
#include "ir/IRDiagnostics.def"
#undef DIAG
  NumIRDiagnostics
};
}  // namespace diag
TESSERA_DIAGNOSTIC_TABLE_DECL(IR)

}  // namespace tessera
