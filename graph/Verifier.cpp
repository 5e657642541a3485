#include "graph/Verifier.h"

#include <set>

#include "graph/GraphDiagnostics.h"
#include "graph/ShapeRules.h"

namespace tessera::graph {

bool verifyGraph(const Graph& g, DiagnosticEngine& diags) {
  bool ok = true;
  auto fail = [&](SourceRange at, const std::string& message) {
    diags.report(diag::err_graph_verify, at.begin.valid() ? at : g.loc) << g.name << message;
    ok = false;
  };
  std::string attrError;
  if (!checkAttrs(g.attrs, funcAttrs(), {}, attrError)) fail(g.loc, "the function " + attrError);
  std::set<const Value*> defined;
  for (const Param& p : g.params) {
    defined.insert(p.value.get());
    if (p.access != Access::Read && !p.value->type.isTensor())
      fail(g.loc, "scalar parameter '" + p.value->name + "' cannot have the privilege '" + accessName(p.access) + "'");
  }
  for (const auto& np : g.nodes) {
    const Node& n = *np;
    const OpInfo& info = n.info();
    std::string what = std::string(info.name) + ": ";
    for (const Value* v : n.operands)
      if (!defined.count(v)) fail(n.loc, what + "an operand is used before it is defined");
    if (info.results >= 0 && static_cast<int>(n.results.size()) != info.results) {
      fail(n.loc,
           what + "has " + std::to_string(n.results.size()) + " results, expected " + std::to_string(info.results));
      continue;
    }
    std::string error;
    // The op's attributes, of their kinds (graph/GraphOps.def's ATTRS column), before the shape
    // rule reads them.
    if (!checkAttrs(n.attrs, opAttrs(n.op), anyOpAttrs(), error)) {
      fail(n.loc, what + error);
      continue;
    }
    std::vector<Type> types, expected;
    for (const Value* v : n.operands) types.push_back(v->type);
    Unifier strict;
    if (!inferResultTypes(n.op, types, n.attrs, expected, strict, error)) {
      fail(n.loc, what + error);
      continue;
    }
    if (expected.size() != n.results.size()) {
      fail(n.loc, what + "has " + std::to_string(n.results.size()) + " results, its operands give " +
                      std::to_string(expected.size()));
      continue;
    }
    for (size_t i = 0; i < expected.size(); ++i)
      if (expected[i] != n.result(i)->type)
        fail(n.loc, what + "result " + std::to_string(i) + " has type " + n.result(i)->type.str() +
                        ", but its operands give " + expected[i].str());
    if (n.is(OpId::Store)) {
      const Value* dst = n.operands[0];
      if (!dst->isParam() || g.params[dst->index].access == Access::Read)
        fail(n.loc, what + "the destination must be a parameter with write or reduce privilege");
    }
    for (const auto& r : n.results) defined.insert(r.get());
  }
  for (const Value* r : g.results)
    if (!defined.count(r)) fail(g.loc, "a returned value is not defined");
  return ok;
}

bool verifyModule(const GraphModule& m, DiagnosticEngine& diags) {
  bool ok = true;
  std::set<std::string> names;
  for (const auto& g : m.graphs) {
    if (!names.insert(g->name).second) {
      diags.report(diag::err_graph_verify, g->loc) << g->name << "a function of this name is defined twice";
      ok = false;
    }
    ok &= verifyGraph(*g, diags);
  }
  return ok;
}

}  // namespace tessera::graph
