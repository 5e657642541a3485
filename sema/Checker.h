// The type checker's internals: one Checker per module walks its statements, resolves names,
// types every expression and applies the rules that need types. Split over CheckStmt.cpp,
// CheckExpr.cpp, CheckCall.cpp, Annotations.cpp, Imports.cpp; the kernel-wide rules (uniformity,
// races, shared memory, ...) run afterwards in sema/analyses/ (sema/analyses/Analyses.h).
#pragma once

#include <map>
#include <set>
#include <string>
#include <vector>

#include "sema/Sema.h"
#include "sema/analyses/Analyses.h"

namespace tessera {

// Classes of equal extents (a union-find over their spellings), built while a kernel body whose
// unannotated parameters carry generated extent names is checked (ExtentInference.cpp).
struct ExtentUnifier {
  std::map<std::string, std::string> parent;
  std::map<std::string, Extent> extentOf;  // each spelling's extent
  std::vector<std::string> order;          // spellings in the order first met
  std::string find(const std::string& s);
  void unite(const Extent& a, const Extent& b);
};

class Checker {
 public:
  Checker(SemaContext& sc, DiagnosticEngine& diags, ModuleInfo& mod);
  void checkModule();

  // ---- statements (CheckStmt.cpp)
  void checkBlock(const Block& b);
  void checkStmt(Stmt* s);
  void checkAssign(AssignStmt* s);
  void checkAugAssign(AugAssignStmt* s);
  void checkAnnAssign(AnnAssignStmt* s);
  void checkFor(ForStmt* s);
  void checkReturn(ReturnStmt* s);
  // Binds `target` to a value of type `t` (`value` is the source expression when there is one).
  void assignTo(Expr* target, const Type* t, Expr* value, bool augmented = false, BinaryOp augOp = BinaryOp::Add);
  // A shared buffer or fragment reassigned in an if or loop keeps the type it had before it.
  void checkCarriedType(NameExpr* n, const Symbol* sym, const Type* t);
  // A tile stored into a slice has the slot's constant extents; reports and returns false if not.
  bool checkStoreExtents(Expr* target, const Type* slot, const Type* t, Expr* value);
  void declareFunction(FunctionDefStmt* fn);  // decorators and signature
  void checkFunctionBody(FunctionDefStmt* fn);
  // One walk of a function body in the function's scope.
  void checkBodyOnce(FunctionDefStmt* fn, FunctionInfo& info);

  // ---- unannotated kernel parameters (ExtentInference.cpp)
  // A kernel with unannotated parameters: the body is checked with them dynamic, their ranks
  // inferred, checked again with generated extent names to unify the extents that meet, and
  // checked a last time with the parameters typed by those classes, so that the shape rules and
  // the row split see them. Returns false (nothing retyped; the diagnostics of the first check
  // reported) when the first check or the rank inference reports an error.
  bool checkKernelWithInferredParams(FunctionDefStmt* fn, FunctionInfo& info);
  static bool hasUnannotatedParams(const FunctionDefStmt* fn, const FunctionInfo& info);
  // A fresh scope for the body holding `signature` (the parameters, their shape symbols and the
  // autotune parameters), the unannotated parameters typed as f32 tensors with `dims`.
  void retypeParams(FunctionDefStmt* fn, FunctionInfo& info, const std::map<std::string, Symbol*>& signature,
                    const std::map<std::string, std::vector<Extent>>& dims);

  // ---- expressions (CheckExpr.cpp)
  const Type* check(Expr* e);
  const Type* valueBuiltinType(const BuiltinInfo& b);
  const Type* checkName(NameExpr* e);
  const Type* checkAttribute(AttributeExpr* e);
  const Type* checkSubscript(SubscriptExpr* e);
  const Type* checkBinary(BinaryExpr* e);
  const Type* checkUnary(UnaryExpr* e);
  const Type* checkConditional(ConditionalExpr* e);
  const Type* checkComprehension(ComprehensionExpr* e);
  const Type* binaryResult(BinaryOp op, const Type* l, const Type* r, SourceRange opRange, SourceRange whole);
  bool extentsAgreeStatically(BinaryOp op, const Extent& a, const Extent& b, const Type* l, const Type* r,
                              SourceRange opRange);
  // The inner extents of a matrix product (`tile.dot`, `tile.mma`, `@`): static ones must agree;
  // reports and returns false when they do not.
  bool checkInnerExtents(const char* op, Expr* lhs, const Type* l, Expr* rhs, const Type* r, SourceRange at);
  const Type* iterationElement(const Type* t, SourceRange at);
  // Checks an implicit conversion for a store or assignment; reports narrowing.
  // `value`, when given, is the converted expression: a compile-time integer constant must fit
  // an integer target (err_const_out_of_range).
  void checkConversion(const Type* from, const Type* to, SourceRange at, bool isStore, Expr* value = nullptr);
  // ---- integer constants (IntegerConstants.cpp)
  // A compile-time integer constant `value` must fit `target`; reports at `at` and returns false
  // when it does not (non-constants and non-integer targets pass).
  bool checkConstantFits(Expr* value, DType target, SourceRange at);
  // The integer rules of a binary expression whose type is `result`: literal operands fit the
  // typed operand, typed constant arithmetic does not overflow, constant shift counts are below
  // the width. Returns `result`, or the error type after a report.
  const Type* checkIntegerBinary(BinaryExpr* e, const Type* l, const Type* r, const Type* result);
  Extent sliceExtent(SliceExpr* s, const Extent& full);
  // A constant index (or slice bound) into dimension `dim` of `base`: never negative, and for an
  // element index below a static extent. Reports and returns false otherwise.
  bool checkConstantIndex(Expr* ix, const Extent& extent, unsigned dim, Expr* base, bool element = false);

  // ---- calls (CheckCall.cpp)
  const Type* checkCall(CallExpr* e);
  const Type* checkBuiltinCall(const BuiltinInfo& b, const Type* typeArg, CallExpr* call, SourceRange calleeRange);
  // A builtin call with its binding and the types of the bound arguments.
  struct BoundBuiltinCall {
    const BuiltinInfo& b;
    CallExpr* call;
    CallBinding binding;
    std::vector<const Type*> types;          // per parameter (null: not given)
    std::vector<const Type*> variadicTypes;  // per argument of the *rest parameter
    Expr* arg(std::string_view name) const { return binding.arg(name); }
    const Type* argType(std::string_view name) const {
      for (size_t p = 0; p < binding.names.size(); ++p)
        if (binding.names[p] == name) return types[p];
      return nullptr;
    }
  };
  bool checkBuiltinArguments(const BoundBuiltinCall& bc, const std::vector<BindError>& errors);
  const Type* bitcastResult(const BoundBuiltinCall& bc);
  const Type* specialBuiltinResult(const BoundBuiltinCall& bc, const Type* typeArg);
  void checkConstantArguments(const BoundBuiltinCall& bc, SourceRange at);
  void checkKernelPrint(CallExpr* call);  // KernelPrint.cpp
  const Type* tileRangeResult(const BoundBuiltinCall& bc, const Type* ext);
  void checkWhileCarries(WhileStmt* w);
  const Type* tileDotResult(const BoundBuiltinCall& bc);
  const Type* tileMmaResult(const BoundBuiltinCall& bc);
  const Type* constraintResult(const BoundBuiltinCall& bc);
  const Type* reducedAlongAxis(const Type* t, Expr* axisExpr, DType d, bool dtypeKnown);
  void requireConstInt(Expr* x, SourceRange missing, const std::string& what, long long lo, long long hi);
  const Type* tileWhereResult(const BoundBuiltinCall& bc);
  const Type* tileArangeResult(const BoundBuiltinCall& bc);
  const Type* genericBuiltinResult(const BoundBuiltinCall& bc, SourceRange at);
  const Type* checkUserCall(const Type* fn, CallExpr* call);
  void checkUserArgument(const Type* fnType, const Param& target, size_t idx, const Argument& a, const Type* argType,
                         std::map<std::string, std::pair<std::string, std::string>>& symbolSizes);
  const Type* checkCast(const Type* dt, CallExpr* call);
  // Context, group-feature and determinism rules of one builtin use.
  bool checkBuiltinUse(const BuiltinInfo& b, SourceRange at);
  bool argumentFits(const std::string& kind, const Type* t, Expr* arg);
  void checkWriteAccess(Expr* target, SourceRange at, bool augmented, BinaryOp augOp);
  // The element, its type and the determinism of an atomic (CheckAtomics.cpp).
  void checkAtomicCall(const BoundBuiltinCall& bc, SourceRange at);

  // ---- annotations, policies, decorators (Annotations.cpp)
  const Type* typeFromAnnotation(Expr* e, bool allowMut, const std::string& paramName);
  const Type* typeFromSubscriptAnnotation(SubscriptExpr* s, const std::string& paramName);
  bool dtypeFromExpr(Expr* e, DType& d, NumericPolicy& policy, bool reportUnknown);
  void applyPolicy(Expr* policyExpr, DType storage, NumericPolicy& policy);
  Extent extentFromExpr(Expr* e, const std::string& paramName, unsigned dim);
  // The extents of an annotation whose element type is wrong: their shape symbols are declared
  // all the same (the type is an error; its symbols are not).
  void declareExtentsOfBadType(const std::vector<Expr*>& extents, size_t count, const std::string& paramName);
  void checkDecorators(FunctionDefStmt* fn, FunctionInfo& info);
  // @kernel(flops="..."): an expression over the shape symbols the parameters bind.
  void checkFlopsExpression(FunctionInfo& info);
  void reportUnknownDType(Expr* e, const std::string& name);

  // ---- imports (Imports.cpp)
  void checkImport(ImportStmt* s);
  void checkImportFrom(ImportFromStmt* s);
  ModuleInfo* loadModule(const std::string& dotted, SourceRange at);

  // ---- helpers
  Symbol* declareLocal(const std::string& name, SourceRange at, const Type* t, SymbolKind k = SymbolKind::Variable);
  void reportUndefined(const std::string& name, SourceRange at);
  bool inKernel() const { return fn_ && fn_->isKernel(); }
  std::string text(SourceRange r) const;
  // The parameter symbol a target expression writes through (x in x[i], x[a:b], x), or null.
  Symbol* rootParam(Expr* e);

  SemaContext& sc;
  DiagnosticEngine& diags;
  TypeContext& T;
  ModuleInfo& mod;
  Scope* scope = nullptr;
  FunctionInfo* fn_ = nullptr;
  unsigned loopDepth = 0;
  // The expression of the expression statement being checked: a call whose result is discarded.
  const Expr* statementExpr_ = nullptr;
  // Per enclosing loop of the function: true for loops that kernels unroll (over a list of
  // constants) or that hand out tiles (tile.mma), where break and continue cannot be lowered.
  std::vector<bool> unrolledLoops;
  // The enclosing constructs that carry the locals they assign (if, while, a for that is not
  // unrolled), innermost last: the construct's keyword and where it begins.
  struct Carrier {
    const char* keyword;
    uint32_t begin;
  };
  std::vector<Carrier> carriers;
  unsigned functionDepth = 0;
  // Names assigned at module level: function bodies may use them before the assignment runs.
  std::set<std::string> moduleGlobals;
  // Set while inferring the extents of unannotated parameters: shape symbols that meet (in an
  // elementwise operation, a matrix product's inner extents, a store) are unified instead of
  // reported.
  ExtentUnifier* unifying = nullptr;
};

}  // namespace tessera
