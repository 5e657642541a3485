// The graph IR: the host level of a Tessera module. A host function (@jit, @graph.module,
// @autodiff, and the backward functions autodiff makes) is a Graph: parameters, a straight-line
// list of nodes in SSA form (each node an op on whole tensors with symbolic shapes), and results.
// Control flow of the source is resolved when the graph is built (loops over constants unroll,
// conditions on constants fold, user host functions inline), so the order of the nodes is the
// order in which their kernels launch: fixed, hence deterministic.
//
// Ops come from the table graph/GraphOps.def. Types are tensors (dtype + shape of Dims) and
// host scalars (passed by value). Attributes (graph/Attrs.h) are a small ordered dictionary whose
// names and kinds graph/GraphAttrs.def and the op table give.
#pragma once

#include <cstdint>
#include <list>
#include <map>
#include <memory>
#include <string>
#include <variant>
#include <vector>

#include "basic/SourceManager.h"
#include "graph/Attrs.h"
#include "graph/Dim.h"
#include "sema/DType.h"

namespace tessera::graph {

enum class OpId : uint16_t {
#define GRAPH_OP(ID, NAME, MINOPS, MAXOPS, RESULTS, TRAITS, RULE, ADJOINT, KERNEL, ATTRS, DOC) ID,
#include "graph/GraphOps.def"
  NumOps
};

enum Trait : unsigned {
  T_Pure = 0,
  T_Elementwise = 1u << 0,  // broadcasting elementwise: fuses into neighbouring kernels
  T_Anchor = 1u << 1,       // a kernel that elementwise epilogues fuse into (matmul, row ops)
  T_ViewLike = 1u << 2,     // may become a strided view of its operand (no kernel)
  T_SideEffect = 1u << 3,   // never removed, never reordered across other effects
  T_Random = 1u << 4,
  T_Collective = 1u << 5,
  T_Internal = 1u << 6,  // created by autodiff or rewrites, not written in source
};

struct OpInfo {
  OpId id;
  const char* name;                       // "graph.matmul"
  int minOperands, maxOperands, results;  // -1: variadic
  unsigned traits;
  const char* expr;  // elementwise ops: Tessera expression over $0, $1; else null
  const char* doc;
};
const OpInfo& opInfo(OpId id);
// The attributes op `id` takes (the ATTRS column of graph/GraphOps.def).
const std::vector<AttrSpec>& opAttrs(OpId id);

// How an op runs (the Kernel column of GraphOps.def).
enum class KernelKind : uint8_t {
  Elementwise,
  MatMul,
  Rows,
  Reduce,
  FlashAttention,
  FlashAttentionGrad,
  Copy,
  View,
  Fill,
  Randn,
  Launch,
  Host,
  None
};
KernelKind kernelKind(OpId id);
bool lookupOp(const std::string& name, OpId& out);

// ---- types

struct Type {
  enum class Kind : uint8_t { Tensor, Scalar } kind = Kind::Tensor;
  DType dtype = DType::FP32;
  Shape shape;  // tensors

  static Type tensor(DType d, Shape s) { return Type{Kind::Tensor, d, std::move(s)}; }
  static Type scalar(DType d) { return Type{Kind::Scalar, d, {}}; }
  bool isTensor() const { return kind == Kind::Tensor; }
  bool isScalar() const { return kind == Kind::Scalar; }
  size_t rank() const { return shape.size(); }
  std::string str() const;  // tensor<f32, [M, N]> or f32
  friend bool operator==(const Type& a, const Type& b) {
    return a.kind == b.kind && a.dtype == b.dtype && a.shape == b.shape;
  }
  friend bool operator!=(const Type& a, const Type& b) { return !(a == b); }
};
// The short dtype name (f32) and back.
const char* dtypeName(DType d);

// ---- values and nodes

class Node;
class Graph;

class Value {
 public:
  Type type;
  Node* def = nullptr;       // null for parameters
  unsigned index = 0;        // result number, or parameter number
  std::string name;          // name hint for printing (%S), may be empty
  std::vector<Node*> users;  // one entry per use
  bool isParam() const { return def == nullptr; }
};

class Node {
 public:
  OpId op;
  std::vector<Value*> operands;
  std::vector<std::unique_ptr<Value>> results;
  Attrs attrs;
  SourceRange loc;  // where in the source the node comes from (may be empty)

  const OpInfo& info() const { return opInfo(op); }
  bool is(OpId id) const { return op == id; }
  bool has(Trait t) const { return (info().traits & t) != 0; }
  Value* result(unsigned i = 0) const { return results[i].get(); }
  void setOperand(unsigned i, Value* v);
};

// How a host function may touch a tensor parameter: the Region privilege (read by default;
// `mut` tensors are write).
enum class Access : uint8_t { Read, Write, ReduceSum, ReduceMax, ReduceMin };
const char* accessName(Access a);

struct Param {
  std::unique_ptr<Value> value;
  Access access = Access::Read;
};

class Graph {
 public:
  std::string name;
  std::vector<Param> params;
  std::list<std::unique_ptr<Node>> nodes;
  std::vector<Value*> results;
  Attrs attrs;  // jit, capture_graph, module = "name", autodiff, backward_of = @f
  SourceRange loc;

  Value* addParam(const std::string& name, Type t, Access a = Access::Read);
  // Appends (or inserts before `before`) a node with results of the given types.
  Node* create(OpId op, const std::vector<Value*>& operands, const std::vector<Type>& resultTypes, Attrs attrs = {},
               SourceRange loc = {}, Node* before = nullptr);
  void erase(Node* n);  // the node must have no users
  void replaceAllUses(Value* from, Value* to);
  bool isResult(const Value* v) const;
  std::list<std::unique_ptr<Node>>::iterator position(Node* n);
};

class GraphModule {
 public:
  std::string name;  // the source module's name
  std::vector<std::unique_ptr<Graph>> graphs;
  Graph* lookup(const std::string& name) const;
};

}  // namespace tessera::graph
