// The diagnostics of the graph level (GraphDiagnostics.def).
#pragma once

#include "basic/Diagnostics.h"

namespace tessera {

namespace diag {
enum Graph : uint16_t {
#define DIAG TESSERA_DIAG_ENUMERATOR
#include "graph/GraphDiagnostics.def"
#undef DIAG
  NumGraphDiagnostics
};
}  // namespace diag
TESSERA_DIAGNOSTIC_TABLE_DECL(Graph)

}  // namespace tessera
