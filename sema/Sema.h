// Semantic analysis: names, types and the kernel rules (DESIGN.md). The entry point is
// analyzeModule; it fills Expr::type and NameExpr::symbol, reports diagnostics, and leaves
// per-function facts (FunctionInfo) for later stages and the language server.
#pragma once

#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "basic/Diagnostics.h"
#include "frontend/AST.h"
#include "sema/Binding.h"
#include "sema/Scope.h"
#include "sema/Type.h"

namespace tessera {

constexpr long long kHopperSharedLimit = 227 * 1024;  // bytes of shared memory per group (sm_90)
// The most dimensions a kernel's tensor parameter may have: TESSERA_MAX_RANK of the runtime's
// tensor views (tools/tesserac checks that the two agree).
constexpr unsigned kMaxTensorParamRank = 8;
// The most configurations an autotune space may have: each is compiled as a kernel of its own.
constexpr size_t kMaxAutotuneConfigurations = 64;

// One assignment of candidates to the parameters of an autotune space, in the space's name order.
using AutotuneConfig = std::vector<std::pair<std::string, long long>>;
// Every assignment of the space (its cartesian product); stops growing once past
// kMaxAutotuneConfigurations (sema refuses such spaces: err_autotune_space_too_large).
std::vector<AutotuneConfig> autotuneConfigurations(const std::map<std::string, std::vector<long long>>& space);
// "B=32, W=4": how diagnostics and remarks name a configuration.
std::string autotuneConfigText(const AutotuneConfig& c);

struct SharedAllocation {
  const CallExpr* call = nullptr;
  long long bytes = -1;  // -1: unknown (shape taken from the first copy)
};

// A kernel parameter whose rank is not written (unannotated, or `tensor[T]`): the rank its uses
// need and whether the kernel writes it, inferred by sema (ParamInference.cpp) and read by the
// lowering, which names the extents.
struct InferredParam {
  int rank = 0;
  bool written = false;
};

// Where a shape symbol is bound: parameter `param`, dimension `dim`.
struct ShapeBinding {
  std::string symbol;
  std::string param;
  unsigned dim = 0;
};

struct FunctionInfo {
  const FunctionDefStmt* def = nullptr;
  FunctionKind kind = FunctionKind::Plain;
  const Type* type = nullptr;
  Scope* scope = nullptr;
  // Kernels
  std::vector<long long> groupShape;  // empty: none declared
  long long sharedBudget = -1;        // -1: none declared
  SourceRange sharedClauseRange;
  SourceRange kernelDecoratorRange;  // the `@kernel...` decorator expression
  bool deterministic = true;
  std::string flops;  // @kernel(flops="2*M*N*K"): work of one launch over the shape symbols (profiling)
  SourceRange flopsRange;
  std::map<std::string, std::vector<long long>> autotuneSpace;
  std::vector<ShapeBinding> shapeBindings;
  std::map<std::string, InferredParam> inferredParams;  // by parameter name
  std::vector<SharedAllocation> sharedAllocations;
  bool reportedGroupFeature = false;
  // An error was reported in the body: the passes over the typed body that run afterwards
  // (DeviceCode.cpp, ParamInference.cpp) skip it rather than cascade.
  bool bodyHasErrors = false;
  // A plain function that uses kernel builtins: a device function, inlined into kernels.
  bool device = false;
  // A plain function's constructs that kernels cannot have ('...' as a value, 'break' in a loop
  // that unrolls): errors only if a kernel calls it, so reported by checkDeviceCode then.
  struct DeviceOnly {
    DiagID id;
    SourceRange at;
    std::string arg;  // the message's {0}, if it has one
  };
  std::vector<DeviceOnly> deviceOnly;
  bool isKernel() const { return kind == FunctionKind::Kernel; }
};

struct ModuleInfo {
  Module* module = nullptr;
  std::string name;
  std::string path;
  Scope* scope = nullptr;
  bool analyzing = false;
};

class SemaContext {
 public:
  SemaContext(SourceManager& sm, ASTContext& ast) : sm(sm), ast(ast), symbols(types) {}
  SourceManager& sm;
  ASTContext& ast;
  TypeContext types;
  SymbolTable symbols;
  std::vector<std::string> includePaths;  // -I, searched after the importing file's directory
  // The directory holding stdlib/ (`import stdlib.nn` is <stdlibDir>/stdlib/nn.tessera),
  // searched last; empty: none. Drivers set it from defaultStdlibDir() or their option.
  std::string stdlibDir;
  // Autotuned kernels: the candidate analysed, per kernel and parameter (default: the first of
  // each list). The driver analyses the module once per candidate (irgen/Autotune.cpp).
  std::map<std::string, std::map<std::string, long long>> autotuneChoice;
  // Whether analyzeModule also analyses every other candidate of each autotune space
  // (AutotuneCandidates.cpp); off in the analyses of one candidate.
  bool checkAutotuneCandidates = true;
  long long autotuneValue(const std::string& kernel, const std::string& param,
                          const std::vector<long long>& candidates) const;

  // The binding of every call that type-checked (builtins and user functions), read by irgen.
  std::map<const CallExpr*, CallBinding> bindings;
  // Facts about every function analysed, by definition.
  std::map<const FunctionDefStmt*, std::unique_ptr<FunctionInfo>> functions;
  // Modules by resolved path (imports), plus the main module under "".
  std::map<std::string, std::unique_ptr<ModuleInfo>> modules;
  // Packages of dotted imports (`stdlib` of `import stdlib.nn`), by dotted name: no source of
  // their own, a scope whose members are the modules and packages imported under them.
  std::map<std::string, std::unique_ptr<ModuleInfo>> packages;
  Scope* prelude();

  // The text --emit=sema prints after a node: ": <type>" for expressions (plus "= value" for
  // folded constants), the kernel's declaration for functions.
  std::string annotate(const Node& n) const;

 private:
  Scope* prelude_ = nullptr;
};

// Analyses `module` (and, through its imports, the modules it names). Returns false when an
// error was reported.
bool analyzeModule(Module& module, SemaContext& sc, DiagnosticEngine& diags);

// One candidate of an autotune space analysed on its own: `file` lexed, parsed (into `actx`) and
// analysed afresh in `fresh` (a context over `actx`), with `base`'s options and `config` chosen
// for `kernel`; the space's other candidates are not checked again. Returns the module when
// analysis succeeds, null otherwise (the errors go to `diags`).
Module* analyzeCandidate(const SemaContext& base, FileID file, const std::string& kernel, const AutotuneConfig& config,
                         ASTContext& actx, SemaContext& fresh, DiagnosticEngine& diags);

// Where the standard library is found by default: $TESSERA_STDLIB_PATH, else share/tessera beside
// the running program's bin/ directory (docs/language.md, "Imports"); empty when neither exists.
std::string defaultStdlibDir();

// Folds a compile-time expression (literals, module constants, autotune parameters, arithmetic).
// Reports division by zero and overflow when `diags` is given.
std::optional<ConstValue> evalConst(const Expr* e, DiagnosticEngine* diags);
// A kernel that declares no group shape, computes with tile values and uses no ids, block loops
// or cooperative groups: the compiler splits its output's rows across groups (RowSplit.cpp;
// docs/language.md, "Whole-tensor tile programs").
bool isWholeTensorProgram(const FunctionDefStmt& def, const FunctionInfo& info);
// The names that `body` uses only as `name.T` (each as often as it names them).
std::set<std::string> namesUsedOnlyTransposed(const Block& body);
// One binary operator on two constants (evalConst's rules); errors are reported at `at` when
// `diags` is given, otherwise the result is just empty.
std::optional<ConstValue> foldBinaryConst(BinaryOp op, const ConstValue& l, const ConstValue& r, const Expr* at,
                                          DiagnosticEngine* diags);

}  // namespace tessera
