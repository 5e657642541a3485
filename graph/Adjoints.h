// The adjoint rules of graph/GraphOps.def (its Adjoint column), used by graph/Autodiff.cpp.
#pragma once

#include <string>
#include <vector>

#include "graph/Graph.h"

namespace tessera::graph {

// What a rule sees: the node, the gradients of its results (null where none flows), and
// builders for backward nodes. Contributions to an operand are summed by the driver in the
// order the rules give them; one whose shape is a broadcast of the operand's is summed back
// to the operand's shape (graph.sum_to), and one of another dtype is cast.
class AdjointContext {
 public:
  virtual ~AdjointContext() = default;
  virtual Value* make(OpId op, const std::vector<Value*>& operands, Attrs attrs = {}) = 0;
  virtual std::vector<Value*> makeN(OpId op, const std::vector<Value*>& operands, Attrs attrs = {}) = 0;
  // Adds `contribution` to the gradient of operand `i` of the node (ignored for scalars).
  virtual void add(unsigned i, Value* contribution) = 0;
  Value* scalar(double v, DType d);
  Value* zeros(const Type& t);
};

// Runs the rule of `n.op`. Returns false with `why` set when the op has no adjoint (None).
bool runAdjoint(AdjointContext& ctx, Node& n, const std::vector<Value*>& gy, std::string& why);

}  // namespace tessera::graph
