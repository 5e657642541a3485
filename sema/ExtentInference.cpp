// Unannotated kernel parameters (docs/language.md, "Unannotated parameters"): an f32 tensor of
// the rank its uses need (ParamInference.cpp), whose extents are shape symbols named after it
// (`X_0`, `X_1`) and shared by the extents that the kernel's shapes make equal. Sema types the
// parameters that way before the shape rules, the race and row-split checks run, so that
// `--check` and the editor report what the lowering would refuse, and the lowering reads the
// types instead of inferring them itself.
//
// The body is checked three times, all but the last by a trial checker reporting into a scratch
// engine:
//   1. with the parameters dynamic (as written): after an error there (or a parameter whose rank
//      nothing tells) the body is checked again as written, reporting; otherwise the ranks of
//      the parameters are inferred from the typed body;
//   2. with the parameters typed by generated names (`X_0`): where two shape symbols meet (an
//      elementwise operation, the inner extents of a matrix product, a value stored into a view)
//      they are unified instead of reported, as the lowering unifies them;
//   3. with each class named (an annotated extent of the class if it has one, else its first
//      generated name in parameter order), reporting everything.
#include "sema/Checker.h"

namespace tessera {

std::string ExtentUnifier::find(const std::string& s) {
  std::string r = s;
  for (auto it = parent.find(r); it != parent.end() && it->second != r; it = parent.find(r)) r = it->second;
  // Path compression: every spelling on the way points at the root.
  std::string x = s;
  for (auto it = parent.find(x); it != parent.end() && it->second != r;) {
    std::string next = it->second;
    it->second = r;
    x = next;
    it = parent.find(x);
  }
  return r;
}

void ExtentUnifier::unite(const Extent& a, const Extent& b) {
  for (const Extent& e : {a, b})
    if (!parent.count(e.str())) {
      parent[e.str()] = e.str();
      extentOf.emplace(e.str(), e);
      order.push_back(e.str());
    }
  std::string x = find(a.str()), y = find(b.str());
  if (x != y) parent[y] = x;
}

bool Checker::hasUnannotatedParams(const FunctionDefStmt* fn, const FunctionInfo& info) {
  if (!info.isKernel() || !info.scope) return false;
  for (const Param& p : fn->params) {
    if (p.paramKind != Param::Normal || p.name.empty() || p.annotation) continue;
    const Symbol* sym = info.scope->lookupLocal(p.name);
    if (sym && sym->kind == SymbolKind::Parameter && sym->type && sym->type->isDynamic()) return true;
  }
  return false;
}

void Checker::retypeParams(FunctionDefStmt* fn, FunctionInfo& info, const std::map<std::string, Symbol*>& signature,
                           const std::map<std::string, std::vector<Extent>>& dims) {
  Scope* s = sc.symbols.makeScope(Scope::Function, info.scope->parent);
  s->function = &info;
  for (auto& [name, sym] : signature) s->declare(sym);
  info.scope = s;
  for (const Param& p : fn->params) {
    auto d = dims.find(p.name);
    Symbol* sym = p.name.empty() ? nullptr : s->lookupLocal(p.name);
    if (d == dims.end() || !sym) continue;
    bool written = info.inferredParams[p.name].written;
    sym->type = T.tensor(DType::FP32, true, {}, d->second, true, written);
    for (size_t i = 0; i < d->second.size(); ++i) {
      const Extent& e = d->second[i];
      if (e.kind() != Extent::Kind::Symbol) continue;
      info.shapeBindings.push_back({e.str(), p.name, static_cast<unsigned>(i)});
      if (!s->lookupLocal(e.str())) {
        Symbol* shape = sc.symbols.make(SymbolKind::ShapeSymbol, e.str(), p.nameRange, T.scalar(DType::INT64));
        s->declare(shape);
      }
    }
  }
}

bool Checker::checkKernelWithInferredParams(FunctionDefStmt* fn, FunctionInfo& info) {
  const std::map<std::string, Symbol*> signature = info.scope->symbols();
  // What a walk of the body adds to the function's facts, restored before the next walk.
  const std::vector<ShapeBinding> bindings = info.shapeBindings;
  const std::vector<SharedAllocation> shared = info.sharedAllocations;
  const bool groupFeature = info.reportedGroupFeature;
  auto restore = [&] {
    info.shapeBindings = bindings;
    info.sharedAllocations = shared;
    info.reportedGroupFeature = groupFeature;
  };
  std::map<std::string, const Type*> declared;  // the unannotated parameters' types (dynamic)
  for (const Param& p : fn->params)
    if (!p.name.empty() && !p.annotation && signature.count(p.name)) declared[p.name] = signature.at(p.name)->type;
  auto asDeclared = [&] {
    restore();
    for (auto& [name, t] : declared) signature.at(name)->type = t;
    retypeParams(fn, info, signature, {});
  };
  // The trial walks report into a scratch engine: only the last walk's diagnostics are the kernel's.
  DiagnosticEngine scratch(sc.sm);
  scratch.setErrorLimit(0);
  Checker trial(sc, scratch, mod);
  trial.moduleGlobals = moduleGlobals;
  trial.functionDepth = functionDepth;
  trial.scope = scope;
  trial.checkBodyOnce(fn, info);
  if (scratch.errorCount() == 0) inferKernelParams(fn, info, sc.sm, scratch);
  if (scratch.errorCount() != 0) {
    // The kernel's own errors (or a parameter whose rank nothing tells): reported as written.
    info.inferredParams.clear();
    asDeclared();
    unsigned before = diags.errorCount();
    checkBodyOnce(fn, info);
    if (diags.errorCount() == before) inferKernelParams(fn, info, sc.sm, diags);
    return false;
  }

  // Generated names, in parameter order, clear of every name the function can see.
  std::map<std::string, std::vector<Extent>> generated;
  std::vector<std::string> genOrder;
  std::set<std::string> taken;
  for (const Param& p : fn->params) {
    if (!declared.count(p.name) || !declared.at(p.name) || !declared.at(p.name)->isDynamic()) continue;
    auto ip = info.inferredParams.find(p.name);
    if (ip == info.inferredParams.end() || ip->second.rank < 1) continue;
    std::vector<Extent>& dims = generated[p.name];
    for (int d = 0; d < ip->second.rank; ++d) {
      std::string g = p.name + "_" + std::to_string(d);
      while (taken.count(g) || info.scope->lookup(g)) g += "_";
      taken.insert(g);
      genOrder.push_back(g);
      dims.push_back(Extent::symbol(g));
    }
  }

  ExtentUnifier uf;
  restore();
  retypeParams(fn, info, signature, generated);
  trial.unifying = &uf;
  trial.checkBodyOnce(fn, info);

  // Each class's name: an extent the kernel wrote (an annotated symbol or expression) if the
  // class has one, else its first generated name in parameter order.
  std::map<std::string, Extent> nameOf;  // class root -> name
  for (const std::string& s : uf.order)
    if (!taken.count(s) && !nameOf.count(uf.find(s))) nameOf.emplace(uf.find(s), uf.extentOf.at(s));
  for (const std::string& g : genOrder)
    if (!nameOf.count(uf.find(g))) nameOf.emplace(uf.find(g), Extent::symbol(g));
  std::map<std::string, std::vector<Extent>> named;
  for (auto& [name, dims] : generated)
    for (const Extent& e : dims) named[name].push_back(nameOf.at(uf.find(e.str())));

  restore();
  for (auto& [name, t] : declared) signature.at(name)->type = t;
  retypeParams(fn, info, signature, named);
  checkBodyOnce(fn, info);
  return true;
}

}  // namespace tessera
