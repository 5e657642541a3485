#include "graph/Passes.h"

#include <algorithm>
#include <sstream>

#include "graph/Verifier.h"

namespace tessera::graph {

namespace {

struct PassInfo {
  const char* name;
  bool (*run)(Graph&, DiagnosticEngine&);
};

const PassInfo kPasses[] = {
#define GRAPH_PASS(FN, NAME, DOC) {NAME, run##FN},
#include "graph/GraphPasses.def"
};

}  // namespace

void rewriteUntilFixed(Graph& g, const std::function<bool(Graph&, Node*)>& rewrite) {
  for (bool changed = true; changed;) {
    changed = false;
    for (auto& n : g.nodes)
      if (rewrite(g, n.get())) {
        changed = true;
        break;  // the node list changed under the iterator
      }
  }
}

std::vector<std::string> defaultPipeline() {
  std::vector<std::string> out;
  for (const PassInfo& p : kPasses) out.push_back(p.name);
  return out;
}

bool runPipeline(GraphModule& m, const std::string& pipeline, const std::vector<std::string>& disabled,
                 DiagnosticEngine& diags, std::string& error) {
  std::vector<std::string> names;
  if (pipeline == "default") {
    names = defaultPipeline();
  } else {
    std::stringstream ss(pipeline);
    std::string n;
    while (std::getline(ss, n, ','))
      if (!n.empty()) names.push_back(n);
  }
  for (const std::string& d : disabled) {
    bool known = false;
    for (const PassInfo& p : kPasses) known |= d == p.name;
    if (!known) {
      error = "unknown graph pass '" + d + "'";
      return false;
    }
  }
  for (const std::string& n : names) {
    const PassInfo* pass = nullptr;
    for (const PassInfo& p : kPasses)
      if (n == p.name) pass = &p;
    if (!pass) {
      error = "unknown graph pass '" + n + "' (the passes: ";
      for (size_t i = 0; i < std::size(kPasses); ++i) error += (i ? ", " : "") + std::string(kPasses[i].name);
      error += ")";
      return false;
    }
    if (std::find(disabled.begin(), disabled.end(), n) != disabled.end()) continue;
    for (auto& g : m.graphs)
      if (!pass->run(*g, diags)) return false;
    if (!verifyModule(m, diags)) {
      error = "the graph is invalid after pass '" + n + "'";
      return false;
    }
  }
  return true;
}

}  // namespace tessera::graph
