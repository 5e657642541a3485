// The builder's state (graph/Build.h). Which file builds what:
//   BuildFunction.cpp  the module loop, parameters and decorators, statements
//   BuildExpr.cpp      names, literals, operators, attributes, subscripts
//   BuildCalls.cpp     calls: user host functions (inlined), kernels (launches), launch
//                      configurations
//   BuildBuiltins.cpp  the host builtins, one handler per sema/Builtins.def id
#pragma once

#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "graph/Build.h"
#include "graph/GraphDiagnostics.h"
#include "graph/ShapeRules.h"
#include "sema/Builtins.h"
#include "sema/Symbol.h"

namespace tessera {
class SemaContext;
struct FunctionInfo;
}  // namespace tessera

namespace tessera::graph {

// A host value while the function runs at compile time.
struct HValue {
  enum class Kind : uint8_t {
    None,      // None, or a statement's missing value
    Value,     // a graph value: a tensor or a host scalar
    Const,     // a compile-time int, float, bool or string
    Dim,       // a compile-time extent (x.shape[0]): constant or symbolic
    Tuple,     // tuples and lists
    Function,  // a user host function (inlined when called)
    Kernel,    // a user @kernel
    Builtin,
    Launch,  // launch.grid(...), launch.grid(...)(k), index_launch(...)(k)
    Dtype,   // a dtype name (casts when called)
    Grad,    // tessera.grad(f): calling it gives the gradient of f for its first argument
  } kind = Kind::None;
  Value* value = nullptr;
  ConstValue c;
  graph::Dim dim;
  std::vector<HValue> elems;            // Tuple; Launch: the grid (blocks), then the threads
  const FunctionDefStmt* fn = nullptr;  // Function, Kernel, Launch (the kernel once given), Grad
  const BuiltinInfo* builtin = nullptr;
  DType dtype = DType::FP32;  // Dtype
  size_t gridRank = 0;        // Launch: how many of elems are the grid

  static HValue none() { return HValue(); }
  static HValue of(Value* v) {
    HValue h;
    h.kind = Kind::Value;
    h.value = v;
    return h;
  }
  static HValue constant(ConstValue c) {
    HValue h;
    h.kind = Kind::Const;
    h.c = std::move(c);
    return h;
  }
  static HValue ofDim(graph::Dim d) {
    HValue h;
    h.kind = Kind::Dim;
    h.dim = std::move(d);
    return h;
  }
  static HValue tuple(std::vector<HValue> e) {
    HValue h;
    h.kind = Kind::Tuple;
    h.elems = std::move(e);
    return h;
  }
  bool is(Kind k) const { return kind == k; }
  std::string describe() const;  // "a tensor<f32, [M, N]>", "the constant 3", "a tuple"
};

// Thrown after an error has been reported: the function being built is abandoned.
struct BuildAbort {};

// One function call being evaluated (the host function itself, or an inlined callee).
struct Frame {
  const FunctionDefStmt* def = nullptr;
  std::map<std::string, HValue> vars;
  std::optional<HValue> returned;
  SourceRange callSite;
};

class FunctionBuilder {
 public:
  FunctionBuilder(const SemaContext& sema, DiagnosticEngine& diags, const BuildOptions& opts, Graph& g)
      : sema_(sema), diags_(diags), opts_(opts), g_(g) {}

  // Builds `def` as the graph's function: parameters, body, stores into written parameters,
  // results. Throws BuildAbort after reporting an error.
  void buildEntry(const FunctionDefStmt* def, const FunctionInfo* info);

  // Node creation with shape inference; errors are reported at `at` (err_graph_op).
  Value* op(OpId id, const std::vector<Value*>& operands, SourceRange at, Attrs attrs = {});
  std::vector<Value*> opN(OpId id, const std::vector<Value*>& operands, SourceRange at, Attrs attrs = {});
  Value* scalarConstant(double v, DType d, SourceRange at);
  // The value as a graph value (a constant becomes a graph.constant of `like`'s dtype).
  Value* asValue(const HValue& h, SourceRange at, const char* what, DType like = DType::FP32);
  Value* asTensor(const HValue& h, SourceRange at, const char* what);
  // Casts `v` to dtype `d` when it differs.
  Value* castTo(Value* v, DType d, SourceRange at);

  [[noreturn]] void fail();
  DiagnosticEngine& diags() { return diags_; }
  Graph& graph() { return g_; }
  const SemaContext& sema() const { return sema_; }
  Unifier& unifier() { return unifier_; }

  // ---- BuildFunction.cpp
  void execBlock(const Block& b);
  void exec(const Stmt* s);
  HValue callFunction(const FunctionDefStmt* def, const std::vector<HValue>& args,
                      const std::vector<std::pair<std::string, HValue>>& kwargs, SourceRange at);

  // ---- BuildExpr.cpp
  HValue eval(const Expr* e);
  HValue binary(BinaryOp op, const HValue& l, const HValue& r, SourceRange at);
  std::optional<ConstValue> asConst(const HValue& h) const;
  std::optional<int64_t> asInt(const HValue& h) const;
  // An extent from a constant or Dim value (x.shape[0], 128, N // 2).
  std::optional<graph::Dim> asDim(const HValue& h) const;

  // ---- BuildCalls.cpp
  HValue call(const CallExpr* c);
  HValue launchKernel(const HValue& cfg, const FunctionDefStmt* kernel, const std::vector<HValue>& args,
                      const std::vector<const Expr*>& argExprs, SourceRange at);
  // tessera.grad(f)(args): f inlined on args, then the reverse sweep from its rank-0 result.
  HValue gradCall(const FunctionDefStmt* def, const std::vector<HValue>& args,
                  const std::vector<std::pair<std::string, HValue>>& kwargs, SourceRange at);

  // ---- BuildBuiltins.cpp
  HValue builtin(const BuiltinInfo& b, const CallExpr* c, const std::vector<HValue>& args,
                 const std::vector<std::pair<std::string, HValue>>& kwargs);

  Frame& frame() { return frames_.back(); }
  // Rebinds whatever the expression names (a local or a parameter) to `v`.
  void rebind(const Expr* target, const HValue& v);
  // `Y[:] = v` or `Y += v` (accumulate) into a writable parameter of the entry function.
  void writeParam(const Expr* target, const HValue& v, bool accumulate, SourceRange at);
  // A user kernel wrote a parameter of the entry function: its new value.
  void kernelWroteParam(Value* param, Value* newValue) { writes_[param] = newValue; }
  Value* entryParam(const std::string& name) const {
    auto it = paramByName_.find(name);
    return it == paramByName_.end() ? nullptr : it->second;
  }
  size_t depth() const { return frames_.size(); }
  // Whether `name` is a symbol in the shape of one of the entry function's parameters.
  bool entryShapeSymbol(const std::string& name) const {
    for (const auto& [pname, v] : paramByName_)
      for (const graph::Dim& d : v->type.shape) {
        std::set<std::string> syms;
        d.collectSymbols(syms);
        if (syms.count(name)) return true;
      }
    return false;
  }

 private:
  friend class BuiltinCall;
  // The visitors (frontend/ASTVisitor.h) that dispatch exec and eval on a node's kind.
  struct StmtExec;
  struct ExprEval;
  const SemaContext& sema_;
  DiagnosticEngine& diags_;
  const BuildOptions& opts_;
  Graph& g_;
  Unifier unifier_;
  std::vector<Frame> frames_;
  std::vector<const FunctionDefStmt*> inlining_;  // recursion check
  std::map<std::string, Value*> paramByName_;     // the entry function's parameters
  std::map<Value*, Value*> writes_;               // written parameter -> its final value
  static constexpr unsigned kMaxStatements = 100000;
  unsigned statements_ = 0;  // statements executed so far (unrolled loops count each step)
};

// The user functions of a FunctionDefStmt's kind, from sema.
const FunctionInfo* functionInfo(const SemaContext& sema, const FunctionDefStmt* def);

}  // namespace tessera::graph
