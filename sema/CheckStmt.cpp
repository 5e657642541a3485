// Statements, functions and the module walk.
#include <algorithm>
#include <climits>
#include <functional>

#include "sema/ASTWalk.h"
#include "sema/Checker.h"
#include "sema/SemaDiagnostics.h"

namespace tessera {

bool onlyLeadingOnesDiffer(const std::vector<Extent>& a, const std::vector<Extent>& b);

Checker::Checker(SemaContext& sc, DiagnosticEngine& diags, ModuleInfo& mod)
    : sc(sc), diags(diags), T(sc.types), mod(mod) {}

std::string Checker::text(SourceRange r) const {
  std::string_view t = sc.sm.text(r);
  std::string out;
  for (char c : t)
    if (c != ' ' && c != '\t' && c != '\n' && c != '\\' && c != '\r') out += c;
  return out;
}

bool Checker::deviceOnly(DiagID id, SourceRange at, const std::string& arg) {
  if (inKernel()) {
    auto d = diags.report(id, at);
    if (!arg.empty()) d << arg;
    return true;
  }
  if (fn_) fn_->deviceOnly.push_back({id, at, arg});
  return false;
}

Symbol* Checker::declareLocal(const std::string& name, SourceRange at, const Type* t, SymbolKind k) {
  Symbol* s = sc.symbols.make(k, name, at, t);
  scope->declare(s);
  return s;
}

void Checker::reportUndefined(const std::string& name, SourceRange at) {
  std::string best = closestMatch(name, scope->visibleNames());
  if (!best.empty())
    diags.report(diag::err_undefined_name_suggest, at).fixit(at, best) << name << best;
  else
    diags.report(diag::err_undefined_name, at) << name;
}

void Checker::checkModule() {
  scope = mod.scope;
  // Functions are visible everywhere in the module (bodies run after the module is loaded).
  for (Stmt* s : mod.module->stmts)
    if (auto* f = dyn_cast<FunctionDefStmt>(s)) {
      if (f->name.empty()) continue;
      if (Symbol* prev = scope->lookupLocal(f->name); prev && prev->kind == SymbolKind::Function) {
        (diags.report(diag::err_redefinition, f->nameRange) << f->name)
            .note(diag::note_previous_declaration, prev->declRange, {f->name});
        continue;
      }
      Symbol* sym = declareLocal(f->name, f->nameRange, T.dynamic(), SymbolKind::Function);
      sym->function = f;
    }
  // Module-level names a function body may use before the statement that assigns them has run.
  std::function<void(Expr*)> collect = [&](Expr* t) {
    if (auto* n = dyn_cast<NameExpr>(t))
      moduleGlobals.insert(n->name);
    else if (auto* tu = dyn_cast<TupleExpr>(t))
      for (Expr* x : tu->elements) collect(x);
    else if (auto* l = dyn_cast<ListExpr>(t))
      for (Expr* x : l->elements) collect(x);
    else if (auto* st = dyn_cast<StarredExpr>(t))
      collect(st->value);
  };
  // The names a module-level statement binds, by its kind (frontend/ASTVisitor.h).
  struct Bindings : ASTVisitor<Bindings> {
    std::function<void(Expr*)> collect;
    std::set<std::string>& globals;
    void visitAssignStmt(AssignStmt* a) {
      for (Expr* t : a->targets) collect(t);
    }
    void visitAnnAssignStmt(AnnAssignStmt* an) { collect(an->target); }
    void visitForStmt(ForStmt* f) { collect(f->target); }
    void visitWithStmt(WithStmt* w) {
      for (WithItem& i : w->items) collect(i.target);
    }
    void visitImportStmt(ImportStmt* im) {
      for (ImportName& n : im->names) globals.insert(n.alias.empty() ? n.name.substr(0, n.name.find('.')) : n.alias);
    }
    void visitImportFromStmt(ImportFromStmt* imf) {
      for (ImportName& n : imf->names) globals.insert(n.alias.empty() ? n.name : n.alias);
    }
  } bindings{{}, collect, moduleGlobals};
  for (Stmt* s : mod.module->stmts)
    if (s) bindings.visit(s);
  for (Stmt* s : mod.module->stmts) checkStmt(s);
}

void Checker::checkBlock(const Block& b) {
  for (Stmt* s : b.stmts) checkStmt(s);
}

namespace {
// The dispatch of statement checking on the node's kind (frontend/ASTVisitor.h).
struct StmtChecker : ASTVisitor<StmtChecker> {
  Checker& c;
  explicit StmtChecker(Checker& c) : c(c) {}

  void visitExprStmt(ExprStmt* s) {
    c.statementExpr_ = s->expr;  // a call whose result is discarded (CheckAtomics.cpp)
    if (!isa<EllipsisExpr>(s->expr)) c.check(s->expr);
    c.statementExpr_ = nullptr;
  }
  void visitAssignStmt(AssignStmt* s) { c.checkAssign(s); }
  void visitAugAssignStmt(AugAssignStmt* s) { c.checkAugAssign(s); }
  void visitAnnAssignStmt(AnnAssignStmt* s) { c.checkAnnAssign(s); }
  void visitBreakStmt(BreakStmt* s) { breakOrContinue(s, "break"); }
  void visitContinueStmt(ContinueStmt* s) { breakOrContinue(s, "continue"); }
  // Outside a loop the parser reports it.
  void breakOrContinue(Stmt* s, const char* keyword) {
    if (!c.unrolledLoops.empty() && c.unrolledLoops.back())
      c.deviceOnly(diag::err_break_continue_unsupported, s->range, keyword);
  }
  void visitReturnStmt(ReturnStmt* s) { c.checkReturn(s); }
  void visitIfStmt(IfStmt* i) {
    c.check(i->cond);
    c.carriers.push_back({"if", i->range.begin.offset});
    c.checkBlock(i->thenBlock);
    c.checkBlock(i->elseBlock);
    c.carriers.pop_back();
  }
  void visitWhileStmt(WhileStmt* w) {
    c.check(w->cond);
    ++c.loopDepth;
    c.unrolledLoops.push_back(false);
    c.carriers.push_back({"while", w->range.begin.offset});
    c.checkBlock(w->body);
    c.carriers.pop_back();
    c.unrolledLoops.pop_back();
    if (c.inKernel()) c.checkWhileCarries(w);
    --c.loopDepth;
    c.checkBlock(w->elseBlock);
  }
  void visitForStmt(ForStmt* s) { c.checkFor(s); }
  void visitWithStmt(WithStmt* w) {
    for (WithItem& item : w->items) {
      const Type* t = c.check(item.context);
      if (item.target) c.assignTo(item.target, t, nullptr);
    }
    c.checkBlock(w->body);
  }
  void visitImportStmt(ImportStmt* s) { c.checkImport(s); }
  void visitImportFromStmt(ImportFromStmt* s) { c.checkImportFrom(s); }
  void visitFunctionDefStmt(FunctionDefStmt* f) {
    c.declareFunction(f);
    c.checkFunctionBody(f);
  }
  // Pass and Error statements (and expressions, never passed here) check nothing.
};
}  // namespace

void Checker::checkStmt(Stmt* s) {
  if (!s || diags.stopped()) return;
  if (stmtTooDeep(s)) {
    diags.report(diag::err_expr_too_deep, s->range) << kMaxExprDepth;
    return;
  }
  StmtChecker(*this).visit(s);
}

void Checker::checkReturn(ReturnStmt* s) {
  const Type* t = s->value ? check(s->value) : T.none();
  if (!fn_) return;  // outside a function: the parser reports it
  if (fn_->isKernel() && s->value && t->kind != TypeKind::None && !t->isError())
    diags.report(diag::err_kernel_returns_value, s->value->range);
  const Type* result = fn_->type ? fn_->type->result : nullptr;
  if (s->value && result && result->kind == TypeKind::Scalar && !t->isLenient() && t->kind == TypeKind::Scalar &&
      isInteger(t->dtype))
    checkConstantFits(s->value, result->dtype, s->value->range);
  if (!s->value && !fn_->isKernel() && result && result->kind != TypeKind::None && !result->isLenient())
    diags.report(diag::err_return_without_value, s->range) << fn_->def->name << result->str();
}

void Checker::checkAssign(AssignStmt* s) {
  const Type* v = check(s->value);
  // In a kernel a builtin is only ever called; host code may pass functions around as values.
  if (inKernel() && v->kind == TypeKind::Builtin && v->builtin && !v->builtin->sig.isValue &&
      !v->builtin->sig.isTypeConstructor && s->value) {
    std::string name = v->builtin->name;
    diags.report(diag::err_builtin_not_called, s->value->range) << name;
    v = T.error();
  }
  for (Expr* target : s->targets) assignTo(target, v, s->value);
}

void Checker::checkAugAssign(AugAssignStmt* s) {
  if (auto* n = dyn_cast<NameExpr>(s->target)) {
    const Type* cur = check(n);
    const Type* v = check(s->value);
    if (cur->isError()) return;
    const Type* r = binaryResult(s->op, cur, v, s->opRange, s->range);
    Symbol* sym = const_cast<Symbol*>(n->symbol);
    if (sym && (sym->kind == SymbolKind::Parameter) && (cur->kind == TypeKind::Tensor || cur->isDynamic())) {
      checkWriteAccess(n, n->range, true, s->op);
      return;
    }
    if (sym && (sym->kind == SymbolKind::Variable || sym->kind == SymbolKind::Constant)) {
      if (inKernel() && !r->isLenient() && !cur->isLenient()) checkConversion(r, cur, s->value->range, false, s->value);
      sym->assignments++;
    }
    return;
  }
  const Type* cur = check(s->target);
  const Type* v = check(s->value);
  if (isa<SubscriptExpr>(s->target) || isa<AttributeExpr>(s->target)) {
    if (isa<SubscriptExpr>(s->target)) checkWriteAccess(s->target, s->target->range, true, s->op);
    const Type* r = binaryResult(s->op, cur, v, s->opRange, s->range);
    if (!r->isLenient() && !cur->isLenient()) checkConversion(r, cur, s->value->range, true, s->value);
    return;
  }
}

void Checker::checkAnnAssign(AnnAssignStmt* s) {
  const Type* t = typeFromAnnotation(s->annotation, false, "");
  if (s->value) {
    const Type* v = check(s->value);
    if (!v->isLenient() && !t->isLenient()) checkConversion(v, t, s->value->range, false, s->value);
  }
  if (auto* n = dyn_cast<NameExpr>(s->target)) {
    Symbol* sym = scope->lookupLocal(n->name);
    if (!sym || sym->kind == SymbolKind::Builtin)
      sym = declareLocal(n->name, n->range, t);
    else
      sym->type = t;
    sym->assignments++;
    if (s->value && scope == mod.scope)
      if (auto c = evalConst(s->value, nullptr)) {
        sym->value = c;
        sym->kind = SymbolKind::Constant;
      }
    n->symbol = sym;
    n->type = t;
    return;
  }
  if (s->target) check(s->target);
}

// A while loop of a kernel carries its locals in registers of fixed type: tile values, which
// live in memory, cannot be carried yet (code generation refuses them, without a location).
void Checker::checkWhileCarries(WhileStmt* w) {
  std::set<const Symbol*> reported;
  // Every statement nested in the body (frontend/ASTVisitor.h), not those of nested functions.
  std::function<void(Stmt*)> walk = [&](Stmt* s) {
    if (!s || stmtTooDeep(s)) return;
    std::vector<Expr*> targets;
    if (auto* a = dyn_cast<AssignStmt>(s)) targets = a->targets;
    if (auto* a = dyn_cast<AugAssignStmt>(s)) targets = {a->target};
    if (auto* a = dyn_cast<AnnAssignStmt>(s)) targets = {a->target};
    for (Expr* t : targets) {
      auto* n = dyn_cast<NameExpr>(t);
      const Symbol* sym = n ? n->symbol : nullptr;
      if (!sym || !sym->type || (sym->type->kind != TypeKind::Tile && sym->type->kind != TypeKind::Fragment)) continue;
      if (sym->declRange.begin.offset >= w->range.begin.offset || !reported.insert(sym).second) continue;
      diags.report(diag::err_while_carries_tile, t->range) << sym->name;
    }
    if (isa<FunctionDefStmt>(s)) return;
    forEachChild(s, [&](Node* c) {
      if (auto* st = dyn_cast<Stmt>(c)) walk(st);
    });
  };
  for (Stmt* s : w->body.stmts) walk(s);
}

void Checker::checkFor(ForStmt* s) {
  const Type* it = check(s->iter);
  const Type* elem = iterationElement(it, s->iter ? s->iter->range : s->range);
  assignTo(s->target, elem, nullptr);
  auto* call = dyn_cast<CallExpr>(s->iter);
  const Type* callee = call && call->callee ? call->callee->type : nullptr;
  bool mma =
      callee && callee->kind == TypeKind::Builtin && callee->builtin && callee->builtin->id == BuiltinId::TileMma;
  ++loopDepth;
  unrolledLoops.push_back(isa<ListExpr>(s->iter) || isa<TupleExpr>(s->iter) || mma);
  if (!unrolledLoops.back()) carriers.push_back({"for", s->range.begin.offset});
  checkBlock(s->body);
  if (!unrolledLoops.back()) carriers.pop_back();
  unrolledLoops.pop_back();
  --loopDepth;
  checkBlock(s->elseBlock);
}

// A type a new local takes from its first value: literals get their default dtype, as in C and
// Triton: an integer constant is i32 when it fits, i64 otherwise (`b = 1 << 40`).
static const Type* strengthen(TypeContext& T, const Type* t, const Expr* value = nullptr) {
  if (t->kind != TypeKind::Scalar || !t->weak) return t;
  if (t->dtype == DType::INT32 && value)
    if (auto c = evalConst(value, nullptr); c && c->kind == ConstValue::Int && (c->i < INT32_MIN || c->i > INT32_MAX))
      return T.scalar(DType::INT64, t->policy);
  return T.scalar(t->dtype, t->policy);
}

namespace {
// The dispatch of Checker::assignTo on the target's form (frontend/ASTVisitor.h): a name binds,
// a tuple or list unpacks, a subscript stores; `value` is the source expression when known.
struct TargetBinder : ASTVisitor<TargetBinder, void, const Type*, Expr*> {
  Checker& c;
  TypeContext& T;
  bool augmented;
  BinaryOp augOp;
  TargetBinder(Checker& c, bool augmented, BinaryOp augOp) : c(c), T(c.T), augmented(augmented), augOp(augOp) {}

  void visitNameExpr(NameExpr* n, const Type* t, Expr* value) {
    Symbol* sym = c.scope->lookupLocal(n->name);
    if (sym && (sym->kind == SymbolKind::Variable || sym->kind == SymbolKind::Constant)) {
      if (c.inKernel() && sym->type && !sym->type->isLenient() && !t->isLenient()) {
        bool sameFamily = (sym->type->kind == TypeKind::Scalar) == (t->kind == TypeKind::Scalar);
        if (!sameFamily)
          c.diags.report(diag::err_local_type_change, n->range) << n->name << sym->type->str() << t->str();
        else if (t->kind == TypeKind::Scalar)
          c.checkConversion(t, sym->type, value ? value->range : n->range, false, value);
        else if (t->kind == TypeKind::Slice)
          sym->type = t;  // a block variable of another tile.range: the lowering rebinds it
        else
          c.checkCarriedType(n, sym, t);
      } else if (!c.inKernel()) {
        sym->type = strengthen(T, t, value);
      }
      sym->assignments++;
      if (sym->assignments > 1 && sym->kind == SymbolKind::Constant) sym->kind = SymbolKind::Variable;
    } else if (sym && sym->kind == SymbolKind::Parameter) {
      sym->type = strengthen(T, t);  // rebinding a parameter name
    } else {
      sym = c.declareLocal(n->name, n->range, strengthen(T, t, value));
      sym->assignments = 1;
      if (value && c.scope == c.mod.scope)
        if (auto v = evalConst(value, &c.diags)) {
          sym->value = v;
          sym->kind = SymbolKind::Constant;
        }
    }
    n->symbol = sym;
    n->type = sym->type;
  }
  void visitTupleExpr(TupleExpr* e, const Type* t, Expr* value) { unpack(e, e->elements, t, value); }
  void visitListExpr(ListExpr* e, const Type* t, Expr* value) { unpack(e, e->elements, t, value); }
  void unpack(Expr* target, std::vector<Expr*>& elems, const Type* t, Expr* value) {
    bool starred = std::any_of(elems.begin(), elems.end(), [](Expr* e) { return isa<StarredExpr>(e); });
    std::vector<Expr*> valueElems;
    if (auto* tv = dyn_cast<TupleExpr>(value)) valueElems = tv->elements;
    if (t->kind == TypeKind::Tuple && !starred) {
      if (t->elems.size() != elems.size()) {
        c.diags.report(diag::err_unpack_count, target->range) << t->elems.size() << elems.size();
        for (Expr* e : elems) c.assignTo(e, T.error(), nullptr);
      } else {
        for (size_t i = 0; i < elems.size(); ++i)
          c.assignTo(elems[i], t->elems[i], i < valueElems.size() ? valueElems[i] : nullptr);
      }
    } else {
      const Type* each = t->isError() ? T.error() : t->kind == TypeKind::List ? t->elems[0] : T.dynamic();
      if (!t->isLenient() && t->kind != TypeKind::List && t->kind != TypeKind::Tuple && t->kind != TypeKind::Range) {
        c.diags.report(diag::err_not_iterable, value ? value->range : target->range) << t->str();
        each = T.error();
      }
      for (Expr* e : elems) c.assignTo(e, each, nullptr);
    }
    target->type = t;
  }
  void visitStarredExpr(StarredExpr* st, const Type* t, Expr*) {
    c.assignTo(st->value, t->isError() ? t : T.dynamic(), nullptr);
    st->type = t;
  }
  void visitSubscriptExpr(SubscriptExpr* target, const Type* t, Expr* value) {
    const Type* slot = c.check(target);
    c.checkWriteAccess(target, target->range, augmented, augOp);
    if (slot->isLenient() || t->isLenient()) return;
    // A tile stored into a slice: code generation stores element for element, rank for rank,
    // except that leading extents of 1 come and go (a (1, C) tile into an [C] slot, or a [C]
    // tile into a (1, C) slot, as NumPy assigns them). (A shared array allocated without
    // extents has no known rank yet: dims is empty.)
    if (c.inKernel() && slot->isTileLike() && t->isTileLike() && slot->rankKnown && t->rankKnown &&
        !slot->dims.empty() && !t->dims.empty() && slot->dims.size() != t->dims.size() &&
        !onlyLeadingOnesDiffer(slot->dims, t->dims)) {
      c.diags.report(diag::err_store_rank_mismatch, value ? value->range : target->range)
          << t->str() << static_cast<unsigned>(t->dims.size()) << slot->str()
          << static_cast<unsigned>(slot->dims.size());
      return;
    }
    if (c.inKernel() && !c.checkStoreExtents(target, slot, t, value)) return;
    c.checkConversion(t, slot, value ? value->range : target->range, true, value);
  }
  void visitAttributeExpr(AttributeExpr* a, const Type*, Expr*) {
    const Type* base = c.check(a->base);
    if (!base->isLenient() && base->kind != TypeKind::Module) c.diags.report(diag::err_invalid_assign_target, a->range);
    a->type = T.dynamic();
  }
  void visitErrorExpr(ErrorExpr* e, const Type*, Expr*) { e->type = T.error(); }
  void visitExpr(Expr* target, const Type*, Expr*) {
    c.check(target);  // literals, calls, ...: the parser reports the target
  }
};
}  // namespace

void Checker::assignTo(Expr* target, const Type* t, Expr* value, bool augmented, BinaryOp augOp) {
  if (!target) return;
  TargetBinder(*this, augmented, augOp).visit(target, t, value);
}

// A tile stored into a slice or block has the slot's extents, dimension for dimension: code
// generation broadcasts a scalar, never a tile (a size-1 extent included), so two constant
// extents that differ are refused here rather than by the Tile IR verifier after `--check`.
// True when the longer of two shapes is the shorter one with extents of 1 in front.
bool onlyLeadingOnesDiffer(const std::vector<Extent>& a, const std::vector<Extent>& b) {
  const std::vector<Extent>& longer = a.size() >= b.size() ? a : b;
  size_t extra = longer.size() - std::min(a.size(), b.size());
  for (size_t d = 0; d < extra; ++d)
    if (!longer[d].isConst() || longer[d].value() != 1) return false;
  return true;
}

bool Checker::checkStoreExtents(Expr* target, const Type* slot, const Type* t, Expr* value) {
  if (!slot->isTileLike() || !t->isTileLike() || !slot->rankKnown || !t->rankKnown ||
      (slot->dims.size() != t->dims.size() && !onlyLeadingOnesDiffer(slot->dims, t->dims)))
    return true;
  // Trailing extents line up (leading extents of 1 of the longer shape have no partner).
  size_t n = std::min(slot->dims.size(), t->dims.size());
  for (size_t i = 0; i < n; ++i) {
    size_t d = slot->dims.size() - n + i;
    const Extent &want = slot->dims[d], &got = t->dims[t->dims.size() - n + i];
    // Constants that differ; or, in a kernel, two different shape symbols (the store would be laid
    // out by the value's extent whatever the slot's is at launch).
    bool constants = want.isConst() && got.isConst();
    bool symbols = !want.isConst() && !got.isConst() && !want.isUnknown() && !got.isUnknown();
    if (symbols && unifying) {
      unifying->unite(want, got);
      continue;
    }
    if (want == got || !(constants || (symbols && inKernel()))) continue;
    diags.report(diag::err_store_shape_mismatch, value ? value->range : target->range)
        << t->str() << text(target->range) << slot->str() << got.str() << static_cast<unsigned>(d) << want.str();
    return false;
  }
  return true;
}

// A shared buffer or fragment assigned inside an if or loop to a local that held one before is
// carried through the construct in one Tile IR value, so it keeps its type (shape and element).
// (Tile values and views convert between each other in the lowering, which keeps the check.)
void Checker::checkCarriedType(NameExpr* n, const Symbol* sym, const Type* t) {
  const Type* was = sym->type;
  if (was == t || was->kind != t->kind || (t->kind != TypeKind::Shared && t->kind != TypeKind::Fragment)) return;
  if (t->kind == TypeKind::Shared && (t->dims.empty() || was->dims.empty())) return;  // sized by a copy
  // The innermost construct, when the local was declared before it, merges the two values.
  if (carriers.empty() || carriers.back().begin <= sym->declRange.begin.offset) return;
  diags.report(diag::err_carried_type_change, n->range) << n->name << was->str() << carriers.back().keyword << t->str();
}

// ---------------------------------------------------------------- functions

void Checker::declareFunction(FunctionDefStmt* f) {
  auto owned = std::make_unique<FunctionInfo>();
  FunctionInfo& info = *owned;
  info.def = f;
  sc.functions[f] = std::move(owned);
  checkDecorators(f, info);

  Scope* outer = scope;
  info.scope = sc.symbols.makeScope(Scope::Function, outer);
  info.scope->function = &info;
  FunctionInfo* savedFn = fn_;
  // Default values are evaluated in the enclosing scope.
  for (Param& p : f->params)
    if (p.defaultValue) check(p.defaultValue);
  scope = info.scope;
  fn_ = &info;
  for (auto& [name, cands] : info.autotuneSpace) {
    Symbol* s = declareLocal(name, f->nameRange, T.scalar(DType::INT32), SymbolKind::AutotuneParam);
    s->candidates = cands;
    // The candidate that is compiled (the first, or the driver's choice) everywhere: group
    // shape, shapes, body.
    if (!cands.empty()) s->value = ConstValue::ofInt(sc.autotuneValue(f->name, name, cands));
  }
  // Declare every parameter first, so extents may name later scalar parameters.
  std::vector<Symbol*> paramSyms;
  for (Param& p : f->params) {
    if (p.name.empty()) {
      paramSyms.push_back(nullptr);
      continue;
    }
    if (Symbol* prev = scope->lookupLocal(p.name); prev && prev->kind == SymbolKind::Parameter) {
      (diags.report(diag::err_duplicate_param, p.nameRange) << p.name)
          .note(diag::note_previous_declaration, prev->declRange, {p.name});
      paramSyms.push_back(nullptr);
      continue;
    }
    Symbol* s = declareLocal(p.name, p.nameRange, T.dynamic(), SymbolKind::Parameter);
    s->param = &p;
    paramSyms.push_back(s);
  }
  // Scalar parameters (plain dtype names) first: extents of other parameters may name them.
  std::vector<const Type*> types(f->params.size(), nullptr);
  for (int pass = 0; pass < 2; ++pass)
    for (size_t i = 0; i < f->params.size(); ++i) {
      Param& p = f->params[i];
      bool simple = p.annotation && (isa<NameExpr>(p.annotation) || isa<AttributeExpr>(p.annotation));
      if ((pass == 0) != simple) continue;
      const Type* t = p.annotation ? typeFromAnnotation(p.annotation, true, p.name) : T.dynamic();
      types[i] = t;
      if (paramSyms[i]) paramSyms[i]->type = t;
    }
  std::vector<const Type*> paramTypes;
  for (size_t i = 0; i < f->params.size(); ++i)
    if (f->params[i].paramKind == Param::Normal && !f->params[i].name.empty()) paramTypes.push_back(types[i]);
  const Type* result = f->returns ? typeFromAnnotation(f->returns, false, "") : nullptr;
  if (info.isKernel() && !result) result = T.none();
  if (info.isKernel() && !info.flops.empty()) checkFlopsExpression(info);
  info.type = T.function(f, f->name, info.kind, paramTypes, result);
  scope = outer;
  fn_ = savedFn;
  if (!f->name.empty()) {
    Symbol* sym = scope->lookupLocal(f->name);
    if (!sym || sym->function != f) {
      sym = declareLocal(f->name, f->nameRange, info.type, SymbolKind::Function);
      sym->function = f;
    }
    sym->type = info.type;
    sym->functionInfo = &info;
  }
}

void Checker::checkBodyOnce(FunctionDefStmt* f, FunctionInfo& info) {
  Scope* outer = scope;
  FunctionInfo* savedFn = fn_;
  unsigned savedLoop = loopDepth;
  scope = info.scope;
  fn_ = &info;
  loopDepth = 0;
  std::vector<bool> savedUnrolled = std::move(unrolledLoops);
  unrolledLoops.clear();
  ++functionDepth;
  checkBlock(f->body);
  --functionDepth;
  loopDepth = savedLoop;
  unrolledLoops = std::move(savedUnrolled);
  scope = outer;
  fn_ = savedFn;
}

void Checker::checkFunctionBody(FunctionDefStmt* f) {
  auto it = sc.functions.find(f);
  if (it == sc.functions.end()) return;
  FunctionInfo& info = *it->second;
  unsigned errorsBefore = diags.errorCount();
  // Unannotated kernel parameters: checked with their inferred types (their ranks inferred there).
  bool inferring = hasUnannotatedParams(f, info);
  if (inferring)
    checkKernelWithInferredParams(f, info);
  else
    checkBodyOnce(f, info);

  // A body that is only `...` declares the function without defining it.
  if (f->body.stmts.size() == 1)
    if (auto* es = dyn_cast<ExprStmt>(f->body.stmts[0]); es && isa<EllipsisExpr>(es->expr))
      diags.report(diag::warn_ellipsis_body, f->nameRange) << f->name;

  info.bodyHasErrors = diags.errorCount() != errorsBefore;
  if (!diags.stopped()) checkReturnPaths(f, info, diags);
  if (info.isKernel() && !diags.stopped()) {
    checkKernelUniformity(f, info, diags);
    checkGroupRaces(f, info, diags);
    if (diags.errorCount() == errorsBefore) checkRowSplit(f, info, diags);
    checkSharedMemory(f, info, diags);
    // The inference reads the typed body: after an error in it, types are missing.
    if (!inferring && diags.errorCount() == errorsBefore) inferKernelParams(f, info, sc.sm, diags);
  }
}

}  // namespace tessera
