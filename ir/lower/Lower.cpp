#include "ir/lower/Lower.h"

#include "sema/Sema.h"

namespace tessera {

std::unique_ptr<ir::Module> lowerToTileIR(const Module& ast, const SemaContext& sema, DiagnosticEngine& diags) {
  return std::make_unique<ir::Module>();
}

}  // namespace tessera
