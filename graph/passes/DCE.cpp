// dce: removes nodes whose results are unused. Side effects (stores, launches) stay; so do
// random numbers' positions in the counter sequence, since each randn has its own seed.
#include "graph/Passes.h"

namespace tessera::graph {

bool runDCE(Graph& g, DiagnosticEngine&) {
  bool changed = true;
  while (changed) {
    changed = false;
    for (auto it = g.nodes.rbegin(); it != g.nodes.rend();) {
      Node* n = it->get();
      ++it;
      if (n->has(T_SideEffect)) continue;
      bool used = false;
      for (auto& r : n->results) used |= !r->users.empty() || g.isResult(r.get());
      if (used) continue;
      g.erase(n);
      changed = true;
      break;  // the reverse iterator is invalid now
    }
  }
  return true;
}

}  // namespace tessera::graph
