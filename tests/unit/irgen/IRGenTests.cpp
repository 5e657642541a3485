// irgen: the diagnostics table. What lowering produces is tested by tests/lit/irgen/.
#include <doctest/doctest.h>

#include "irgen/IRGenDiagnostics.h"
#include "tests/unit/DiagnosticTableCheck.h"

using namespace tessera;

TEST_CASE("every row of irgen's diagnostics table has a name, a message and its severity") {
  checkDiagnosticTable(kIRGenDiagnostics, diag::NumIRGenDiagnostics);
}
