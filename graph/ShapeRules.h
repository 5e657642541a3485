// Shape and dtype inference for graph ops: one hook per Rule column of graph/GraphOps.def. The
// builder calls them to type the nodes it creates (reporting the message at the source range),
// the verifier to check that every node's result types are what its operands give.
//
// Extents of unannotated host parameters are *flexible* symbols (Q_0, Q_1): a rule that needs
// two extents equal (the inner extents of a matrix product, broadcasting) binds a flexible
// symbol to the other extent, as type inference would; symbols written in annotations are
// rigid and must match exactly. The verifier uses no flexible symbols.
#pragma once

#include <map>
#include <set>
#include <string>
#include <vector>

#include "graph/Graph.h"

namespace tessera::graph {

class Unifier {
 public:
  std::set<std::string> flexible;
  std::map<std::string, Dim> bound;

  // The dim with every bound flexible symbol replaced (recursively).
  Dim resolve(const Dim& d) const;
  Shape resolve(const Shape& s) const;
  Type resolve(const Type& t) const;
  // Makes a and b equal, binding a flexible symbol when one side is one; false when they differ.
  bool unify(const Dim& a, const Dim& b);
};

// The result types of `op` on operands of `types` with `attrs`; false with `error` set (a
// sentence that names the operands and extents involved).
bool inferResultTypes(OpId op, const std::vector<Type>& types, const Attrs& attrs, std::vector<Type>& results,
                      Unifier& u, std::string& error);

// NumPy broadcasting of two shapes (trailing axes aligned, extents equal or 1).
bool broadcastShapes(const Shape& a, const Shape& b, Shape& out, Unifier& u, std::string& error);

// The accumulation dtype of computations on `d`: f64 for f64, f32 otherwise.
DType accumulationDType(DType d);

// Which axes of `t` a reduction with {axes} (all when absent) reduces; false when one is out of
// range.
bool reduceAxes(const Type& t, const Attrs& attrs, std::vector<bool>& reduced, std::string& error);

// Normalises an axis (negative counts from the end); false when out of range.
bool normalizeAxis(int64_t axis, size_t rank, int64_t& out);

}  // namespace tessera::graph
