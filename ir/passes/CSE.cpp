#include "ir/Pass.h"
namespace tessera::ir {
bool runCSE(Module&, DiagnosticEngine&) { return true; }
}
