// Calls: builtins (driven by the signatures of Builtins.def), casts, user functions and kernels,
// and the rules attached to builtin uses (context, group features, determinism, writes).
#include <algorithm>
#include <cctype>
#include <map>

#include "sema/Checker.h"
#include "sema/SemaDiagnostics.h"

namespace tessera {

namespace {
const char* kindDescription(const std::string& k) {
  if (k == "int") return "an integer";
  if (k == "num") return "a number";
  if (k == "scalar") return "a scalar";
  if (k == "bool") return "a bool";
  if (k == "str") return "a string";
  if (k == "dtype") return "a dtype";
  if (k == "tensor") return "a tensor";
  if (k == "tile") return "a tile value, tensor or shared array";
  if (k == "shared") return "a shared array";
  if (k == "ref") return "an element of a tensor or shared array (t[i])";
  if (k == "seq") return "a list, tuple or range";
  if (k == "dict") return "a dict";
  if (k == "callable") return "a function";
  if (k == "Group") return "a cooperative group";
  if (k == "Graph") return "a graph";
  if (k == "Stream") return "a stream";
  if (k == "Mesh") return "a mesh";
  if (k == "Domain") return "a domain";
  return "a value";
}
std::string arityText(const BuiltinSignature& s) {
  unsigned lo = s.minPositional(), hi = s.maxPositional();
  if (hi == UINT32_MAX) return "at least " + std::to_string(lo);
  if (lo == hi) return std::to_string(lo);
  return std::to_string(lo) + " to " + std::to_string(hi);
}
}  // namespace

bool Checker::argumentFits(const std::string& k, const Type* t, Expr* arg) {
  if (t->isLenient() || k == "any") return true;
  switch (t->kind) {
    case TypeKind::Scalar:
      if (k == "int") return t->isIntegral();
      if (k == "num") return t->isNumeric() || t->dtype == DType::BOOL;
      if (k == "scalar" || k == "bool") return true;
      if (k == "ref") return arg && isa<SubscriptExpr>(arg);
      return false;
    case TypeKind::Str: return k == "str";
    case TypeKind::Tensor: return k == "tensor" || k == "tile";
    case TypeKind::Tile:
    case TypeKind::Fragment: return k == "tile";
    case TypeKind::Shared: return k == "tile" || k == "shared";
    case TypeKind::List:
    case TypeKind::Tuple:
    case TypeKind::Range: return k == "seq";
    case TypeKind::Dict: return k == "dict";
    case TypeKind::DTypeValue: return k == "dtype";
    case TypeKind::Function:
    case TypeKind::Builtin: return k == "callable";
    case TypeKind::Opaque: return k == t->name;
    default: return false;
  }
}

const Type* Checker::checkCall(CallExpr* e) {
  const Type* callee = check(e->callee);
  auto checkArgs = [&] {
    for (Argument& a : e->args) check(a.value);
  };
  switch (callee->kind) {
    case TypeKind::Error: checkArgs(); return T.error();
    case TypeKind::Dynamic: checkArgs(); return T.dynamic();
    case TypeKind::Builtin: {
      Expr* head = e->callee;
      if (auto* sub = dyn_cast<SubscriptExpr>(head)) head = sub->base;  // tshared.alloc[f16](...)
      SourceRange at = head->range;
      if (auto* a = dyn_cast<AttributeExpr>(head)) at = SourceRange(a->base->range.begin, a->nameRange.end);
      return checkBuiltinCall(*callee->builtin, callee->typeArg, e, at);
    }
    case TypeKind::DTypeValue: return checkCast(callee, e);
    case TypeKind::Function: return checkUserCall(callee, e);
    default:
      checkArgs();
      diags.report(diag::err_not_callable, e->callee->range) << callee->str();
      return T.error();
  }
}

const Type* Checker::checkCast(const Type* dt, CallExpr* e) {
  std::vector<const Type*> args;
  for (Argument& a : e->args) args.push_back(check(a.value));
  std::string name = dtypeInfo(dt->dtype).shortName;
  if (e->args.size() != 1 || e->args[0].kind != Argument::Positional) {
    diags.report(diag::err_cast_arity, e->callee->range) << name << e->args.size();
    return T.error();
  }
  const Type* a = args[0];
  if (a->isError()) return T.error();
  if (a->isDynamic()) return T.scalar(dt->dtype, dt->policy);
  if (a->kind == TypeKind::Scalar) return T.scalar(dt->dtype, dt->policy);
  if (a->isTileLike()) {
    if (a->kind == TypeKind::Tensor && !inKernel()) return T.withElement(a, dt->dtype, dt->policy);
    return T.tile(dt->dtype, true, a->dims, a->rankKnown && (a->kind != TypeKind::Shared || !a->dims.empty()),
                  dt->policy);
  }
  diags.report(diag::err_cast_operand, e->args[0].value->range) << a->str() << name;
  return T.error();
}

const Type* Checker::checkUserCall(const Type* fnType, CallExpr* e) {
  std::vector<const Type*> args;
  bool star = false;
  for (Argument& a : e->args) {
    args.push_back(check(a.value));
    if (a.kind == Argument::Star || a.kind == Argument::DoubleStar) star = true;
  }
  const FunctionDefStmt* f = fnType->function;
  if (inKernel() && fnType->functionKind == FunctionKind::Kernel) {
    diags.report(diag::err_kernel_calls_kernel, e->callee->range) << fnType->name;
    return T.error();
  }
  if (!f) return fnType->result ? fnType->result : T.dynamic();
  bool varargs = false, kwargs = false;
  unsigned required = 0, positional = 0;
  for (const Param& p : f->params) {
    if (p.paramKind == Param::VarArgs)
      varargs = true;
    else if (p.paramKind == Param::KwArgs)
      kwargs = true;
    else if (p.paramKind == Param::Normal) {
      ++positional;
      if (!p.defaultValue) ++required;
    }
  }
  if (star) return fnType->result ? fnType->result : T.dynamic();
  std::vector<BindError> errors;
  CallBinding binding = bindArguments(paramSpecs(*f), kwargs, *e, errors);
  std::vector<const Param*> normals;
  for (const Param& p : f->params)
    if (p.paramKind == Param::Normal && !p.name.empty()) normals.push_back(&p);
  unsigned given = 0;
  std::map<std::string, std::pair<std::string, std::string>> symbolSizes;  // symbol -> (size, parameter)
  for (size_t i = 0; i < e->args.size(); ++i) {
    Argument& a = e->args[i];
    if (a.kind == Argument::Positional || a.kind == Argument::Keyword) ++given;
    // The parameter this argument binds (a repeated keyword is checked against it too).
    size_t idx = SIZE_MAX;
    for (size_t p = 0; p < normals.size(); ++p)
      if (binding.argIndex[p] == i) idx = p;
    for (const BindError& err : errors) {
      if (err.arg != i) continue;
      if (err.kind == BindError::UnknownKeyword) {
        std::vector<std::string> names;
        for (const Param* p : normals) names.push_back(p->name);
        std::string best = closestMatch(a.keyword, names);
        if (!best.empty())
          diags.report(diag::err_call_unknown_keyword_suggest, a.keywordRange).fixit(a.keywordRange, best)
              << fnType->name << a.keyword << best;
        else
          diags.report(diag::err_call_unknown_keyword, a.keywordRange) << fnType->name << a.keyword;
        return fnType->result ? fnType->result : T.dynamic();
      }
      if (err.kind == BindError::DuplicateKeyword)
        for (size_t p = 0; p < normals.size(); ++p)
          if (normals[p]->name == a.keyword) idx = p;
    }
    if (idx != SIZE_MAX) checkUserArgument(fnType, *normals[idx], idx, a, args[i], symbolSizes);
  }
  sc.bindings[e] = binding;
  if ((!varargs && given > positional) || given < required) {
    std::string want = required == positional ? std::to_string(positional)
                                              : std::to_string(required) + " to " + std::to_string(positional);
    if (varargs) want = "at least " + std::to_string(required);
    diags.report(diag::err_call_arity, e->parenRange.valid() ? e->parenRange : e->range)
        << fnType->name << want << given;
  }
  return fnType->result ? fnType->result : T.dynamic();
}

// An argument of a user call against its parameter: tensor or scalar, ranks and static extents;
// a shape symbol of the callee must bind one size across the arguments (`symbolSizes`).
void Checker::checkUserArgument(const Type* fnType, const Param& target, size_t idx, const Argument& a, const Type* at,
                                std::map<std::string, std::pair<std::string, std::string>>& symbolSizes) {
  if (idx >= fnType->elems.size()) return;
  const Type* pt = fnType->elems[idx];
  bool ok = true, conflict = false;
  if (!pt->isLenient() && !at->isLenient()) {
    if (pt->kind == TypeKind::Tensor)
      ok = at->kind == TypeKind::Tensor;
    else if (pt->kind == TypeKind::Scalar)
      ok = at->kind == TypeKind::Scalar;
    // Ranks and static extents must match; a shape symbol must bind one size.
    if (ok && pt->kind == TypeKind::Tensor && pt->rankKnown && at->rankKnown) {
      if (pt->dims.size() != at->dims.size()) ok = false;
      for (size_t d = 0; ok && d < pt->dims.size(); ++d) {
        const Extent &want = pt->dims[d], &got = at->dims[d];
        if (!extentIsConst(got)) continue;
        if (extentIsConst(want)) {
          if (want != got) ok = false;
          continue;
        }
        if (want.kind() != Extent::Kind::Symbol) continue;
        auto [it, inserted] = symbolSizes.emplace(want.str(), std::make_pair(got.str(), target.name));
        if (!inserted && it->second.first != got) {
          diags.report(diag::err_shape_symbol_conflict, a.value->range)
              << want.str() << fnType->name << it->second.first << it->second.second << got.str() << target.name;
          conflict = true;
        }
      }
    }
  }
  if (!ok && !conflict)
    diags.report(diag::err_call_argument_type, a.value->range)
        << fnType->name << target.name << ("'" + pt->str() + "'") << at->str();
  else if (ok && !conflict && pt->kind == TypeKind::Scalar && at->kind == TypeKind::Scalar && isInteger(at->dtype))
    checkConstantFits(a.value, pt->dtype, a.value->range);
}

bool Checker::checkBuiltinUse(const BuiltinInfo& b, SourceRange at) {
  std::string spelled = text(at);
  if (spelled.empty()) spelled = b.name;
  // A function without a decorator may use kernel builtins: it is then a device function, which
  // kernels call and the compiler inlines; the group-shape and uniform-control rules are checked
  // where it is inlined (docs/language.md, section 2).
  bool device = fn_ && fn_->kind == FunctionKind::Plain;
  if (b.context == BuiltinContext::Kernel && !inKernel()) {
    if (!device) {
      diags.report(diag::err_builtin_kernel_only, at) << spelled;
      return false;
    }
    fn_->device = true;
    return true;
  }
  if (b.context == BuiltinContext::Host && (inKernel() || (fn_ && fn_->device))) {
    diags.report(diag::err_builtin_host_only, at) << spelled;
    return false;
  }
  if (!inKernel()) return true;
  // Reported, and the call still checked: its other rules (determinism, ...) apply as well.
  if (b.has(eff::NotLowered)) diags.report(diag::err_builtin_not_lowered, at) << spelled;
  FunctionInfo& info = *fn_;
  if (b.has(eff::GroupFeature) && info.groupShape.empty() && !info.reportedGroupFeature) {
    info.reportedGroupFeature = true;
    const FunctionDefStmt* f = info.def;
    auto d = diags.report(diag::err_group_feature_without_shape, at);
    d << spelled << f->name;
    if (info.kernelDecoratorRange.valid()) {
      d.note(diag::note_declare_group_shape, info.kernelDecoratorRange);
      d.fixitInsert(info.kernelDecoratorRange.end, " tile[(128,)]");
    }
  }
  if (b.has(eff::NonDeterministic) && info.deterministic)
    diags.report(diag::err_nondeterministic_builtin, at) << spelled;
  return true;
}

void Checker::checkWriteAccess(Expr* target, SourceRange at, bool augmented, BinaryOp augOp) {
  Symbol* p = rootParam(target);
  if (!p || !p->type) return;
  const Type* t = p->type;
  if (t->kind != TypeKind::Tensor) return;
  if (t->privilege == Privilege::Read) {
    diags.report(diag::err_write_region_privilege, at) << p->name << privilegeName(t->privilege);
    return;
  }
  if (t->privilege == Privilege::ReduceSum || t->privilege == Privilege::ReduceMax ||
      t->privilege == Privilege::ReduceMin) {
    const char* want = t->privilege == Privilege::ReduceSum   ? "+="
                       : t->privilege == Privilege::ReduceMax ? "max(...)"
                                                              : "min(...)";
    bool ok = t->privilege == Privilege::ReduceSum && augmented && augOp == BinaryOp::Add;
    if (!ok) diags.report(diag::err_region_reduce_only, at) << p->name << privilegeName(t->privilege) << want;
    return;
  }
  if (t->privilege == Privilege::Write || t->mut) return;
  auto d = diags.report(diag::err_write_readonly_param, at);
  d << p->name;
  if (p->param && p->param->annotation) {
    d.note(diag::note_make_mut, p->param->nameRange, {p->name, text(p->param->annotation->range)});
    d.fixitInsert(p->param->annotation->range.begin, "mut ");
  }
}

Symbol* Checker::rootParam(Expr* e) {
  while (e) {
    if (auto* s = dyn_cast<SubscriptExpr>(e))
      e = s->base;
    else if (auto* n = dyn_cast<NameExpr>(e)) {
      Symbol* sym = const_cast<Symbol*>(n->symbol);
      return sym && sym->kind == SymbolKind::Parameter ? sym : nullptr;
    } else
      return nullptr;
  }
  return nullptr;
}

const Type* Checker::checkBuiltinCall(const BuiltinInfo& b, const Type* typeArg, CallExpr* call, SourceRange at) {
  const BuiltinSignature& sig = b.sig;
  std::vector<const Type*> argTypes;
  bool star = false;
  for (Argument& a : call->args) {
    argTypes.push_back(check(a.value));
    if (a.kind == Argument::Star || a.kind == Argument::DoubleStar) star = true;
  }
  if (!checkBuiltinUse(b, at)) return T.error();
  if (b.id == BuiltinId::Print && inKernel()) checkKernelPrint(call);
  if (std::any_of(argTypes.begin(), argTypes.end(), [](const Type* t) { return t->isError(); }) &&
      (b.id == BuiltinId::TSharedAlloc || b.id == BuiltinId::TileAllocShared))
    return T.error();
  if (sig.isValue || sig.isTypeConstructor) {
    diags.report(diag::err_not_callable, call->callee->range) << T.builtin(&b)->str();
    return T.error();
  }
  if (sig.hasTypeParam && !typeArg && !sig.typeParamOptional && !(b.id == BuiltinId::TileAllocShared)) {
    diags.report(diag::err_builtin_needs_type_argument, at) << b.name;
    return T.error();
  }
  std::vector<BindError> errors;
  BoundBuiltinCall bc{b, call, bindArguments(paramSpecs(sig), sig.acceptsAnyKeywords, *call, errors), {}, {}};
  for (size_t i : bc.binding.argIndex) bc.types.push_back(i < argTypes.size() ? argTypes[i] : nullptr);
  for (size_t i : bc.binding.variadicIndex) bc.variadicTypes.push_back(argTypes[i]);
  if (!checkBuiltinArguments(bc, errors)) return T.error();
  sc.bindings[call] = bc.binding;

  // With *args or **kwargs the binding is unknown: only the generic result below applies.
  if (star) {
    const std::string& r = sig.result;
    if (r == "none") return T.none();
    if (!r.empty() && r[0] >= 'A' && r[0] <= 'Z') return T.opaque(r);
    return T.dynamic();
  }
  // Writes through parameters.
  if (b.has(eff::MemWrite) && inKernel()) {
    if (Expr* dst = bc.arg("dst")) checkWriteAccess(dst, dst->range, false, BinaryOp::Add);
    if (Expr* ref = bc.arg("ref")) checkWriteAccess(ref, ref->range, b.id == BuiltinId::AtomicAdd, BinaryOp::Add);
  }
  if (b.has(eff::Atomic) && (inKernel() || fn_->device)) checkAtomicCall(bc, at);
  checkConstantArguments(bc, at);
  if (const Type* t = specialBuiltinResult(bc, typeArg)) return t;
  return genericBuiltinResult(bc, at);
}

// Reports the mistakes of binding a builtin call (arity, unknown and repeated keywords, missing
// arguments) and arguments of the wrong kind; false after any.
bool Checker::checkBuiltinArguments(const BoundBuiltinCall& bc, const std::vector<BindError>& errors) {
  const BuiltinInfo& b = bc.b;
  const BuiltinSignature& sig = b.sig;
  CallExpr* call = bc.call;
  SourceRange parens = call->parenRange.valid() ? call->parenRange : call->range;
  unsigned positional = static_cast<unsigned>(std::count_if(
      call->args.begin(), call->args.end(), [](const Argument& x) { return x.kind == Argument::Positional; }));
  bool ok = true;
  for (const BindError& err : errors) {
    const Argument& a = call->args[err.arg];
    if (err.kind == BindError::TooManyPositional) {
      if (bc.binding.star) continue;
      diags.report(diag::err_call_arity, parens) << b.name << arityText(sig) << positional;
      return false;
    }
    if (err.kind == BindError::DuplicateKeyword) {
      diags.report(diag::err_call_duplicate_argument, a.range) << b.name << a.keyword;
      ok = false;
      continue;
    }
    std::vector<std::string> names;
    for (const BuiltinParam& p : sig.params)
      if (!p.variadic) names.push_back(p.name);
    std::string best = closestMatch(a.keyword, names);
    if (!best.empty())
      diags.report(diag::err_call_unknown_keyword_suggest, a.keywordRange).fixit(a.keywordRange, best)
          << b.name << a.keyword << best;
    else
      diags.report(diag::err_call_unknown_keyword, a.keywordRange) << b.name << a.keyword;
    ok = false;
  }
  if (!ok) return false;
  if (!bc.binding.star)
    for (size_t p = 0; p < sig.params.size(); ++p)
      if (!bc.binding.args[p] && !sig.params[p].optional && !sig.params[p].variadic) {
        bool anyKeyword = std::any_of(call->args.begin(), call->args.end(),
                                      [](const Argument& x) { return x.kind == Argument::Keyword; });
        if (!sig.params[p].keywordOnly && !anyKeyword && positional < sig.minPositional())
          diags.report(diag::err_call_arity, parens) << b.name << arityText(sig) << positional;
        else
          diags.report(diag::err_call_missing_argument, parens) << b.name << sig.params[p].name;
        return false;
      }
  for (size_t p = 0; p < sig.params.size(); ++p) {
    auto checkOne = [&](Expr* e, const Type* t) {
      if (!e || !t || argumentFits(sig.params[p].kind, t, e)) return true;
      diags.report(diag::err_call_argument_type, e->range)
          << b.name << sig.params[p].name << kindDescription(sig.params[p].kind) << t->str();
      return false;
    };
    if (sig.params[p].variadic) {
      for (size_t v = 0; v < bc.binding.variadic.size(); ++v)
        if (!checkOne(bc.binding.variadic[v], bc.variadicTypes[v])) ok = false;
    } else if (!checkOne(bc.binding.args[p], bc.types[p])) {
      ok = false;
    }
  }
  return ok;
}

// bitcast(value, dtype): same width, scalars only; the bits are kept, so nothing rounds.
const Type* Checker::bitcastResult(const BoundBuiltinCall& bc) {
  const Type* v = bc.argType("value");
  const Type* d = bc.argType("dtype");
  if (!v || !d || v->isLenient() || d->kind != TypeKind::DTypeValue) return T.dynamic();
  if (v->kind != TypeKind::Scalar || v->weak || dtypeInfo(v->dtype).bits != dtypeInfo(d->dtype).bits ||
      dtypeInfo(d->dtype).bits < 8) {
    diags.report(diag::err_call_argument_type, bc.arg("value")->range)
        << bc.b.name << "value" << "a typed scalar as wide as " + std::string(dtypeInfo(d->dtype).shortName)
        << v->str();
    return T.error();
  }
  return T.scalar(d->dtype);
}

// Arguments whose value code generation needs: the axis of a reduction (it lays the result out
// by it), and a range's step (a constant zero step is an error, as Python's ValueError; a
// negative one counts down).
void Checker::checkConstantArguments(const BoundBuiltinCall& bc, SourceRange at) {
  switch (bc.b.id) {
    case BuiltinId::ReduceSum:
    case BuiltinId::ReduceMax:
    case BuiltinId::ReduceMin:
    case BuiltinId::TileSum:
    case BuiltinId::TileMax:
    case BuiltinId::TileSoftmax:
      if (Expr* axis = bc.arg("axis"); axis && inKernel())
        requireConstInt(axis, at, "the axis of '" + std::string(bc.b.name) + "'", LLONG_MIN, LLONG_MAX);
      // The reductions check their axis as they drop it (reducedAlongAxis); softmax keeps it.
      if (Expr* axis = bc.arg("axis"); axis && bc.b.id == BuiltinId::TileSoftmax) {
        const Type* x = bc.types.empty() ? nullptr : bc.types[0];
        auto c = evalConst(axis, nullptr);
        if (x && x->isTileLike() && x->rankKnown && c && c->kind == ConstValue::Int) {
          long long rank = static_cast<long long>(x->dims.size());
          if (c->i < -rank || c->i >= rank) diags.report(diag::err_axis_out_of_range, axis->range) << c->i << rank;
        }
      }
      break;
    case BuiltinId::Range:
      if (Expr* step = bc.arg("step")) {
        auto c = evalConst(step, nullptr);
        if (c && c->kind == ConstValue::Int && c->i == 0) diags.report(diag::err_range_step_zero, step->range);
      }
      break;
    default: break;
  }
}

// tile.range: blocks (slices) of a tensor's axis; with axis=(0, 1, 2) an i64 index of each
// leading axis, then a block of the last one; i32 steps of an extent.
// Reports `what` unless `x` is a compile-time integer in [lo, hi] (at `missing` when absent).
void Checker::requireConstInt(Expr* x, SourceRange missing, const std::string& what, long long lo, long long hi) {
  auto c = x ? evalConst(x, nullptr) : std::nullopt;
  if (x && x->type && x->type->isError()) return;
  if (!c || c->kind != ConstValue::Int || c->i < lo || c->i > hi)
    diags.report(diag::err_argument_not_constant, x ? x->range : missing) << what;
}

// A reduction of tile `t` along `axis`: along a constant axis of a tile of known rank that axis
// goes away (negative axes count from the end, as in NumPy); one it does not have is an error.
const Type* Checker::reducedAlongAxis(const Type* t, Expr* axisExpr, DType d, bool dtypeKnown) {
  auto c = evalConst(axisExpr, nullptr);
  if (!t->rankKnown || t->kind != TypeKind::Tile || !c || c->kind != ConstValue::Int)
    return T.tile(d, dtypeKnown, {}, false);
  long long rank = static_cast<long long>(t->dims.size());
  long long axis = c->i < 0 ? c->i + rank : c->i;
  if (axis < 0 || axis >= rank) {
    diags.report(diag::err_axis_out_of_range, axisExpr->range) << c->i << rank;
    return T.error();
  }
  std::vector<Extent> dims = t->dims;
  dims.erase(dims.begin() + axis);
  return T.tile(d, dtypeKnown, dims, true);
}

// tile.range: a loop over an extent, or over the blocks of a tensor's axis (or axes). Its step,
// prefetch depth and axes are constants: code generation sizes blocks and pipelines by them.
const Type* Checker::tileRangeResult(const BoundBuiltinCall& bc, const Type* ext) {
  SourceRange at = bc.call->range;
  if (Expr* step = bc.arg("step"))
    requireConstInt(step, at, "the step of 'tile.range' (a positive integer)", 1, LLONG_MAX);
  auto* axisTuple = dyn_cast<TupleExpr>(bc.arg("axis"));
  if (Expr* pre = bc.arg("prefetch"); pre && !(axisTuple && axisTuple->elements.size() > 1))
    requireConstInt(pre, at, "'prefetch' (an integer in [1, 16])", 1, 16);
  if (axisTuple) {
    for (Expr* a : axisTuple->elements) requireConstInt(a, at, "the axes of 'tile.range'", LLONG_MIN, LLONG_MAX);
  } else if (Expr* axis = bc.arg("axis"); axis && (ext->kind == TypeKind::Tensor || ext->isDynamic())) {
    requireConstInt(axis, at, "the axis of 'tile.range'", LLONG_MIN, LLONG_MAX);
  }
  if (ext->kind == TypeKind::Tensor || ext->isDynamic()) {
    // Blocks of a constant step have that extent.
    auto step = bc.arg("step") ? evalConst(bc.arg("step"), nullptr) : std::optional<ConstValue>(ConstValue::ofInt(1));
    const Type* block =
        step && step->kind == ConstValue::Int && step->i > 0 ? T.slice(std::to_string(step->i)) : T.slice();
    if (auto* axes = dyn_cast<TupleExpr>(bc.arg("axis")); axes && axes->elements.size() > 1) {
      std::vector<const Type*> elems(axes->elements.size() - 1, T.scalar(DType::INT64));
      elems.push_back(block);
      return T.range(T.tuple(elems));
    }
    if (ext->kind == TypeKind::Tensor || bc.arg("axis")) return T.range(block);
  }
  return T.range(T.scalar(DType::INT32));
}

// tile.where(cond, a, b): the value operands' promoted type, over the shape all three broadcast to.
const Type* Checker::tileWhereResult(const BoundBuiltinCall& bc) {
  const Type *c = bc.argType("cond"), *a = bc.argType("a"), *v = bc.argType("b");
  if (!c || !a || !v) return T.dynamic();
  SourceRange at = bc.call->callee->range, whole = bc.call->range;
  const Type* value = binaryResult(BinaryOp::Add, a, v, at, whole);
  if (value->isLenient() || c->isLenient()) return value->isError() || c->isError() ? T.error() : T.dynamic();
  const Type* shape = binaryResult(BinaryOp::Eq, c, value, at, whole);
  if (shape->isError()) return T.error();
  if (!value->isTileLike() && !shape->isTileLike()) return value;
  return T.tile(value->dtype, value->dtypeKnown || !value->isTileLike(), shape->dims, shape->rankKnown, value->policy);
}

// tile.arange(n): a rank-1 i32 tile of n elements, n a positive constant.
const Type* Checker::tileArangeResult(const BoundBuiltinCall& bc) {
  Expr* n = bc.arg("n");
  auto c = n ? evalConst(n, nullptr) : std::nullopt;
  if (!c || c->kind != ConstValue::Int || c->i <= 0) {
    if (n)
      diags.report(diag::err_call_argument_type, n->range)
          << bc.b.name << "n" << "a positive compile-time integer" << text(n->range);
    return T.error();
  }
  return T.tile(DType::INT32, true, {std::to_string(c->i)}, true);
}

// The result of builtins whose type depends on their arguments beyond the signature's result
// notation (shared buffers, ranges, products, tile constructors, shuffles, groups); null for the
// others.
const Type* Checker::specialBuiltinResult(const BoundBuiltinCall& bc, const Type* typeArg) {
  const BuiltinInfo& b = bc.b;
  CallExpr* call = bc.call;
  auto arg = [&](const char* name) { return bc.arg(name); };
  auto argType = [&](const char* name) { return bc.argType(name); };
  const std::vector<const Type*>& boundType = bc.types;
  const std::vector<Expr*>& variadic = bc.binding.variadic;
  const Type* first = !boundType.empty() && boundType[0] ? boundType[0] : T.dynamic();
  switch (b.id) {
    case BuiltinId::TSharedAlloc:
    case BuiltinId::TileAllocShared: {
      DType d = typeArg && typeArg->kind == TypeKind::Scalar ? typeArg->dtype : DType::FP32;
      std::vector<Extent> dims;
      long long elems = 1;
      bool known = !variadic.empty();
      for (Expr* x : variadic) {
        auto c = evalConst(x, &diags);
        if (!c || c->kind != ConstValue::Int) {
          if (!c)
            diags.report(diag::err_shared_extent_not_const, x->range);
          else
            diags.report(diag::err_shared_extent_not_const, x->range);
          return T.error();
        }
        if (c->i <= 0) {
          diags.report(diag::err_shared_extent_not_positive, x->range) << c->i;
          return T.error();
        }
        dims.push_back(std::to_string(c->i));
        if (__builtin_mul_overflow(elems, c->i, &elems)) elems = LLONG_MAX / 64;
      }
      Swizzle sw = Swizzle::None;
      if (Expr* s = arg("swizzle")) {
        auto c = evalConst(s, nullptr);
        if (c && c->kind == ConstValue::Str) {
          if (auto z = lookupSwizzle(c->s))
            sw = *z;
          else
            diags.report(diag::err_unknown_swizzle, s->range) << c->s;
        }
      }
      if (inKernel()) {
        long long bits = static_cast<long long>(dtypeInfo(d).bits);
        long long bytes = -1;
        if (known) bytes = elems > LLONG_MAX / 64 ? LLONG_MAX / 8 : (elems * bits + 7) / 8;
        fn_->sharedAllocations.push_back({call, bytes});
      }
      return T.shared(d, dims, sw);
    }
    case BuiltinId::TileCpAsync: {
      const Type* src = first;
      if (src->kind == TypeKind::Shared) return T.none();  // copy into a shared buffer
      if (src->isLenient()) return src->isError() ? T.error() : T.tile(DType::FP32, false, {}, false);
      // The block's rank, as the lowering gives it: src's with a block of one axis (which axis
      // the loop's tile.range says: the extents stay unknown here), a view's own.
      Expr* index = arg("index");
      const Type* it = index ? index->type : nullptr;
      if (it && it->kind == TypeKind::Slice && src->rankKnown)
        return T.tile(src->dtype, src->dtypeKnown, std::vector<Extent>(src->dims.size(), Extent("?")), true,
                      src->policy);
      if (it && it->kind == TypeKind::Tile && it->rankKnown)
        return T.tile(src->dtype, src->dtypeKnown, it->dims, true, src->policy);
      return T.tile(src->dtype, src->dtypeKnown, {}, false, src->policy);
    }
    case BuiltinId::TileRange: return tileRangeResult(bc, first);
    case BuiltinId::TileWhere: return tileWhereResult(bc);
    case BuiltinId::TileArange: return tileArangeResult(bc);
    case BuiltinId::Range: {
      DType d = DType::INT32;
      for (const Type* t : boundType)
        if (t && t->kind == TypeKind::Scalar && !t->weak && isInteger(t->dtype)) d = promote(d, t->dtype);
      return T.range(T.scalar(d));
    }
    case BuiltinId::Bitcast: return bitcastResult(bc);
    case BuiltinId::TileDot: return tileDotResult(bc);
    case BuiltinId::TileMma: return tileMmaResult(bc);
    case BuiltinId::TileZeros:
    case BuiltinId::TileFull: {
      std::vector<Extent> dims;
      Expr* shape = arg("shape");
      std::vector<Expr*> parts;
      if (auto* t = dyn_cast<TupleExpr>(shape))
        parts = t->elements;
      else if (shape)
        parts = {shape};
      // Each extent is a positive constant (an autotune candidate's included) or a shape symbol of
      // the kernel (tile.zeros((128, D))), as the lowering sizes tiles.
      for (Expr* p : parts) {
        if (auto* n = dyn_cast<NameExpr>(p); n && n->symbol && n->symbol->kind == SymbolKind::ShapeSymbol) {
          dims.push_back(Extent::symbol(n->name));
          continue;
        }
        auto c = evalConst(p, nullptr);
        if (c && c->kind == ConstValue::Int && c->i <= 0) {
          diags.report(diag::err_tile_extent_not_positive, p->range) << c->i;
          return T.error();
        }
        if (inKernel() && !(c && c->kind == ConstValue::Int) && !(p->type && p->type->isError())) {
          diags.report(diag::err_argument_not_constant, p->range) << std::string("the extent of a tile");
          return T.error();
        }
        dims.push_back(c && c->kind == ConstValue::Int ? std::to_string(c->i) : text(p->range));
      }
      DType d = DType::FP32;
      if (const Type* dt = argType("dtype"); dt && dt->kind == TypeKind::DTypeValue) d = dt->dtype;
      return T.tile(d, true, dims, true);
    }
    case BuiltinId::WarpShuffleDown:
    case BuiltinId::WarpShuffleUp:
    case BuiltinId::WarpShuffleXor:
    case BuiltinId::WarpShuffleIdx: {
      Expr* off = bc.binding.args[1];
      if (auto c = evalConst(off, nullptr); c && c->kind == ConstValue::Int && (c->i < 0 || c->i >= 32)) {
        diags.report(diag::err_shuffle_offset_range, off->range) << c->i;
        return T.error();
      }
      // Segments of the warp: a constant power of two from 1 to 32 (shfl.sync's segment mask).
      if (Expr* w = arg("width"))
        if (auto c = evalConst(w, nullptr);
            !c || c->kind != ConstValue::Int || c->i < 1 || c->i > 32 || (c->i & (c->i - 1))) {
          diags.report(diag::err_shuffle_width_unsupported, w->range) << text(w->range);
          return T.error();
        }
      return first->kind == TypeKind::Scalar && first->weak ? T.scalar(first->dtype) : first;
    }
    default: break;
  }
  return constraintResult(bc);
}

// tile.mma(a, c, accum=): one product into an accumulator fragment, or, with BM/BN/BK, the
// iteration form over blocks (a range of block coordinates).
const Type* Checker::tileMmaResult(const BoundBuiltinCall& bc) {
  CallExpr* call = bc.call;
  auto arg = [&](const char* name) { return bc.arg(name); };
  auto argType = [&](const char* name) { return bc.argType(name); };
  const std::vector<const Type*>& boundType = bc.types;
  DType accum = DType::FP32;
  if (Expr* ax = arg("accum")) {
    const Type* at2 = argType("accum");
    if (at2 && at2->kind == TypeKind::DTypeValue) {
      if (at2->dtype != DType::FP32 && at2->dtype != DType::FP16) {
        diags.report(diag::err_mma_accum_dtype, ax->range) << dtypeInfo(at2->dtype).shortName;
        return T.error();
      }
      accum = at2->dtype;
    }
  }
  if (arg("BM") || arg("BN") || arg("BK")) {
    // The iteration form: its tile sizes are constants (an autotune parameter counts at its
    // compiled candidate).
    for (const char* name : {"BM", "BN", "BK"})
      requireConstInt(arg(name), call->range, std::string("'") + name + "' (a positive integer)", 1, LLONG_MAX);
    // The iteration form accumulates into C (tile.mma_sync): C is written.
    if (Expr* c = arg("c")) checkWriteAccess(c, c->range, false, BinaryOp::Add);
    // B may be `Bt.T` (B given K-major); A is copied in [BM, BK] blocks of an [M, K] tensor.
    if (auto* at = dyn_cast<AttributeExpr>(arg("a")); at && at->name == "T") {
      diags.report(diag::err_mma_loop_transposed_a, at->range) << text(at->range);
      return T.error();
    }
    if (!checkInnerExtents("tile.mma", bc.binding.args[0], boundType[0], bc.binding.args[1], boundType[1], call->range))
      return T.error();
    const Type* i = T.scalar(DType::INT32);
    return T.range(T.tuple({i, i, i}));
  }
  const Type *a = boundType[0], *c = boundType[1];
  if (!checkInnerExtents("tile.mma", bc.binding.args[0], a, bc.binding.args[1], c, call->range)) return T.error();
  std::vector<Extent> dims;
  if (a->isTileLike() && c->isTileLike() && a->rankKnown && c->rankKnown && !a->dims.empty() && !c->dims.empty())
    dims = {a->dims.front(), c->dims.back()};
  return T.fragment(accum, dims);
}

// tile.dot(a, b): a product of rank-2 tiles whose inner extents agree.
const Type* Checker::tileDotResult(const BoundBuiltinCall& bc) {
  CallExpr* call = bc.call;
  auto argType = [&](const char* name) { return bc.argType(name); };
  const std::vector<const Type*>& boundType = bc.types;
  const Type *a = boundType[0], *c = boundType[1];
  DType accum = DType::FP32;
  if (const Type* at2 = argType("accum"); at2 && at2->kind == TypeKind::DTypeValue) accum = at2->dtype;
  auto rows = [](const Type* t) -> Extent {
    return t->isTileLike() && t->rankKnown && !t->dims.empty() ? t->dims.front() : "?";
  };
  auto cols = [](const Type* t) -> Extent {
    return t->isTileLike() && t->rankKnown && !t->dims.empty() ? t->dims.back() : "?";
  };
  // Code generation multiplies matrices: a known rank other than 2 is refused here.
  for (size_t i = 0; i < 2; ++i) {
    const Type* t = i == 0 ? a : c;
    if (t && (t->kind == TypeKind::Tile || t->kind == TypeKind::Tensor) && t->rankKnown && t->dims.size() != 2) {
      diags.report(diag::err_dot_operand_rank, bc.binding.args[i]->range)
          << (i == 0 ? "first" : "second") << static_cast<unsigned>(t->dims.size());
      return T.error();
    }
  }
  if (!checkInnerExtents("tile.dot", bc.binding.args[0], a, bc.binding.args[1], c, call->range)) return T.error();
  bool known = a->isTileLike() && c->isTileLike() && a->rankKnown && c->rankKnown;
  if (!known) return T.tile(accum, true, {}, false);
  return T.tile(accum, true, {rows(a), cols(c)}, true);
}

// Builtins whose arguments code generation needs in a form sema can check (constants, index
// counts, axes); the results of the others come from the signature. Null: the generic result.
const Type* Checker::constraintResult(const BoundBuiltinCall& bc) {
  const BuiltinInfo& b = bc.b;
  CallExpr* call = bc.call;
  auto arg = [&](const char* name) { return bc.arg(name); };
  const Type* first = !bc.types.empty() && bc.types[0] ? bc.types[0] : T.dynamic();
  switch (b.id) {
    case BuiltinId::CooperativeGroup: {
      if (Expr* s = arg("size"))
        if (auto c = evalConst(s, nullptr);
            c && c->kind == ConstValue::Int && (c->i < 1 || c->i > 1024 || (c->i & (c->i - 1)) != 0)) {
          diags.report(diag::err_cooperative_group_size, s->range) << c->i;
          return T.error();
        }
      requireConstInt(arg("size"), call->range, "the size of a cooperative group", LLONG_MIN, LLONG_MAX);
      return T.opaque("Group");
    }
    case BuiltinId::TileSum:
    case BuiltinId::TileMax:
      // In the compute type, as code generation reduces: 16-bit floats in f32.
      if (Expr* axis = arg("axis"); axis && first->kind == TypeKind::Tile) {
        bool narrowFloat = isFloat(first->dtype) && dtypeInfo(first->dtype).bits < 32;
        return reducedAlongAxis(first, axis, narrowFloat ? DType::FP32 : first->dtype, first->dtypeKnown);
      }
      return nullptr;
    case BuiltinId::TileLoad:
    case BuiltinId::TileStore: {
      // One index per dimension: code generation addresses one element.
      Expr* t = arg(b.id == BuiltinId::TileLoad ? "src" : "dst");
      Expr* index = arg("index");
      const Type* tt = t ? t->type : nullptr;
      if (tt && tt->kind == TypeKind::Tensor && tt->rankKnown && index) {
        auto* tuple = dyn_cast<TupleExpr>(index);
        size_t count = tuple ? tuple->elements.size() : 1;
        bool known = tuple || (index->type && index->type->kind == TypeKind::Scalar);
        if (known && count != tt->dims.size()) {
          diags.report(diag::err_index_count_mismatch, index->range)
              << text(t->range) << static_cast<unsigned>(tt->dims.size()) << static_cast<unsigned>(count);
          return T.error();
        }
      }
      return nullptr;
    }
    case BuiltinId::CpAsyncWait:
      if (Expr* p = arg("pending")) requireConstInt(p, call->range, "the 'pending' count", LLONG_MIN, LLONG_MAX);
      return nullptr;
    default: return nullptr;
  }
}

// The result from the signature's notation (Builtins.def: none, i32, same, elem, arith, ...).
const Type* Checker::genericBuiltinResult(const BoundBuiltinCall& bc, SourceRange at) {
  const BuiltinSignature& sig = bc.b.sig;
  CallExpr* call = bc.call;
  auto arg = [&](const char* name) { return bc.arg(name); };
  const std::vector<const Type*>& boundType = bc.types;
  const std::vector<const Type*>& variadicTypes = bc.variadicTypes;
  const Type* first = !boundType.empty() && boundType[0] ? boundType[0] : T.dynamic();
  // Generic results.
  const std::string& r = sig.result;
  if (r == "none") return T.none();
  if (r == "any" || r == "decorator") return T.dynamic();
  if (r == "i32") return T.scalar(DType::INT32);
  if (r == "i64") return T.scalar(DType::INT64);
  if (r == "u32") return T.scalar(DType::UINT32);
  if (r == "f32") return T.scalar(DType::FP32);
  if (r == "bool") return T.boolType();
  if (r == "str") return T.str();
  if (r == "dict") return T.dict();
  if (r == "range") return T.range(T.scalar(DType::INT32));
  if (r == "same") {
    if (first->kind == TypeKind::Shared) return T.withElement(first, first->dtype, first->policy);
    if (first->kind == TypeKind::Tensor && inKernel())
      return T.tile(first->dtype, first->dtypeKnown, first->dims, first->rankKnown, first->policy);
    return first;
  }
  if (r == "elem") {
    if (first->kind == TypeKind::Tile && arg("axis"))
      return reducedAlongAxis(first, arg("axis"), first->dtype, first->dtypeKnown);
    return T.elementOf(first);
  }
  if (r == "float") {
    if (first->kind == TypeKind::Scalar) return isFloat(first->dtype) && !first->weak ? first : T.scalar(DType::FP32);
    if (first->isTileLike())
      return T.tile(isFloat(first->dtype) ? first->dtype : DType::FP32, first->dtypeKnown, first->dims,
                    first->rankKnown && (first->kind != TypeKind::Shared || !first->dims.empty()));
    return first->isError() ? T.error() : T.dynamic();
  }
  if (r == "arith") {
    const Type* acc = nullptr;
    std::vector<const Type*> all;
    for (const Type* t : boundType)
      if (t) all.push_back(t);
    for (const Type* t : variadicTypes) all.push_back(t);
    for (const Type* t : all) acc = acc ? binaryResult(BinaryOp::Add, acc, t, at, call->range) : t;
    return acc ? acc : T.dynamic();
  }
  if (r == "tile") return T.tile(DType::FP32, false, {}, false);
  if (!r.empty() && r[0] >= 'A' && r[0] <= 'Z') return T.opaque(r);
  return T.dynamic();
}

}  // namespace tessera
