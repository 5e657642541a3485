// The diagnostics of the scanner (LexDiagnostics.def) and the parser (ParseDiagnostics.def).
#pragma once

#include "basic/Diagnostics.h"

namespace tessera {

namespace diag {
enum Lex : uint16_t {
#define DIAG TESSERA_DIAG_ENUMERATOR
#include "frontend/LexDiagnostics.def"
#undef DIAG
  NumLexDiagnostics
};
}  // namespace diag
TESSERA_DIAGNOSTIC_TABLE_DECL(Lex)

namespace diag {
enum Parse : uint16_t {
#define DIAG TESSERA_DIAG_ENUMERATOR
#include "frontend/ParseDiagnostics.def"
#undef DIAG
  NumParseDiagnostics
};
}  // namespace diag
TESSERA_DIAGNOSTIC_TABLE_DECL(Parse)

}  // namespace tessera
