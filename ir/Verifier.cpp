#include "ir/Verifier.h"

#include <algorithm>
#include <unordered_set>

#include "ir/IRDiagnostics.h"
#include "ir/PrintFormat.h"
#include "ir/Uniformity.h"

namespace tessera::ir {

SourceLoc locationOf(const Operation* op) {
  for (const Operation* p = op; p; p = p->parentOp())
    if (p->loc.valid()) return p->loc;
  return SourceLoc();
}

namespace {

std::string typeList(const std::vector<Type>& ts) {
  std::string s;
  for (size_t i = 0; i < ts.size(); ++i) {
    if (i) s += ", ";
    s += printType(ts[i]);
  }
  return s;
}
std::string paren(const std::string& s) {
  std::string r(1, '(');
  r.append(s);
  r.push_back(')');
  return r;
}
std::vector<Type> typesOf(const std::vector<Value*>& vs, size_t from = 0) {
  std::vector<Type> ts;
  for (size_t i = from; i < vs.size(); ++i) ts.push_back(vs[i]->type);
  return ts;
}
std::vector<Type> resultTypes(const Operation* op) {
  std::vector<Type> ts;
  for (auto& r : op->results) ts.push_back(r->type);
  return ts;
}

class Verifier {
 public:
  Verifier(Module& m, DiagnosticEngine& d) : m_(m), diags_(d) {}

  bool run() {
    std::unordered_set<std::string> names;
    for (auto& op : m_.body().ops) {
      if (op->id != OpId::TileFunc) {
        report(op.get(), diag::err_ir_top_level_op) << op->name();
        continue;
      }
      if (!names.insert(op->funcName()).second) report(op.get(), diag::err_ir_redefined_func) << op->funcName();
    }
    for (auto& op : m_.body().ops)
      if (op->id == OpId::TileFunc) func(op.get());
    return ok_;
  }

  // ---- hooks (named in Ops.def) ----
  bool verifyConstant(Operation* op);
  bool verifyBinaryInt(Operation* op);
  bool verifyBinaryFloat(Operation* op);
  bool verifyUnaryFloat(Operation* op);
  bool verifyCmpI(Operation* op);
  bool verifyCmpF(Operation* op);
  bool verifySelect(Operation* op);
  bool verifyConvert(Operation* op);
  bool verifyUnaryAny(Operation* op);
  bool verifyFma(Operation* op);
  bool verifyIndexResult(Operation* op);
  bool verifyNone(Operation* op);
  bool verifyShuffle(Operation* op);
  bool verifyVote(Operation* op);
  bool verifyClock(Operation* op);
  bool verifyPrint(Operation* op);
  bool verifyCoopGroup(Operation* op);
  bool verifyGroupReduce(Operation* op);
  bool verifyBitcast(Operation* op);
  bool verifyCoopUse(Operation* op);
  bool verifyDim(Operation* op);
  bool verifyLoad(Operation* op);
  bool verifyStore(Operation* op);
  bool verifyAtomic(Operation* op);
  bool verifySlice(Operation* op);
  bool verifyMemReduce(Operation* op);
  bool verifySmemAlloc(Operation* op);
  bool verifySmemStage(Operation* op);
  bool verifyAsyncCopy(Operation* op);
  bool verifyAsyncWait(Operation* op);
  bool verifyWaitPending(Operation* op);
  bool verifyTileLoad(Operation* op);
  bool verifyTileStore(Operation* op);
  bool verifyBroadcast(Operation* op);
  bool verifyDot(Operation* op);
  // The two matrix operands of tile.dot and tile.mma: rank-2 tile-like values of known shape.
  bool matrixOperands(Operation* op, Type a, Type b) {
    const char* what = "a rank-2 tile, fragment, shared buffer or view of known shape";
    return operandIs(op, 0, isTileLike(a) && a->shape.size() == 2, what) &&
           operandIs(op, 1, isTileLike(b) && b->shape.size() == 2, what);
  }
  bool verifyMma(Operation* op);
  bool verifyTranspose(Operation* op);
  bool verifyReshape(Operation* op);
  bool verifyIota(Operation* op);
  bool verifySoftmax(Operation* op);
  bool verifyTileReduce(Operation* op);
  bool verifyFor(Operation* op);
  bool verifyIf(Operation* op);
  bool verifyWhile(Operation* op);
  bool verifyCondition(Operation* op);
  bool verifyFunc(Operation* op);
  bool verifyCall(Operation* op);
  bool verifyReturn(Operation* op);

 private:
  Module& m_;
  DiagnosticEngine& diags_;
  bool ok_ = true;
  Operation* func_ = nullptr;
  std::unordered_set<const Value*> visible_;

  DiagBuilder report(const Operation* op, DiagID id) {
    ok_ = false;
    return diags_.report(id, locationOf(op));
  }

  // ---- helpers for hooks ----
  bool operandType(Operation* op, unsigned i, Type expected) {
    if (op->operand(i)->type == expected) return true;
    report(op, diag::err_ir_operand_type) << op->name() << i << printType(op->operand(i)->type) << printType(expected);
    return false;
  }
  bool operandIs(Operation* op, unsigned i, bool cond, std::string_view what) {
    if (cond) return true;
    report(op, diag::err_ir_operand_type) << op->name() << i << printType(op->operand(i)->type) << what;
    return false;
  }
  bool resultType(Operation* op, unsigned i, Type expected) {
    if (op->result(i)->type == expected) return true;
    report(op, diag::err_ir_result_type) << op->name() << i << printType(op->result(i)->type) << printType(expected);
    return false;
  }
  bool resultIs(Operation* op, unsigned i, bool cond, std::string_view what) {
    if (cond) return true;
    report(op, diag::err_ir_result_type) << op->name() << i << printType(op->result(i)->type) << what;
    return false;
  }
  bool badAttr(Operation* op, std::string_view name, std::string_view what) {
    report(op, diag::err_ir_bad_attr) << op->name() << name << what;
    return false;
  }
  // Every attribute of `op` is one of ir/Attrs.def, of its kind and, for an enum attribute, one
  // of its values.
  bool attrsDeclared(Operation* op) {
    for (const NamedAttr& a : op->attrs) {
      const AttrId* id = attrIdOf(a.name);
      if (!id) {
        report(op, diag::err_ir_unknown_attr) << op->name() << a.name;
        return false;
      }
      const AttrInfo& info = attrInfo(*id);
      if (!info.kindOk(a.value.kind)) return badAttr(op, a.name, info.kindName);
      if (!*info.values) continue;
      std::string values = info.values;
      bool found = false;
      for (size_t at = 0; at <= values.size();) {
        size_t bar = std::min(values.find('|', at), values.size());
        found = found || values.compare(at, bar - at, a.value.s) == 0;
        at = bar + 1;
      }
      if (!found) {
        std::string list;
        for (char c : values) list += c == '|' ? std::string(", ") : std::string(1, c);
        return badAttr(op, a.name, "one of " + list);
      }
    }
    return true;
  }
  bool strAttrIn(Operation* op, AttrId id, std::initializer_list<const char*> options) {
    const Attribute* a = op->attr(id);
    const char* name = attrName(id);
    std::string list;
    for (const char* o : options) {
      if (a && a->kind == AttrKind::String && a->s == o) return true;
      list += list.empty() ? "" : ", ";
      list += o;
    }
    return badAttr(op, name, "a string, one of " + list);
  }
  bool intAttrIn(Operation* op, AttrId id, int64_t lo, int64_t hi, bool optional) {
    const Attribute* a = op->attr(id);
    const char* name = attrName(id);
    if (!a && optional) return true;
    if (a && a->kind == AttrKind::Int && a->i >= lo && a->i <= hi) return true;
    return badAttr(op, name, "an integer in [" + std::to_string(lo) + ", " + std::to_string(hi) + "]");
  }
  bool shapesCompatible(const std::vector<Dim>& a, const std::vector<Dim>& b) {
    if (a.size() != b.size()) return false;
    for (size_t i = 0; i < a.size(); ++i)
      if (a[i].isStatic() && b[i].isStatic() && a[i].size != b[i].size) return false;
    return true;
  }
  bool shapeError(Operation* op, const std::vector<Dim>& a, const std::vector<Dim>& b) {
    report(op, diag::err_ir_shape_mismatch) << op->name() << printShape(a) << printShape(b);
    return false;
  }
  bool isIndexLike(Type t) { return isIndexOrInt(t); }
  bool indices(Operation* op, unsigned first, Type view) {
    unsigned n = op->numOperands() - first;
    if (n != view->shape.size()) {
      report(op, diag::err_ir_index_count) << op->name() << static_cast<unsigned>(view->shape.size()) << n;
      return false;
    }
    for (unsigned i = first; i < op->numOperands(); ++i)
      if (!operandIs(op, i, isIndexLike(op->operand(i)->type), "an integer or index")) return false;
    return true;
  }
  // Operands of tile.dot / tile.mma: register tiles, fragments, shared buffers, or global views
  // of static shape (codegen streams those through shared memory).
  // A shape whose every extent is static or symbolic (no `?`): codegen knows it at run time.
  static bool knownShape(Type t) {
    for (const Dim& d : t->shape)
      if (!d.isStatic() && d.sym.empty()) return false;
    return true;
  }
  bool isTileLike(Type t) {
    return t->kind == TypeKind::Tile || t->kind == TypeKind::Smem || t->kind == TypeKind::Frag ||
           (t->kind == TypeKind::Tensor && knownShape(t));
  }

  // Symbolic extents of tiles, fragments and views inside a function must name an extent of one
  // of its tensor parameters (codegen binds each symbol from a parameter's shape at run time).
  std::unordered_set<std::string> paramSymbols_;
  void checkSymbols(const Value* v) {
    Type t = v->type;
    if (!t || (t->kind != TypeKind::Tile && t->kind != TypeKind::Frag && t->kind != TypeKind::Tensor)) return;
    for (const Dim& d : t->shape)
      if (!d.isStatic() && !d.sym.empty() && !paramSymbols_.count(d.sym)) {
        const Operation* at = v->defOp ? v->defOp : v->ownerBlock->parentOp();
        report(at, diag::err_ir_unknown_extent_symbol) << printType(t) << d.sym << func_->funcName();
        return;
      }
  }

  // ---- structure ----

  void func(Operation* f) {
    func_ = f;
    visible_.clear();
    if (f->regions.size() != 1) {
      report(f, diag::err_ir_region_count) << f->name() << 1 << static_cast<unsigned>(f->regions.size());
      return;
    }
    const Attribute* rt = f->attr(AttrId::ResultTypes);
    if (!rt || rt->kind != AttrKind::Array) {
      badAttr(f, attrName(AttrId::ResultTypes), "an array of types");
      return;
    }
    for (const Attribute& a : rt->array)
      if (a.kind != AttrKind::Type) {
        badAttr(f, attrName(AttrId::ResultTypes), "an array of types");
        return;
      }
    verifyFunc(f);
    if (!attrsDeclared(f)) return;
    paramSymbols_.clear();
    for (auto& a : f->body().args)
      if (a->type && a->type->kind == TypeKind::Tensor)
        for (const Dim& d : a->type->shape)
          if (!d.sym.empty()) paramSymbols_.insert(d.sym);
    region(f, 0);
    if (!ok_) return;
    UniformityResult u = analyzeUniformity(m_, f);
    for (auto& v : u.violations) {
      auto d = report(v.op, diag::err_ir_barrier_divergent);
      d << v.op->name();
      SourceLoc at = v.cause->defOp ? locationOf(v.cause->defOp) : locationOf(v.cause->ownerBlock->parentOp());
      d.note(diag::note_ir_divergent_here, SourceRange(at, SourceLoc{at.offset + 1}));
    }
  }

  const char* allowedTerminator(Operation* parent, unsigned regionIndex) {
    switch (parent->id) {
      case OpId::TileFunc: return "func.return";
      case OpId::ScfWhile: return regionIndex == 0 ? "scf.condition" : "scf.yield";
      default: return "scf.yield";
    }
  }

  void region(Operation* parent, unsigned index) {
    Block& b = parent->body(index);
    std::vector<const Value*> added;
    for (auto& a : b.args) {
      visible_.insert(a.get());
      added.push_back(a.get());
      if (parent != func_) checkSymbols(a.get());
    }
    for (auto& op : b.ops) {
      operation(op.get());
      for (auto& r : op->results) {
        visible_.insert(r.get());
        added.push_back(r.get());
        checkSymbols(r.get());
      }
    }
    asyncHazards(b);
    Operation* last = b.ops.empty() ? nullptr : b.ops.back().get();
    if (!last || !last->has(T_Terminator)) {
      report(parent, diag::err_ir_missing_terminator) << parent->name();
    } else if (std::string_view(last->name()) != allowedTerminator(parent, index)) {
      report(last, diag::err_ir_wrong_terminator) << last->name() << parent->name();
    }
    for (const Value* v : added) visible_.erase(v);
  }

  void operation(Operation* op) {
    const OpInfo& info = op->info();
    unsigned nOps = op->numOperands(), nRes = op->numResults();
    if (op->id == OpId::TileFunc) {
      report(op, diag::err_ir_expected) << "an operation (functions are only allowed at the top level)"
                                        << "tile.func";
      return;
    }
    if (nOps < static_cast<unsigned>(info.minOperands) ||
        (info.maxOperands >= 0 && nOps > static_cast<unsigned>(info.maxOperands))) {
      std::string want = info.maxOperands < 0 ? "at least " + std::to_string(info.minOperands)
                         : info.minOperands == info.maxOperands
                             ? std::to_string(info.minOperands)
                             : std::to_string(info.minOperands) + " to " + std::to_string(info.maxOperands);
      report(op, diag::err_ir_operand_count) << op->name() << want << nOps;
      return;
    }
    if (nRes < static_cast<unsigned>(info.minResults) ||
        (info.maxResults >= 0 && nRes > static_cast<unsigned>(info.maxResults))) {
      std::string want = info.maxResults < 0 ? "at least " + std::to_string(info.minResults)
                         : info.minResults == info.maxResults
                             ? std::to_string(info.minResults)
                             : std::to_string(info.minResults) + " to " + std::to_string(info.maxResults);
      report(op, diag::err_ir_result_count) << op->name() << want << nRes;
      return;
    }
    if (op->regions.size() != static_cast<size_t>(info.numRegions)) {
      report(op, diag::err_ir_region_count)
          << op->name() << info.numRegions << static_cast<unsigned>(op->regions.size());
      return;
    }
    for (unsigned i = 0; i < nOps; ++i)
      if (!visible_.count(op->operand(i))) {
        report(op, diag::err_ir_not_dominated) << i << op->name();
        return;
      }
    if (op->has(T_Terminator) && op->parent && op->parent->ops.back().get() != op) {
      report(op, diag::err_ir_misplaced_terminator) << op->name();
      return;
    }
    if (op->has(T_NeedsGroup) && func_->hasAttr(AttrId::Kernel) && !func_->hasAttr(AttrId::Group))
      report(op, diag::err_ir_needs_group) << op->name() << func_->funcName();
    bool hookOk = true;
    switch (op->id) {
#define OP(ID, NAME, MINOPS, MAXOPS, MINRES, MAXRES, REGIONS, TRAITS, VERIFY, LOWER) \
  case OpId::ID: hookOk = verify##VERIFY(op); break;
#include "ir/Ops.def"
      default: break;
    }
    // Regions are checked after the op's own types (block arguments first). The hook has judged
    // the attributes it reads; any other must still be one of the catalogue's, of its kind.
    if (!hookOk || !attrsDeclared(op)) return;
    for (unsigned i = 0; i < op->regions.size(); ++i) region(op, i);
  }

  // The buffer a view is a view of (through smem.stage / mem.slice).
  static const Value* rootOf(const Value* v) {
    for (int guard = 0; guard < 64 && v->defOp && v->defOp->has(T_ViewLike) && v->defOp->numOperands() > 0; ++guard)
      v = v->defOp->operand(0);
    return v;
  }
  static bool readsMemoryOf(const Operation* op, const Value* root) {
    switch (op->id) {
      case OpId::MemLoad:
      case OpId::MemReduce:
      case OpId::TileLoad:
      case OpId::TileDot:
      case OpId::TileMma: break;
      default: return false;
    }
    for (const Value* v : op->operands)
      if (rootOf(v) == root) return true;
    return false;
  }

  // Within one block: a read of a buffer after an async.copy into it must follow a wait covering
  // the copy and then a barrier (each tile waits for its own part; the barrier makes every
  // part visible). Ops with regions are checked for reads; waits or barriers inside them end
  // the tracking (conservatively: no error).
  void asyncHazards(Block& b) {
    struct Pending {
      const Value* root;
      Operation* copy;
      bool waited;
    };
    std::vector<Pending> pending;
    for (auto& opPtr : b.ops) {
      Operation* op = opPtr.get();
      if (pending.empty() && op->id != OpId::AsyncCopy) continue;
      switch (op->id) {
        case OpId::AsyncCopy:
          if (op->numOperands() == 2 && op->numResults() == 1) pending.push_back({rootOf(op->operand(0)), op, false});
          continue;
        case OpId::AsyncWait:
          for (Pending& p : pending)
            for (Value* t : op->operands)
              if (t == p.copy->result(0)) p.waited = true;
          continue;
        case OpId::AsyncWaitPending:
          for (Pending& p : pending) p.waited = true;
          continue;
        case OpId::TileBarrier:
          pending.erase(std::remove_if(pending.begin(), pending.end(), [](const Pending& p) { return p.waited; }),
                        pending.end());
          continue;
        default: break;
      }
      bool syncInside = false;
      std::vector<Operation*> ops;
      op->walk([&](Operation* inner) {
        ops.push_back(inner);
        syncInside |=
            inner->id == OpId::TileBarrier || inner->id == OpId::AsyncWait || inner->id == OpId::AsyncWaitPending;
      });
      for (Operation* inner : ops)
        for (const Pending& p : pending)
          if (readsMemoryOf(inner, p.root)) {
            auto d = report(inner, diag::err_ir_async_read_before_sync);
            d << inner->name();
            SourceLoc at = locationOf(p.copy);
            d.note(diag::note_ir_async_copy_here, SourceRange(at, SourceLoc{at.offset + 1}));
            pending.clear();
            break;
          }
      if (syncInside) pending.clear();
    }
  }

  // Checks the block arguments of region `r` against `types`.
  bool blockArgs(Operation* op, unsigned r, const std::vector<Type>& types) {
    Block& b = op->body(r);
    if (b.numArgs() != types.size()) {
      report(op, diag::err_ir_block_args) << op->name() << static_cast<unsigned>(types.size()) << b.numArgs();
      return false;
    }
    for (unsigned i = 0; i < types.size(); ++i)
      if (b.arg(i)->type != types[i]) {
        report(op, diag::err_ir_block_args)
            << op->name() << paren(typeList(types)) << paren(typeList(typesOf(argsOf(b))));
        return false;
      }
    return true;
  }
  static std::vector<Value*> argsOf(Block& b) {
    std::vector<Value*> vs;
    for (auto& a : b.args) vs.push_back(a.get());
    return vs;
  }
  // Checks the operands of the terminator of region `r` (from operand `from`) against `types`.
  bool yields(Operation* op, unsigned r, const std::vector<Type>& types, size_t from = 0) {
    Operation* t = op->body(r).terminator();
    if (!t) return true;  // reported by region()
    std::vector<Type> got = typesOf(t->operands, from);
    if (got != types) {
      report(t, diag::err_ir_yield_types) << t->name() << typeList(got) << op->name() << typeList(types);
      return false;
    }
    return true;
  }
};

// ---- hooks ----

bool Verifier::verifyNone(Operation*) { return true; }

bool Verifier::verifyConstant(Operation* op) {
  const Attribute* a = op->attr(AttrId::Value);
  Type t = op->result(0)->type;
  if (!isScalar(t)) return resultIs(op, 0, false, "a scalar type");
  bool isFloat = scalarClass(baseScalar(t)) == ScalarClass::Float;
  if (!a || (isFloat ? a->kind != AttrKind::Float : a->kind != AttrKind::Int))
    return badAttr(op, "value",
                   isFloat ? "a float literal for a float type" : "an integer literal for an integer type");
  if (scalarClass(baseScalar(t)) == ScalarClass::Bool && a->i != 0 && a->i != 1)
    return badAttr(op, "value", "0 or 1 for i1");
  return true;
}

bool Verifier::verifyBinaryInt(Operation* op) {
  Type t = op->result(0)->type;
  if (!resultIs(op, 0, isIntLike(t), "an integer scalar, tile or fragment")) return false;
  return operandType(op, 0, t) && operandType(op, 1, t);
}
bool Verifier::verifyBinaryFloat(Operation* op) {
  Type t = op->result(0)->type;
  if (!resultIs(op, 0, isFloatLike(t), "a float scalar, tile or fragment")) return false;
  return operandType(op, 0, t) && operandType(op, 1, t);
}
bool Verifier::verifyUnaryFloat(Operation* op) {
  Type t = op->result(0)->type;
  if (!resultIs(op, 0, isFloatLike(t), "a float scalar, tile or fragment")) return false;
  return operandType(op, 0, t);
}
bool Verifier::verifyUnaryAny(Operation* op) {
  Type t = op->result(0)->type;
  if (!resultIs(op, 0, isFloatLike(t) || isIntLike(t), "a numeric scalar, tile or fragment")) return false;
  return operandType(op, 0, t);
}
bool Verifier::verifyFma(Operation* op) {
  Type t = op->result(0)->type;
  if (!resultIs(op, 0, isFloatLike(t), "a float scalar, tile or fragment")) return false;
  return operandType(op, 0, t) && operandType(op, 1, t) && operandType(op, 2, t);
}

// The i1 type matching the shape of `t` (i1 for scalars, !tile<i1, shape> for tiles).
static Type boolLike(IRContext& ctx, Type t) {
  if (isValueShaped(t)) return ctx.tile(ctx.i1(), t->shape);
  return ctx.i1();
}

bool Verifier::verifyCmpI(Operation* op) {
  if (!strAttrIn(op, AttrId::Pred, {"eq", "ne", "slt", "sle", "sgt", "sge", "ult", "ule", "ugt", "uge"})) return false;
  Type t = op->operand(0)->type;
  if (!operandIs(op, 0, isIntLike(t), "an integer scalar or tile")) return false;
  return operandType(op, 1, t) && resultType(op, 0, boolLike(m_.ctx(), t));
}
bool Verifier::verifyCmpF(Operation* op) {
  if (!strAttrIn(op, AttrId::Pred, {"oeq", "one", "olt", "ole", "ogt", "oge", "ord", "uno", "ueq", "une"}))
    return false;
  Type t = op->operand(0)->type;
  if (!operandIs(op, 0, isFloatLike(t), "a float scalar or tile")) return false;
  return operandType(op, 1, t) && resultType(op, 0, boolLike(m_.ctx(), t));
}
bool Verifier::verifySelect(Operation* op) {
  Type t = op->result(0)->type;
  Type c = op->operand(0)->type;
  if (!operandIs(op, 0, c == m_.ctx().i1() || c == boolLike(m_.ctx(), t), "i1 (or a tile of i1)")) return false;
  return operandType(op, 1, t) && operandType(op, 2, t);
}
bool Verifier::verifyConvert(Operation* op) {
  Type a = op->operand(0)->type, r = op->result(0)->type;
  bool ok = (isScalar(a) && isScalar(r)) ||
            (isValueShaped(a) && isValueShaped(r) && a->kind == r->kind && a->shape == r->shape);
  if (!ok) return resultIs(op, 0, false, "a scalar, or a tile/fragment of the operand's shape");
  if (op->hasAttr(AttrId::Round) && !strAttrIn(op, AttrId::Round, {"nearest_even", "toward_zero", "stochastic"}))
    return false;
  return true;
}

bool Verifier::verifyIndexResult(Operation* op) { return resultType(op, 0, m_.ctx().index()); }

bool Verifier::verifyShuffle(Operation* op) {
  if (!strAttrIn(op, AttrId::Mode, {"down", "up", "xor", "idx"})) return false;
  if (!intAttrIn(op, AttrId::Width, 1, 32, true)) return false;
  if (int64_t w = op->intAttr(AttrId::Width, 32); w & (w - 1)) return badAttr(op, "width", "a power of two");
  Type t = op->operand(0)->type;
  if (!operandIs(op, 0, isScalar(t), "a scalar")) return false;
  if (!operandIs(op, 1, isIndexOrInt(op->operand(1)->type), "an integer or index")) return false;
  return resultType(op, 0, t);
}
bool Verifier::verifyVote(Operation* op) {
  if (!strAttrIn(op, AttrId::Mode, {"any", "all", "ballot"})) return false;
  Type t = op->operand(0)->type;
  if (!operandIs(op, 0, isScalar(t) && baseScalar(t) == ScalarKind::I1, "an i1")) return false;
  bool ballot = op->strAttr(AttrId::Mode) == "ballot";
  return resultType(op, 0, ballot ? m_.ctx().scalar(ScalarKind::U32) : m_.ctx().i1());
}
bool Verifier::verifyClock(Operation* op) { return resultType(op, 0, m_.ctx().scalar(ScalarKind::I64)); }
bool Verifier::verifyPrint(Operation* op) {
  const Attribute* f = op->attr(AttrId::Format);
  std::vector<std::string> pieces;
  if (!f || !splitPrintFormat(f->s, pieces))
    return badAttr(op, "format", "text with '{}' per operand and braces doubled");
  if (pieces.size() != op->numOperands() + 1)
    return badAttr(op, "format", "one '{}' per operand (" + std::to_string(op->numOperands()) + ")");
  for (unsigned i = 0; i < op->numOperands(); ++i)
    if (!operandIs(op, i, isScalar(op->operand(i)->type), "a scalar")) return false;
  return true;
}
bool Verifier::verifyBitcast(Operation* op) {
  Type from = op->operand(0)->type, to = op->result(0)->type;
  auto width = [](Type t) { return isScalar(t) && baseScalar(t) != ScalarKind::I1 ? scalarBits(baseScalar(t)) : 0u; };
  if (!operandIs(op, 0, width(from) >= 8, "a scalar of 8 bits or more")) return false;
  return resultIs(op, 0, width(to) == width(from), "a scalar as wide as the operand");
}
bool Verifier::verifyGroupReduce(Operation* op) {
  if (!strAttrIn(op, AttrId::Kind, {"sum", "max", "min", "argmax", "argmin"})) return false;
  std::string kind = op->strAttr(AttrId::Kind);
  bool arg = kind == "argmax" || kind == "argmin";
  if (op->numOperands() != (arg ? 2u : 1u)) {
    report(op, diag::err_ir_operand_count) << op->name() << (arg ? 2u : 1u) << op->numOperands();
    return false;
  }
  // Values travel through warp shuffles as 32 or 64 bits: narrower ones are widened before.
  Type t = op->operand(0)->type;
  bool wide = isScalar(t) && (scalarBits(baseScalar(t)) == 32 || scalarBits(baseScalar(t)) == 64) &&
              baseScalar(t) != ScalarKind::Index;
  if (!operandIs(op, 0, wide, "a 32- or 64-bit integer or float scalar")) return false;
  if (!arg) return resultType(op, 0, t);
  if (!operandIs(op, 1, isIndexOrInt(op->operand(1)->type), "an integer or index")) return false;
  return resultType(op, 0, op->operand(1)->type);
}
bool Verifier::verifyCoopGroup(Operation* op) {
  if (!intAttrIn(op, AttrId::Size, 1, 1024, false)) return false;
  return resultType(op, 0, m_.ctx().cgroup(op->intAttr(AttrId::Size, 0)));
}
bool Verifier::verifyCoopUse(Operation* op) {
  if (!operandIs(op, 0, op->operand(0)->type->kind == TypeKind::CGroup, "a cooperative group (!cgroup<N>)"))
    return false;
  return op->numResults() == 0 || resultType(op, 0, m_.ctx().index());
}

bool Verifier::verifyDim(Operation* op) {
  Type v = op->operand(0)->type;
  if (!operandIs(op, 0, isView(v) || isValueShaped(v), "a view or tile")) return false;
  if (!intAttrIn(op, AttrId::Axis, 0, static_cast<int64_t>(v->shape.size()) - 1, false)) return false;
  return resultType(op, 0, m_.ctx().index());
}
bool Verifier::verifyLoad(Operation* op) {
  Type v = op->operand(0)->type;
  if (!operandIs(op, 0, isView(v), "a view (!tensor or !smem)")) return false;
  if (!indices(op, 1, v)) return false;
  return resultType(op, 0, v->elem);
}
bool Verifier::verifyStore(Operation* op) {
  Type v = op->operand(1)->type;
  if (!operandIs(op, 1, isView(v), "a view (!tensor or !smem)")) return false;
  if (v->kind == TypeKind::Tensor && v->access == Access::Read) {
    report(op, diag::err_ir_store_readonly) << op->name() << printType(v);
    return false;
  }
  if (!indices(op, 2, v)) return false;
  return operandType(op, 0, v->elem);
}
// mem.atomic (value, view, indices...) and mem.atomic_cas (compare, value, view, indices...) on
// a writable global tensor or shared array; the values and the result have its element type.
bool Verifier::verifyAtomic(Operation* op) {
  bool cas = op->id == OpId::MemAtomicCas;
  unsigned at = cas ? 2 : 1;
  Type v = op->operand(at)->type;
  if (!operandIs(op, at, isView(v) && !(v->kind == TypeKind::Tensor && v->space == MemSpace::Local),
                 "a global tensor or shared array (!tensor or !smem)"))
    return false;
  if (v->kind == TypeKind::Tensor && v->access == Access::Read) {
    report(op, diag::err_ir_store_readonly) << op->name() << printType(v);
    return false;
  }
  if (!indices(op, at + 1, v)) return false;
  if (!cas && !strAttrIn(op, AttrId::Kind, {"add", "sub", "min", "max", "exch"})) return false;
  ScalarKind k = baseScalar(v->elem);
  ScalarClass cls = scalarClass(k);
  bool wide = scalarBits(k) == 32 || scalarBits(k) == 64;
  std::string kind = cas ? "cas" : op->strAttr(AttrId::Kind);
  bool ok = wide && (cls == ScalarClass::Int || cls == ScalarClass::UInt ||
                     (cls == ScalarClass::Float && (kind == "add" || kind == "sub" || kind == "exch")));
  if (!operandIs(op, at, ok, "a view of i32, u32, i64 or u64 elements (f32, f64 for add, sub and exch)")) return false;
  for (unsigned i = 0; i < at; ++i)
    if (!operandType(op, i, v->elem)) return false;
  return resultType(op, 0, v->elem);
}
bool Verifier::verifySlice(Operation* op) {
  Type v = op->operand(0)->type;
  if (!operandIs(op, 0, isView(v), "a view (!tensor or !smem)")) return false;
  if (!indices(op, 1, v)) return false;
  // Each size is a non-negative integer or the name of a symbolic extent ("D").
  const Attribute* sizes = op->attr(AttrId::Sizes);
  std::string want = "an array of " + std::to_string(v->shape.size()) + " non-negative integers or extent names";
  if (!sizes || sizes->kind != AttrKind::Array || sizes->array.size() != v->shape.size())
    return badAttr(op, "sizes", want);
  std::vector<Dim> shape;
  for (const Attribute& a : sizes->array) {
    if (a.kind == AttrKind::String && !a.s.empty()) {
      shape.push_back(Dim{-1, a.s});
      continue;
    }
    if (a.kind != AttrKind::Int || a.i < 0) return badAttr(op, "sizes", want);
    shape.push_back(Dim{a.i, {}});
  }
  // `squeeze`: dimensions of size 1 indexed by an integer (`Q[b, h, rows]`), left out of the view.
  if (const Attribute* sq = op->attr(AttrId::Squeeze)) {
    std::string wantSq = "an increasing array of dimensions of size 1";
    if (sq->kind != AttrKind::Array) return badAttr(op, "squeeze", wantSq);
    std::vector<Dim> kept;
    int64_t prev = -1;
    for (const Attribute& a : sq->array)
      if (a.kind != AttrKind::Int || a.i <= prev || a.i >= static_cast<int64_t>(shape.size()) ||
          !(shape[a.i].isStatic() && shape[a.i].size == 1))
        return badAttr(op, "squeeze", wantSq);
      else
        prev = a.i;
    for (size_t d = 0; d < shape.size(); ++d) {
      bool drop = false;
      for (const Attribute& a : sq->array) drop |= a.i == static_cast<int64_t>(d);
      if (!drop) kept.push_back(shape[d]);
    }
    shape = kept;
  }
  return resultType(op, 0, m_.ctx().withShape(v, shape));
}
bool Verifier::verifyMemReduce(Operation* op) {
  if (!strAttrIn(op, AttrId::Kind, {"sum", "max", "min"})) return false;
  Type v = op->operand(0)->type;
  if (!operandIs(op, 0, isView(v), "a view (!tensor or !smem)")) return false;
  return resultType(op, 0, v->elem);
}
bool Verifier::verifySmemAlloc(Operation* op) {
  Type t = op->result(0)->type;
  if (!resultIs(op, 0, t->kind == TypeKind::Smem && staticElementCount(t) >= 0, "a shared buffer of static shape"))
    return false;
  if (op->parent != &func_->body()) {
    report(op, diag::err_ir_smem_not_top);
    return false;
  }
  if (!intAttrIn(op, AttrId::Offset, 0, INT32_MAX, true)) return false;
  if (!intAttrIn(op, AttrId::Align, 1, 1024, true)) return false;
  return true;
}
bool Verifier::verifySmemStage(Operation* op) {
  Type b = op->operand(0)->type;
  if (!operandIs(op, 0, b->kind == TypeKind::Smem && b->shape.size() >= 2, "a shared buffer of rank >= 2"))
    return false;
  if (!operandIs(op, 1, isIndexOrInt(op->operand(1)->type), "an integer or index")) return false;
  return resultType(op, 0, m_.ctx().withShape(b, std::vector<Dim>(b->shape.begin() + 1, b->shape.end())));
}
bool Verifier::verifyAsyncCopy(Operation* op) {
  Type dst = op->operand(0)->type, src = op->operand(1)->type;
  bool dstShared = dst->kind == TypeKind::Smem || (dst->kind == TypeKind::Tensor && dst->space == MemSpace::Shared);
  if (!dstShared) {
    report(op, diag::err_ir_memory_space) << op->name() << 0 << "shared" << printType(dst);
    return false;
  }
  if (src->kind != TypeKind::Tensor || src->space != MemSpace::Global) {
    report(op, diag::err_ir_memory_space) << op->name() << 1 << "global" << printType(src);
    return false;
  }
  if (dst->elem != src->elem) return operandIs(op, 1, false, "a view with element type " + printType(dst->elem));
  int64_t a = staticElementCount(dst), b = staticElementCount(src);
  if (a >= 0 && b >= 0 && a != b) return shapeError(op, dst->shape, src->shape);
  return resultType(op, 0, m_.ctx().token());
}
bool Verifier::verifyAsyncWait(Operation* op) {
  for (unsigned i = 0; i < op->numOperands(); ++i)
    if (!operandType(op, i, m_.ctx().token())) return false;
  return true;
}
bool Verifier::verifyWaitPending(Operation* op) { return intAttrIn(op, AttrId::Pending, 0, 64, false); }

bool Verifier::verifyTileLoad(Operation* op) {
  Type v = op->operand(0)->type;
  if (!operandIs(op, 0, isView(v) && knownShape(v), "a view of static or symbolic shape")) return false;
  return resultType(op, 0, m_.ctx().tile(v->elem, v->shape));
}
bool Verifier::verifyTileStore(Operation* op) {
  Type t = op->operand(0)->type, v = op->operand(1)->type;
  if (!operandIs(op, 0, isValueShaped(t), "a tile or fragment")) return false;
  if (!operandIs(op, 1, isView(v), "a view (!tensor or !smem)")) return false;
  if (v->kind == TypeKind::Tensor && v->access == Access::Read) {
    report(op, diag::err_ir_store_readonly) << op->name() << printType(v);
    return false;
  }
  if (!shapesCompatible(t->shape, v->shape)) return shapeError(op, t->shape, v->shape);
  if (t->elem != v->elem) return operandIs(op, 0, false, "a tile with element type " + printType(v->elem));
  return true;
}
bool Verifier::verifyBroadcast(Operation* op) {
  Type a = op->operand(0)->type, r = op->result(0)->type;
  if (!resultIs(op, 0, isValueShaped(r) && knownShape(r), "a tile or fragment of static or symbolic shape"))
    return false;
  if (isScalar(a)) return operandType(op, 0, r->elem);
  if (!operandIs(op, 0, a->kind == TypeKind::Tile && a->elem == r->elem, "a scalar or tile of " + printType(r->elem)))
    return false;
  // numpy rules: trailing extents equal or 1.
  if (a->shape.size() > r->shape.size()) return shapeError(op, a->shape, r->shape);
  size_t off = r->shape.size() - a->shape.size();
  for (size_t i = 0; i < a->shape.size(); ++i) {
    const Dim& d = a->shape[i];
    if (d.isStatic() && d.size != 1 && !(d == r->shape[off + i])) return shapeError(op, a->shape, r->shape);
  }
  return true;
}
bool Verifier::verifyDot(Operation* op) {
  Type a = op->operand(0)->type, b = op->operand(1)->type, r = op->result(0)->type;
  if (!matrixOperands(op, a, b)) return false;
  bool floatIn = isScalar(a->elem) && scalarClass(baseScalar(a->elem)) == ScalarClass::Float;
  if (!resultIs(op, 0, r->kind == TypeKind::Tile && r->shape.size() == 2 && isFloatLike(r) == floatIn,
                floatIn ? "a rank-2 float tile" : "a rank-2 integer tile"))
    return false;
  if (!shapesCompatible({a->shape[1]}, {b->shape[0]})) return shapeError(op, a->shape, b->shape);
  if (!shapesCompatible({a->shape[0], b->shape[1]}, r->shape))
    return shapeError(op, {a->shape[0], b->shape[1]}, r->shape);
  if (op->numOperands() == 3) return operandType(op, 2, r);
  return true;
}
bool Verifier::verifyMma(Operation* op) {
  Type a = op->operand(0)->type, b = op->operand(1)->type, c = op->operand(2)->type;
  if (!matrixOperands(op, a, b)) return false;
  if (!operandIs(op, 2, c->kind == TypeKind::Frag && c->role == FragRole::Acc && c->shape.size() == 2,
                 "an accumulator fragment (!frag<T, [M, N], acc>)"))
    return false;
  // {transpose_b}: b is [N, K] and the product is a @ b^T (B given K-major).
  bool tb = op->hasAttr(AttrId::TransposeB);
  const Dim& bk = tb ? b->shape[1] : b->shape[0];
  const Dim& bn = tb ? b->shape[0] : b->shape[1];
  if (!shapesCompatible({a->shape[1]}, {bk})) return shapeError(op, a->shape, b->shape);
  if (!shapesCompatible({a->shape[0], bn}, c->shape)) return shapeError(op, {a->shape[0], bn}, c->shape);
  return resultType(op, 0, c);
}
bool Verifier::verifyTranspose(Operation* op) {
  Type a = op->operand(0)->type;
  if (!operandIs(op, 0, a->kind == TypeKind::Tile && a->shape.size() == 2, "a rank-2 tile")) return false;
  return resultType(op, 0, m_.ctx().tile(a->elem, {a->shape[1], a->shape[0]}));
}
// Only extents of 1 may appear or disappear: the other extents stay, in order.
bool Verifier::verifyReshape(Operation* op) {
  Type a = op->operand(0)->type, r = op->result(0)->type;
  if (!operandIs(op, 0, a->kind == TypeKind::Tile, "a tile")) return false;
  if (!resultIs(op, 0, r->kind == TypeKind::Tile && r->elem == a->elem, "a tile of " + printType(a->elem)))
    return false;
  auto kept = [](Type t) {
    std::vector<Dim> out;
    for (const Dim& d : t->shape)
      if (!(d.isStatic() && d.size == 1)) out.push_back(d);
    return out;
  };
  std::vector<Dim> ka = kept(a), kr = kept(r);
  bool same = ka.size() == kr.size();
  for (size_t i = 0; same && i < ka.size(); ++i) same = ka[i] == kr[i];
  return same ? true : shapeError(op, a->shape, r->shape);
}
bool Verifier::verifyIota(Operation* op) {
  Type r = op->result(0)->type;
  return resultIs(op, 0,
                  r->kind == TypeKind::Tile && r->shape.size() == 1 && r->shape[0].isStatic() && r->shape[0].size > 0 &&
                      isIndexOrInt(r->elem),
                  "a rank-1 integer tile of static extent");
}
bool Verifier::verifySoftmax(Operation* op) {
  Type a = op->operand(0)->type;
  if (!operandIs(op, 0, a->kind == TypeKind::Tile && isFloatLike(a), "a float tile")) return false;
  int64_t rank = static_cast<int64_t>(a->shape.size());
  if (!intAttrIn(op, AttrId::Axis, -rank, rank - 1, true)) return false;
  return resultType(op, 0, a);
}
bool Verifier::verifyTileReduce(Operation* op) {
  if (!strAttrIn(op, AttrId::Kind, {"sum", "max", "min"})) return false;
  Type a = op->operand(0)->type;
  if (!operandIs(op, 0, a->kind == TypeKind::Tile && !a->shape.empty(), "a tile")) return false;
  int64_t rank = static_cast<int64_t>(a->shape.size());
  if (!intAttrIn(op, AttrId::Axis, -rank, rank - 1, false)) return false;
  int64_t axis = op->intAttr(AttrId::Axis, 0);
  if (axis < 0) axis += rank;
  std::vector<Dim> shape = a->shape;
  shape.erase(shape.begin() + axis);
  return resultType(op, 0, shape.empty() ? a->elem : m_.ctx().tile(a->elem, shape));
}

bool Verifier::verifyFor(Operation* op) {
  Type iv = op->operand(0)->type;
  if (!operandIs(op, 0, isIndexOrInt(iv), "an integer or index")) return false;
  if (!operandType(op, 1, iv) || !operandType(op, 2, iv)) return false;
  std::vector<Type> inits = typesOf(op->operands, 3);
  if (inits.size() != op->numResults()) {
    report(op, diag::err_ir_result_count) << op->name() << static_cast<unsigned>(inits.size()) << op->numResults();
    return false;
  }
  for (unsigned i = 0; i < inits.size(); ++i)
    if (!resultType(op, i, inits[i])) return false;
  if (!intAttrIn(op, AttrId::Prefetch, 1, 16, true) || !intAttrIn(op, AttrId::Stages, 1, 16, true)) return false;
  std::vector<Type> args = {iv};
  args.insert(args.end(), inits.begin(), inits.end());
  return blockArgs(op, 0, args) && yields(op, 0, inits);
}
bool Verifier::verifyIf(Operation* op) {
  if (!operandType(op, 0, m_.ctx().i1())) return false;
  std::vector<Type> rs = resultTypes(op);
  return blockArgs(op, 0, {}) && blockArgs(op, 1, {}) && yields(op, 0, rs) && yields(op, 1, rs);
}
bool Verifier::verifyWhile(Operation* op) {
  std::vector<Type> inits = typesOf(op->operands);
  std::vector<Type> rs = resultTypes(op);
  if (!blockArgs(op, 0, inits) || !blockArgs(op, 1, rs)) return false;
  return yields(op, 0, rs, 1) && yields(op, 1, inits);
}
bool Verifier::verifyCondition(Operation* op) { return operandType(op, 0, m_.ctx().i1()); }

bool Verifier::verifyFunc(Operation* op) {
  if (const Attribute* g = op->attr(AttrId::Group)) {
    bool ok = g->kind == AttrKind::Array && !g->array.empty() && g->array.size() <= 3;
    for (const Attribute& e : g->array) ok = ok && e.kind == AttrKind::Int && e.i > 0 && e.i <= 1024;
    if (!ok) return badAttr(op, "group", "an array of 1 to 3 extents in [1, 1024]");
  }
  if (!intAttrIn(op, AttrId::Shared, 0, INT32_MAX, true)) return false;
  return true;
}
bool Verifier::verifyReturn(Operation* op) {
  std::vector<Type> want = func_->funcResultTypes();
  std::vector<Type> got = typesOf(op->operands);
  if (got != want) {
    report(op, diag::err_ir_return_types) << typeList(got) << func_->funcName() << typeList(want);
    return false;
  }
  return true;
}
bool Verifier::verifyCall(Operation* op) {
  const Attribute* c = op->attr(AttrId::Callee);
  if (!c || c->kind != AttrKind::Symbol) return badAttr(op, "callee", "a function symbol (@name)");
  Operation* callee = m_.lookupFunc(c->s);
  if (!callee) {
    report(op, diag::err_ir_unknown_callee) << c->s;
    return false;
  }
  std::vector<Type> params;
  if (!callee->regions.empty())
    for (auto& a : callee->body().args) params.push_back(a->type);
  std::vector<Type> got = typesOf(op->operands);
  if (got != params) {
    report(op, diag::err_ir_call_signature) << c->s << typeList(got) << typeList(params);
    return false;
  }
  std::vector<Type> want = callee->funcResultTypes();
  if (resultTypes(op) != want) {
    report(op, diag::err_ir_result_count) << op->name() << paren(typeList(want)) << paren(typeList(resultTypes(op)));
    return false;
  }
  return true;
}

}  // namespace

bool verifyModule(Module& m, DiagnosticEngine& diags) { return Verifier(m, diags).run(); }

}  // namespace tessera::ir
