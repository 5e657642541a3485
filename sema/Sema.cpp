// Entry point of semantic analysis and the --emit=sema annotations.
#include "sema/Sema.h"

#include "sema/Checker.h"

namespace tessera {

Scope* SemaContext::prelude() {
  if (!prelude_) prelude_ = symbols.makeScope(Scope::Prelude, nullptr);
  return prelude_;
}

long long SemaContext::autotuneValue(const std::string& kernel, const std::string& param,
                                     const std::vector<long long>& candidates) const {
  if (auto k = autotuneChoice.find(kernel); k != autotuneChoice.end())
    if (auto p = k->second.find(param); p != k->second.end()) return p->second;
  return candidates.empty() ? 0 : candidates.front();
}

bool analyzeModule(Module& module, SemaContext& sc, DiagnosticEngine& diags) {
  unsigned before = diags.errorCount();
  auto info = std::make_unique<ModuleInfo>();
  ModuleInfo* m = info.get();
  m->module = &module;
  m->name = std::string(sc.sm.bufferName(module.file));
  m->path = m->name;
  m->scope = sc.symbols.makeScope(Scope::Module, sc.prelude());
  m->analyzing = true;
  sc.modules[""] = std::move(info);
  Checker checker(sc, diags, *m);
  checker.checkModule();
  if (!diags.stopped()) checkKernelRecursion(sc, diags);
  if (!diags.stopped()) checkDeviceCode(sc, diags);
  if (!diags.stopped()) checkAtomicAccess(sc, diags);
  m->analyzing = false;
  // The other autotune candidates, once the module passes with the first.
  if (sc.checkAutotuneCandidates && diags.errorCount() == before) checkAutotuneCandidates(module, sc, diags);
  return diags.errorCount() == before;
}

std::string SemaContext::annotate(const Node& n) const {
  if (auto* e = dyn_cast<Expr>(&n)) {
    if (!e->type) return "";
    std::string s = " : " + e->type->str();
    if (!isa<IntLiteralExpr>(e) && !isa<FloatLiteralExpr>(e) && !isa<StringLiteralExpr>(e) &&
        !isa<BoolLiteralExpr>(e) &&
        (isa<NameExpr>(e) || isa<BinaryExpr>(e) || isa<UnaryExpr>(e) || isa<AttributeExpr>(e)))
      if (auto c = evalConst(e, nullptr)) s += " = " + c->str();
    if (auto* ne = dyn_cast<NameExpr>(e); ne && ne->symbol)
      s += std::string(" (") + symbolKindName(ne->symbol->kind) + ")";
    return s;
  }
  if (auto* f = dyn_cast<FunctionDefStmt>(&n)) {
    auto it = functions.find(f);
    if (it == functions.end()) return "";
    const FunctionInfo& info = *it->second;
    std::string s = " : " + (info.type ? info.type->str() : std::string("?"));
    if (info.isKernel()) {
      if (!info.groupShape.empty()) {
        s += " group=(";
        for (size_t i = 0; i < info.groupShape.size(); ++i) s += (i ? "," : "") + std::to_string(info.groupShape[i]);
        s += info.groupShape.size() == 1 ? ",)" : ")";
      }
      if (info.sharedBudget >= 0) s += " shared=" + std::to_string(info.sharedBudget);
      long long used = 0;
      for (const SharedAllocation& a : info.sharedAllocations)
        if (a.bytes > 0) used += a.bytes;
      if (!info.sharedAllocations.empty()) s += " shared_used=" + std::to_string(used);
      if (!info.deterministic) s += " nondeterministic";
      for (auto& [name, c] : info.autotuneSpace) {
        s += " " + name + "=[";
        for (size_t i = 0; i < c.size(); ++i) s += (i ? "," : "") + std::to_string(c[i]);
        s += "]";
      }
    }
    return s;
  }
  return "";
}

}  // namespace tessera
