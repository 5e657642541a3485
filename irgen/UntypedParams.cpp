// Kernel parameters whose rank or extents are not written: sema infers the rank their uses need
// (sema/analyses/ParamInference.cpp); here unannotated parameters get extents named after the parameter
// and unified with the extents they meet while lowering (docs/language.md, "Unannotated
// parameters").
#include <algorithm>

#include "irgen/FunctionContext.h"
#include "sema/SemaDiagnostics.h"

namespace tessera::irgen {

// What sema inferred for a parameter whose rank is not written; sema reports a parameter whose
// uses say nothing (err_untyped_param, err_unknown_rank), so a missing entry is a backstop.
InferredParam FunctionContext::inferredParam(const Param& p) {
  auto it = info_ ? info_->inferredParams.find(p.name) : std::map<std::string, InferredParam>::iterator();
  if (!info_ || it == info_->inferredParams.end() || it->second.rank < 1)
    error(diag::err_untyped_param, p.nameRange, p.name, def_->name);
  return it->second;
}

I::Type FunctionContext::untypedParamType(const Param& p) {
  InferredParam ip = inferredParam(p);
  int rank = ip.rank;
  bool written = ip.written;
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

bool FunctionContext::needsShapeInference() {
  if (!kernel_) return false;
  for (const Param& p : def_->params) {
    const Symbol* sym = info_ && info_->scope ? info_->scope->lookupLocal(p.name) : nullptr;
    if (!p.annotation && sym && sym->type && sym->type->isDynamic()) return true;
  }
  return false;
}

// Each generated extent name -> the name of its class of equal extents: an annotated extent of
// the class if there is one, else the first generated name of the class (parameter order).
std::map<std::string, std::string> FunctionContext::extentClasses() {
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

std::string FunctionContext::findSym(const std::string& s) {
  std::string r = s;
  for (auto it = eq_.find(r); it != eq_.end() && it->second != r; it = eq_.find(r)) r = it->second;
  return r;
}

void FunctionContext::unify(const I::Dim& a, const I::Dim& b) {
  if (a.sym.empty() || b.sym.empty()) return;
  std::string x = findSym(a.sym), y = findSym(b.sym);
  if (x != y) eq_[y] = x;
}

}  // namespace tessera::irgen
