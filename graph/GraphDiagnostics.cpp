// The table of the graph level's diagnostics (GraphDiagnostics.def).
#include "graph/GraphDiagnostics.h"

namespace tessera {

const DiagInfo kGraphDiagnostics[] = {
#define DIAG TESSERA_DIAG_ROW
#include "graph/GraphDiagnostics.def"
#undef DIAG
};

}  // namespace tessera
