// The state of lowering one function from the typed AST to Tile IR, shared by the files that
// lower its parts (the way codegen/lower/Lowering.h is for Tile IR -> LLVM):
//   IRGen.cpp            the module: kernels, device functions specialised by argument types
//   Function.cpp         a function's entry, parameters, returns and exit
//   Types.cpp            dtypes and annotations -> IR types; compute types and promotion
//   Values.cpp           constants, conversions, broadcasts, views used as tile values
//   AsyncCopies.cpp      async copies and where their completion is awaited
//   HandleExpr.cpp       names, literals, subscripts and slices, attributes
//   HandleOperators.cpp  unary, binary, comparison and conditional operators
//   HandleCall.cpp       casts, user calls, and the dispatch of builtins by id (BuiltinTable.cpp)
//   Handle*Builtins.cpp  one handler per builtin that kernels may call (sema/Builtins.def)
//   HandleStmt.cpp       assignments, stores, `if`
//   ControlFlow.cpp      the locals a region assigns; break, continue and return as flags
//   HandleLoop.cpp       for (range, tile.range, tile.mma, unrolled lists) and while
//   UntypedParams.cpp    unannotated kernel parameters: rank and extents from their uses
// Internal to irgen/. The rules are in docs/tile-ir.md, "Lowering from the AST".
#pragma once

#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "basic/Diagnostics.h"
#include "frontend/AST.h"
#include "ir/IR.h"
#include "irgen/IRGenDiagnostics.h"
#include "sema/Builtins.h"
#include "sema/Sema.h"
#include "sema/SemaDiagnostics.h"  // sema's ids, for the backstops of what sema refuses

namespace tessera::irgen {

namespace I = tessera::ir;

// Thrown after a diagnostic: lowering of the current function stops (one error per function).
struct LowerAbort {};

// A lowered expression: an SSA value, or a compile-time structure around values.
struct Lowered {
  enum Kind : uint8_t {
    None,     // no value (a call of a function without results)
    Val,      // an SSA value
    Tuple,    // a tuple of lowered values
    Block,    // a block of `tile.range` over a tensor: `v` is its start index along `axis`
    Unsized,  // `tile.alloc_shared()` without extents: sized by its first copy
  } kind = None;
  I::Value* v = nullptr;        // Val; Block: start index
  std::vector<Lowered> elems;   // Tuple
  int64_t size = 0;             // Block: extent along `axis`
  int axis = 0;                 // Block
  DType dtype = DType::FP32;    // Unsized: element dtype
  const Symbol* sym = nullptr;  // Unsized: the variable that names it
  static Lowered val(I::Value* v) {
    Lowered l;
    l.kind = Val;
    l.v = v;
    return l;
  }
  static Lowered tuple(std::vector<Lowered> e) {
    Lowered l;
    l.kind = Tuple;
    l.elems = std::move(e);
    return l;
  }
};
bool sameLowered(const Lowered& a, const Lowered& b);

I::ScalarKind scalarKindOf(DType d);
inline bool isFloatKind(I::ScalarKind k) { return I::scalarClass(k) == I::ScalarClass::Float; }
inline bool isUnsignedKind(I::ScalarKind k) { return I::scalarClass(k) == I::ScalarClass::UInt; }
// Sema's extent -> IR dimension; expressions (K/tp) become derived dimensions.
I::Dim dimOf(const Extent& e);

// The builtin a callee names, or null.
inline const BuiltinInfo* builtinOf(Expr* callee) {
  if (!callee || !callee->type || callee->type->kind != TypeKind::Builtin) return nullptr;
  return callee->type->builtin;
}

// Symbols in source order (declaration position), so carried values have a stable order.
struct SymLess {
  bool operator()(const Symbol* a, const Symbol* b) const {
    if (a->declRange.begin.offset != b->declRange.begin.offset)
      return a->declRange.begin.offset < b->declRange.begin.offset;
    if (a->name != b->name) return a->name < b->name;
    return a < b;
  }
};
using SymSet = std::set<const Symbol*, SymLess>;

// A call of a builtin, as its handler sees it.
struct BuiltinCall {
  const BuiltinInfo& info;
  const Type* typeArg;  // [T] of `tshared.alloc[f16](...)`, or null
  CallExpr* expr;
  I::Type want;                   // the type the context expects (literals take it), or null
  std::vector<Expr*> positional;  // the positional arguments, in order
  SourceRange range() const { return expr->range; }
};

class ModuleContext;
class FunctionContext;

// Builtin calls -> their handlers, keyed by the builtin's id (BuiltinTable.cpp).
struct BuiltinTable {
  static Lowered dispatch(FunctionContext& cx, const BuiltinCall& call);
};

class FunctionContext {
 public:
  FunctionContext(ModuleContext& ml, const FunctionDefStmt* def, const FunctionInfo* info, bool kernel)
      : ml_(ml), def_(def), info_(info), kernel_(kernel) {}

  // Kernel: builds the tile.func from the annotations. Device function: `argTypes` are the
  // types at the call site (scalars take the annotation's type when there is one).
  I::Operation* lowerKernel();
  I::Operation* lowerDevice(const std::string& name, const std::vector<I::Type>& argTypes,
                            std::vector<I::Type>& resultTypes);

  // Whole-tensor programs with unannotated parameters are lowered twice: a dry run collects the
  // extent equalities (eq_), then the parameters' extents are named by their classes.
  bool dryRun_ = false;
  std::set<std::string> usedSyms_;             // extents of annotated parameters
  std::vector<std::string> genNames_;          // generated extent names, in parameter order
  std::map<std::string, std::string> rename_;  // generated name -> the name of its class
  std::string funcName_;                       // the kernel's name in the IR (default: its own)
  bool needsShapeInference();
  std::map<std::string, std::string> extentClasses();

 private:
  // ---- the function being built
  ModuleContext& ml_;
  const FunctionDefStmt* def_;
  const FunctionInfo* info_;
  bool kernel_;
  I::Operation* func_ = nullptr;
  I::Block* top_ = nullptr;
  std::unique_ptr<I::Builder> b_;
  I::Operation* prologueLast_ = nullptr;          // the last op of the prologue (shared buffers, extents)
  std::map<const Symbol*, Lowered> env_;          // locals and parameters -> their current values
  std::map<const Symbol*, std::string> dropped_;  // symbol -> construct that left it undefined
  // Unsized shared buffers (`tile.alloc_shared()`) by the variable that names them, once their
  // first copy in source order sized them: the buffer is allocated at the function's entry, so
  // it serves every later use whatever path the copy was on.
  std::map<const Symbol*, I::Value*> sizedShared_;
  std::map<std::string, I::Value*> shapeDims_;  // shape symbols read from parameters
  std::map<const Symbol*, unsigned> paramIndex_;
  unsigned depth_ = 0;       // region nesting (if, loops)
  bool needsGroup_ = false;  // uses group features without a declared group shape
  void markNeedsGroup() {
    if (kernel_ && info_ && info_->groupShape.empty()) needsGroup_ = true;
  }

  // ---- async copies in flight (AsyncCopies.cpp)
  struct Pending {
    I::Value* token;
    I::Value* buf;
    unsigned depth;
  };
  std::vector<Pending> pending_;
  // A loop body that copies into shared memory and reads shared memory ends with a barrier, so
  // that the next iteration's copies cannot overwrite what a slower tile still reads.
  unsigned asyncCopies_ = 0;
  bool smemReadSinceBarrier_ = false;
  void waitFor(I::Value* buf, bool barrier);
  void waitAll();
  void flushRegion();
  void asyncCopy(I::Value* dst, I::Value* src, SourceRange at);
  I::Value* sharedFor(Lowered& dst, I::Value* srcView, SourceRange at);

  // ---- block loops: tile.range(T, axis=, step=) loops. The outermost ones distribute their
  // blocks over groups (grid-stride); `distributed_` records [parameter, axis, step] of each for
  // the default launch ({-1, ...} when T is not a parameter).
  unsigned blockLoopDepth_ = 0;
  std::vector<std::vector<int64_t>> distributed_;

  // ---- returns (Function.cpp, ControlFlow.cpp). Returns inside branches: a `returned` flag (and
  // the value, for device functions with a declared scalar result) kept as locals; the rest of a
  // block after a statement that may return runs under `if !returned`.
  std::vector<I::Value*> returned_;
  bool sawReturn_ = false;
  const Symbol* retFlag_ = nullptr;
  const Symbol* retVal_ = nullptr;
  bool containsReturn(const std::vector<Stmt*>& stmts, bool inLoop, bool& inLoopOut);
  void prepareReturns();
  void finishFunction(SourceRange at);

  // ---- break/continue (ControlFlow.cpp): per enclosing loop, i1 flags kept as synthetic locals
  // (null: not supported in that loop). The rest of a body after a statement that may jump runs
  // under `if !flags`.
  struct LoopCtx {
    const Symbol* brk = nullptr;
    const Symbol* cont = nullptr;
  };
  std::vector<LoopCtx> loops_;
  std::deque<Symbol> synth_;
  const Symbol* flagSymbol(const char* name, SourceRange at);
  void jumpsIn(const std::vector<Stmt*>& stmts, bool& brk, bool& cont);
  LoopCtx pushLoop(const tessera::Block& body, SourceRange at, bool supported);
  void popLoop();
  void lowerStmts(const std::vector<Stmt*>& stmts, size_t from);
  void lowerLoopBody(const tessera::Block& body);
  I::Value* notFlags(bool withBreak, bool withContinue, bool withReturn = false);
  void assignedIn(const tessera::Block& b, SymSet& out, int nest = 0);
  void assignedInStmts(const std::vector<Stmt*>& stmts, SymSet& out, int nest);
  void assignedTarget(Expr* t, SymSet& out);
  I::Type carriedType(const Symbol* s, const Lowered& v, SourceRange at, const char* construct);
  // The value `v` of local `s` at the end of a region, as the carried type `t`; a value of
  // another kind is reported as err_lower_type_change.
  I::Value* carriedValue(const Symbol* s, I::Value* v, I::Type t, SourceRange at, const char* construct);
  // Whether `body` assigns local `s` a computed value (not a slice or another name): a view of a
  // tensor carried through it is then carried as a tile value (loaded once before).
  static bool assignsComputedValue(const tessera::Block& body, const Symbol* s);

  // ---- the enclosing `for m, n, k in tile.mma(...)` loop (HandleLoop.cpp)
  struct MmaLoop {
    I::Value *A, *B, *m0, *n0, *k, *acc, *sA, *sB;
    int64_t BM, BN, BK;
    bool transB = false;  // B written `Bt.T`: Bt is [N, K] (K-major B), sB holds its [BN, BK] blocks
  };
  MmaLoop* mma_ = nullptr;

  // ---- extent equalities seen while lowering (inner extents of tile.dot, elementwise operands,
  // stores): they name the extents of unannotated parameters (UntypedParams.cpp).
  std::map<std::string, std::string> eq_;
  std::string findSym(const std::string& s);
  void unify(const I::Dim& a, const I::Dim& b);

  // ---- errors and builders
  I::IRContext& ctx();
  DiagnosticEngine& diags();
  [[noreturn]] void abort() { throw LowerAbort{}; }
  template <class... Args>
  [[noreturn]] void error(DiagID id, SourceRange at, const Args&... args) {
    {
      DiagBuilder d = diags().report(id, at);
      ((d << args), ...);
    }
    abort();
  }
  [[noreturn]] void unsupported(SourceRange at, const std::string& what, const std::string& hint = "") {
    error(diag::err_lower_unsupported, at, what, hint.empty() ? std::string() : "; " + hint);
  }
  std::string text(SourceRange r) const;
  void loc(const Node* n) {
    if (n && n->range.valid()) b_->setLoc(n->range.begin);
  }
  I::Operation* op(I::OpId id, const std::vector<I::Value*>& operands, const std::vector<I::Type>& results,
                   std::vector<I::NamedAttr> attrs = {}) {
    return b_->create(id, operands, results, std::move(attrs));
  }
  I::Value* op1(I::OpId id, const std::vector<I::Value*>& operands, I::Type result,
                std::vector<I::NamedAttr> attrs = {}) {
    return op(id, operands, {result}, std::move(attrs))->result();
  }
  // An op at the start of the function (shared buffers, extents read from parameters).
  I::Operation* prologue(I::OpId id, I::Type result, std::vector<I::NamedAttr> attrs = {},
                         const std::vector<I::Value*>& operands = {});

  // ---- types (Types.cpp, UntypedParams.cpp)
  I::Type scalarType(DType d, const NumericPolicy& p = {});
  I::Type paramType(const Param& p, const Type* t);
  // Unannotated parameters (docs/language.md): an f32 tensor of the rank its uses need, with
  // extents named after the parameter (X_0, X_1), readwrite when the kernel writes it.
  I::Type untypedParamType(const Param& p);
  InferredParam inferredParam(const Param& p);
  I::Type computeType(I::Type t);
  I::Type promote(I::Type a, I::Type b);
  I::Type elemOf(I::Type t) { return I::isScalar(t) ? t : t->elem; }
  bool isShapedValue(I::Type t) { return I::isValueShaped(t); }
  // A tile (or fragment of the same role) of `elem` with the shape of `like`.
  I::Type withElem(I::Type like, I::Type elem);
  // The compute type of a value of `t`, f32 (or an f32 tile) when that is not a float.
  I::Type floatComputeType(I::Type t);

  // ---- values (Values.cpp)
  I::Value* constant(double v, I::Type t);
  I::Value* coerce(I::Value* v, I::Type to, SourceRange at);
  I::Value* convertElem(I::Value* v, I::Type elem, SourceRange at);
  I::Value* broadcastTo(I::Value* v, const std::vector<I::Dim>& shape, SourceRange at);
  I::Value* expandDims(I::Value* t, SubscriptExpr* e);
  std::vector<I::Dim> broadcastShape(const std::vector<I::Dim>& x, const std::vector<I::Dim>& y);
  I::Value* asTile(I::Value* v, SourceRange at);
  I::Value* toBool(I::Value* v, SourceRange at);
  I::Value* value(const Lowered& lv, SourceRange at);
  I::Value* scalarValue(Expr* e, I::Type want);
  // Views used as tile values need every extent known: static or a shape symbol (not '?').
  I::Value* knownView(I::Value* v, SourceRange at, const std::string& name);
  // Shared memory needs static extents.
  void staticShared(I::Type t, SourceRange at, const std::string& name);
  // A full extent of dimension `d` of `full` as a slice size: static, or its symbol.
  I::Attribute fullExtent(const I::Dim& full, unsigned d, SourceRange at, const std::string& name);
  // mem.slice of `base` at `offsets` with `sizes` (integers or extent symbols); the dimensions in
  // `squeeze` (of size 1) leave the view.
  I::Value* slice(I::Value* base, const std::vector<I::Value*>& offsets, const std::vector<I::Attribute>& sizes,
                  const std::vector<int64_t>& squeeze = {});

  // ---- expressions (HandleExpr.cpp, HandleOperators.cpp)
  Lowered lower(Expr* e, I::Type want = nullptr);
  Lowered lowerName(NameExpr* e, I::Type want);
  Lowered lowerBinary(BinaryExpr* e, I::Type want);
  I::Value* arith(BinaryOp op, I::Value* a, I::Value* b, I::Type semaResult, SourceRange at);
  I::Value* compare(BinaryOp op, I::Value* a, I::Value* b, SourceRange at);
  Lowered lowerUnary(UnaryExpr* e, I::Type want);
  Lowered lowerConditional(ConditionalExpr* e, I::Type want);
  Lowered lowerShortCircuit(BinaryExpr* e);
  Lowered lowerSubscript(SubscriptExpr* e);
  Lowered lowerAttribute(AttributeExpr* e);
  Lowered lowerModuleConstant(const Symbol* s, I::Type want);
  I::Value* sliceView(I::Value* base, const std::vector<Argument>& indices, SubscriptExpr* e, bool& isElement,
                      std::vector<I::Value*>& elementIdx);
  std::optional<int64_t> sliceSize(SliceExpr* s, const I::Dim& full);
  std::optional<int64_t> constInt(Expr* e);
  bool isPure(Expr* e);

  // ---- calls (HandleCall.cpp) and builtins (Handle*Builtins.cpp)
  Lowered lowerCall(CallExpr* e, I::Type want);
  Lowered lowerBuiltin(const BuiltinInfo& b, const Type* typeArg, CallExpr* e, I::Type want);
  Lowered lowerUserCall(const Type* fnType, CallExpr* e);
  Lowered lowerCast(const Type* dt, CallExpr* e);
  Expr* argument(CallExpr* e, const BuiltinInfo& b, const char* name);
  const CallBinding* bindingOf(CallExpr* e);
  Expr* arg(const BuiltinCall& c, const char* name) { return argument(c.expr, c.info, name); }
  Lowered idOp(const BuiltinCall& c, I::OpId id);
  Lowered unsupportedBuiltin(const BuiltinCall& c);
  I::Value* unaryMath(I::OpId id, I::Value* v, SourceRange at);
  Lowered lowerUnaryMath(const BuiltinCall& c, I::OpId id);
  std::vector<I::Value*> typedArgs(const std::vector<Expr*>& args);
  Lowered lowerMinMax(const BuiltinCall& c, bool isMin);
  Lowered lowerReduction(const BuiltinCall& c, const char* kind);
  I::Value* reduceTile(I::Value* t, const std::string& kind, std::optional<int64_t> axis, SourceRange at);
  Lowered lowerIndexedAccess(const BuiltinCall& c, bool isStore);
  Lowered lowerTileFill(const BuiltinCall& c, bool full);
  Lowered lowerCopyIntoShared(const BuiltinCall& c, Lowered dst, Expr* dstE, Expr* srcE);
  Lowered lowerShuffle(const BuiltinCall& c, const char* mode);
  Lowered lowerVote(const BuiltinCall& c, const char* mode);
  Lowered lowerAtomic(const BuiltinCall& c, const char* kind);
  Lowered lowerGroupMethod(const BuiltinCall& c);
  Lowered lowerGroupReduce(const BuiltinCall& c, const char* kind);
  std::pair<I::Value*, I::Value*> productOperands(const BuiltinCall& c, const char* what);
  Lowered lowerSharedAlloc(const BuiltinCall& c);
  std::optional<int64_t> constAxis(Expr* a);

  // One member per builtin that kernels may call (context Kernel or Both in sema/Builtins.def),
  // named handle<Id>. BuiltinTable.cpp dispatches on the builtin's id; a row of Builtins.def
  // without its handler is a link error. ELEMENTWISE rows share handleElementwise, which emits
  // the Tile IR op their row names.
#define IRGEN_HANDLER_Kernel(ID) Lowered handle##ID(const BuiltinCall& c);
#define IRGEN_HANDLER_Both(ID) IRGEN_HANDLER_Kernel(ID)
#define IRGEN_HANDLER_Host(ID)
#define BUILTIN(ID, NAME, SIG, CTX, EFF, DOC) IRGEN_HANDLER_##CTX(ID)
#define ELEMENTWISE(ID, NAME, OP, DOC)
#include "sema/Builtins.def"
  Lowered handleElementwise(const BuiltinCall& c, I::OpId op);
#undef IRGEN_HANDLER_Kernel
#undef IRGEN_HANDLER_Both
#undef IRGEN_HANDLER_Host
  friend struct BuiltinTable;
  friend struct ExprLowering;    // the dispatch on expression kinds (HandleExpr.cpp)
  friend struct StmtLowering;    // the dispatch on statement kinds (HandleStmt.cpp)
  friend struct TargetLowering;  // the dispatch of assign on the target's form (HandleStmt.cpp)
  friend struct ConstIntEval;    // constInt and isPure by expression kind (HandleExpr.cpp)
  friend struct PurityCheck;
  friend struct LocalsAssigned;  // assignedIn and containsReturn by statement kind (ControlFlow.cpp)
  friend struct ReturnFinder;
  friend struct JumpFinder;

  // ---- statements (HandleStmt.cpp)
  void lowerBlock(const tessera::Block& b);
  void lowerStmt(Stmt* s);
  void lowerReturn(ReturnStmt* r);
  void assign(Expr* target, const Lowered& v, SourceRange at);
  void assignName(NameExpr* n, const Lowered& v, SourceRange at);
  void store(Expr* target, I::Value* v, SourceRange at);
  void lowerAugAssign(AugAssignStmt* s);
  I::Type localType(Expr* target);
  void lowerIf(IfStmt* s);
  void lowerIfCore(I::Value* c, const std::function<void()>& thenFn, const std::function<void()>& elseFn,
                   const SymSet& assigned, SourceRange at);

  // ---- loops (HandleLoop.cpp)
  void lowerFor(ForStmt* s);
  void lowerRangeLoop(ForStmt* s, CallExpr* call, const SymSet& targets);
  void lowerMultiAxisLoop(ForStmt* s, CallExpr* call, TupleExpr* axes, const SymSet& targets);
  void lowerTileRangeLoop(ForStmt* s, CallExpr* call, const SymSet& targets);
  void lowerWhile(WhileStmt* s);
  void lowerMmaLoop(ForStmt* s, CallExpr* call);
  // A loop over [lb, ub) by step; `bindIv` binds the induction variable before the body.
  void buildLoop(I::OpId id, I::Value* lb, I::Value* ub, I::Value* step, std::vector<I::NamedAttr> attrs,
                 const tessera::Block& bodyStmts, SourceRange at, const char* construct,
                 const std::function<void(I::Value*)>& bindIv, const SymSet& exclude, I::Value* extraInit = nullptr,
                 I::Value** extraOut = nullptr);

  // ---- whole-tensor tile programs (docs/language.md): sema's definition; the lowering marks
  // them `whole_tensor` and lowers the body over whole tensors, the row-partition pass splits
  // the output's rows into blocks across groups (ir/passes/RowPartition.cpp).
  bool wholeTensorProgram() { return kernel_ && info_ && isWholeTensorProgram(*def_, *info_); }
};

// The module being built: kernels in source order, device functions (specialised by argument
// types) before the first kernel that calls them.
class ModuleContext {
 public:
  // Lowers into `into` when given (autotune candidates), else into a module of its own.
  ModuleContext(const SemaContext& sema, DiagnosticEngine& diags, I::Module* into = nullptr)
      : sema(sema), diags(diags) {
    if (!into) owned = std::make_unique<I::Module>();
    module = into ? into : owned.get();
  }
  const SemaContext& sema;
  DiagnosticEngine& diags;
  std::unique_ptr<I::Module> owned;
  I::Module* module = nullptr;
  struct DeviceKey {
    const FunctionDefStmt* def;
    std::vector<I::Type> args;
    bool operator<(const DeviceKey& o) const { return def != o.def ? def < o.def : args < o.args; }
  };
  struct DeviceFn {
    std::string name;
    std::vector<I::Type> results;
  };
  std::map<DeviceKey, DeviceFn> devices;
  std::set<const FunctionDefStmt*> inProgress;
  unsigned deviceDepth = 0;  // device functions being lowered, each from a call in the previous
  std::set<std::string> names;
  I::Operation* insertBefore = nullptr;  // device functions go before the kernel that needs them

  const FunctionInfo* info(const FunctionDefStmt* f) const {
    auto it = sema.functions.find(f);
    return it == sema.functions.end() ? nullptr : it->second.get();
  }
  std::string uniqueName(const std::string& base);
  // Lowers (once per argument types) the device function `def`; false after a diagnostic.
  bool device(const FunctionDefStmt* def, const std::vector<I::Type>& args, SourceRange callAt, DeviceFn& out);
  // Removes the function `name` (a partial function after a diagnostic).
  void eraseFunction(const std::string& name, bool kernelOnly);
};

}  // namespace tessera::irgen
