// Lowering from the typed AST to Tile IR. One FnLowering per function: locals live in an
// environment from sema's symbols to SSA values; control flow becomes structured ops whose
// results (scf.if) and iteration arguments (scf.for, tile.range, scf.while) carry the locals
// that a branch or a loop body assigns. The rules are in docs/tile-ir.md, "Lowering from the AST".
#include "ir/lower/Lower.h"

#include <algorithm>
#include <cmath>
#include <deque>
#include <functional>
#include <map>
#include <optional>
#include <set>

#include "sema/ASTWalk.h"
#include "sema/Sema.h"

namespace tessera {

namespace {

namespace I = ir;

// Thrown after a diagnostic: lowering of the current function stops (one error per function).
struct LowerAbort {};

// A lowered expression: an SSA value, or a compile-time structure around values.
struct LV {
  enum Kind : uint8_t { None, Val, Tuple, Block, Unsized } kind = None;
  I::Value* v = nullptr;        // Val; Block: start index
  std::vector<LV> elems;        // Tuple
  int64_t size = 0;             // Block: extent along `axis`
  int axis = 0;                 // Block
  DType dtype = DType::FP32;    // Unsized: element dtype
  const Symbol* sym = nullptr;  // Unsized: the variable that names it
  static LV val(I::Value* v) {
    LV l;
    l.kind = Val;
    l.v = v;
    return l;
  }
  static LV tuple(std::vector<LV> e) {
    LV l;
    l.kind = Tuple;
    l.elems = std::move(e);
    return l;
  }
};

bool sameLV(const LV& a, const LV& b) {
  if (a.kind != b.kind || a.v != b.v || a.size != b.size || a.axis != b.axis || a.sym != b.sym) return false;
  if (a.elems.size() != b.elems.size()) return false;
  for (size_t i = 0; i < a.elems.size(); ++i)
    if (!sameLV(a.elems[i], b.elems[i])) return false;
  return true;
}

I::ScalarKind scalarKindOf(DType d) {
  using S = I::ScalarKind;
  switch (d) {
    case DType::FP64:
      return S::F64;
    case DType::FP32:
      return S::F32;
    case DType::FP16:
      return S::F16;
    case DType::BF16:
      return S::BF16;
    case DType::FP8_E4M3:
      return S::F8E4M3;
    case DType::FP8_E5M2:
      return S::F8E5M2;
    case DType::FP6_E2M3:
      return S::F6E2M3;
    case DType::FP6_E3M2:
      return S::F6E3M2;
    case DType::FP4_E2M1:
      return S::F4E2M1;
    case DType::INT4:
      return S::I4;
    case DType::INT8:
      return S::I8;
    case DType::INT16:
      return S::I16;
    case DType::INT32:
      return S::I32;
    case DType::INT64:
      return S::I64;
    case DType::UINT8:
      return S::U8;
    case DType::UINT16:
      return S::U16;
    case DType::UINT32:
      return S::U32;
    case DType::UINT64:
      return S::U64;
    case DType::BOOL:
      return S::I1;
    default:
      return S::F32;
  }
}

bool isFloatKind(I::ScalarKind k) {
  return I::scalarClass(k) == I::ScalarClass::Float;
}
bool isUnsignedKind(I::ScalarKind k) {
  return I::scalarClass(k) == I::ScalarClass::UInt;
}

// Extent text -> IR dimension. Derived extents (K/tp) become one identifier (K_tp): the textual
// IR names extents by identifiers only.
I::Dim dimOf(const Extent& e) {
  I::Dim d;
  if (extentIsConst(e)) {
    d.size = extentValue(e);
    return d;
  }
  if (e.empty() || e == "?") return d;
  std::string s;
  for (char c : e) {
    bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
    if (ok)
      s += c;
    else if (!s.empty() && s.back() != '_')
      s += '_';
  }
  while (!s.empty() && s.back() == '_') s.pop_back();
  if (s.empty() || (s[0] >= '0' && s[0] <= '9')) s = "d" + s;
  d.sym = s;
  return d;
}

// Visits every expression (recursively) of `b`, nested blocks included; `onStmt` sees each
// statement first.
void walkExpr(Expr* e, const std::function<void(Expr*)>& fe) {
  if (!e) return;
  fe(e);
  forEachChild(e, [&](Expr* c) { walkExpr(c, fe); });
}
void walkBlock(const tessera::Block& b, const std::function<void(Stmt*)>& onStmt,
               const std::function<void(Expr*)>& fe) {
  for (Stmt* s : b.stmts) {
    if (!s) continue;
    onStmt(s);
    if (auto* x = dyn_cast<ExprStmt>(s)) {
      walkExpr(x->expr, fe);
    } else if (auto* a = dyn_cast<AssignStmt>(s)) {
      for (Expr* t : a->targets) walkExpr(t, fe);
      walkExpr(a->value, fe);
    } else if (auto* au = dyn_cast<AugAssignStmt>(s)) {
      walkExpr(au->target, fe);
      walkExpr(au->value, fe);
    } else if (auto* an = dyn_cast<AnnAssignStmt>(s)) {
      walkExpr(an->target, fe);
      walkExpr(an->value, fe);
    } else if (auto* r = dyn_cast<ReturnStmt>(s)) {
      walkExpr(r->value, fe);
    } else if (auto* i = dyn_cast<IfStmt>(s)) {
      walkExpr(i->cond, fe);
      walkBlock(i->thenBlock, onStmt, fe);
      walkBlock(i->elseBlock, onStmt, fe);
    } else if (auto* w = dyn_cast<WhileStmt>(s)) {
      walkExpr(w->cond, fe);
      walkBlock(w->body, onStmt, fe);
      walkBlock(w->elseBlock, onStmt, fe);
    } else if (auto* f = dyn_cast<ForStmt>(s)) {
      walkExpr(f->target, fe);
      walkExpr(f->iter, fe);
      walkBlock(f->body, onStmt, fe);
      walkBlock(f->elseBlock, onStmt, fe);
    } else if (auto* wi = dyn_cast<WithStmt>(s)) {
      for (WithItem& it : wi->items) {
        walkExpr(it.context, fe);
        walkExpr(it.target, fe);
      }
      walkBlock(wi->body, onStmt, fe);
    }
  }
}
const BuiltinInfo* builtinOf(Expr* callee) {
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

class ModuleLowering;

class FnLowering {
 public:
  FnLowering(ModuleLowering& ml, const FunctionDefStmt* def, const FunctionInfo* info, bool kernel)
      : ml_(ml), def_(def), info_(info), kernel_(kernel) {}

  // Kernel: builds the tile.func from the annotations. Device function: `argTypes` are the
  // types at the call site (scalars take the annotation's type when there is one).
  I::Operation* lowerKernel();
  I::Operation* lowerDevice(const std::string& name, const std::vector<I::Type>& argTypes,
                            std::vector<I::Type>& resultTypes);

 private:
  // ---- plumbing
  ModuleLowering& ml_;
  const FunctionDefStmt* def_;
  const FunctionInfo* info_;
  bool kernel_;
  I::Operation* func_ = nullptr;
  I::Block* top_ = nullptr;
  std::unique_ptr<I::Builder> b_;
  I::Operation* prologueLast_ = nullptr;
  std::map<const Symbol*, LV> env_;
  std::map<const Symbol*, std::string> dropped_;  // symbol -> construct that left it undefined
  std::map<std::string, I::Value*> shapeDims_;
  std::map<const Symbol*, unsigned> paramIndex_;
  unsigned depth_ = 0;
  struct Pending {
    I::Value* token;
    I::Value* buf;
    unsigned depth;
  };
  std::vector<Pending> pending_;
  bool needsGroup_ = false;
  // tile.range(T, axis=, step=) loops: the outermost ones distribute their blocks over groups
  // (grid-stride); `blocks` records [parameter, axis, step] of each for the default launch.
  unsigned blockLoopDepth_ = 0;
  std::vector<std::vector<int64_t>> distributed_;  // {-1, ...} when T is not a parameter
  // A loop body that copies into shared memory and reads shared memory ends with a barrier, so
  // that the next iteration's copies cannot overwrite what a slower tile still reads.
  unsigned asyncCopies_ = 0;
  bool smemReadSinceBarrier_ = false;
  std::vector<I::Value*> returned_;
  bool sawReturn_ = false;
  // Returns inside branches: a `returned` flag (and the value, for device functions with a
  // declared scalar result) kept as locals; the rest of a block after a statement that may
  // return runs under `if !returned`.
  const Symbol* retFlag_ = nullptr;
  const Symbol* retVal_ = nullptr;
  bool containsReturn(const std::vector<Stmt*>& stmts, bool inLoop, bool& inLoopOut);
  void prepareReturns();
  // The enclosing `for m, n, k in tile.mma(...)` loop.
  struct MmaLoop {
    I::Value *A, *B, *m0, *n0, *k, *acc, *sA, *sB;
    int64_t BM, BN, BK;
  };
  MmaLoop* mma_ = nullptr;
  // break/continue: per enclosing loop, i1 flags kept as synthetic locals (null: not supported
  // in that loop). The rest of a body after a statement that may jump runs under `if !flags`.
  struct LoopCtx {
    const Symbol* brk = nullptr;
    const Symbol* cont = nullptr;
  };
  std::vector<LoopCtx> loops_;
  std::deque<Symbol> synth_;
  const Symbol* flagSymbol(const char* name, SourceRange at) {
    synth_.emplace_back();
    Symbol& f = synth_.back();
    f.name = name;
    f.declRange = at;
    f.kind = SymbolKind::Variable;
    return &f;
  }
  void jumpsIn(const std::vector<Stmt*>& stmts, bool& brk, bool& cont);
  LoopCtx pushLoop(const tessera::Block& body, SourceRange at, bool supported);
  void popLoop();
  void lowerStmts(const std::vector<Stmt*>& stmts, size_t from);
  void lowerLoopBody(const tessera::Block& body);
  I::Value* notFlags(bool withBreak, bool withContinue, bool withReturn = false);
  void lowerIfCore(I::Value* c, const std::function<void()>& thenFn, const std::function<void()>& elseFn,
                   const SymSet& assigned, SourceRange at);

  // Extent equalities seen while lowering (inner extents of tile.dot, elementwise operands,
  // stores): they name the extents of unannotated parameters in whole-tensor programs.
  std::map<std::string, std::string> eq_;
  std::string findSym(const std::string& s) {
    std::string r = s;
    for (auto it = eq_.find(r); it != eq_.end() && it->second != r; it = eq_.find(r)) r = it->second;
    return r;
  }
  void unify(const I::Dim& a, const I::Dim& b) {
    if (a.sym.empty() || b.sym.empty()) return;
    std::string x = findSym(a.sym), y = findSym(b.sym);
    if (x != y) eq_[y] = x;
  }

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
    error(DiagID::err_lower_unsupported, at, what, hint.empty() ? std::string() : "; " + hint);
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
  I::Operation* prologue(I::OpId id, I::Type result, std::vector<I::NamedAttr> attrs = {},
                         const std::vector<I::Value*>& operands = {});

  // ---- types
  I::Type scalarType(DType d, const NumericPolicy& p = {});
  I::Type paramType(const Param& p, const Type* t);
  // Unannotated parameters (docs/language.md): an f32 tensor of the rank its uses need, with
  // extents named after the parameter (X_0, X_1), readwrite when the kernel writes it.
  I::Type untypedParamType(const Param& p);
  int usesRank(const std::string& name, bool& written);

 public:
  // Whole-tensor programs with unannotated parameters are lowered twice: a dry run collects the
  // extent equalities (eq_), then the parameters' extents are named by their classes.
  bool dryRun_ = false;
  std::set<std::string> usedSyms_;              // extents of annotated parameters
  std::vector<std::string> genNames_;           // generated extent names, in parameter order
  std::map<std::string, std::string> rename_;   // generated name -> the name of its class
  bool needsShapeInference();
  std::map<std::string, std::string> extentClasses();

 private:
  I::Type computeType(I::Type t);
  I::Type promote(I::Type a, I::Type b);
  I::Type elemOf(I::Type t) { return I::isScalar(t) ? t : t->elem; }
  bool isShapedValue(I::Type t) { return I::isValueShaped(t); }

  // ---- values
  I::Value* constant(double v, I::Type t);
  I::Value* coerce(I::Value* v, I::Type to, SourceRange at);
  I::Value* convertElem(I::Value* v, I::Type elem, SourceRange at);
  I::Value* broadcastTo(I::Value* v, const std::vector<I::Dim>& shape, SourceRange at);
  I::Value* asTile(I::Value* v, SourceRange at);
  I::Value* toBool(I::Value* v, SourceRange at);
  I::Value* value(const LV& lv, SourceRange at);
  I::Value* scalarValue(Expr* e, I::Type want);
  void waitFor(I::Value* buf, bool barrier);
  void waitAll(bool barrier);
  void flushRegion();
  // Views used as tile values need every extent known: static or a shape symbol (not '?').
  I::Value* knownView(I::Value* v, SourceRange at, const std::string& name);
  // Shared memory needs static extents.
  void staticShared(I::Type t, SourceRange at, const std::string& name);

  // ---- expressions
  LV lower(Expr* e, I::Type want = nullptr);
  LV lowerName(NameExpr* e, I::Type want);
  LV lowerBinary(BinaryExpr* e, I::Type want);
  I::Value* arith(BinaryOp op, I::Value* a, I::Value* b, I::Type semaResult, SourceRange at);
  I::Value* compare(BinaryOp op, I::Value* a, I::Value* b, SourceRange at);
  LV lowerUnary(UnaryExpr* e, I::Type want);
  LV lowerConditional(ConditionalExpr* e, I::Type want);
  LV lowerShortCircuit(BinaryExpr* e);
  LV lowerSubscript(SubscriptExpr* e);
  LV lowerAttribute(AttributeExpr* e);
  LV lowerCall(CallExpr* e, I::Type want);
  LV lowerBuiltin(const BuiltinInfo& b, const Type* typeArg, CallExpr* e, I::Type want);
  LV lowerMath(const BuiltinInfo& b, CallExpr* e, const std::vector<Expr*>& args);
  LV lowerUserCall(const Type* fnType, CallExpr* e);
  LV lowerCast(const Type* dt, CallExpr* e);
  I::Value* sliceView(I::Value* base, const std::vector<Argument>& indices, SubscriptExpr* e, bool& isElement,
                      std::vector<I::Value*>& elementIdx);
  I::Value* sharedFor(LV& dst, I::Value* srcView, SourceRange at);
  void asyncCopy(I::Value* dst, I::Value* src, SourceRange at);
  I::Value* unaryMath(I::OpId id, I::Value* v, SourceRange at);
  I::Value* reduceTile(I::Value* t, const std::string& kind, std::optional<int64_t> axis, SourceRange at);
  std::optional<int64_t> constInt(Expr* e);
  bool isPure(Expr* e);
  Expr* argument(CallExpr* e, const BuiltinInfo& b, const char* name);

  // ---- statements
  void lowerBlock(const tessera::Block& b);
  void lowerStmt(Stmt* s);
  void assign(Expr* target, const LV& v, SourceRange at);
  void assignName(NameExpr* n, const LV& v, SourceRange at);
  void store(Expr* target, I::Value* v, SourceRange at);
  void lowerAugAssign(AugAssignStmt* s);
  void lowerIf(IfStmt* s);
  void lowerFor(ForStmt* s);
  void lowerWhile(WhileStmt* s);
  void lowerMmaLoop(ForStmt* s, CallExpr* call);
  void assignedIn(const tessera::Block& b, SymSet& out, int nest = 0);
  void assignedInStmts(const std::vector<Stmt*>& stmts, SymSet& out, int nest);
  void assignedTarget(Expr* t, SymSet& out);
  I::Type carriedType(const Symbol* s, const LV& v, SourceRange at, const char* construct);
  // A loop over [lb, ub) by step; `body` lowers the body with the induction variable.
  void buildLoop(I::OpId id, I::Value* lb, I::Value* ub, I::Value* step, std::vector<I::NamedAttr> attrs,
                 const tessera::Block& bodyStmts, SourceRange at, const char* construct,
                 const std::function<void(I::Value*)>& bindIv, const SymSet& exclude, I::Value* extraInit = nullptr,
                 I::Value** extraOut = nullptr);
  void finishFunction(SourceRange at);
  // Whole-tensor tile programs (docs/language.md): the rows of the output are split into blocks
  // of kRowBlock across groups.
  static constexpr int64_t kRowBlock = 16;
  bool wholeTensorProgram();
  void lowerRowBlocks(const std::vector<const Param*>& params, unsigned outIdx);
  void checkRowsIndependent(I::Operation* loop, const std::map<const I::Value*, std::string>& roots,
                            const std::string& out);
};

class ModuleLowering {
 public:
  ModuleLowering(const SemaContext& sema, DiagnosticEngine& diags) : sema(sema), diags(diags) {
    module = std::make_unique<I::Module>();
  }
  const SemaContext& sema;
  DiagnosticEngine& diags;
  std::unique_ptr<I::Module> module;
  // Device functions, specialised by argument types.
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
  std::set<std::string> names;
  I::Operation* insertBefore = nullptr;  // device functions go before the kernel that needs them

  const FunctionInfo* info(const FunctionDefStmt* f) const {
    auto it = sema.functions.find(f);
    return it == sema.functions.end() ? nullptr : it->second.get();
  }
  std::string uniqueName(const std::string& base) {
    std::string n = base;
    for (unsigned k = 1; names.count(n); ++k) n = base + "_" + std::to_string(k);
    names.insert(n);
    return n;
  }
  // Lowers (once per argument types) the device function `def`; false after a diagnostic.
  bool device(const FunctionDefStmt* def, const std::vector<I::Type>& args, SourceRange callAt, DeviceFn& out);
};

I::IRContext& FnLowering::ctx() {
  return ml_.module->ctx();
}
DiagnosticEngine& FnLowering::diags() {
  return ml_.diags;
}

std::string FnLowering::text(SourceRange r) const {
  std::string_view t = ml_.sema.sm.text(r);
  return std::string(t);
}

I::Operation* FnLowering::prologue(I::OpId id, I::Type result, std::vector<I::NamedAttr> attrs,
                                   const std::vector<I::Value*>& operands) {
  I::Builder pb(ctx());
  if (prologueLast_)
    pb.setInsertionPointAfter(prologueLast_);
  else
    pb.setInsertionPointToStart(*top_);
  pb.setLoc(b_->loc());
  I::Operation* o = pb.create(id, operands, {result}, std::move(attrs));
  prologueLast_ = o;
  return o;
}

// ------------------------------------------------------------------------------------ types

I::Type FnLowering::scalarType(DType d, const NumericPolicy& p) {
  I::Type base = ctx().scalar(scalarKindOf(d));
  bool hasPolicy = p.accum || (p.round && *p.round != RoundMode::NearestEven) || p.saturate;
  if (!hasPolicy) return base;
  I::Type accum = p.accum ? ctx().scalar(scalarKindOf(*p.accum)) : nullptr;
  I::Rounding r = I::Rounding::Default;
  if (p.round) {
    switch (*p.round) {
      case RoundMode::NearestEven:
        r = I::Rounding::NearestEven;
        break;
      case RoundMode::TowardZero:
        r = I::Rounding::TowardZero;
        break;
      case RoundMode::Stochastic:
        r = I::Rounding::Stochastic;
        break;
    }
  }
  return ctx().num(base, accum, r, p.saturate);
}

I::Type FnLowering::paramType(const Param& p, const Type* t) {
  if (t && t->isDynamic() && !p.annotation) return untypedParamType(p);
  if (!t || t->isLenient()) error(DiagID::err_lower_untyped_param, p.nameRange, p.name, def_->name);
  if (t->kind == TypeKind::Scalar) return scalarType(t->dtype, t->policy);
  if (t->kind != TypeKind::Tensor) unsupported(p.nameRange, "a parameter of type '" + t->str() + "'");
  if (!t->dtypeKnown) error(DiagID::err_lower_untyped_param, p.nameRange, p.name, def_->name);
  std::vector<I::Dim> shape;
  if (t->rankKnown) {
    for (const Extent& e : t->dims) shape.push_back(dimOf(e));
  } else {
    // tensor[T] of unknown rank: the rank its uses need (subscripts, tile.dot/tile.mma operands).
    int rank = -1;
    std::function<void(const tessera::Block&)> scan;
    std::function<void(Expr*)> scanExpr = [&](Expr* e) {
      if (!e) return;
      if (auto* s = dyn_cast<SubscriptExpr>(e)) {
        if (auto* n = dyn_cast<NameExpr>(s->base); n && n->name == p.name) {
          int k = 0;
          for (auto& a : s->indices)
            if (a.kind == Argument::Positional) {
              auto* tu = dyn_cast<TupleExpr>(a.value);
              k += tu && !tu->parenthesized ? static_cast<int>(tu->elements.size()) : 1;
            }
          rank = std::max(rank, k);
        }
        scanExpr(s->base);
        for (auto& a : s->indices) scanExpr(a.value);
      } else if (auto* c = dyn_cast<CallExpr>(e)) {
        std::string callee = text(c->callee->range);
        bool matrix = callee.find("mma") != std::string::npos || callee.find("dot") != std::string::npos;
        for (auto& a : c->args) {
          if (auto* n = dyn_cast<NameExpr>(a.value); n && n->name == p.name && matrix) rank = std::max(rank, 2);
          scanExpr(a.value);
        }
        scanExpr(c->callee);
      } else if (auto* b = dyn_cast<BinaryExpr>(e)) {
        scanExpr(b->lhs);
        scanExpr(b->rhs);
      } else if (auto* u = dyn_cast<UnaryExpr>(e)) {
        scanExpr(u->operand);
      } else if (auto* a = dyn_cast<AttributeExpr>(e)) {
        scanExpr(a->base);
      } else if (auto* c2 = dyn_cast<ConditionalExpr>(e)) {
        scanExpr(c2->cond);
        scanExpr(c2->thenExpr);
        scanExpr(c2->elseExpr);
      } else if (auto* t2 = dyn_cast<TupleExpr>(e)) {
        for (Expr* x : t2->elements) scanExpr(x);
      }
    };
    scan = [&](const tessera::Block& b) {
      for (Stmt* s : b.stmts) {
        if (auto* es = dyn_cast<ExprStmt>(s))
          scanExpr(es->expr);
        else if (auto* as = dyn_cast<AssignStmt>(s)) {
          for (Expr* t2 : as->targets) scanExpr(t2);
          scanExpr(as->value);
        } else if (auto* au = dyn_cast<AugAssignStmt>(s)) {
          scanExpr(au->target);
          scanExpr(au->value);
        } else if (auto* is = dyn_cast<IfStmt>(s)) {
          scanExpr(is->cond);
          scan(is->thenBlock);
          scan(is->elseBlock);
        } else if (auto* fs = dyn_cast<ForStmt>(s)) {
          scanExpr(fs->iter);
          scan(fs->body);
        } else if (auto* ws = dyn_cast<WhileStmt>(s)) {
          scanExpr(ws->cond);
          scan(ws->body);
        }
      }
    };
    scan(def_->body);
    if (rank < 1) error(DiagID::err_lower_unknown_rank, p.nameRange, p.name, dtypeInfo(t->dtype).shortName);
    shape.assign(static_cast<size_t>(rank), I::Dim{});
  }
  I::Access access = I::Access::Read;
  if (t->mut) access = I::Access::ReadWrite;
  if (t->privilege == Privilege::Write) access = I::Access::Write;
  if (t->privilege == Privilege::ReduceSum || t->privilege == Privilege::ReduceMax ||
      t->privilege == Privilege::ReduceMin)
    access = I::Access::ReadWrite;
  return ctx().tensor(scalarType(t->dtype, t->policy), shape, I::MemSpace::Global, access);
}

// The rank the uses of parameter `name` need, and whether the kernel writes it: subscripts
// (X[i, j] is rank 2), operands of tile.dot / tile.mma / '@' and '.T' (rank 2, also for a block
// Q[block] of it), the value stored into a slice or block of it (Out[:] = t has t's rank), and an operand of elementwise arithmetic with a
// tile value (a bias: rank 1). 0 when nothing says it is a tensor.
int FnLowering::usesRank(const std::string& name, bool& written) {
  std::map<const Symbol*, int> locals;
  int rank = 0;
  std::function<int(Expr*)> rankOf = [&](Expr* e) -> int {
    if (!e) return 0;
    if (e->type && (e->type->kind == TypeKind::Tile || e->type->kind == TypeKind::Fragment ||
                    e->type->kind == TypeKind::Tensor) &&
        e->type->rankKnown)
      return static_cast<int>(e->type->dims.size());
    if (auto* n = dyn_cast<NameExpr>(e)) {
      if (n->name == name) return rank;
      auto it = locals.find(n->symbol);
      return it == locals.end() ? 0 : it->second;
    }
    if (auto* b = dyn_cast<BinaryExpr>(e)) {
      if (b->op == BinaryOp::MatMul) return 2;
      return std::max(rankOf(b->lhs), rankOf(b->rhs));
    }
    if (auto* u = dyn_cast<UnaryExpr>(e)) return rankOf(u->operand);
    if (auto* a = dyn_cast<AttributeExpr>(e)) return a->name == "T" ? 2 : 0;
    if (auto* c = dyn_cast<CallExpr>(e)) {
      const BuiltinInfo* b = builtinOf(c->callee);
      Expr* first = c->args.empty() ? nullptr : c->args[0].value;
      if (c->callee->type && c->callee->type->kind == TypeKind::DTypeValue) return rankOf(first);
      if (!b) return 0;
      switch (b->id) {
        case BuiltinId::TileDot:
        case BuiltinId::TileMma:
          return 2;
        case BuiltinId::TileRelu:
        case BuiltinId::TileGelu:
        case BuiltinId::TileSigmoid:
        case BuiltinId::TileSoftmax:
          return rankOf(first);
        default:
          return 0;
      }
    }
    return 0;
  };
  auto isName = [&](Expr* e) {
    auto* n = dyn_cast<NameExpr>(e);
    return n && n->name == name;
  };
  // The parameter, or a block or slice of it (Q[block], X[a:b]): a matrix operand needs rank 2.
  auto isValueOf = [&](Expr* e) {
    if (isName(e)) return true;
    auto* sub = dyn_cast<SubscriptExpr>(e);
    return sub && isName(sub->base) && sub->indices.size() == 1;
  };
  for (int pass = 0; pass < 3; ++pass) {
    walkBlock(
        def_->body,
        [&](Stmt* st) {
          auto target = [&](Expr* t, Expr* value) {
            if (isName(t)) {
              written = written || isa<AugAssignStmt>(st);
              return;
            }
            if (auto* sub = dyn_cast<SubscriptExpr>(t); sub && isName(sub->base)) {
              written = true;
              if (value) rank = std::max(rank, rankOf(value));
            }
            if (auto* n = dyn_cast<NameExpr>(t); n && n->symbol && value)
              locals[n->symbol] = std::max(locals[n->symbol], rankOf(value));
          };
          if (auto* a = dyn_cast<AssignStmt>(st))
            for (Expr* t : a->targets) target(t, a->value);
          if (auto* au = dyn_cast<AugAssignStmt>(st)) target(au->target, au->value);
          if (auto* an = dyn_cast<AnnAssignStmt>(st)) target(an->target, an->value);
        },
        [&](Expr* e) {
          if (auto* s2 = dyn_cast<SubscriptExpr>(e); s2 && isName(s2->base)) {
            int k = 0;
            for (auto& a : s2->indices)
              if (a.kind == Argument::Positional) {
                auto* tu = dyn_cast<TupleExpr>(a.value);
                k += tu && !tu->parenthesized ? static_cast<int>(tu->elements.size()) : 1;
              }
            rank = std::max(rank, k);
          } else if (auto* b = dyn_cast<BinaryExpr>(e)) {
            if (b->op == BinaryOp::MatMul && (isValueOf(b->lhs) || isValueOf(b->rhs))) rank = std::max(rank, 2);
            bool arith = b->op == BinaryOp::Add || b->op == BinaryOp::Sub || b->op == BinaryOp::Mul ||
                         b->op == BinaryOp::Div;
            if (arith && ((isName(b->lhs) && rankOf(b->rhs) >= 1) || (isName(b->rhs) && rankOf(b->lhs) >= 1)))
              rank = std::max(rank, 1);
          } else if (auto* a = dyn_cast<AttributeExpr>(e); a && isValueOf(a->base) && a->name == "T") {
            rank = std::max(rank, 2);
          } else if (auto* c = dyn_cast<CallExpr>(e)) {
            const BuiltinInfo* b = builtinOf(c->callee);
            if (!b) return;
            for (size_t i = 0; i < c->args.size(); ++i) {
              if ((b->id == BuiltinId::TileDot || b->id == BuiltinId::TileMma) && isValueOf(c->args[i].value))
                rank = std::max(rank, 2);
              if (!isName(c->args[i].value)) continue;
              if ((b->id == BuiltinId::TileStore || b->id == BuiltinId::AtomicAdd) && i == 0) written = true;
              if (b->id == BuiltinId::TileLoad || b->id == BuiltinId::TileStore || b->id == BuiltinId::TileCpAsync ||
                  b->id == BuiltinId::TileRange)
                rank = std::max(rank, 1);
            }
          }
        });
  }
  return rank;
}

I::Type FnLowering::untypedParamType(const Param& p) {
  bool written = false;
  int rank = usesRank(p.name, written);
  if (rank < 1) error(DiagID::err_lower_untyped_param, p.nameRange, p.name, def_->name);
  std::vector<I::Dim> shape;
  for (int d = 0; d < rank; ++d) {
    std::string g = dimOf(p.name + "_" + std::to_string(d)).sym;
    while (usedSyms_.count(g)) g += "_";
    usedSyms_.insert(g);
    genNames_.push_back(g);
    auto it = rename_.find(g);
    shape.push_back(I::Dim{-1, it == rename_.end() ? g : it->second});
  }
  return ctx().tensor(ctx().scalar(I::ScalarKind::F32), shape, I::MemSpace::Global,
                      written ? I::Access::ReadWrite : I::Access::Read);
}

bool FnLowering::needsShapeInference() {
  if (!kernel_) return false;
  for (const Param& p : def_->params) {
    const Symbol* sym = info_ && info_->scope ? info_->scope->lookupLocal(p.name) : nullptr;
    if (!p.annotation && sym && sym->type && sym->type->isDynamic()) return true;
  }
  return false;
}

// Each generated extent name -> the name of its class of equal extents: an annotated extent of
// the class if there is one, else the first generated name of the class (parameter order).
std::map<std::string, std::string> FnLowering::extentClasses() {
  std::map<std::string, std::string> repOf;  // class root -> chosen name
  for (auto& [a, b] : eq_) {
    for (const std::string& x : {a, b})
      if (!std::count(genNames_.begin(), genNames_.end(), x)) {
        std::string r = findSym(x);
        if (!repOf.count(r)) repOf[r] = x;
      }
  }
  for (const std::string& g : genNames_) {
    std::string r = findSym(g);
    if (!repOf.count(r)) repOf[r] = g;
  }
  std::map<std::string, std::string> out;
  for (const std::string& g : genNames_) out[g] = repOf[findSym(g)];
  return out;
}

// Arithmetic on narrow types happens in the accumulation type (DESIGN.md): fp32 unless a policy
// says otherwise for floats under 32 bits, i32 for integers under 32 bits.
I::Type FnLowering::computeType(I::Type t) {
  if (isShapedValue(t)) {
    I::Type e = computeType(t->elem);
    if (e == t->elem) return t;
    return t->kind == I::TypeKind::Frag ? ctx().frag(e, t->shape, t->role) : ctx().tile(e, t->shape);
  }
  if (!I::isScalar(t)) return t;
  I::ScalarKind k = I::baseScalar(t);
  if (isFloatKind(k)) {
    if (I::scalarBits(k) < 32)
      return t->kind == I::TypeKind::Num && t->accum ? t->accum : ctx().scalar(I::ScalarKind::F32);
    return ctx().scalar(k);
  }
  if (k == I::ScalarKind::Index || k == I::ScalarKind::I1) return ctx().scalar(k);
  if (I::scalarBits(k) < 32) return ctx().scalar(I::ScalarKind::I32);
  return ctx().scalar(k);
}

// The type two operands meet in (scalars; tiles use their elements).
I::Type FnLowering::promote(I::Type a, I::Type b) {
  a = computeType(a);
  b = computeType(b);
  if (a == b) return a;
  I::ScalarKind x = I::baseScalar(a), y = I::baseScalar(b);
  bool fx = isFloatKind(x), fy = isFloatKind(y);
  if (fx && fy) {
    if (I::scalarBits(x) == I::scalarBits(y)) return ctx().scalar(I::ScalarKind::F32);
    return I::scalarBits(x) > I::scalarBits(y) ? a : b;
  }
  if (fx) return a;
  if (fy) return b;
  if (x == I::ScalarKind::I1) return b;
  if (y == I::ScalarKind::I1) return a;
  if (x == I::ScalarKind::Index || y == I::ScalarKind::Index) return ctx().index();
  unsigned bx = I::scalarBits(x), by = I::scalarBits(y);
  if (bx != by) return bx > by ? a : b;
  return ctx().scalar(I::ScalarKind::I64);  // same width, mixed signedness
}

// ------------------------------------------------------------------------------------ values

I::Value* FnLowering::constant(double v, I::Type t) {
  if (isShapedValue(t)) {
    I::Value* s = constant(v, t->elem);
    return op1(I::OpId::TileBroadcast, {s}, t);
  }
  I::ScalarKind k = I::baseScalar(t);
  if (isFloatKind(k)) return b_->constFloat(v, t);
  return b_->constInt(static_cast<int64_t>(v), t);
}

I::Value* FnLowering::convertElem(I::Value* v, I::Type elem, SourceRange at) {
  I::Type t = v->type;
  I::Type target = isShapedValue(t) ? (t->kind == I::TypeKind::Frag ? ctx().frag(elem, t->shape, t->role)
                                                                    : ctx().tile(elem, t->shape))
                                    : elem;
  if (target == t) return v;
  std::vector<I::NamedAttr> attrs;
  if (elem->kind == I::TypeKind::Num && elem->round != I::Rounding::Default) {
    const char* r = elem->round == I::Rounding::Stochastic   ? "stochastic"
                    : elem->round == I::Rounding::TowardZero ? "toward_zero"
                                                             : "nearest_even";
    attrs.push_back({"round", I::Attribute::string(r)});
  }
  // To bool: compare with zero (a conversion would truncate).
  if (I::isScalar(elem) && I::baseScalar(elem) == I::ScalarKind::I1 && !isShapedValue(t)) return toBool(v, at);
  return op1(I::OpId::ArithConvert, {v}, target, std::move(attrs));
}

I::Value* FnLowering::broadcastTo(I::Value* v, const std::vector<I::Dim>& shape, SourceRange at) {
  I::Type t = v->type;
  if (isShapedValue(t) && t->shape == shape) return v;
  for (const I::Dim& d : shape)
    if (!d.isStatic() && d.sym.empty()) unsupported(at, "broadcasting to a tile of unknown ('?') shape");
  if (isShapedValue(t)) {
    size_t off = shape.size() >= t->shape.size() ? shape.size() - t->shape.size() : 0;
    for (size_t i = 0; i < t->shape.size() && off + i < shape.size(); ++i) unify(t->shape[i], shape[off + i]);
  }
  return op1(I::OpId::TileBroadcast, {v}, ctx().tile(elemOf(t), shape));
}

I::Value* FnLowering::knownView(I::Value* v, SourceRange at, const std::string& name) {
  I::Type t = v->type;
  for (size_t i = 0; i < t->shape.size(); ++i)
    if (!t->shape[i].isStatic() && t->shape[i].sym.empty())
      error(DiagID::err_lower_dynamic_tile_shape, at, std::string("?"), static_cast<unsigned>(i), name);
  return v;
}

void FnLowering::staticShared(I::Type t, SourceRange at, const std::string& name) {
  for (size_t i = 0; i < t->shape.size(); ++i)
    if (!t->shape[i].isStatic())
      error(DiagID::err_lower_dynamic_shared_shape, at, t->shape[i].sym.empty() ? std::string("?") : t->shape[i].sym,
            static_cast<unsigned>(i), name);
}

// A view (shared buffer, static global slice) used as a tile value is loaded.
I::Value* FnLowering::asTile(I::Value* v, SourceRange at) {
  I::Type t = v->type;
  if (isShapedValue(t)) return v;
  if (I::isView(t)) {
    knownView(v, at, text(at));
    waitFor(v, true);
    return op1(I::OpId::TileLoad, {v}, ctx().tile(t->elem, t->shape));
  }
  return v;
}

I::Value* FnLowering::coerce(I::Value* v, I::Type to, SourceRange at) {
  I::Type from = v->type;
  if (from == to) return v;
  if (I::isScalar(to)) {
    if (I::isScalar(from)) return convertElem(v, to, at);
    unsupported(at, "using a value of type " + I::printType(from) + " where " + I::printType(to) + " is expected");
  }
  if (isShapedValue(to)) {
    if (I::isView(from)) v = asTile(v, at), from = v->type;
    if (I::isScalar(from)) {
      v = convertElem(v, to->elem, at);
      if (to->kind == I::TypeKind::Frag) return op1(I::OpId::TileBroadcast, {v}, to);
      return broadcastTo(v, to->shape, at);
    }
    if (isShapedValue(from)) {
      if (from->kind == I::TypeKind::Frag && to->kind == I::TypeKind::Tile)
        unsupported(at, "using an mma fragment as a tile value", "store it, or keep accumulating with tile.mma");
      if (from->shape != to->shape) {
        v = convertElem(v, to->elem, at);
        return broadcastTo(v, to->shape, at);
      }
      return convertElem(v, to->elem, at);
    }
  }
  if (I::isView(to) && I::isView(from) && from->elem == to->elem && from->shape.size() == to->shape.size() &&
      from->kind == to->kind)
    error(DiagID::err_lower_unsupported, at,
          "changing the shape or access of '" + text(at) + "' (" + I::printType(from) + " to " + I::printType(to) + ")",
          "");
  unsupported(at, "using a value of type " + I::printType(from) + " where " + I::printType(to) + " is expected");
}

I::Value* FnLowering::toBool(I::Value* v, SourceRange at) {
  I::Type t = v->type;
  if (!I::isScalar(t)) unsupported(at, "a condition of type " + I::printType(t));
  I::ScalarKind k = I::baseScalar(t);
  if (k == I::ScalarKind::I1 && t->kind == I::TypeKind::Scalar) return v;
  I::Type c = computeType(t);
  v = coerce(v, c, at);
  if (isFloatKind(k))
    return op1(I::OpId::ArithCmpF, {v, constant(0, c)}, ctx().i1(), {{"pred", I::Attribute::string("une")}});
  return op1(I::OpId::ArithCmpI, {v, constant(0, c)}, ctx().i1(), {{"pred", I::Attribute::string("ne")}});
}

I::Value* FnLowering::value(const LV& lv, SourceRange at) {
  switch (lv.kind) {
    case LV::Val:
      return lv.v;
    case LV::Block:
      unsupported(at, "using a block of 'tile.range' as a value", "index a tensor with it (Q[block])");
    case LV::Unsized:
      error(DiagID::err_lower_shared_shape_unknown, at, lv.sym ? lv.sym->name : text(at));
    case LV::Tuple:
      unsupported(at, "a tuple value here");
    default:
      unsupported(at, "an expression without a value here");
  }
}

I::Value* FnLowering::scalarValue(Expr* e, I::Type want) {
  I::Value* v = value(lower(e, want), e->range);
  loc(e);
  return want ? coerce(v, want, e->range) : v;
}

// ---- async copies: completion is awaited lazily (DESIGN.md's pipelines overlap copies).

void FnLowering::waitFor(I::Value* buf, bool barrier) {
  if (barrier && buf->type->kind == I::TypeKind::Smem) smemReadSinceBarrier_ = true;
  std::vector<I::Value*> toks;
  bool sameRegion = true;
  for (auto it = pending_.begin(); it != pending_.end();) {
    if (it->buf == buf) {
      toks.push_back(it->token);
      sameRegion = sameRegion && it->depth == depth_;
      // A copy from an enclosing region stays pending there (this region may not run).
      if (it->depth >= depth_)
        it = pending_.erase(it);
      else
        ++it;
    } else {
      ++it;
    }
  }
  if (toks.empty()) return;
  op(I::OpId::AsyncWait, toks, {});
  if (barrier && sameRegion && kernel_) {
    op(I::OpId::TileBarrier, {}, {});
    smemReadSinceBarrier_ = buf->type->kind == I::TypeKind::Smem;
  }
}

void FnLowering::waitAll(bool) {
  std::vector<I::Value*> toks;
  for (auto& p : pending_) toks.push_back(p.token);
  pending_.erase(std::remove_if(pending_.begin(), pending_.end(), [&](const Pending& p) { return p.depth >= depth_; }),
                 pending_.end());
  if (!toks.empty()) op(I::OpId::AsyncWait, toks, {});
}

// Tokens do not leave their region: copies still in flight at its end are awaited there.
void FnLowering::flushRegion() {
  std::vector<I::Value*> toks;
  for (auto it = pending_.begin(); it != pending_.end();) {
    if (it->depth >= depth_) {
      toks.push_back(it->token);
      it = pending_.erase(it);
    } else {
      ++it;
    }
  }
  if (!toks.empty()) op(I::OpId::AsyncWait, toks, {});
}

void FnLowering::asyncCopy(I::Value* dst, I::Value* src, SourceRange at) {
  staticShared(src->type, at, text(at));
  if (dst->type->elem != src->type->elem)
    unsupported(at, "an async copy from " + I::printType(src->type) + " into " + I::printType(dst->type),
                "the shared buffer and the source need the same element type");
  if (I::staticElementCount(dst->type) != I::staticElementCount(src->type))
    unsupported(at, "an async copy of " + I::printType(src->type) + " into " + I::printType(dst->type),
                "the shared buffer and the source need the same number of elements");
  waitFor(dst, false);
  ++asyncCopies_;
  I::Value* tok = op1(I::OpId::AsyncCopy, {dst, src}, ctx().token());
  pending_.push_back({tok, dst, depth_});
}

// The shared buffer a copy writes: an unsized `tile.alloc_shared()` takes its first copy's shape.
I::Value* FnLowering::sharedFor(LV& dst, I::Value* srcView, SourceRange at) {
  if (dst.kind == LV::Unsized) {
    I::Type elem = srcView->type->elem;
    I::Value* buf =
        prologue(I::OpId::SmemAlloc, ctx().smem(elem, srcView->type->shape, I::Layout::Row, I::Swizzle::None))
            ->result();
    if (dst.sym) buf->nameHint = dst.sym->name;
    LV sized = LV::val(buf);
    if (dst.sym)
      for (auto& [s, v] : env_)
        if (v.kind == LV::Unsized && v.sym == dst.sym) v = sized;
    dst = sized;
    return buf;
  }
  I::Value* d = value(dst, at);
  if (d->type->kind != I::TypeKind::Smem) unsupported(at, "copying into a value of type " + I::printType(d->type));
  return d;
}

// ------------------------------------------------------------------------------------ expressions

std::optional<int64_t> FnLowering::constInt(Expr* e) {
  if (!e) return std::nullopt;
  switch (e->kind) {
    case NodeKind::IntLiteralExpr:
      return static_cast<int64_t>(cast<IntLiteralExpr>(e)->value);
    case NodeKind::BoolLiteralExpr:
      return cast<BoolLiteralExpr>(e)->value ? 1 : 0;
    case NodeKind::NameExpr: {
      const Symbol* s = cast<NameExpr>(e)->symbol;
      if (!s) return std::nullopt;
      if (s->kind == SymbolKind::AutotuneParam && !s->candidates.empty()) return s->candidates.front();
      if (s->kind == SymbolKind::Constant && s->value && s->value->kind == ConstValue::Int) return s->value->i;
      return std::nullopt;
    }
    case NodeKind::UnaryExpr: {
      auto* u = cast<UnaryExpr>(e);
      auto v = constInt(u->operand);
      if (!v) return std::nullopt;
      if (u->op == UnaryOp::Neg) return -*v;
      if (u->op == UnaryOp::Pos) return *v;
      return std::nullopt;
    }
    case NodeKind::BinaryExpr: {
      auto* b = cast<BinaryExpr>(e);
      auto l = constInt(b->lhs), r = constInt(b->rhs);
      if (!l || !r) return std::nullopt;
      switch (b->op) {
        case BinaryOp::Add:
          return *l + *r;
        case BinaryOp::Sub:
          return *l - *r;
        case BinaryOp::Mul:
          return *l * *r;
        case BinaryOp::FloorDiv:
          if (*r == 0) return std::nullopt;
          return (*l / *r) - ((*l % *r != 0) && ((*l < 0) != (*r < 0)));
        case BinaryOp::Mod:
          if (*r == 0) return std::nullopt;
          return ((*l % *r) + *r) % *r;
        default:
          return std::nullopt;
      }
    }
    default:
      return std::nullopt;
  }
}

// No memory reads, calls with effects or user calls: safe to evaluate eagerly.
bool FnLowering::isPure(Expr* e) {
  if (!e) return true;
  switch (e->kind) {
    case NodeKind::NameExpr:
    case NodeKind::IntLiteralExpr:
    case NodeKind::FloatLiteralExpr:
    case NodeKind::BoolLiteralExpr:
      return true;
    case NodeKind::UnaryExpr:
      return isPure(cast<UnaryExpr>(e)->operand);
    case NodeKind::BinaryExpr:
      return isPure(cast<BinaryExpr>(e)->lhs) && isPure(cast<BinaryExpr>(e)->rhs);
    case NodeKind::ConditionalExpr: {
      auto* c = cast<ConditionalExpr>(e);
      return isPure(c->cond) && isPure(c->thenExpr) && isPure(c->elseExpr);
    }
    case NodeKind::AttributeExpr:
      return isPure(cast<AttributeExpr>(e)->base);
    case NodeKind::CallExpr: {
      auto* c = cast<CallExpr>(e);
      const Type* t = c->callee->type;
      if (t && t->kind == TypeKind::DTypeValue) return c->args.size() == 1 && isPure(c->args[0].value);
      if (!t || t->kind != TypeKind::Builtin || !t->builtin) return false;
      const BuiltinInfo& b = *t->builtin;
      if (b.has(eff::MemRead | eff::MemWrite | eff::Barrier | eff::GroupCollective | eff::WarpCollective | eff::Atomic |
                eff::Async | eff::SharedAlloc))
        return false;
      for (auto& a : c->args)
        if (!isPure(a.value)) return false;
      return true;
    }
    default:
      return false;
  }
}

LV FnLowering::lower(Expr* e, I::Type want) {
  if (!e) unsupported(SourceRange(), "a missing expression");
  loc(e);
  if (e->type && e->type->isError()) unsupported(e->range, "an expression that did not type-check");
  switch (e->kind) {
    case NodeKind::IntLiteralExpr: {
      I::Type t = want && I::isScalar(elemOf(want)) ? computeType(elemOf(want)) : ctx().scalar(I::ScalarKind::I32);
      if (I::baseScalar(t) == I::ScalarKind::I1) t = ctx().scalar(I::ScalarKind::I32);
      return LV::val(constant(static_cast<double>(cast<IntLiteralExpr>(e)->value), t));
    }
    case NodeKind::FloatLiteralExpr: {
      I::Type t = want && I::isScalar(elemOf(want)) && isFloatKind(I::baseScalar(elemOf(want)))
                      ? computeType(elemOf(want))
                      : ctx().scalar(I::ScalarKind::F32);
      return LV::val(b_->constFloat(cast<FloatLiteralExpr>(e)->value, t));
    }
    case NodeKind::BoolLiteralExpr:
      return LV::val(b_->constInt(cast<BoolLiteralExpr>(e)->value ? 1 : 0, ctx().i1()));
    case NodeKind::NameExpr:
      return lowerName(cast<NameExpr>(e), want);
    case NodeKind::UnaryExpr:
      return lowerUnary(cast<UnaryExpr>(e), want);
    case NodeKind::BinaryExpr:
      return lowerBinary(cast<BinaryExpr>(e), want);
    case NodeKind::ConditionalExpr:
      return lowerConditional(cast<ConditionalExpr>(e), want);
    case NodeKind::CallExpr:
      return lowerCall(cast<CallExpr>(e), want);
    case NodeKind::SubscriptExpr:
      return lowerSubscript(cast<SubscriptExpr>(e));
    case NodeKind::AttributeExpr:
      return lowerAttribute(cast<AttributeExpr>(e));
    case NodeKind::TupleExpr:
    case NodeKind::ListExpr: {
      auto& elems = e->kind == NodeKind::TupleExpr ? cast<TupleExpr>(e)->elements : cast<ListExpr>(e)->elements;
      std::vector<LV> out;
      for (Expr* x : elems) out.push_back(lower(x, nullptr));
      return LV::tuple(std::move(out));
    }
    case NodeKind::NoneLiteralExpr:
      return LV();
    case NodeKind::StringLiteralExpr:
      unsupported(e->range, "a string");
    case NodeKind::FStringExpr:
      unsupported(e->range, "an f-string");
    case NodeKind::DictExpr:
      unsupported(e->range, "a dict");
    case NodeKind::ComprehensionExpr:
      unsupported(e->range, "a comprehension");
    case NodeKind::SliceExpr:
      unsupported(e->range, "a slice outside a subscript");
    case NodeKind::EllipsisExpr:
      unsupported(e->range, "'...' as a value");
    default:
      unsupported(e->range, "this expression");
  }
}

LV FnLowering::lowerName(NameExpr* e, I::Type want) {
  const Symbol* s = e->symbol;
  if (!s) unsupported(e->range, "the name '" + e->name + "'");
  if (e->name == "grid_groups" && (s->kind == SymbolKind::ShapeSymbol || s->kind == SymbolKind::Builtin)) {
    if (kernel_ && info_ && info_->groupShape.empty()) needsGroup_ = true;
    return LV::val(op1(I::OpId::TileNumGroups, {}, ctx().index()));
  }
  switch (s->kind) {
    case SymbolKind::Variable:
    case SymbolKind::Parameter: {
      auto it = env_.find(s);
      if (it != env_.end()) return it->second;
      auto d = dropped_.find(s);
      error(DiagID::err_lower_maybe_undefined, e->range, e->name, d != dropped_.end() ? d->second : std::string("use"));
    }
    case SymbolKind::ShapeSymbol: {
      auto it = shapeDims_.find(e->name);
      if (it != shapeDims_.end()) return LV::val(it->second);
      if (info_)
        for (const ShapeBinding& sb : info_->shapeBindings) {
          if (sb.symbol != e->name) continue;
          for (auto& [ps, idx] : paramIndex_) {
            if (ps->name != sb.param) continue;
            I::Value* p = top_->arg(idx);
            if (p->type->kind != I::TypeKind::Tensor || sb.dim >= p->type->shape.size()) continue;
            I::Value* d =
                prologue(I::OpId::MemDim, ctx().index(), {{"axis", I::Attribute::integer(sb.dim)}}, {p})->result();
            d->nameHint = e->name;
            shapeDims_[e->name] = d;
            return LV::val(d);
          }
        }
      unsupported(e->range, "the shape symbol '" + e->name + "' (not bound by a parameter of this function)");
    }
    case SymbolKind::Constant:
    case SymbolKind::AutotuneParam: {
      if (s->kind == SymbolKind::AutotuneParam && !s->candidates.empty())
        return LV::val(constant(static_cast<double>(s->candidates.front()),
                                want && I::isScalar(want) ? computeType(want) : ctx().scalar(I::ScalarKind::I32)));
      if (s->value && s->value->isNumber()) {
        I::Type t = s->type && s->type->kind == TypeKind::Scalar ? scalarType(s->type->dtype)
                                                                 : ctx().scalar(I::ScalarKind::I32);
        if (s->type && s->type->weak && want && I::isScalar(want)) t = computeType(want);
        return LV::val(constant(s->value->asDouble(), t));
      }
      unsupported(e->range, "the module-level name '" + e->name + "'");
    }
    case SymbolKind::Builtin:
      if (s->builtin && s->builtin->id == BuiltinId::GridGroups)
        return LV::val(op1(I::OpId::TileNumGroups, {}, ctx().index()));
      unsupported(e->range, "the builtin '" + e->name + "' used as a value");
    default:
      unsupported(e->range, "the name '" + e->name + "' (a " + symbolKindName(s->kind) + ") as a value");
  }
}

LV FnLowering::lowerUnary(UnaryExpr* e, I::Type want) {
  if (e->op == UnaryOp::Not) {
    I::Value* v = toBool(value(lower(e->operand), e->operand->range), e->range);
    loc(e);
    return LV::val(op1(I::OpId::ArithXOrI, {v, b_->constInt(1, ctx().i1())}, ctx().i1()));
  }
  I::Value* v = value(lower(e->operand, want), e->operand->range);
  loc(e);
  if (I::isView(v->type)) v = asTile(v, e->range);
  if (e->op == UnaryOp::Pos) return LV::val(v);
  I::Type c = computeType(v->type);
  v = coerce(v, c, e->range);
  if (e->op == UnaryOp::Neg) {
    if (I::isFloatLike(c)) return LV::val(op1(I::OpId::ArithNegF, {v}, c));
    return LV::val(op1(I::OpId::ArithSubI, {constant(0, c), v}, c));
  }
  return LV::val(op1(I::OpId::ArithXOrI, {v, constant(-1, c)}, c));  // ~x
}

I::Value* FnLowering::compare(BinaryOp bop, I::Value* a, I::Value* b, SourceRange at) {
  bool tiles = isShapedValue(a->type) || isShapedValue(b->type) || I::isView(a->type) || I::isView(b->type);
  I::Type t;
  if (tiles) {
    if (I::isView(a->type)) a = asTile(a, at);
    if (I::isView(b->type)) b = asTile(b, at);
    I::Type shaped = isShapedValue(a->type) ? a->type : b->type;
    t = ctx().tile(promote(elemOf(a->type), elemOf(b->type)), shaped->shape);
  } else {
    t = promote(a->type, b->type);
  }
  a = coerce(a, t, at);
  b = coerce(b, t, at);
  I::ScalarKind k = I::baseScalar(elemOf(t));
  I::Type rt = tiles ? ctx().tile(ctx().i1(), t->shape) : ctx().i1();
  // Comparison predicates: ordered for floats (unordered `une` for !=, so NaN != NaN), signed or
  // unsigned for integers.
  struct Predicates {
    BinaryOp op;
    const char *f, *s, *u;
  };
  static const Predicates kPredicates[] = {
      {BinaryOp::Eq, "oeq", "eq", "eq"},    {BinaryOp::Ne, "une", "ne", "ne"},
      {BinaryOp::Lt, "olt", "slt", "ult"},  {BinaryOp::Le, "ole", "sle", "ule"},
      {BinaryOp::Gt, "ogt", "sgt", "ugt"},  {BinaryOp::Ge, "oge", "sge", "uge"},
  };
  const Predicates* p = nullptr;
  for (const Predicates& row : kPredicates)
    if (row.op == bop) p = &row;
  if (!p) unsupported(at, std::string("the operator '") + binaryOpSpelling(bop) + "'");
  bool isFloat = isFloatKind(k);
  const char* pred = isFloat ? p->f : isUnsignedKind(k) ? p->u : p->s;
  return op1(isFloat ? I::OpId::ArithCmpF : I::OpId::ArithCmpI, {a, b}, rt, {{"pred", I::Attribute::string(pred)}});
}

// Arithmetic in the compute type of the result; `semaResult` (may be null) is sema's scalar type.
I::Value* FnLowering::arith(BinaryOp bop, I::Value* a, I::Value* b, I::Type semaResult, SourceRange at) {
  if (bop == BinaryOp::MatMul) {
    if (I::isView(a->type)) knownView(a, at, text(at));
    if (I::isView(b->type)) knownView(b, at, text(at));
    unify(a->type->shape[1], b->type->shape[0]);
    if (a->type->shape.size() != 2 || b->type->shape.size() != 2)
      unsupported(at, "'@' on operands that are not rank-2 tiles");
    I::Type r = ctx().tile(ctx().scalar(I::ScalarKind::F32), {a->type->shape[0], b->type->shape[1]});
    waitFor(a, true);
    waitFor(b, true);
    return op1(I::OpId::TileDot, {a, b}, r);
  }
  bool tiles = isShapedValue(a->type) || isShapedValue(b->type) || I::isView(a->type) || I::isView(b->type);
  I::Type t;
  if (tiles) {
    if (I::isView(a->type)) a = asTile(a, at);
    if (I::isView(b->type)) b = asTile(b, at);
    I::Type e = promote(elemOf(a->type), elemOf(b->type));
    std::vector<I::Dim> shape;
    I::Type sa = a->type, sb = b->type;
    if (isShapedValue(sa) && isShapedValue(sb)) {
      const auto& x = sa->shape;
      const auto& y = sb->shape;
      size_t n = std::max(x.size(), y.size());
      for (size_t i = 0; i < n; ++i) {
        const I::Dim* dx = i + x.size() >= n ? &x[i + x.size() - n] : nullptr;
        const I::Dim* dy = i + y.size() >= n ? &y[i + y.size() - n] : nullptr;
        if (dx && dy) {
          unify(*dx, *dy);
          shape.push_back(dx->isStatic() && dx->size == 1 ? *dy : *dx);
        } else {
          shape.push_back(dx ? *dx : *dy);
        }
      }
      if (sa->kind == I::TypeKind::Frag && sb->kind == I::TypeKind::Frag && sa->shape == sb->shape) {
        t = ctx().frag(e, shape, sa->role);
      } else {
        t = ctx().tile(e, shape);
      }
    } else {
      I::Type s = isShapedValue(sa) ? sa : sb;
      t = s->kind == I::TypeKind::Frag ? ctx().frag(e, s->shape, s->role) : ctx().tile(e, s->shape);
    }
  } else {
    t = semaResult ? computeType(semaResult) : promote(a->type, b->type);
  }
  I::Type et = elemOf(t);
  bool isF = isFloatKind(I::baseScalar(et));
  bool isU = isUnsignedKind(I::baseScalar(et));
  if (bop == BinaryOp::Div && !isF) {
    t = tiles ? ctx().tile(ctx().scalar(I::ScalarKind::F32), t->shape) : ctx().scalar(I::ScalarKind::F32);
    isF = true;
  }
  a = coerce(a, t, at);
  b = coerce(b, t, at);
  auto bin = [&](I::OpId id, I::Value* x, I::Value* y) { return op1(id, {x, y}, t); };
  switch (bop) {
    case BinaryOp::Add:
      return bin(isF ? I::OpId::ArithAddF : I::OpId::ArithAddI, a, b);
    case BinaryOp::Sub:
      return bin(isF ? I::OpId::ArithSubF : I::OpId::ArithSubI, a, b);
    case BinaryOp::Mul:
      return bin(isF ? I::OpId::ArithMulF : I::OpId::ArithMulI, a, b);
    case BinaryOp::Div:
      return bin(I::OpId::ArithDivF, a, b);
    case BinaryOp::FloorDiv:
    case BinaryOp::Mod: {
      if (isF) {
        I::Value* q = op1(I::OpId::MathFloor, {bin(I::OpId::ArithDivF, a, b)}, t);
        if (bop == BinaryOp::FloorDiv) return q;
        return bin(I::OpId::ArithSubF, a, bin(I::OpId::ArithMulF, q, b));
      }
      if (isU) return bin(bop == BinaryOp::FloorDiv ? I::OpId::ArithDivUI : I::OpId::ArithRemUI, a, b);
      // Python floors: adjust truncating division when the remainder's sign differs from b's.
      I::Value* q = bin(I::OpId::ArithDivSI, a, b);
      I::Value* r = bin(I::OpId::ArithRemSI, a, b);
      I::Value* zero = constant(0, t);
      I::Type bt = tiles ? ctx().tile(ctx().i1(), t->shape) : ctx().i1();
      I::Value* rnz = op1(I::OpId::ArithCmpI, {r, zero}, bt, {{"pred", I::Attribute::string("ne")}});
      I::Value* rneg = op1(I::OpId::ArithCmpI, {r, zero}, bt, {{"pred", I::Attribute::string("slt")}});
      I::Value* bneg = op1(I::OpId::ArithCmpI, {b, zero}, bt, {{"pred", I::Attribute::string("slt")}});
      I::Value* diff = op1(I::OpId::ArithXOrI, {rneg, bneg}, bt);
      I::Value* adj = op1(I::OpId::ArithAndI, {rnz, diff}, bt);
      if (bop == BinaryOp::FloorDiv)
        return op1(I::OpId::ArithSelect, {adj, bin(I::OpId::ArithSubI, q, constant(1, t)), q}, t);
      return op1(I::OpId::ArithSelect, {adj, bin(I::OpId::ArithAddI, r, b), r}, t);
    }
    case BinaryOp::Pow: {
      if (isF) return bin(I::OpId::MathPow, a, b);
      // Integers: a constant exponent in [0, 64] multiplies by squaring.
      if (b->defOp && b->defOp->id == I::OpId::ArithConstant && !tiles) {
        const I::Attribute* c = b->defOp->attr("value");
        if (c && c->kind == I::AttrKind::Int && c->i >= 0 && c->i <= 64) {
          I::Value* result = constant(1, t);
          I::Value* base = a;
          for (int64_t e = c->i; e > 0; e >>= 1) {
            if (e & 1) result = bin(I::OpId::ArithMulI, result, base);
            if (e > 1) base = bin(I::OpId::ArithMulI, base, base);
          }
          return result;
        }
      }
      unsupported(at, "'**' on integers with an exponent that is not a constant in [0, 64]",
                  "convert to a float first (f32(x) ** y)");
    }
    case BinaryOp::BitAnd:
      return bin(I::OpId::ArithAndI, a, b);
    case BinaryOp::BitOr:
      return bin(I::OpId::ArithOrI, a, b);
    case BinaryOp::BitXor:
      return bin(I::OpId::ArithXOrI, a, b);
    case BinaryOp::Shl:
      return bin(I::OpId::ArithShLI, a, b);
    case BinaryOp::Shr:
      return bin(isU ? I::OpId::ArithShRUI : I::OpId::ArithShRSI, a, b);
    default:
      unsupported(at, std::string("the operator '") + binaryOpSpelling(bop) + "'");
  }
}

LV FnLowering::lowerShortCircuit(BinaryExpr* e) {
  bool isAnd = e->op == BinaryOp::And;
  I::Value* l = toBool(value(lower(e->lhs), e->lhs->range), e->lhs->range);
  if (isPure(e->rhs)) {
    I::Value* r = toBool(value(lower(e->rhs), e->rhs->range), e->rhs->range);
    loc(e);
    return LV::val(op1(isAnd ? I::OpId::ArithAndI : I::OpId::ArithOrI, {l, r}, ctx().i1()));
  }
  // The right side reads memory or has effects: evaluate it only when needed.
  loc(e);
  I::Operation* ifOp = op(I::OpId::ScfIf, {l}, {ctx().i1()});
  I::Block& thenB = ifOp->body(0);
  I::Block& elseB = ifOp->body(1);
  ++depth_;
  b_->setInsertionPointToEnd(isAnd ? thenB : elseB);
  I::Value* r = toBool(value(lower(e->rhs), e->rhs->range), e->rhs->range);
  flushRegion();
  op(I::OpId::ScfYield, {r}, {});
  b_->setInsertionPointToEnd(isAnd ? elseB : thenB);
  op(I::OpId::ScfYield, {b_->constInt(isAnd ? 0 : 1, ctx().i1())}, {});
  --depth_;
  b_->setInsertionPointAfter(ifOp);
  return LV::val(ifOp->result());
}

LV FnLowering::lowerBinary(BinaryExpr* e, I::Type want) {
  if (e->op == BinaryOp::And || e->op == BinaryOp::Or) return lowerShortCircuit(e);
  if (e->op == BinaryOp::In || e->op == BinaryOp::NotIn || e->op == BinaryOp::Is || e->op == BinaryOp::IsNot)
    unsupported(e->opRange, std::string("the operator '") + binaryOpSpelling(e->op) + "'");
  // A literal operand takes the other operand's type: lower the typed side first.
  bool weakL = e->lhs->type && e->lhs->type->kind == TypeKind::Scalar && e->lhs->type->weak;
  I::Value *a, *b;
  // With sema's (strong) scalar result type known, literals are made in its compute type.
  I::Type target = nullptr;
  if (!isComparison(e->op) && e->op != BinaryOp::Shl && e->op != BinaryOp::Shr && e->op != BinaryOp::Pow && e->type &&
      e->type->kind == TypeKind::Scalar && !e->type->weak) {
    target = computeType(scalarType(e->type->dtype, e->type->policy));
    if (e->op == BinaryOp::Div && !isFloatKind(I::baseScalar(target))) target = ctx().scalar(I::ScalarKind::F32);
  }
  if (target) {
    a = value(lower(e->lhs, target), e->lhs->range);
    b = value(lower(e->rhs, target), e->rhs->range);
  } else if (weakL) {
    b = value(lower(e->rhs), e->rhs->range);
    a = value(lower(e->lhs, b->type), e->lhs->range);
  } else {
    a = value(lower(e->lhs), e->lhs->range);
    b = value(lower(e->rhs, a->type), e->rhs->range);
  }
  loc(e);
  SourceRange at = e->opRange.valid() ? e->opRange : e->range;
  if (isComparison(e->op)) return LV::val(compare(e->op, a, b, at));
  I::Type semaT = nullptr;
  if (e->type && e->type->kind == TypeKind::Scalar && !e->type->weak)
    semaT = scalarType(e->type->dtype, e->type->policy);
  if (e->type && e->type->kind == TypeKind::Scalar && e->type->weak) semaT = promote(a->type, b->type);
  return LV::val(arith(e->op, a, b, semaT, at));
}

LV FnLowering::lowerConditional(ConditionalExpr* e, I::Type want) {
  I::Value* c = toBool(value(lower(e->cond), e->cond->range), e->cond->range);
  I::Type semaT = e->type && e->type->kind == TypeKind::Scalar && !e->type->weak
                      ? scalarType(e->type->dtype, e->type->policy)
                      : want;
  if (isPure(e->thenExpr) && isPure(e->elseExpr)) {
    I::Value* a = value(lower(e->thenExpr, semaT), e->thenExpr->range);
    I::Value* b = value(lower(e->elseExpr, semaT ? semaT : a->type), e->elseExpr->range);
    loc(e);
    I::Type t = semaT ? semaT : a->type;
    if (I::isScalar(a->type) && I::isScalar(b->type) && !semaT) t = promote(a->type, b->type);
    a = coerce(a, t, e->thenExpr->range);
    b = coerce(b, t, e->elseExpr->range);
    return LV::val(op1(I::OpId::ArithSelect, {c, a, b}, t));
  }
  loc(e);
  I::Operation* ifOp = op(I::OpId::ScfIf, {c}, {});
  ++depth_;
  b_->setInsertionPointToEnd(ifOp->body(0));
  I::Value* a = value(lower(e->thenExpr, semaT), e->thenExpr->range);
  I::Type t = semaT ? semaT : a->type;
  a = coerce(a, t, e->thenExpr->range);
  flushRegion();
  op(I::OpId::ScfYield, {a}, {});
  b_->setInsertionPointToEnd(ifOp->body(1));
  I::Value* b = coerce(value(lower(e->elseExpr, t), e->elseExpr->range), t, e->elseExpr->range);
  flushRegion();
  op(I::OpId::ScfYield, {b}, {});
  --depth_;
  ifOp->addResult(t);
  b_->setInsertionPointAfter(ifOp);
  return LV::val(ifOp->result());
}

// base[indices]: one element (isElement, elementIdx) or a view of static extents.
I::Value* FnLowering::sliceView(I::Value* base, const std::vector<Argument>& indices, SubscriptExpr* e, bool& isElement,
                                std::vector<I::Value*>& elementIdx) {
  I::Type t = base->type;
  size_t rank = t->shape.size();
  std::vector<Expr*> idx;
  std::vector<const LV*> blocks;
  for (const Argument& a : indices) {
    if (a.kind != Argument::Positional) unsupported(a.range, "a keyword subscript");
    if (auto* tu = dyn_cast<TupleExpr>(a.value); tu && !tu->parenthesized)
      for (Expr* x : tu->elements) idx.push_back(x);
    else
      idx.push_back(a.value);
  }
  bool anySlice = false;
  std::vector<LV> lvs(idx.size());
  for (size_t i = 0; i < idx.size(); ++i) {
    if (isa<SliceExpr>(idx[i])) {
      anySlice = true;
      continue;
    }
    lvs[i] = lower(idx[i]);
    if (lvs[i].kind == LV::Block)
      anySlice = true;
    else if (lvs[i].kind == LV::Tuple)
      unsupported(idx[i]->range, "a tuple index");
  }
  loc(e);
  if (idx.size() > rank)
    error(DiagID::err_lower_rank_mismatch, e->range, text(e->base->range), static_cast<unsigned>(rank),
          static_cast<unsigned>(idx.size()));
  if (!anySlice && idx.size() == rank) {
    isElement = true;
    for (size_t i = 0; i < idx.size(); ++i) elementIdx.push_back(value(lvs[i], idx[i]->range));
    return base;
  }
  isElement = false;
  // A view: offsets and static sizes per dimension (missing trailing indices are full slices).
  std::vector<I::Value*> offs;
  std::vector<I::Attribute> sizes;
  std::string baseName = text(e->base->range);
  for (size_t d = 0; d < rank; ++d) {
    const I::Dim& full = t->shape[d];
    // A full extent: static, or symbolic (the slice keeps the symbol: Q[block] is [128, D]).
    auto fullSize = [&](SourceRange at) -> I::Attribute {
      if (!full.isStatic() && full.sym.empty())
        error(DiagID::err_lower_dynamic_tile_shape, at, std::string("?"), static_cast<unsigned>(d), baseName);
      return full.isStatic() ? I::Attribute::integer(full.size) : I::Attribute::string(full.sym);
    };
    if (d >= idx.size()) {
      offs.push_back(b_->constIndex(0));
      sizes.push_back(fullSize(e->range));
      continue;
    }
    Expr* x = idx[d];
    if (auto* s = dyn_cast<SliceExpr>(x)) {
      if (s->step) {
        auto st = constInt(s->step);
        if (!st || *st != 1) unsupported(s->step->range, "a slice with a step");
      }
      I::Value* lo = s->lower ? scalarValue(s->lower, nullptr) : b_->constIndex(0);
      int64_t size = -1;
      auto cl = constInt(s->lower), cu = constInt(s->upper);
      if (!s->lower && !s->upper) {
        offs.push_back(lo);
        sizes.push_back(fullSize(x->range));
        continue;
      } else if (s->upper && cu && (!s->lower || cl))
        size = *cu - (cl ? *cl : 0);
      else if (!s->upper && cl && full.isStatic())
        size = full.size - *cl;
      else if (s->lower && s->upper) {
        if (auto* add = dyn_cast<BinaryExpr>(s->upper); add && add->op == BinaryOp::Add) {
          std::string l = text(s->lower->range);
          if (text(add->lhs->range) == l) {
            if (auto c = constInt(add->rhs)) size = *c;
          } else if (text(add->rhs->range) == l) {
            if (auto c = constInt(add->lhs)) size = *c;
          }
        }
      }
      if (size < 0) {
        DiagBuilder d2 = diags().report(DiagID::err_lower_dynamic_tile_shape, x->range);
        d2 << text(x->range) << static_cast<unsigned>(d) << baseName;
        abort();
      }
      offs.push_back(lo);
      sizes.push_back(I::Attribute::integer(size));
    } else if (lvs[d].kind == LV::Block) {
      offs.push_back(lvs[d].v);
      sizes.push_back(I::Attribute::integer(lvs[d].size));
    } else {
      unsupported(x->range, "mixing integer indices and slices in one subscript",
                  "slice every dimension (x[i:i+1, a:b])");
    }
  }
  std::vector<I::Dim> shape;
  for (auto& a : sizes) shape.push_back(a.kind == I::AttrKind::String ? I::Dim{-1, a.s} : I::Dim{a.i, {}});
  I::Type rt = ctx().withShape(t, shape);
  waitFor(base, true);
  return op1(I::OpId::MemSlice,
             [&] {
               std::vector<I::Value*> ops = {base};
               ops.insert(ops.end(), offs.begin(), offs.end());
               return ops;
             }(),
             rt, {{"sizes", I::Attribute::arrayOf(sizes)}});
}

LV FnLowering::lowerSubscript(SubscriptExpr* e) {
  LV base = lower(e->base);
  if (base.kind == LV::Tuple) {
    if (e->indices.size() == 1)
      if (auto c = constInt(e->indices[0].value)) {
        int64_t i = *c < 0 ? *c + static_cast<int64_t>(base.elems.size()) : *c;
        if (i >= 0 && i < static_cast<int64_t>(base.elems.size())) return base.elems[i];
      }
    unsupported(e->range, "indexing a tuple with a non-constant index");
  }
  I::Value* b = value(base, e->base->range);
  if (!I::isView(b->type)) unsupported(e->range, "indexing a value of type " + I::printType(b->type));
  bool isElement = false;
  std::vector<I::Value*> idx;
  I::Value* v = sliceView(b, e->indices, e, isElement, idx);
  loc(e);
  if (!isElement) return LV::val(v);
  waitFor(b, true);
  std::vector<I::Value*> ops = {b};
  ops.insert(ops.end(), idx.begin(), idx.end());
  return LV::val(op1(I::OpId::MemLoad, ops, b->type->elem));
}

LV FnLowering::lowerAttribute(AttributeExpr* e) {
  const Type* bt = e->base->type;
  if (bt && (bt->kind == TypeKind::Namespace || bt->kind == TypeKind::Builtin)) {
    if (e->type && e->type->kind == TypeKind::Scalar && e->name == "grid_groups")
      return LV::val(op1(I::OpId::TileNumGroups, {}, ctx().index()));
    unsupported(e->range, "'" + text(e->range) + "' as a value");
  }
  LV base = lower(e->base);
  I::Value* b = value(base, e->base->range);
  loc(e);
  I::Type t = b->type;
  if (e->name == "shape" && (I::isView(t) || isShapedValue(t))) {
    std::vector<LV> dims;
    for (size_t i = 0; i < t->shape.size(); ++i) {
      if (t->shape[i].isStatic())
        dims.push_back(LV::val(b_->constIndex(t->shape[i].size)));
      else
        dims.push_back(LV::val(op1(I::OpId::MemDim, {b}, ctx().index(), {{"axis", I::Attribute::integer(i)}})));
    }
    return LV::tuple(std::move(dims));
  }
  if (e->name == "ndim" && (I::isView(t) || isShapedValue(t)))
    return LV::val(b_->constInt(static_cast<int64_t>(t->shape.size()), ctx().scalar(I::ScalarKind::I64)));
  if (e->name == "T") {
    I::Value* tv = asTile(b, e->base->range);
    if (tv->type->kind != I::TypeKind::Tile || tv->type->shape.size() != 2)
      unsupported(e->range, "'.T' of a value that is not a rank-2 tile");
    return LV::val(
        op1(I::OpId::TileTranspose, {tv}, ctx().tile(tv->type->elem, {tv->type->shape[1], tv->type->shape[0]})));
  }
  unsupported(e->nameRange, "the attribute '." + e->name + "'");
}

Expr* FnLowering::argument(CallExpr* e, const BuiltinInfo& b, const char* name) {
  size_t pos = 0;
  for (size_t p = 0; p < b.sig.params.size(); ++p) {
    const BuiltinParam& bp = b.sig.params[p];
    if (bp.variadic) {
      pos = SIZE_MAX / 2;  // later parameters are keyword-only
      continue;
    }
    if (bp.name == name) {
      for (const Argument& a : e->args)
        if (a.kind == Argument::Keyword && a.keyword == name) return a.value;
      if (bp.keywordOnly) return nullptr;
      size_t k = 0;
      for (const Argument& a : e->args)
        if (a.kind == Argument::Positional) {
          if (k == pos) return a.value;
          ++k;
        }
      return nullptr;
    }
    if (!bp.keywordOnly) ++pos;
  }
  return nullptr;
}

LV FnLowering::lowerCall(CallExpr* e, I::Type want) {
  const Type* ct = e->callee->type;
  if (!ct) unsupported(e->range, "this call");
  switch (ct->kind) {
    case TypeKind::Builtin:
      if (!ct->builtin) break;
      return lowerBuiltin(*ct->builtin, ct->typeArg, e, want);
    case TypeKind::DTypeValue:
      return lowerCast(ct, e);
    case TypeKind::Function:
      return lowerUserCall(ct, e);
    default:
      break;
  }
  unsupported(e->range, "calling '" + text(e->callee->range) + "'");
}

LV FnLowering::lowerCast(const Type* dt, CallExpr* e) {
  if (e->args.size() != 1) unsupported(e->range, "this cast");
  I::Type to = scalarType(dt->dtype, dt->policy);
  I::Value* v = value(lower(e->args[0].value, to), e->args[0].value->range);
  loc(e);
  if (I::isView(v->type)) v = asTile(v, e->range);
  return LV::val(convertElem(v, to, e->range));
}

I::Value* FnLowering::unaryMath(I::OpId id, I::Value* v, SourceRange at) {
  if (I::isView(v->type)) v = asTile(v, at);
  I::Type c = computeType(v->type);
  if (!I::isFloatLike(c)) {
    c = isShapedValue(c) ? ctx().tile(ctx().scalar(I::ScalarKind::F32), c->shape) : ctx().scalar(I::ScalarKind::F32);
  }
  v = coerce(v, c, at);
  return op1(id, {v}, c);
}

I::Value* FnLowering::reduceTile(I::Value* t, const std::string& kind, std::optional<int64_t> axis, SourceRange at) {
  t = asTile(t, at);
  if (t->type->kind != I::TypeKind::Tile) unsupported(at, "reducing a value of type " + I::printType(t->type));
  t = coerce(t, computeType(t->type), at);
  auto once = [&](I::Value* x, int64_t ax) {
    std::vector<I::Dim> shape = x->type->shape;
    int64_t rank = static_cast<int64_t>(shape.size());
    if (ax < -rank || ax >= rank)
      unsupported(at, "reducing along axis " + std::to_string(ax) + " of a rank-" + std::to_string(rank) + " tile");
    shape.erase(shape.begin() + (ax < 0 ? ax + rank : ax));
    I::Type rt = shape.empty() ? x->type->elem : ctx().tile(x->type->elem, shape);
    return op1(I::OpId::TileReduce, {x}, rt,
               {{"kind", I::Attribute::string(kind)}, {"axis", I::Attribute::integer(ax)}});
  };
  if (axis) return once(t, *axis);
  while (isShapedValue(t->type)) t = once(t, 0);
  return t;
}

LV FnLowering::lowerMath(const BuiltinInfo& b, CallExpr* e, const std::vector<Expr*>& args) {
  auto arg = [&](size_t i, I::Type want = nullptr) { return value(lower(args[i], want), args[i]->range); };
  auto typed = [&]() {
    // Lower all arguments; literals take the type of the first typed argument.
    std::vector<I::Value*> vs(args.size(), nullptr);
    I::Type hint = nullptr;
    for (size_t i = 0; i < args.size(); ++i)
      if (!(args[i]->type && args[i]->type->kind == TypeKind::Scalar && args[i]->type->weak)) {
        vs[i] = arg(i);
        if (!hint) hint = vs[i]->type;
      }
    for (size_t i = 0; i < args.size(); ++i)
      if (!vs[i]) vs[i] = arg(i, hint);
    return vs;
  };
  SourceRange at = e->range;
  // Math builtins of one argument that map straight onto a Tile IR op.
  static const std::pair<BuiltinId, I::OpId> kUnaryMath[] = {
      {BuiltinId::Exp, I::OpId::MathExp},     {BuiltinId::Exp2, I::OpId::MathExp2},
      {BuiltinId::Log, I::OpId::MathLog},     {BuiltinId::Log2, I::OpId::MathLog2},
      {BuiltinId::Sqrt, I::OpId::MathSqrt},   {BuiltinId::Rsqrt, I::OpId::MathRsqrt},
      {BuiltinId::Tanh, I::OpId::MathTanh},   {BuiltinId::Erf, I::OpId::MathErf},
      {BuiltinId::Sin, I::OpId::MathSin},     {BuiltinId::Cos, I::OpId::MathCos},
  };
  for (const auto& [builtin, op] : kUnaryMath)
    if (b.id == builtin) return LV::val(unaryMath(op, arg(0), at));
  switch (b.id) {
    case BuiltinId::Floor:
    case BuiltinId::Ceil: {
      I::Value* v = arg(0);
      if (I::isView(v->type)) v = asTile(v, at);
      if (!I::isFloatLike(v->type)) return LV::val(v);  // integers are already integral
      I::Type c = computeType(v->type);
      return LV::val(op1(b.id == BuiltinId::Floor ? I::OpId::MathFloor : I::OpId::MathCeil, {coerce(v, c, at)}, c));
    }
    case BuiltinId::Abs: {
      I::Value* v = arg(0);
      if (I::isView(v->type)) v = asTile(v, at);
      I::Type c = computeType(v->type);
      return LV::val(op1(I::OpId::MathAbs, {coerce(v, c, at)}, c));
    }
    case BuiltinId::Min:
    case BuiltinId::Max: {
      std::vector<I::Value*> vs = typed();
      loc(e);
      I::Value* acc = vs[0];
      for (size_t i = 1; i < vs.size(); ++i) {
        I::Value* x = acc;
        I::Value* y = vs[i];
        if (I::isView(x->type)) x = asTile(x, at);
        if (I::isView(y->type)) y = asTile(y, at);
        I::Type t =
            isShapedValue(x->type) || isShapedValue(y->type)
                ? ctx().tile(promote(elemOf(x->type), elemOf(y->type)), (isShapedValue(x->type) ? x : y)->type->shape)
                : promote(x->type, y->type);
        x = coerce(x, t, at);
        y = coerce(y, t, at);
        I::ScalarKind k = I::baseScalar(elemOf(t));
        bool isMin = b.id == BuiltinId::Min;
        if (isFloatKind(k))
          acc = op1(isMin ? I::OpId::ArithMinF : I::OpId::ArithMaxF, {x, y}, t);
        else if (!isUnsignedKind(k))
          acc = op1(isMin ? I::OpId::ArithMinSI : I::OpId::ArithMaxSI, {x, y}, t);
        else {
          I::Type bt = isShapedValue(t) ? ctx().tile(ctx().i1(), t->shape) : ctx().i1();
          I::Value* c = op1(I::OpId::ArithCmpI, {x, y}, bt, {{"pred", I::Attribute::string(isMin ? "ult" : "ugt")}});
          acc = op1(I::OpId::ArithSelect, {c, x, y}, t);
        }
      }
      return LV::val(acc);
    }
    case BuiltinId::Fma: {
      std::vector<I::Value*> vs = typed();
      loc(e);
      I::Type t = computeType(promote(promote(vs[0]->type, vs[1]->type), vs[2]->type));
      if (!I::isFloatLike(t)) {
        I::Value* m = op1(I::OpId::ArithMulI, {coerce(vs[0], t, at), coerce(vs[1], t, at)}, t);
        return LV::val(op1(I::OpId::ArithAddI, {m, coerce(vs[2], t, at)}, t));
      }
      return LV::val(op1(I::OpId::MathFma, {coerce(vs[0], t, at), coerce(vs[1], t, at), coerce(vs[2], t, at)}, t));
    }
    case BuiltinId::Pow: {
      std::vector<I::Value*> vs = typed();
      loc(e);
      I::Type semaT = e->type && e->type->kind == TypeKind::Scalar ? scalarType(e->type->dtype) : nullptr;
      return LV::val(arith(BinaryOp::Pow, vs[0], vs[1], semaT, at));
    }
    case BuiltinId::CeilDiv: {
      I::Type i64 = ctx().scalar(I::ScalarKind::I64);
      I::Value* a = coerce(arg(0, i64), i64, at);
      I::Value* d = coerce(arg(1, i64), i64, at);
      loc(e);
      I::Value* s = op1(I::OpId::ArithSubI, {op1(I::OpId::ArithAddI, {a, d}, i64), b_->constInt(1, i64)}, i64);
      return LV::val(arith(BinaryOp::FloorDiv, s, d, i64, at));
    }
    default:
      unsupported(at, "'" + std::string(b.name) + "'");
  }
}

LV FnLowering::lowerBuiltin(const BuiltinInfo& b, const Type* typeArg, CallExpr* e, I::Type want) {
  SourceRange at = e->range;
  std::vector<Expr*> positional;
  for (const Argument& a : e->args) {
    if (a.kind == Argument::Star || a.kind == Argument::DoubleStar) unsupported(a.range, "'*' arguments");
    if (a.kind == Argument::Positional) positional.push_back(a.value);
  }
  auto idOp = [&](I::OpId id) {
    loc(e);
    return LV::val(op1(id, {}, ctx().index()));
  };
  auto kw = [&](const char* name) { return argument(e, b, name); };
  auto needsGroup = [&] {
    if (kernel_ && info_ && info_->groupShape.empty()) needsGroup_ = true;
  };
  // The two operands of tile.dot / tile.mma: rank-2 values (views waited for), inner extents
  // unified.
  auto productOperands = [&](const char* what) {
    Expr* aE = kw("a");
    Expr* bE = kw("b");
    I::Value* x = value(lower(aE), aE->range);
    I::Value* y = value(lower(bE), bE->range);
    loc(e);
    for (auto [v, ex] : {std::pair{x, aE}, std::pair{y, bE}}) {
      if (I::isView(v->type)) {
        knownView(v, ex->range, text(ex->range));
        waitFor(v, true);
      }
      if (v->type->shape.size() != 2)
        unsupported(ex->range, std::string("'") + what + "' of an operand that is not rank 2");
    }
    unify(x->type->shape[1], y->type->shape[0]);
    return std::pair{x, y};
  };
  switch (b.id) {
    case BuiltinId::TileLinearId:
      return idOp(I::OpId::TileLinearId);
    case BuiltinId::TileLaneId:
      return idOp(I::OpId::TileLaneId);
    case BuiltinId::TileWarpId:
      return idOp(I::OpId::TileWarpId);
    case BuiltinId::LaunchThreadId:
      return idOp(I::OpId::TileThreadId);
    case BuiltinId::GroupLinearId:
      return idOp(I::OpId::TileGroupId);
    case BuiltinId::GroupTileCount:
      return idOp(I::OpId::TileGroupSize);
    case BuiltinId::TBarrier:
      loc(e);
      waitAll(true);
      op(I::OpId::TileBarrier, {}, {});
      smemReadSinceBarrier_ = false;
      return LV();
    case BuiltinId::TSharedAlloc:
    case BuiltinId::TileAllocShared: {
      DType d = typeArg && typeArg->kind == TypeKind::Scalar ? typeArg->dtype : DType::FP32;
      I::Swizzle sw = I::Swizzle::None;
      if (Expr* s = kw("swizzle"))
        if (auto* str = dyn_cast<StringLiteralExpr>(s); str && str->value == "xor") sw = I::Swizzle::Auto;
      std::vector<I::Dim> shape;
      for (Expr* x : positional) {
        auto c = constInt(x);
        if (!c || *c <= 0) error(DiagID::err_lower_not_constant, x->range, "the extent of a shared buffer");
        shape.push_back(I::Dim{*c, {}});
      }
      loc(e);
      if (shape.empty()) {
        LV u;
        u.kind = LV::Unsized;
        u.dtype = d;
        return u;
      }
      return LV::val(prologue(I::OpId::SmemAlloc, ctx().smem(scalarType(d), shape, I::Layout::Row, sw))->result());
    }
    case BuiltinId::CpAsyncSharedGlobal: {
      Expr* dstE = kw("dst");
      Expr* srcE = kw("src");
      if (!dstE || !srcE) unsupported(at, "this form of 'cp_async.shared.global'");
      LV dst = lower(dstE);
      I::Value* src = value(lower(srcE), srcE->range);
      loc(e);
      if (!I::isView(src->type)) unsupported(srcE->range, "copying from a value of type " + I::printType(src->type));
      staticShared(src->type, srcE->range, text(srcE->range));
      I::Value* buf = sharedFor(dst, src, dstE->range);
      if (auto* n = dyn_cast<NameExpr>(dstE); n && n->symbol && env_.count(n->symbol)) env_[n->symbol] = dst;
      asyncCopy(buf, src, at);
      return LV();
    }
    case BuiltinId::CpAsyncWait: {
      int64_t n = 0;
      if (Expr* p = kw("pending")) {
        auto c = constInt(p);
        if (!c) error(DiagID::err_lower_not_constant, p->range, "the 'pending' count");
        n = *c;
      }
      loc(e);
      if (n == 0) waitAll(false);
      op(I::OpId::AsyncWaitPending, {}, {}, {{"pending", I::Attribute::integer(n)}});
      op(I::OpId::TileBarrier, {}, {});
      return LV();
    }
    case BuiltinId::TileCpAsync: {
      Expr* srcE = kw("src");
      Expr* idxE = kw("index");
      if (!srcE) unsupported(at, "this form of 'tile.cp_async'");
      LV src = lower(srcE);
      if (src.kind == LV::Unsized || (src.kind == LV::Val && src.v->type->kind == I::TypeKind::Smem)) {
        // tile.cp_async(buf, slice): a copy into a shared buffer.
        if (!idxE) unsupported(at, "'tile.cp_async' into a shared buffer without a source");
        I::Value* from = value(lower(idxE), idxE->range);
        loc(e);
        if (!I::isView(from->type))
          unsupported(idxE->range, "copying from a value of type " + I::printType(from->type));
        staticShared(from->type, idxE->range, text(idxE->range));
        I::Value* buf = sharedFor(src, from, srcE->range);
        if (auto* n = dyn_cast<NameExpr>(srcE); n && n->symbol && env_.count(n->symbol)) env_[n->symbol] = src;
        asyncCopy(buf, from, at);
        return LV();
      }
      // tile.cp_async(T, block): a tile of T through shared memory.
      I::Value* t = value(src, srcE->range);
      if (!I::isView(t->type)) unsupported(srcE->range, "'tile.cp_async' of a value of type " + I::printType(t->type));
      I::Value* view = t;
      if (idxE) {
        LV ix = lower(idxE);
        loc(e);
        if (ix.kind == LV::Block) {
          std::vector<I::Value*> ops = {t};
          std::vector<I::Attribute> sizes;
          for (size_t d = 0; d < t->type->shape.size(); ++d) {
            if (static_cast<int>(d) == ix.axis) {
              ops.push_back(ix.v);
              sizes.push_back(I::Attribute::integer(ix.size));
            } else {
              const I::Dim& full = t->type->shape[d];
              if (!full.isStatic() && full.sym.empty())
                error(DiagID::err_lower_dynamic_tile_shape, idxE->range, std::string("?"), static_cast<unsigned>(d),
                      text(srcE->range));
              ops.push_back(b_->constIndex(0));
              sizes.push_back(full.isStatic() ? I::Attribute::integer(full.size) : I::Attribute::string(full.sym));
            }
          }
          std::vector<I::Dim> shape;
          for (auto& a : sizes) shape.push_back(a.kind == I::AttrKind::String ? I::Dim{-1, a.s} : I::Dim{a.i, {}});
          view =
              op1(I::OpId::MemSlice, ops, ctx().withShape(t->type, shape), {{"sizes", I::Attribute::arrayOf(sizes)}});
        } else {
          I::Value* v = value(ix, idxE->range);
          if (!I::isView(v->type))
            unsupported(idxE->range, "'tile.cp_async' with an index of type " + I::printType(v->type));
          view = v;
        }
      }
      loc(e);
      knownView(view, at, text(srcE->range));
      needsGroup();
      // A block with a symbolic extent cannot live in (static) shared memory: it is loaded as a
      // tile value, which codegen keeps in the group's workspace.
      if (I::staticElementCount(view->type) < 0) {
        waitFor(view, true);
        return LV::val(op1(I::OpId::TileLoad, {view}, ctx().tile(view->type->elem, view->type->shape)));
      }
      I::Value* buf = prologue(I::OpId::SmemAlloc,
                               ctx().smem(view->type->elem, view->type->shape, I::Layout::Row, I::Swizzle::None))
                          ->result();
      asyncCopy(buf, view, at);
      return LV::val(buf);
    }
    case BuiltinId::ReduceSum:
    case BuiltinId::ReduceMax:
    case BuiltinId::ReduceMin:
    case BuiltinId::TileSum:
    case BuiltinId::TileMax: {
      const char* kind = b.id == BuiltinId::ReduceSum || b.id == BuiltinId::TileSum ? "sum"
                         : b.id == BuiltinId::ReduceMin                             ? "min"
                                                                                    : "max";
      Expr* xE = kw("x");
      I::Value* x = value(lower(xE), xE->range);
      std::optional<int64_t> axis;
      if (Expr* a = kw("axis")) {
        axis = constInt(a);
        if (!axis) error(DiagID::err_lower_not_constant, a->range, "the axis");
      }
      loc(e);
      if (I::isView(x->type) && !axis) {
        waitFor(x, true);
        return LV::val(op1(I::OpId::MemReduce, {x}, x->type->elem, {{"kind", I::Attribute::string(kind)}}));
      }
      return LV::val(reduceTile(x, kind, axis, at));
    }
    case BuiltinId::TileLoad:
    case BuiltinId::TileStore: {
      Expr* tE = kw(b.id == BuiltinId::TileLoad ? "src" : "dst");
      Expr* iE = kw("index");
      I::Value* t = value(lower(tE), tE->range);
      if (!I::isView(t->type))
        unsupported(tE->range, "'" + std::string(b.name) + "' on a value of type " + I::printType(t->type));
      std::vector<I::Value*> ops;
      if (b.id == BuiltinId::TileStore) {
        Expr* vE = kw("value");
        I::Value* v = scalarValue(vE, t->type->elem);
        ops.push_back(v);
      }
      ops.push_back(t);
      LV ix = lower(iE);
      if (ix.kind == LV::Tuple)
        for (const LV& x : ix.elems) ops.push_back(value(x, iE->range));
      else
        ops.push_back(value(ix, iE->range));
      loc(e);
      size_t nIdx = ops.size() - (b.id == BuiltinId::TileStore ? 2 : 1);
      if (nIdx != t->type->shape.size())
        error(DiagID::err_lower_rank_mismatch, iE->range, text(tE->range), static_cast<unsigned>(t->type->shape.size()),
              static_cast<unsigned>(nIdx));
      waitFor(t, true);
      if (b.id == BuiltinId::TileLoad) return LV::val(op1(I::OpId::MemLoad, ops, t->type->elem));
      op(I::OpId::MemStore, ops, {});
      return LV();
    }
    case BuiltinId::TileZeros:
    case BuiltinId::TileFull: {
      Expr* shapeE = kw("shape");
      std::vector<Expr*> parts;
      if (auto* tu = dyn_cast<TupleExpr>(shapeE))
        parts = tu->elements;
      else if (auto* li = dyn_cast<ListExpr>(shapeE))
        parts = li->elements;
      else
        parts = {shapeE};
      std::vector<I::Dim> shape;
      for (Expr* p : parts) {
        // A shape symbol of the kernel (tile.zeros((128, D))) is a symbolic extent.
        if (auto* n = dyn_cast<NameExpr>(p); n && n->symbol && n->symbol->kind == SymbolKind::ShapeSymbol) {
          shape.push_back(dimOf(n->name));
          continue;
        }
        auto c = constInt(p);
        if (!c || *c <= 0) error(DiagID::err_lower_not_constant, p->range, "the extent of a tile");
        shape.push_back(I::Dim{*c, {}});
      }
      DType d = DType::FP32;
      if (Expr* dt = kw("dtype"); dt && dt->type && dt->type->kind == TypeKind::DTypeValue) d = dt->type->dtype;
      I::Type elem = scalarType(d);
      I::Value* s;
      if (b.id == BuiltinId::TileFull)
        s = scalarValue(kw("value"), elem);
      else
        s = constant(0, elem);
      loc(e);
      return LV::val(op1(I::OpId::TileBroadcast, {s}, ctx().tile(elem, shape)));
    }
    case BuiltinId::TileDot: {
      auto [x, y] = productOperands("tile.dot");
      I::Type accum =
          ctx().scalar(I::isFloatLike(x->type) || isFloatKind(I::baseScalar(elemOf(x->type))) ? I::ScalarKind::F32
                                                                                              : I::ScalarKind::I32);
      if (Expr* ac = kw("accum"); ac && ac->type && ac->type->kind == TypeKind::DTypeValue)
        accum = scalarType(ac->type->dtype);
      needsGroup();
      return LV::val(op1(I::OpId::TileDot, {x, y}, ctx().tile(accum, {x->type->shape[0], y->type->shape[1]})));
    }
    case BuiltinId::TileMma: {
      if (kw("BM") || kw("BN") || kw("BK"))
        unsupported(at, "'tile.mma(..., BM=, BN=, BK=)' outside a for loop",
                    "iterate it: for m, n, k in tile.mma(...)");
      auto [x, y] = productOperands("tile.mma");
      I::Type accum = ctx().scalar(I::ScalarKind::F32);
      if (Expr* ac = kw("accum"); ac && ac->type && ac->type->kind == TypeKind::DTypeValue)
        accum = scalarType(ac->type->dtype);
      I::Type ft = ctx().frag(accum, {x->type->shape[0], y->type->shape[1]}, I::FragRole::Acc);
      I::Value* c;
      if (Expr* cE = kw("c")) {
        c = value(lower(cE), cE->range);
        if (c->type != ft)
          unsupported(cE->range, "an accumulator of type " + I::printType(c->type), "it must be " + I::printType(ft));
      } else {
        c = op1(I::OpId::TileBroadcast, {constant(0, accum)}, ft);
      }
      needsGroup();
      return LV::val(op1(I::OpId::TileMma, {x, y, c}, ft));
    }
    case BuiltinId::TileMmaSync: {
      if (!mma_) unsupported(at, "'tile.mma_sync' outside 'for m, n, k in tile.mma(...)'");
      for (Expr* x : positional) (void)lower(x);
      loc(e);
      MmaLoop& L = *mma_;
      I::Value* a =
          op1(I::OpId::MemSlice, {L.A, L.m0, L.k}, ctx().withShape(L.A->type, {I::Dim{L.BM, {}}, I::Dim{L.BK, {}}}),
              {{"sizes", I::Attribute::ints({L.BM, L.BK})}});
      I::Value* bb =
          op1(I::OpId::MemSlice, {L.B, L.k, L.n0}, ctx().withShape(L.B->type, {I::Dim{L.BK, {}}, I::Dim{L.BN, {}}}),
              {{"sizes", I::Attribute::ints({L.BK, L.BN})}});
      asyncCopy(L.sA, a, at);
      asyncCopy(L.sB, bb, at);
      waitAll(true);
      op(I::OpId::TileBarrier, {}, {});
      L.acc = op1(I::OpId::TileMma, {L.sA, L.sB, L.acc}, L.acc->type);
      op(I::OpId::TileBarrier, {}, {});
      smemReadSinceBarrier_ = false;
      return LV();
    }
    case BuiltinId::TileSoftmax: {
      Expr* xE = kw("x");
      I::Value* x = asTile(value(lower(xE), xE->range), xE->range);
      int64_t axis = -1;
      if (Expr* a = kw("axis")) {
        auto c = constInt(a);
        if (!c) error(DiagID::err_lower_not_constant, a->range, "the axis");
        axis = *c;
      }
      loc(e);
      if (x->type->kind != I::TypeKind::Tile)
        unsupported(xE->range, "'tile.softmax' of a value of type " + I::printType(x->type));
      I::Type c = computeType(x->type);
      if (!I::isFloatLike(c)) c = ctx().tile(ctx().scalar(I::ScalarKind::F32), c->shape);
      x = coerce(x, c, at);
      return LV::val(op1(I::OpId::TileSoftmax, {x}, c, {{"axis", I::Attribute::integer(axis)}}));
    }
    case BuiltinId::TileRelu:
    case BuiltinId::TileSigmoid:
    case BuiltinId::TileGelu: {
      Expr* xE = kw("x");
      I::Value* x = value(lower(xE), xE->range);
      loc(e);
      if (I::isView(x->type)) x = asTile(x, at);
      I::Type c = computeType(x->type);
      if (!I::isFloatLike(c))
        c = isShapedValue(c) ? ctx().tile(ctx().scalar(I::ScalarKind::F32), c->shape)
                             : ctx().scalar(I::ScalarKind::F32);
      x = coerce(x, c, at);
      if (b.id == BuiltinId::TileRelu) return LV::val(op1(I::OpId::MathRelu, {x}, c));
      if (b.id == BuiltinId::TileSigmoid) {
        I::Value* ex = op1(I::OpId::MathExp, {op1(I::OpId::ArithNegF, {x}, c)}, c);
        I::Value* one = constant(1.0, c);
        return LV::val(op1(I::OpId::ArithDivF, {one, op1(I::OpId::ArithAddF, {one, ex}, c)}, c));
      }
      // gelu(x) = 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3)))
      I::Value* x3 = op1(I::OpId::ArithMulF, {op1(I::OpId::ArithMulF, {x, x}, c), x}, c);
      I::Value* inner = op1(I::OpId::ArithAddF, {x, op1(I::OpId::ArithMulF, {constant(0.044715, c), x3}, c)}, c);
      I::Value* th = op1(I::OpId::MathTanh, {op1(I::OpId::ArithMulF, {constant(0.7978845608028654, c), inner}, c)}, c);
      I::Value* onep = op1(I::OpId::ArithAddF, {constant(1.0, c), th}, c);
      return LV::val(op1(I::OpId::ArithMulF, {op1(I::OpId::ArithMulF, {constant(0.5, c), x}, c), onep}, c));
    }
    case BuiltinId::WarpShuffleDown:
    case BuiltinId::WarpShuffleUp:
    case BuiltinId::WarpShuffleXor:
    case BuiltinId::WarpShuffleIdx: {
      if (Expr* w = kw("width")) {
        auto c = constInt(w);
        if (!c || *c != 32) unsupported(w->range, "a shuffle 'width' other than 32");
      }
      Expr* vE = kw("value");
      Expr* oE = argument(e, b, b.sig.params.size() > 1 ? b.sig.params[1].name.c_str() : "offset");
      I::Value* v = value(lower(vE, want), vE->range);
      I::Value* o = scalarValue(oE, ctx().scalar(I::ScalarKind::I32));
      loc(e);
      if (!I::isScalar(v->type)) unsupported(vE->range, "shuffling a value of type " + I::printType(v->type));
      const char* mode = b.id == BuiltinId::WarpShuffleDown  ? "down"
                         : b.id == BuiltinId::WarpShuffleUp  ? "up"
                         : b.id == BuiltinId::WarpShuffleXor ? "xor"
                                                             : "idx";
      return LV::val(op1(I::OpId::TileShuffle, {v, o}, v->type, {{"mode", I::Attribute::string(mode)}}));
    }
    case BuiltinId::CooperativeGroup: {
      Expr* s = kw("size");
      auto c = constInt(s);
      if (!c) error(DiagID::err_lower_not_constant, s ? s->range : at, "the size of a cooperative group");
      loc(e);
      return LV::val(op1(I::OpId::TileCoopGroup, {}, ctx().cgroup(*c), {{"size", I::Attribute::integer(*c)}}));
    }
    case BuiltinId::GroupSync:
    case BuiltinId::GroupThreadRank:
    case BuiltinId::GroupSize: {
      auto* attr = dyn_cast<AttributeExpr>(e->callee);
      if (!attr) unsupported(at, "this call");
      I::Value* g = value(lower(attr->base), attr->base->range);
      loc(e);
      if (g->type->kind != I::TypeKind::CGroup)
        unsupported(attr->base->range, "a cooperative-group method on this value");
      if (b.id == BuiltinId::GroupSync) {
        waitAll(false);
        op(I::OpId::TileCoopSync, {g}, {});
        return LV();
      }
      if (b.id == BuiltinId::GroupSize) return LV::val(b_->constIndex(g->type->count));
      return LV::val(op1(I::OpId::TileCoopRank, {g}, ctx().index()));
    }
    case BuiltinId::Len: {
      Expr* xE = positional.empty() ? nullptr : positional[0];
      if (!xE) unsupported(at, "this call of 'len'");
      LV x = lower(xE);
      loc(e);
      if (x.kind == LV::Tuple)
        return LV::val(b_->constInt(static_cast<int64_t>(x.elems.size()), ctx().scalar(I::ScalarKind::I64)));
      I::Value* v = value(x, xE->range);
      if ((I::isView(v->type) || isShapedValue(v->type)) && !v->type->shape.empty()) {
        if (v->type->shape[0].isStatic()) return LV::val(b_->constIndex(v->type->shape[0].size));
        return LV::val(op1(I::OpId::MemDim, {v}, ctx().index(), {{"axis", I::Attribute::integer(0)}}));
      }
      unsupported(at, "'len' of a value of type " + I::printType(v->type));
    }
    case BuiltinId::Abs:
    case BuiltinId::Min:
    case BuiltinId::Max:
    case BuiltinId::Exp:
    case BuiltinId::Exp2:
    case BuiltinId::Log:
    case BuiltinId::Log2:
    case BuiltinId::Sqrt:
    case BuiltinId::Rsqrt:
    case BuiltinId::Tanh:
    case BuiltinId::Erf:
    case BuiltinId::Sin:
    case BuiltinId::Cos:
    case BuiltinId::Floor:
    case BuiltinId::Ceil:
    case BuiltinId::Fma:
    case BuiltinId::Pow:
    case BuiltinId::CeilDiv:
      return lowerMath(b, e, positional);
    case BuiltinId::TileRange:
    case BuiltinId::Range:
      unsupported(at, "'" + std::string(b.name) + "' outside the header of a for loop");
    case BuiltinId::AtomicAdd:
    case BuiltinId::AtomicSub:
    case BuiltinId::AtomicMin:
    case BuiltinId::AtomicMax:
    case BuiltinId::AtomicExch:
    case BuiltinId::AtomicCas:
      unsupported(at, "'" + text(e->callee->range) + "'", "Tile IR has no atomic operation yet");
    default:
      unsupported(at, "'" + text(e->callee->range) + "'");
  }
}

LV FnLowering::lowerUserCall(const Type* fnType, CallExpr* e) {
  const FunctionDefStmt* f = fnType->function;
  if (!f) unsupported(e->range, "calling '" + text(e->callee->range) + "'");
  if (fnType->functionKind != FunctionKind::Plain) unsupported(e->range, "calling '" + f->name + "' from a kernel");
  // Bind arguments to parameters (positional, then keywords).
  std::vector<const Param*> normals;
  for (const Param& p : f->params) {
    if (p.paramKind == Param::VarArgs || p.paramKind == Param::KwArgs)
      unsupported(p.range, "a device function with '*' parameters");
    if (p.paramKind == Param::Normal && !p.name.empty()) normals.push_back(&p);
  }
  std::vector<Expr*> bound(normals.size(), nullptr);
  size_t pos = 0;
  for (const Argument& a : e->args) {
    if (a.kind == Argument::Positional) {
      if (pos < bound.size()) bound[pos++] = a.value;
    } else if (a.kind == Argument::Keyword) {
      for (size_t i = 0; i < normals.size(); ++i)
        if (normals[i]->name == a.keyword) bound[i] = a.value;
    } else {
      unsupported(a.range, "'*' arguments");
    }
  }
  std::vector<I::Value*> args;
  std::vector<I::Type> types;
  const FunctionInfo* fi = ml_.info(f);
  for (size_t i = 0; i < normals.size(); ++i) {
    const Param& p = *normals[i];
    Expr* a = bound[i] ? bound[i] : p.defaultValue;
    if (!a) unsupported(e->range, "a call that leaves parameter '" + p.name + "' unbound");
    const Type* pt = fi && fi->type && i < fi->type->elems.size() ? fi->type->elems[i] : nullptr;
    I::Type want = pt && pt->kind == TypeKind::Scalar ? scalarType(pt->dtype, pt->policy) : nullptr;
    I::Value* v = value(lower(a, want), a->range);
    if (want) v = coerce(v, want, a->range);
    args.push_back(v);
    types.push_back(v->type);
  }
  loc(e);
  ModuleLowering::DeviceFn fn;
  if (!ml_.device(f, types, e->range, fn)) abort();
  I::Operation* call = op(I::OpId::FuncCall, args, fn.results, {{"callee", I::Attribute::symbol(fn.name)}});
  if (call->numResults() == 0) return LV();
  if (call->numResults() == 1) return LV::val(call->result());
  std::vector<LV> rs;
  for (unsigned i = 0; i < call->numResults(); ++i) rs.push_back(LV::val(call->result(i)));
  return LV::tuple(std::move(rs));
}

// ------------------------------------------------------------------------------------ statements

void FnLowering::assignedTarget(Expr* t, SymSet& out) {
  if (auto* n = dyn_cast<NameExpr>(t)) {
    if (n->symbol) out.insert(n->symbol);
  } else if (auto* tu = dyn_cast<TupleExpr>(t)) {
    for (Expr* x : tu->elements) assignedTarget(x, out);
  } else if (auto* li = dyn_cast<ListExpr>(t)) {
    for (Expr* x : li->elements) assignedTarget(x, out);
  } else if (auto* st = dyn_cast<StarredExpr>(t)) {
    assignedTarget(st->value, out);
  }
}

void FnLowering::assignedIn(const tessera::Block& b, SymSet& out, int nest) {
  assignedInStmts(b.stmts, out, nest);
}

void FnLowering::assignedInStmts(const std::vector<Stmt*>& stmts, SymSet& out, int nest) {
  for (Stmt* s : stmts) {
    if (isa<ReturnStmt>(s) && retFlag_) {
      out.insert(retFlag_);
      if (retVal_) out.insert(retVal_);
      continue;
    }
    if ((isa<BreakStmt>(s) || isa<ContinueStmt>(s)) && nest == 0 && !loops_.empty()) {
      const Symbol* f = isa<BreakStmt>(s) ? loops_.back().brk : loops_.back().cont;
      if (f) out.insert(f);
      continue;
    }
    if (auto* a = dyn_cast<AssignStmt>(s)) {
      for (Expr* t : a->targets) assignedTarget(t, out);
      // A copy into an unsized shared buffer gives the variable its buffer.
    } else if (auto* au = dyn_cast<AugAssignStmt>(s)) {
      // `C += t` on a tensor parameter updates memory; it does not rebind the name.
      auto* n = dyn_cast<NameExpr>(au->target);
      if (!n || !n->symbol || n->symbol->kind != SymbolKind::Parameter || !n->symbol->type ||
          n->symbol->type->kind != TypeKind::Tensor)
        assignedTarget(au->target, out);
    } else if (auto* an = dyn_cast<AnnAssignStmt>(s)) {
      assignedTarget(an->target, out);
    } else if (auto* i = dyn_cast<IfStmt>(s)) {
      assignedIn(i->thenBlock, out, nest);
      assignedIn(i->elseBlock, out, nest);
    } else if (auto* f = dyn_cast<ForStmt>(s)) {
      assignedTarget(f->target, out);
      assignedIn(f->body, out, nest + 1);
      assignedIn(f->elseBlock, out, nest);
    } else if (auto* w = dyn_cast<WhileStmt>(s)) {
      assignedIn(w->body, out, nest + 1);
      assignedIn(w->elseBlock, out, nest);
    } else if (auto* wi = dyn_cast<WithStmt>(s)) {
      assignedIn(wi->body, out, nest);
    }
  }
}

// The type a local keeps through control flow: scalars keep sema's declared type.
I::Type FnLowering::carriedType(const Symbol* s, const LV& v, SourceRange at, const char* construct) {
  if (v.kind != LV::Val) {
    if (v.kind == LV::Unsized) error(DiagID::err_lower_shared_shape_unknown, at, s->name);
    unsupported(at, "carrying '" + s->name + "' (not a single value) through a '" + construct + "'");
  }
  if (I::isScalar(v.v->type) && s->type && s->type->kind == TypeKind::Scalar && s->kind == SymbolKind::Variable)
    return scalarType(s->type->dtype, s->type->policy);
  return v.v->type;
}

void FnLowering::lowerBlock(const tessera::Block& b) {
  lowerStmts(b.stmts, 0);
}

void FnLowering::jumpsIn(const std::vector<Stmt*>& stmts, bool& brk, bool& cont) {
  for (Stmt* s : stmts) {
    if (isa<BreakStmt>(s))
      brk = true;
    else if (isa<ContinueStmt>(s))
      cont = true;
    else if (auto* i = dyn_cast<IfStmt>(s)) {
      jumpsIn(i->thenBlock.stmts, brk, cont);
      jumpsIn(i->elseBlock.stmts, brk, cont);
    }
  }
}

void FnLowering::lowerStmts(const std::vector<Stmt*>& stmts, size_t from) {
  for (size_t k = from; k < stmts.size(); ++k) {
    Stmt* s = stmts[k];
    lowerStmt(s);
    if (isa<BreakStmt>(s) || isa<ContinueStmt>(s) || isa<ReturnStmt>(s)) return;  // the rest is dead
    if (k + 1 == stmts.size() || !(isa<IfStmt>(s) || isa<ForStmt>(s) || isa<WhileStmt>(s))) continue;
    bool brk = false, cont = false, inLoop = false;
    if (!loops_.empty() && isa<IfStmt>(s)) jumpsIn({s}, brk, cont);
    bool ret = retFlag_ && containsReturn({s}, false, inLoop);
    if (!brk && !cont && !ret) continue;
    // The rest of the block runs only when the statement did not break, continue or return.
    loc(s);
    I::Value* go = notFlags(brk || cont, brk || cont, ret);
    std::vector<Stmt*> rest(stmts.begin() + static_cast<std::ptrdiff_t>(k) + 1, stmts.end());
    SymSet assigned;
    assignedInStmts(rest, assigned, 0);
    lowerIfCore(
        go, [&] { lowerStmts(stmts, k + 1); }, [] {}, assigned, s->range);
    return;
  }
}

// !(break || continue) of the innermost loop, over the flags it has.
I::Value* FnLowering::notFlags(bool withBreak, bool withContinue, bool withReturn) {
  LoopCtx L = loops_.empty() ? LoopCtx{} : loops_.back();
  I::Value* any = nullptr;
  for (const Symbol* f :
       {withBreak ? L.brk : nullptr, withContinue ? L.cont : nullptr, withReturn ? retFlag_ : nullptr}) {
    if (!f) continue;
    auto it = env_.find(f);
    if (it == env_.end() || it->second.kind != LV::Val) continue;
    any = any ? op1(I::OpId::ArithOrI, {any, it->second.v}, ctx().i1()) : it->second.v;
  }
  if (!any) return b_->constInt(1, ctx().i1());
  return op1(I::OpId::ArithXOrI, {any, b_->constInt(1, ctx().i1())}, ctx().i1());
}

FnLowering::LoopCtx FnLowering::pushLoop(const tessera::Block& body, SourceRange at, bool supported) {
  LoopCtx L;
  bool brk = false, cont = false;
  jumpsIn(body.stmts, brk, cont);
  if (supported && brk) {
    L.brk = flagSymbol("broke", at);
    env_[L.brk] = LV::val(b_->constInt(0, ctx().i1()));
    env_[L.brk].v->nameHint = "broke";
  }
  if (supported && cont) L.cont = flagSymbol("continued", at);
  loops_.push_back(L);
  return L;
}

void FnLowering::popLoop() {
  LoopCtx L = loops_.back();
  loops_.pop_back();
  if (L.brk) env_.erase(L.brk), dropped_.erase(L.brk);
  if (L.cont) env_.erase(L.cont), dropped_.erase(L.cont);
}

// A loop body: `continued` starts false each iteration; after a break, the rest of the
// iterations do nothing (structured loops run to their end).
void FnLowering::lowerLoopBody(const tessera::Block& body) {
  const LoopCtx& L = loops_.back();
  if (L.cont) {
    I::Value* f = b_->constInt(0, ctx().i1());
    f->nameHint = "continued";
    env_[L.cont] = LV::val(f);
  }
  bool inLoop = false;
  bool ret = retFlag_ && containsReturn(body.stmts, true, inLoop);
  if (!L.brk && !ret) return lowerBlock(body);
  // After a break (or a return) the remaining iterations do nothing.
  I::Value* go = notFlags(true, false, ret);
  SymSet assigned;
  assignedIn(body, assigned);
  lowerIfCore(
      go, [&] { lowerBlock(body); }, [] {}, assigned, body.range);
}

void FnLowering::lowerStmt(Stmt* s) {
  if (!s) return;
  loc(s);
  switch (s->kind) {
    case NodeKind::ExprStmt: {
      Expr* e = cast<ExprStmt>(s)->expr;
      if (isa<StringLiteralExpr>(e) || isa<EllipsisExpr>(e)) return;  // docstrings, `...` bodies
      (void)lower(e);
      return;
    }
    case NodeKind::AssignStmt: {
      auto* a = cast<AssignStmt>(s);
      // A value assigned to a scalar local takes the local's type (literals included).
      I::Type want = nullptr;
      if (a->targets.size() == 1)
        if (auto* n = dyn_cast<NameExpr>(a->targets[0]);
            n && n->symbol && n->symbol->type && n->symbol->type->kind == TypeKind::Scalar)
          want = scalarType(n->symbol->type->dtype, n->symbol->type->policy);
      LV v = lower(a->value, want);
      for (Expr* t : a->targets) assign(t, v, a->value->range);
      return;
    }
    case NodeKind::AugAssignStmt:
      return lowerAugAssign(cast<AugAssignStmt>(s));
    case NodeKind::AnnAssignStmt: {
      auto* a = cast<AnnAssignStmt>(s);
      if (!a->value) return;
      I::Type want = nullptr;
      if (auto* n = dyn_cast<NameExpr>(a->target);
          n && n->symbol && n->symbol->type && n->symbol->type->kind == TypeKind::Scalar)
        want = scalarType(n->symbol->type->dtype, n->symbol->type->policy);
      assign(a->target, lower(a->value, want), a->value->range);
      return;
    }
    case NodeKind::PassStmt:
      return;
    case NodeKind::BreakStmt:
    case NodeKind::ContinueStmt: {
      bool isBreak = s->kind == NodeKind::BreakStmt;
      const Symbol* f = loops_.empty() ? nullptr : isBreak ? loops_.back().brk : loops_.back().cont;
      if (!f) error(DiagID::err_lower_break_continue, s->range, isBreak ? "break" : "continue");
      env_[f] = LV::val(b_->constInt(1, ctx().i1()));
      return;
    }
    case NodeKind::ReturnStmt: {
      auto* r = cast<ReturnStmt>(s);
      if (retFlag_) {
        if (r->value) {
          if (!retVal_)
            error(DiagID::err_lower_early_return, s->range,
                  "of a value from inside a branch of a function without a scalar result annotation ('-> f32')");
          I::Value* v = value(lower(r->value, env_[retVal_].v->type), r->value->range);
          env_[retVal_] = LV::val(coerce(v, env_[retVal_].v->type, r->value->range));
        }
        env_[retFlag_] = LV::val(b_->constInt(1, ctx().i1()));
        return;
      }
      if (depth_ != 0) error(DiagID::err_lower_early_return, s->range, "here");
      if (r->value) {
        LV v = lower(r->value);
        if (v.kind == LV::Tuple)
          for (const LV& x : v.elems) returned_.push_back(value(x, r->value->range));
        else if (v.kind != LV::None)
          returned_.push_back(value(v, r->value->range));
      }
      sawReturn_ = true;
      return;
    }
    case NodeKind::IfStmt:
      return lowerIf(cast<IfStmt>(s));
    case NodeKind::ForStmt:
      return lowerFor(cast<ForStmt>(s));
    case NodeKind::WhileStmt:
      return lowerWhile(cast<WhileStmt>(s));
    case NodeKind::ImportStmt:
    case NodeKind::ImportFromStmt:
      return;
    case NodeKind::WithStmt:
      unsupported(s->range, "'with'");
    case NodeKind::FunctionDefStmt:
      unsupported(s->range, "a nested function definition");
    default:
      unsupported(s->range, "this statement");
  }
}

void FnLowering::assignName(NameExpr* n, const LV& v, SourceRange at) {
  const Symbol* s = n->symbol;
  if (!s) unsupported(n->range, "assigning to '" + n->name + "'");
  LV out = v;
  if (v.kind == LV::Val && I::isScalar(v.v->type) && s->type && s->type->kind == TypeKind::Scalar) {
    loc(n);
    out = LV::val(coerce(v.v, scalarType(s->type->dtype, s->type->policy), at));
  }
  if (out.kind == LV::Unsized && !out.sym) out.sym = s;
  if (out.kind == LV::Val && out.v->nameHint.empty() && !out.v->isBlockArg()) out.v->nameHint = n->name;
  env_[s] = out;
  dropped_.erase(s);
}

void FnLowering::store(Expr* target, I::Value* v, SourceRange at) {
  auto* sub = dyn_cast<SubscriptExpr>(target);
  if (!sub) unsupported(target->range, "assigning to '" + text(target->range) + "'");
  I::Value* base = value(lower(sub->base), sub->base->range);
  if (!I::isView(base->type)) unsupported(target->range, "storing into a value of type " + I::printType(base->type));
  bool isElement = false;
  std::vector<I::Value*> idx;
  I::Value* view = sliceView(base, sub->indices, sub, isElement, idx);
  loc(target);
  if (isElement) {
    I::Value* x = coerce(v, base->type->elem, at);
    waitFor(base, true);
    std::vector<I::Value*> ops = {x, base};
    ops.insert(ops.end(), idx.begin(), idx.end());
    op(I::OpId::MemStore, ops, {});
    return;
  }
  // A tile value stored to a view, cooperatively by the group.
  I::Value* t = v;
  if (I::isView(t->type)) t = asTile(t, at);
  if (I::isScalar(t->type)) t = broadcastTo(convertElem(t, view->type->elem, at), view->type->shape, at);
  if (t->type->shape.size() != view->type->shape.size())
    unsupported(at,
                "storing a tile of type " + I::printType(t->type) + " into a view of type " + I::printType(view->type));
  for (size_t i = 0; i < t->type->shape.size(); ++i) unify(t->type->shape[i], view->type->shape[i]);
  t = convertElem(t, view->type->elem, at);
  op(I::OpId::TileStore, {t, view}, {});
}

void FnLowering::assign(Expr* target, const LV& v, SourceRange at) {
  switch (target->kind) {
    case NodeKind::NameExpr:
      return assignName(cast<NameExpr>(target), v, at);
    case NodeKind::TupleExpr:
    case NodeKind::ListExpr: {
      auto& elems =
          target->kind == NodeKind::TupleExpr ? cast<TupleExpr>(target)->elements : cast<ListExpr>(target)->elements;
      if (v.kind != LV::Tuple || v.elems.size() != elems.size())
        unsupported(target->range, "unpacking a value that is not a tuple of " + std::to_string(elems.size()));
      for (size_t i = 0; i < elems.size(); ++i) assign(elems[i], v.elems[i], at);
      return;
    }
    case NodeKind::SubscriptExpr:
      return store(target, value(v, at), at);
    default:
      unsupported(target->range, "assigning to '" + text(target->range) + "'");
  }
}

void FnLowering::lowerAugAssign(AugAssignStmt* s) {
  SourceRange at = s->opRange.valid() ? s->opRange : s->range;
  if (auto* n = dyn_cast<NameExpr>(s->target)) {
    I::Value* cur = value(lowerName(n, nullptr), n->range);
    I::Value* rhs = value(lower(s->value, I::isView(cur->type) ? cur->type->elem : cur->type), s->value->range);
    loc(s);
    if (I::isView(cur->type)) {
      // C += t on a whole tensor parameter: load, add, store.
      I::Value* sum = arith(s->op, asTile(cur, n->range), rhs, nullptr, at);
      knownView(cur, n->range, n->name);
      op(I::OpId::TileStore, {convertElem(sum, cur->type->elem, at), cur}, {});
      return;
    }
    I::Type semaT = nullptr;
    if (I::isScalar(cur->type) && n->symbol && n->symbol->type && n->symbol->type->kind == TypeKind::Scalar)
      semaT = promote(cur->type, rhs->type);
    I::Value* r = arith(s->op, cur, rhs, semaT, at);
    assignName(n, LV::val(r), s->value->range);
    return;
  }
  auto* sub = dyn_cast<SubscriptExpr>(s->target);
  if (!sub) unsupported(s->target->range, "this augmented assignment");
  // x[i] op= v: load, compute, store (the subscript is lowered once).
  I::Value* base = value(lower(sub->base), sub->base->range);
  if (!I::isView(base->type)) unsupported(s->target->range, "updating a value of type " + I::printType(base->type));
  bool isElement = false;
  std::vector<I::Value*> idx;
  I::Value* view = sliceView(base, sub->indices, sub, isElement, idx);
  loc(s);
  if (isElement) {
    waitFor(base, true);
    std::vector<I::Value*> lops = {base};
    lops.insert(lops.end(), idx.begin(), idx.end());
    I::Value* cur = op1(I::OpId::MemLoad, lops, base->type->elem);
    I::Value* rhs = value(lower(s->value, cur->type), s->value->range);
    loc(s);
    I::Value* r = arith(s->op, cur, rhs, nullptr, at);
    std::vector<I::Value*> sops = {coerce(r, base->type->elem, at), base};
    sops.insert(sops.end(), idx.begin(), idx.end());
    op(I::OpId::MemStore, sops, {});
    return;
  }
  I::Value* cur = asTile(view, s->target->range);
  I::Value* rhs = value(lower(s->value, cur->type->elem), s->value->range);
  loc(s);
  I::Value* r = arith(s->op, cur, rhs, nullptr, at);
  op(I::OpId::TileStore, {convertElem(r, view->type->elem, at), view}, {});
}

void FnLowering::lowerIf(IfStmt* s) {
  I::Value* c = toBool(value(lower(s->cond), s->cond->range), s->cond->range);
  loc(s);
  SymSet assigned;
  assignedIn(s->thenBlock, assigned);
  assignedIn(s->elseBlock, assigned);
  lowerIfCore(
      c, [&] { lowerBlock(s->thenBlock); }, [&] { lowerBlock(s->elseBlock); }, assigned, s->range);
}

void FnLowering::lowerIfCore(I::Value* c, const std::function<void()>& thenFn, const std::function<void()>& elseFn,
                             const SymSet& assigned, SourceRange at) {
  I::Operation* ifOp = op(I::OpId::ScfIf, {c}, {});
  auto before = env_;
  ++depth_;
  b_->setInsertionPointToEnd(ifOp->body(0));
  thenFn();
  flushRegion();
  auto thenEnv = env_;
  env_ = before;
  b_->setInsertionPointToEnd(ifOp->body(1));
  elseFn();
  flushRegion();
  auto elseEnv = env_;
  --depth_;
  // Locals a branch assigns leave the if as its results.
  std::vector<const Symbol*> carried;
  std::vector<I::Type> types;
  std::vector<I::Value*> thenVals, elseVals;
  env_ = before;
  for (const Symbol* sym : assigned) {
    auto t = thenEnv.find(sym), e = elseEnv.find(sym);
    if (t == thenEnv.end() || e == elseEnv.end()) {
      env_.erase(sym);
      dropped_[sym] = "if";
      continue;
    }
    if (sameLV(t->second, e->second)) {
      env_[sym] = t->second;
      continue;
    }
    auto b0 = before.find(sym);
    const LV& ref = b0 != before.end() ? b0->second : t->second;
    I::Type ty = carriedType(sym, ref, at, "if");
    if (t->second.kind != LV::Val || e->second.kind != LV::Val)
      error(DiagID::err_lower_type_change, at, sym->name, I::printType(ty), "if", "a value of another kind");
    carried.push_back(sym);
    types.push_back(ty);
    thenVals.push_back(t->second.v);
    elseVals.push_back(e->second.v);
  }
  for (int branch = 0; branch < 2; ++branch) {
    b_->setInsertionPointToEnd(ifOp->body(branch));
    std::vector<I::Value*> ys;
    for (size_t i = 0; i < carried.size(); ++i) {
      I::Value* v = branch == 0 ? thenVals[i] : elseVals[i];
      bool ok = v->type == types[i] || (I::isScalar(v->type) && I::isScalar(types[i])) ||
                (isShapedValue(types[i]) && (isShapedValue(v->type) || I::isScalar(v->type)));
      if (!ok)
        error(DiagID::err_lower_type_change, at, carried[i]->name, I::printType(types[i]), "if",
              I::printType(v->type));
      ys.push_back(coerce(v, types[i], at));
    }
    op(I::OpId::ScfYield, ys, {});
  }
  for (size_t i = 0; i < carried.size(); ++i) {
    I::Value* r = ifOp->addResult(types[i]);
    r->nameHint = carried[i]->name;
    env_[carried[i]] = LV::val(r);
    dropped_.erase(carried[i]);
  }
  b_->setInsertionPointAfter(ifOp);
}

void FnLowering::buildLoop(I::OpId id, I::Value* lb, I::Value* ub, I::Value* step, std::vector<I::NamedAttr> attrs,
                           const tessera::Block& bodyStmts, SourceRange at, const char* construct,
                           const std::function<void(I::Value*)>& bindIv, const SymSet& exclude, I::Value* extraInit,
                           I::Value** extraOut) {
  SymSet assigned;
  assignedIn(bodyStmts, assigned);
  std::vector<const Symbol*> carried;
  std::vector<I::Type> types;
  std::vector<I::Value*> inits = {lb, ub, step};
  for (const Symbol* s : assigned) {
    if (exclude.count(s)) continue;
    auto it = env_.find(s);
    if (it == env_.end()) continue;
    I::Type t = carriedType(s, it->second, at, construct);
    carried.push_back(s);
    types.push_back(t);
    inits.push_back(coerce(it->second.v, t, at));
  }
  std::vector<I::Type> resultTypes = types;
  if (extraInit) {
    inits.push_back(extraInit);
    resultTypes.push_back(extraInit->type);
  }
  I::Operation* loop = op(id, inits, resultTypes, std::move(attrs));
  I::Block& body = loop->body();
  I::Value* iv = body.addArg(lb->type);
  std::vector<I::Value*> args;
  for (size_t i = 0; i < carried.size(); ++i) args.push_back(body.addArg(types[i], carried[i]->name));
  I::Value* extraArg = extraInit ? body.addArg(extraInit->type) : nullptr;
  auto before = env_;
  for (size_t i = 0; i < carried.size(); ++i) env_[carried[i]] = LV::val(args[i]);
  ++depth_;
  b_->setInsertionPointToEnd(body);
  MmaLoop* savedMma = mma_;
  if (extraArg && mma_) mma_->acc = extraArg;
  bindIv(iv);
  unsigned copiesBefore = asyncCopies_;
  lowerLoopBody(bodyStmts);
  flushRegion();
  if (asyncCopies_ != copiesBefore && smemReadSinceBarrier_ && kernel_) {
    op(I::OpId::TileBarrier, {}, {});
    smemReadSinceBarrier_ = false;
  }
  std::vector<I::Value*> ys;
  for (size_t i = 0; i < carried.size(); ++i) {
    auto it = env_.find(carried[i]);
    if (it == env_.end() || it->second.kind != LV::Val)
      error(DiagID::err_lower_type_change, at, carried[i]->name, I::printType(types[i]), construct, "no single value");
    I::Value* v = it->second.v;
    bool ok = v->type == types[i] || (I::isScalar(v->type) && I::isScalar(types[i])) ||
              (isShapedValue(types[i]) && (isShapedValue(v->type) || I::isScalar(v->type)));
    if (!ok)
      error(DiagID::err_lower_type_change, at, carried[i]->name, I::printType(types[i]), construct,
            I::printType(v->type));
    ys.push_back(coerce(v, types[i], at));
  }
  if (extraArg) ys.push_back(mma_ ? mma_->acc : extraArg);
  op(I::OpId::ScfYield, ys, {});
  --depth_;
  mma_ = savedMma;
  env_ = before;
  for (const Symbol* s : assigned)
    if (!std::count(carried.begin(), carried.end(), s) && !env_.count(s)) dropped_[s] = construct;
  for (size_t i = 0; i < carried.size(); ++i) {
    I::Value* r = loop->result(static_cast<unsigned>(i));
    r->nameHint = carried[i]->name;
    env_[carried[i]] = LV::val(r);
  }
  if (extraOut) *extraOut = loop->result(static_cast<unsigned>(carried.size()));
  b_->setInsertionPointAfter(loop);
}

void FnLowering::lowerFor(ForStmt* s) {
  if (!s->elseBlock.stmts.empty()) unsupported(s->elseBlock.range, "'else' on a for loop");
  auto* call = dyn_cast<CallExpr>(s->iter);
  const BuiltinInfo* bi = call && call->callee->type && call->callee->type->kind == TypeKind::Builtin
                              ? call->callee->type->builtin
                              : nullptr;
  SymSet targets;
  assignedTarget(s->target, targets);
  auto* targetName = dyn_cast<NameExpr>(s->target);
  if (bi && bi->id == BuiltinId::TileMma) return lowerMmaLoop(s, call);
  if (bi && (bi->id == BuiltinId::Range || bi->id == BuiltinId::TileRange)) {
    if (!targetName || !targetName->symbol) unsupported(s->target->range, "this loop target");
    const Symbol* tsym = targetName->symbol;
    std::vector<Expr*> pos;
    for (const Argument& a : call->args)
      if (a.kind == Argument::Positional) pos.push_back(a.value);
    if (bi->id == BuiltinId::Range) {
      const Type* et = s->target->type;
      I::Type ivT = et && et->kind == TypeKind::Scalar ? scalarType(et->dtype) : ctx().scalar(I::ScalarKind::I32);
      I::Value *lb, *ub, *step;
      if (pos.size() == 1) {
        lb = b_->constInt(0, ivT);
        ub = scalarValue(pos[0], ivT);
      } else {
        lb = scalarValue(pos[0], ivT);
        ub = scalarValue(pos[1], ivT);
      }
      if (pos.size() >= 3) {
        auto c = constInt(pos[2]);
        if (c && *c <= 0) unsupported(pos[2]->range, "a range with a step that is not positive");
        step = scalarValue(pos[2], ivT);
      } else {
        step = b_->constInt(1, ivT);
      }
      loc(s);
      pushLoop(s->body, s->range, true);
      buildLoop(
          I::OpId::ScfFor, lb, ub, step, {}, s->body, s->range, "for",
          [&](I::Value* iv) {
            iv->nameHint = tsym->name;
            env_[tsym] = LV::val(iv);
          },
          targets);
      popLoop();
      return;
    }
    // tile.range(extent | T, stop?, axis=, step=, prefetch=)
    Expr* extE = argument(call, *bi, "extent");
    Expr* stopE = argument(call, *bi, "stop");
    Expr* axisE = argument(call, *bi, "axis");
    Expr* stepE = argument(call, *bi, "step");
    Expr* preE = argument(call, *bi, "prefetch");
    int64_t step = 1;
    if (stepE) {
      auto c = constInt(stepE);
      if (!c || *c <= 0)
        error(DiagID::err_lower_not_constant, stepE->range, "the step of 'tile.range' (a positive integer)");
      step = *c;
    }
    std::vector<I::NamedAttr> attrs;
    if (preE) {
      auto c = constInt(preE);
      if (!c || *c < 1 || *c > 16)
        error(DiagID::err_lower_not_constant, preE->range, "'prefetch' (an integer in [1, 16])");
      attrs.push_back({"prefetch", I::Attribute::integer(*c)});
    }
    LV ext = lower(extE, ctx().index());
    I::Value* e0 = value(ext, extE->range);
    loc(s);
    I::Value* idx0 = b_->constIndex(0);
    bool blocks = I::isView(e0->type);
    int64_t axis = 0;
    I::Value *lb = idx0, *ub;
    if (blocks) {
      if (axisE) {
        auto c = constInt(axisE);
        if (!c) error(DiagID::err_lower_not_constant, axisE->range, "the axis of 'tile.range'");
        axis = *c;
      }
      if (axis < 0 || axis >= static_cast<int64_t>(e0->type->shape.size()))
        unsupported(axisE ? axisE->range : call->range, "'tile.range' over axis " + std::to_string(axis));
      const I::Dim& d = e0->type->shape[axis];
      ub = d.isStatic() ? b_->constIndex(d.size)
                        : op1(I::OpId::MemDim, {e0}, ctx().index(), {{"axis", I::Attribute::integer(axis)}});
    } else if (stopE) {
      lb = coerce(e0, ctx().index(), extE->range);
      ub = scalarValue(stopE, ctx().index());
    } else {
      ub = coerce(e0, ctx().index(), extE->range);
    }
    I::Value* st = b_->constIndex(step);
    // The outermost loop over a tensor's blocks hands them to the groups, grid-stride:
    // group g takes blocks g, g + num_groups, ... (program_id-style partitioning).
    bool distribute = blocks && blockLoopDepth_ == 0 && kernel_;
    if (distribute) {
      if (kernel_ && info_ && info_->groupShape.empty()) needsGroup_ = true;
      I::Value* g = op1(I::OpId::TileGroupId, {}, ctx().index());
      lb = op1(I::OpId::ArithMulI, {g, st}, ctx().index());
      I::Value* ng = op1(I::OpId::TileNumGroups, {}, ctx().index());
      st = op1(I::OpId::ArithMulI, {ng, b_->constIndex(step)}, ctx().index());
      int64_t p = -1;
      if (e0->isBlockArg() && e0->ownerBlock == top_) p = static_cast<int64_t>(e0->index);
      distributed_.push_back({p, axis, step});
    }
    if (blocks) ++blockLoopDepth_;
    pushLoop(s->body, s->range, true);
    buildLoop(
        I::OpId::TileRange, lb, ub, st, std::move(attrs), s->body, s->range, "for",
        [&](I::Value* iv) {
          iv->nameHint = tsym->name;
          if (blocks) {
            LV blk;
            blk.kind = LV::Block;
            blk.v = iv;
            blk.size = step;
            blk.axis = static_cast<int>(axis);
            env_[tsym] = blk;
          } else {
            env_[tsym] = LV::val(iv);
          }
        },
        targets);
    popLoop();
    if (blocks) --blockLoopDepth_;
    return;
  }
  // for x in [a, b, c] / (a, b, c): unrolled.
  if (isa<ListExpr>(s->iter) || isa<TupleExpr>(s->iter)) {
    LV items = lower(s->iter);
    pushLoop(s->body, s->range, false);
    for (const LV& item : items.elems) {
      assign(s->target, item, s->iter->range);
      lowerLoopBody(s->body);
    }
    popLoop();
    for (const Symbol* t : targets) {
      env_.erase(t);
      dropped_[t] = "for";
    }
    return;
  }
  unsupported(s->iter->range, "iterating over '" + text(s->iter->range) + "'",
              "use range(...), tile.range(...) or a list of constants");
}

// for m, n, k in tile.mma(A, B, C, BM=, BN=, BK=): each group owns the (m, n) output tile of C
// and walks k; tile.mma_sync accumulates into a register fragment that is stored to C at the end.
void FnLowering::lowerMmaLoop(ForStmt* s, CallExpr* call) {
  const BuiltinInfo& b = *call->callee->type->builtin;
  auto* tu = dyn_cast<TupleExpr>(s->target);
  if (!tu || tu->elements.size() != 3)
    unsupported(s->target->range, "this target of a tile.mma loop", "write 'for m, n, k in tile.mma(...)'");
  Expr* aE = argument(call, b, "a");
  Expr* bE = argument(call, b, "b");
  Expr* cE = argument(call, b, "c");
  if (!cE) unsupported(call->range, "'tile.mma' iteration without an output tensor C");
  auto sz = [&](const char* name) {
    Expr* x = argument(call, b, name);
    auto c = x ? constInt(x) : std::nullopt;
    if (!c || *c <= 0)
      error(DiagID::err_lower_not_constant, x ? x->range : call->range,
            std::string("'") + name + "' (a positive integer)");
    return *c;
  };
  int64_t BM = sz("BM"), BN = sz("BN"), BK = sz("BK");
  I::Value* A = value(lower(aE), aE->range);
  I::Value* B = value(lower(bE), bE->range);
  I::Value* C = value(lower(cE), cE->range);
  for (I::Value* v : {A, B, C})
    if (v->type->kind != I::TypeKind::Tensor || v->type->shape.size() != 2)
      unsupported(call->range, "'tile.mma' iteration over operands that are not rank-2 tensors");
  loc(s);
  // Sema rejects a read-only C (err_write_readonly_param); kept as a guard.
  if (C->type->access == I::Access::Read)
    unsupported(cE->range, "a 'tile.mma' loop into the read-only '" + text(cE->range) + "'");
  if (kernel_ && info_ && info_->groupShape.empty()) needsGroup_ = true;
  // The default launch: one group per (m, n) output tile of C (`blocks` = (param, axis, step)...).
  for (auto& arg : func_->body().args)
    if (arg.get() == C && kernel_ && !func_->hasAttr("blocks"))
      func_->setAttr("blocks", I::Attribute::ints({static_cast<int64_t>(arg->index), 0, BM,
                                                   static_cast<int64_t>(arg->index), 1, BN}));
  I::Value* sA = prologue(I::OpId::SmemAlloc,
                          ctx().smem(A->type->elem, {I::Dim{BM, {}}, I::Dim{BK, {}}}, I::Layout::Row, I::Swizzle::Auto))
                     ->result();
  sA->nameHint = "sA";
  I::Value* sB = prologue(I::OpId::SmemAlloc,
                          ctx().smem(B->type->elem, {I::Dim{BK, {}}, I::Dim{BN, {}}}, I::Layout::Row, I::Swizzle::Auto))
                     ->result();
  sB->nameHint = "sB";
  I::Type ix = ctx().index();
  I::Value* g = op1(I::OpId::TileGroupId, {}, ix);
  I::Value* N = C->type->shape[1].isStatic() ? b_->constIndex(C->type->shape[1].size)
                                             : op1(I::OpId::MemDim, {C}, ix, {{"axis", I::Attribute::integer(1)}});
  I::Value* cBN = b_->constIndex(BN);
  I::Value* nb = op1(I::OpId::ArithDivSI, {op1(I::OpId::ArithAddI, {N, b_->constIndex(BN - 1)}, ix), cBN}, ix);
  nb->nameHint = "ntiles";
  I::Value* mi = op1(I::OpId::ArithDivSI, {g, nb}, ix);
  I::Value* ni = op1(I::OpId::ArithRemSI, {g, nb}, ix);
  I::Value* m0 = op1(I::OpId::ArithMulI, {mi, b_->constIndex(BM)}, ix);
  m0->nameHint = "m0";
  I::Value* n0 = op1(I::OpId::ArithMulI, {ni, cBN}, ix);
  n0->nameHint = "n0";
  I::Type fragT = ctx().frag(ctx().scalar(I::ScalarKind::F32), {I::Dim{BM, {}}, I::Dim{BN, {}}}, I::FragRole::Acc);
  I::Value* acc0 = op1(I::OpId::TileBroadcast, {b_->constFloat(0.0, ctx().scalar(I::ScalarKind::F32))}, fragT);
  I::Value* K = A->type->shape[1].isStatic() ? b_->constIndex(A->type->shape[1].size)
                                             : op1(I::OpId::MemDim, {A}, ix, {{"axis", I::Attribute::integer(1)}});
  MmaLoop L{A, B, m0, n0, nullptr, acc0, sA, sB, BM, BN, BK};
  MmaLoop* saved = mma_;
  mma_ = &L;
  SymSet targets;
  assignedTarget(s->target, targets);
  I::Value* accOut = nullptr;
  auto* mN = dyn_cast<NameExpr>(tu->elements[0]);
  auto* nN = dyn_cast<NameExpr>(tu->elements[1]);
  auto* kN = dyn_cast<NameExpr>(tu->elements[2]);
  pushLoop(s->body, s->range, false);
  // The k loop is a 2-stage copy pipeline (the pipeline pass double-buffers sA and sB).
  buildLoop(
      I::OpId::TileRange, b_->constIndex(0), K, b_->constIndex(BK), {{"prefetch", I::Attribute::integer(3)}}, s->body,
      s->range, "for",
      [&](I::Value* iv) {
        iv->nameHint = kN ? kN->name : "k";
        L.k = iv;
        if (mN && mN->symbol) env_[mN->symbol] = LV::val(m0);
        if (nN && nN->symbol) env_[nN->symbol] = LV::val(n0);
        if (kN && kN->symbol) env_[kN->symbol] = LV::val(iv);
      },
      targets, acc0, &accOut);
  popLoop();
  mma_ = saved;
  accOut->nameHint = "acc";
  loc(s);
  I::Value* cblk = op1(I::OpId::MemSlice, {C, m0, n0}, ctx().withShape(C->type, {I::Dim{BM, {}}, I::Dim{BN, {}}}),
                       {{"sizes", I::Attribute::ints({BM, BN})}});
  op(I::OpId::TileStore, {convertElem(accOut, C->type->elem, s->range), cblk}, {});
}

void FnLowering::lowerWhile(WhileStmt* s) {
  if (!s->elseBlock.stmts.empty()) unsupported(s->elseBlock.range, "'else' on a while loop");
  LoopCtx L = pushLoop(s->body, s->range, true);
  SymSet assigned;
  assignedIn(s->body, assigned);
  std::vector<const Symbol*> carried;
  std::vector<I::Type> types;
  std::vector<I::Value*> inits;
  for (const Symbol* sym : assigned) {
    auto it = env_.find(sym);
    if (it == env_.end()) continue;
    I::Type t = carriedType(sym, it->second, s->range, "while");
    carried.push_back(sym);
    types.push_back(t);
    inits.push_back(coerce(it->second.v, t, s->range));
  }
  loc(s);
  I::Operation* w = op(I::OpId::ScfWhile, inits, types);
  auto before = env_;
  ++depth_;
  // Before region: the condition.
  I::Block& cb = w->body(0);
  std::vector<I::Value*> cargs;
  for (size_t i = 0; i < carried.size(); ++i) {
    cargs.push_back(cb.addArg(types[i], carried[i]->name));
    env_[carried[i]] = LV::val(cargs.back());
  }
  b_->setInsertionPointToEnd(cb);
  I::Value* c;
  bool inLoopRet = false;
  bool retInBody = retFlag_ && containsReturn(s->body.stmts, true, inLoopRet);
  if (L.brk || retInBody) {
    // After a break (or a return) the condition is not evaluated again.
    I::Value* go = notFlags(true, false, retInBody);
    I::Operation* g = op(I::OpId::ScfIf, {go}, {ctx().i1()});
    ++depth_;
    b_->setInsertionPointToEnd(g->body(0));
    I::Value* inner = toBool(value(lower(s->cond), s->cond->range), s->cond->range);
    flushRegion();
    op(I::OpId::ScfYield, {inner}, {});
    b_->setInsertionPointToEnd(g->body(1));
    op(I::OpId::ScfYield, {b_->constInt(0, ctx().i1())}, {});
    --depth_;
    b_->setInsertionPointAfter(g);
    c = g->result();
  } else {
    c = toBool(value(lower(s->cond), s->cond->range), s->cond->range);
  }
  flushRegion();
  std::vector<I::Value*> condOps = {c};
  condOps.insert(condOps.end(), cargs.begin(), cargs.end());
  op(I::OpId::ScfCondition, condOps, {});
  // After region: the body.
  I::Block& bb = w->body(1);
  for (size_t i = 0; i < carried.size(); ++i) env_[carried[i]] = LV::val(bb.addArg(types[i], carried[i]->name));
  b_->setInsertionPointToEnd(bb);
  lowerLoopBody(s->body);
  flushRegion();
  std::vector<I::Value*> ys;
  for (size_t i = 0; i < carried.size(); ++i) {
    auto it = env_.find(carried[i]);
    if (it == env_.end() || it->second.kind != LV::Val)
      error(DiagID::err_lower_type_change, s->range, carried[i]->name, I::printType(types[i]), "while",
            "no single value");
    ys.push_back(coerce(it->second.v, types[i], s->range));
  }
  op(I::OpId::ScfYield, ys, {});
  --depth_;
  env_ = before;
  for (const Symbol* sym : assigned)
    if (!std::count(carried.begin(), carried.end(), sym) && !env_.count(sym)) dropped_[sym] = "while";
  for (size_t i = 0; i < carried.size(); ++i) {
    I::Value* r = w->result(static_cast<unsigned>(i));
    r->nameHint = carried[i]->name;
    env_[carried[i]] = LV::val(r);
  }
  b_->setInsertionPointAfter(w);
  popLoop();
}

// ------------------------------------------------------------------------------------ functions

bool FnLowering::containsReturn(const std::vector<Stmt*>& stmts, bool inLoop, bool& inLoopOut) {
  bool any = false;
  for (Stmt* s : stmts) {
    if (auto* r = dyn_cast<ReturnStmt>(s)) {
      any = true;
      if (inLoop) inLoopOut = true;
      (void)r;
    } else if (auto* i = dyn_cast<IfStmt>(s)) {
      any |= containsReturn(i->thenBlock.stmts, inLoop, inLoopOut);
      any |= containsReturn(i->elseBlock.stmts, inLoop, inLoopOut);
    } else if (auto* f = dyn_cast<ForStmt>(s)) {
      any |= containsReturn(f->body.stmts, true, inLoopOut);
    } else if (auto* w = dyn_cast<WhileStmt>(s)) {
      any |= containsReturn(w->body.stmts, true, inLoopOut);
    }
  }
  return any;
}

// A function whose returns are not all at the top level of its body gets the flag locals.
void FnLowering::prepareReturns() {
  bool nested = false;
  for (Stmt* s : def_->body.stmts) {
    bool inLoop = false;
    if (!isa<ReturnStmt>(s) && containsReturn({s}, false, inLoop)) nested = true;
  }
  if (!nested) return;
  retFlag_ = flagSymbol("returned", def_->nameRange);
  I::Value* f = b_->constInt(0, ctx().i1());
  f->nameHint = "returned";
  env_[retFlag_] = LV::val(f);
  if (kernel_) return;
  const Type* rt = info_ && info_->type ? info_->type->result : nullptr;
  if (!rt || rt->kind == TypeKind::None) return;
  if (rt->kind != TypeKind::Scalar) return;  // reported at a return that has a value
  retVal_ = flagSymbol("result", def_->nameRange);
  I::Value* z = constant(0, scalarType(rt->dtype, rt->policy));
  z->nameHint = "result";
  env_[retVal_] = LV::val(z);
}

void FnLowering::finishFunction(SourceRange at) {
  b_->setInsertionPointToEnd(*top_);
  if (retVal_) returned_ = {env_[retVal_].v};
  waitAll(false);
  op(I::OpId::FuncReturn, returned_, {});
}

I::Operation* FnLowering::lowerKernel() {
  std::vector<I::Type> argTypes;
  std::vector<const Param*> params;
  for (const Param& p : def_->params) {
    const Symbol* sym = info_ && info_->scope ? info_->scope->lookupLocal(p.name) : nullptr;
    if (sym && sym->type && sym->type->kind == TypeKind::Tensor)
      for (const Extent& e : sym->type->dims)
        if (!dimOf(e).sym.empty()) usedSyms_.insert(dimOf(e).sym);
  }
  for (const Param& p : def_->params) {
    if (p.paramKind != Param::Normal) unsupported(p.range, "a '*' parameter of a kernel");
    if (p.name.empty()) continue;
    const Symbol* sym = info_ && info_->scope ? info_->scope->lookupLocal(p.name) : nullptr;
    argTypes.push_back(paramType(p, sym ? sym->type : nullptr));
    params.push_back(&p);
  }
  std::vector<I::NamedAttr> attrs = {{"kernel", I::Attribute::unit()}};
  if (!info_->groupShape.empty()) {
    std::vector<int64_t> g(info_->groupShape.begin(), info_->groupShape.end());
    attrs.push_back({"group", I::Attribute::ints(g)});
  }
  if (info_->sharedBudget >= 0) attrs.push_back({"shared", I::Attribute::integer(info_->sharedBudget)});
  if (!info_->deterministic) attrs.push_back({"nondeterministic", I::Attribute::unit()});
  if (!info_->flops.empty()) attrs.push_back({"flops", I::Attribute::string(info_->flops)});
  if (!info_->autotuneSpace.empty()) {
    std::vector<std::string> keys;
    std::vector<I::Attribute> vals;
    for (auto& [k, v] : info_->autotuneSpace) {
      keys.push_back(k);
      vals.push_back(I::Attribute::ints(std::vector<int64_t>(v.begin(), v.end())));
    }
    attrs.push_back({"autotune", I::Attribute::dict(keys, vals)});
  }
  I::Builder fb(ctx());
  fb.setInsertionPointToEnd(ml_.module->body());
  fb.setLoc(def_->nameRange.begin);
  func_ = fb.func(def_->name, argTypes, {}, std::move(attrs));
  top_ = &func_->body();
  b_ = std::make_unique<I::Builder>(ctx());
  b_->setInsertionPointToEnd(*top_);
  b_->setLoc(def_->nameRange.begin);
  for (size_t i = 0; i < params.size(); ++i) {
    top_->arg(static_cast<unsigned>(i))->nameHint = params[i]->name;
    const Symbol* sym = info_->scope->lookupLocal(params[i]->name);
    if (sym) {
      env_[sym] = LV::val(top_->arg(static_cast<unsigned>(i)));
      paramIndex_[sym] = static_cast<unsigned>(i);
    }
  }
  ml_.insertBefore = func_;
  prepareReturns();
  // A whole-tensor tile program whose output has a symbolic leading extent: its rows are split
  // across groups (the output is the first writable tensor parameter).
  int outIdx = -1;
  if (wholeTensorProgram())
    for (size_t i = 0; i < argTypes.size() && outIdx < 0; ++i)
      if (argTypes[i]->kind == I::TypeKind::Tensor && argTypes[i]->access != I::Access::Read) outIdx = static_cast<int>(i);
  if (!dryRun_ && outIdx >= 0 && !argTypes[outIdx]->shape.empty() && !argTypes[outIdx]->shape[0].sym.empty())
    lowerRowBlocks(params, static_cast<unsigned>(outIdx));
  else
    lowerBlock(def_->body);
  if (!returned_.empty()) unsupported(def_->range, "a kernel that returns a value");
  finishFunction(def_->range);
  // Kernels that use group features without declaring a group shape (whole-tensor tile programs,
  // tile.mma iteration) get the compiler's group size.
  if (needsGroup_ && !func_->hasAttr("group")) func_->setAttr("group", I::Attribute::ints({128}));
  // The default launch of a kernel with one outermost block loop over a parameter: one group
  // per block, ceil(T.shape[axis] / step) groups.
  if (kernel_ && distributed_.size() == 1 && distributed_[0][0] >= 0)
    func_->setAttr("blocks", I::Attribute::ints(distributed_[0]));
  return func_;
}

// A kernel is a whole-tensor tile program when it declares no group shape, computes with tile
// values (tile ops, `@`, `.T`), and uses no ids, no block loops (tile.range, tile.mma) and no
// cooperative groups: nothing says which part of the data a group owns, so the compiler decides.
bool FnLowering::wholeTensorProgram() {
  if (!kernel_ || !info_ || !info_->groupShape.empty()) return false;
  bool tileOps = false, explicitTiles = false;
  walkBlock(
      def_->body,
      [&](Stmt* s) {
        if (auto* f = dyn_cast<ForStmt>(s))
          if (auto* c = dyn_cast<CallExpr>(f->iter))
            if (const BuiltinInfo* b = builtinOf(c->callee);
                b && (b->id == BuiltinId::TileRange || b->id == BuiltinId::TileMma))
              explicitTiles = true;
      },
      [&](Expr* e) {
        if (auto* bin = dyn_cast<BinaryExpr>(e); bin && bin->op == BinaryOp::MatMul) tileOps = true;
        if (auto* a = dyn_cast<AttributeExpr>(e)) {
          if (a->name == "T") tileOps = true;
          if (a->name == "grid_groups") explicitTiles = true;
        }
        if (auto* n = dyn_cast<NameExpr>(e); n && n->name == "grid_groups") explicitTiles = true;
        auto* c = dyn_cast<CallExpr>(e);
        const BuiltinInfo* b = c ? builtinOf(c->callee) : nullptr;
        if (!b) return;
        switch (b->id) {
          case BuiltinId::TileLinearId:
          case BuiltinId::TileLaneId:
          case BuiltinId::TileWarpId:
          case BuiltinId::LaunchThreadId:
          case BuiltinId::GroupLinearId:
          case BuiltinId::GroupTileCount:
          case BuiltinId::CooperativeGroup:
          case BuiltinId::TileMmaSync:
            explicitTiles = true;
            break;
          case BuiltinId::TileDot:
          case BuiltinId::TileMma:
          case BuiltinId::TileSoftmax:
          case BuiltinId::TileRelu:
          case BuiltinId::TileGelu:
          case BuiltinId::TileSigmoid:
          case BuiltinId::TileSum:
          case BuiltinId::TileMax:
          case BuiltinId::TileZeros:
          case BuiltinId::TileFull:
            tileOps = true;
            break;
          default:
            break;
        }
      });
  return tileOps && !explicitTiles;
}

// The body of a whole-tensor program runs once per block of kRowBlock rows of the output,
// grid-stride over groups, as if written `for rows in tile.range(Out, axis=0, step=16)`: every
// tensor parameter whose leading extent is the output's leading symbol is used as its row block
// `P[rows]`; the others are used whole. Codegen clips the last block at run time.
void FnLowering::lowerRowBlocks(const std::vector<const Param*>& params, unsigned outIdx) {
  needsGroup_ = true;
  I::Value* out = top_->arg(outIdx);
  std::string rowSym = out->type->shape[0].sym;
  I::Value* ub = op1(I::OpId::MemDim, {out}, ctx().index(), {{"axis", I::Attribute::integer(0)}});
  I::Value* blk = b_->constIndex(kRowBlock);
  I::Value* lb = op1(I::OpId::ArithMulI, {op1(I::OpId::TileGroupId, {}, ctx().index()), blk}, ctx().index());
  I::Value* st =
      op1(I::OpId::ArithMulI, {op1(I::OpId::TileNumGroups, {}, ctx().index()), b_->constIndex(kRowBlock)}, ctx().index());
  distributed_.push_back({static_cast<int64_t>(outIdx), 0, kRowBlock});
  std::map<const I::Value*, std::string> roots;
  pushLoop(def_->body, def_->range, true);
  ++blockLoopDepth_;
  buildLoop(
      I::OpId::TileRange, lb, ub, st, {}, def_->body, def_->range, "for",
      [&](I::Value* rows) {
        rows->nameHint = "rows";
        for (size_t i = 0; i < params.size(); ++i) {
          I::Value* p = top_->arg(static_cast<unsigned>(i));
          I::Type t = p->type;
          if (t->kind != I::TypeKind::Tensor || t->shape.empty() || t->shape[0].sym != rowSym) continue;
          std::vector<I::Value*> ops = {p, rows};
          std::vector<I::Attribute> sizes = {I::Attribute::integer(kRowBlock)};
          std::vector<I::Dim> shape = {I::Dim{kRowBlock, {}}};
          for (size_t d = 1; d < t->shape.size(); ++d) {
            const I::Dim& full = t->shape[d];
            if (!full.isStatic() && full.sym.empty())
              error(DiagID::err_lower_dynamic_tile_shape, params[i]->nameRange, std::string("?"),
                    static_cast<unsigned>(d), params[i]->name);
            ops.push_back(b_->constIndex(0));
            sizes.push_back(full.isStatic() ? I::Attribute::integer(full.size) : I::Attribute::string(full.sym));
            shape.push_back(full);
          }
          I::Value* slice =
              op1(I::OpId::MemSlice, ops, ctx().withShape(t, shape), {{"sizes", I::Attribute::arrayOf(sizes)}});
          slice->nameHint = params[i]->name + "_rows";
          roots[slice] = params[i]->name;
          const Symbol* sym = info_->scope->lookupLocal(params[i]->name);
          if (sym) env_[sym] = LV::val(slice);
        }
      },
      {});
  --blockLoopDepth_;
  popLoop();
  I::Operation* loop = nullptr;
  for (auto it = top_->ops.rbegin(); it != top_->ops.rend() && !loop; ++it)
    if ((*it)->id == I::OpId::TileRange) loop = it->get();
  if (loop) checkRowsIndependent(loop, roots, params[outIdx]->name);
}

// Rows of different blocks must not meet: a row-block value may not be the right operand of a
// matrix product (it contracts over rows), be transposed, reduced or softmaxed along axis 0,
// broadcast along the rows of a larger tile, sliced across rows, or indexed element by element.
void FnLowering::checkRowsIndependent(I::Operation* loop, const std::map<const I::Value*, std::string>& roots,
                                      const std::string& out) {
  std::map<const I::Value*, std::string> row(roots);
  auto fail = [&](I::Operation* at, const std::string& name, const std::string& what) {
    { diags().report(DiagID::err_lower_rows_not_independent, at->loc) << name << what << out; }
    abort();
  };
  auto axisOf = [](I::Operation* o, size_t rank) {
    int64_t a = o->intAttr("axis", -1);
    return a < 0 ? a + static_cast<int64_t>(rank) : a;
  };
  std::function<void(I::Block&)> visit = [&](I::Block& b) {
    for (auto& opPtr : b.ops) {
      I::Operation* o = opPtr.get();
      std::string src;
      int srcOperand = -1;
      for (unsigned i = 0; i < o->numOperands() && src.empty(); ++i)
        if (auto it = row.find(o->operand(i)); it != row.end()) src = it->second, srcOperand = static_cast<int>(i);
      if (!o->regions.empty()) {
        for (auto& r : o->regions) {
          if (!src.empty())
            for (auto& a : r->block().args) row[a.get()] = src;
          visit(r->block());
          if (I::Operation* t = r->block().terminator())
            for (I::Value* v : t->operands)
              if (src.empty())
                if (auto it = row.find(v); it != row.end()) src = it->second;
        }
        if (!src.empty())
          for (auto& r : o->results) row[r.get()] = src;
        continue;
      }
      if (src.empty()) continue;
      I::Value* x = o->operand(static_cast<unsigned>(srcOperand));
      switch (o->id) {
        case I::OpId::TileDot:
        case I::OpId::TileMma:
          if (auto it = row.find(o->operand(1)); it != row.end())
            fail(o, it->second, "the right operand of a matrix product (it contracts over rows)");
          break;
        case I::OpId::TileTranspose:
          fail(o, src, "a transpose ('.T')");
          break;
        case I::OpId::TileSoftmax:
          if (axisOf(o, x->type->shape.size()) == 0) fail(o, src, "a softmax along axis 0");
          break;
        case I::OpId::TileReduce:
          if (axisOf(o, x->type->shape.size()) == 0) fail(o, src, "a reduction along axis 0");
          break;
        case I::OpId::MemReduce:
          fail(o, src, "a reduction over all its elements");
          break;
        case I::OpId::TileBroadcast:
          if (I::isValueShaped(x->type) && x->type->shape.size() < o->result()->type->shape.size())
            fail(o, src, "broadcasting it along the rows of a larger tile");
          break;
        case I::OpId::MemLoad:
        case I::OpId::MemStore:
          fail(o, src, "indexing single elements");
          break;
        case I::OpId::MemSlice:
          if (srcOperand == 0 && !(o->result()->type->shape[0] == x->type->shape[0]))
            fail(o, src, "slicing its rows");
          if (srcOperand != 0) fail(o, src, "indexing with it");
          break;
        default:
          break;
      }
      for (auto& r : o->results) row[r.get()] = src;
    }
  };
  visit(loop->body());
}

I::Operation* FnLowering::lowerDevice(const std::string& name, const std::vector<I::Type>& argTypes,
                                      std::vector<I::Type>& resultTypes) {
  I::Builder fb(ctx());
  if (ml_.insertBefore)
    fb.setInsertionPoint(ml_.insertBefore);
  else
    fb.setInsertionPointToEnd(ml_.module->body());
  fb.setLoc(def_->nameRange.begin);
  func_ = fb.func(name, argTypes, {}, {{"device", I::Attribute::unit()}});
  top_ = &func_->body();
  b_ = std::make_unique<I::Builder>(ctx());
  b_->setInsertionPointToEnd(*top_);
  b_->setLoc(def_->nameRange.begin);
  unsigned i = 0;
  for (const Param& p : def_->params) {
    if (p.paramKind != Param::Normal || p.name.empty()) continue;
    top_->arg(i)->nameHint = p.name;
    if (const Symbol* sym = info_ && info_->scope ? info_->scope->lookupLocal(p.name) : nullptr) {
      env_[sym] = LV::val(top_->arg(i));
      paramIndex_[sym] = i;
    }
    ++i;
  }
  prepareReturns();
  lowerBlock(def_->body);
  // A declared scalar result type converts the returned value.
  const Type* rt = info_ && info_->type ? info_->type->result : nullptr;
  if (rt && rt->kind == TypeKind::Scalar && returned_.size() == 1) {
    b_->setInsertionPointToEnd(*top_);
    returned_[0] = coerce(returned_[0], scalarType(rt->dtype, rt->policy), def_->range);
  }
  finishFunction(def_->range);
  for (I::Value* v : returned_) resultTypes.push_back(v->type);
  std::vector<I::Attribute> rts;
  for (I::Type t : resultTypes) rts.push_back(I::Attribute::typeAttr(t));
  func_->setAttr("result_types", I::Attribute::arrayOf(rts));
  return func_;
}

bool ModuleLowering::device(const FunctionDefStmt* def, const std::vector<I::Type>& args, SourceRange callAt,
                            DeviceFn& out) {
  DeviceKey key{def, args};
  auto it = devices.find(key);
  if (it != devices.end()) {
    out = it->second;
    return true;
  }
  if (inProgress.count(def)) {
    diags.report(DiagID::err_lower_recursive_call, callAt) << def->name;
    return false;
  }
  inProgress.insert(def);
  FnLowering fl(*this, def, info(def), false);
  std::vector<I::Type> results;
  bool ok = true;
  I::Operation* fn = nullptr;
  std::string name = uniqueName(def->name);
  try {
    fn = fl.lowerDevice(name, args, results);
  } catch (LowerAbort&) {
    ok = false;
  }
  inProgress.erase(def);
  if (!ok) {
    // Drop the partial function.
    for (auto& op : module->body().ops)
      if (op->id == I::OpId::TileFunc && op->funcName() == name) {
        I::Operation* f = op.get();
        f->dropAllReferences();
        module->body().erase(f);
        break;
      }
    return false;
  }
  (void)fn;
  out = DeviceFn{name, results};
  devices[key] = out;
  return true;
}

}  // namespace

std::unique_ptr<ir::Module> lowerToTileIR(const Module& ast, const SemaContext& sema, DiagnosticEngine& diags) {
  ModuleLowering ml(sema, diags);
  bool ok = true;
  for (Stmt* s : ast.stmts) {
    auto* f = dyn_cast<FunctionDefStmt>(s);
    if (!f) continue;
    const FunctionInfo* info = ml.info(f);
    if (!info || !info->isKernel()) continue;  // host functions; device functions are lowered from their calls
    ml.names.insert(f->name);
  }
  for (Stmt* s : ast.stmts) {
    auto* f = dyn_cast<FunctionDefStmt>(s);
    if (!f) continue;
    const FunctionInfo* info = ml.info(f);
    if (!info || !info->isKernel()) continue;
    FnLowering fl(ml, f, info, true);
    try {
      if (fl.needsShapeInference()) {
        // A dry run collects which extents of unannotated parameters are equal; it is dropped.
        FnLowering dry(ml, f, info, true);
        dry.dryRun_ = true;
        ir::Operation* fn = dry.lowerKernel();
        fl.rename_ = dry.extentClasses();
        fn->dropAllReferences();
        ml.module->body().erase(fn);
        ml.insertBefore = nullptr;
      }
      fl.lowerKernel();
    } catch (LowerAbort&) {
      ok = false;
      for (auto& op : ml.module->body().ops)
        if (op->id == ir::OpId::TileFunc && op->funcName() == f->name && op->hasAttr("kernel")) {
          ir::Operation* fn = op.get();
          fn->dropAllReferences();
          ml.module->body().erase(fn);
          break;
        }
    }
    ml.insertBefore = nullptr;
  }
  if (!ok) return nullptr;
  return std::move(ml.module);
}

}  // namespace tessera
