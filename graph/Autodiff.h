// Reverse-mode automatic differentiation on the graph IR (docs/language.md, "Autodiff").
//
// The adjoint of every op is one rule in graph/Adjoints.cpp, named by the Adjoint column of
// graph/GraphOps.def. The reverse sweep visits the forward nodes in reverse program order and
// adds each contribution to an operand's gradient in that fixed order, so gradients are the
// same bits on every run. Forward values a rule needs (matmul operands, softmax outputs, the
// attention output and its log-sum-exp) are saved: they are simply used again by backward
// nodes, and memory planning keeps them alive until then; row statistics of norms and the
// attention probabilities are recomputed inside the backward kernels instead (they cost one
// pass over data the kernel reads anyway, and storing them would cost memory per row or, for
// attention, per pair of rows).
#pragma once

#include <utility>
#include <vector>

#include "basic/Diagnostics.h"
#include "graph/Graph.h"

namespace tessera::graph {

// Appends to `g` the backward nodes of `tape` (forward nodes of `g`, in program order).
// `seeds` pairs values with their cotangents; grads[i] receives the gradient of the sum of
// <value, cotangent> with respect to wrt[i] (a zero tensor when nothing flows to it). Reports
// err_graph_not_differentiable (at the op) and returns false when a gradient must flow through
// an op without an adjoint.
bool differentiate(Graph& g, const std::vector<Node*>& tape, const std::vector<std::pair<Value*, Value*>>& seeds,
                   const std::vector<Value*>& wrt, std::vector<Value*>& grads, DiagnosticEngine& diags);

// @autodiff: turns `g`, a built copy of the forward function, into its backward function: one
// more parameter per result (the cotangent `d_<i>`), and as results the gradients of every
// floating-point tensor parameter, in parameter order.
bool makeBackward(Graph& g, DiagnosticEngine& diags);

}  // namespace tessera::graph
