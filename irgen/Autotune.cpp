// Autotune candidates: a kernel with `@kernel.autotune(space=dict(P=[...], ...))` is compiled once
// per configuration of its space (the product of the lists, the last parameter varying fastest;
// configuration 0, the first of every list, is the kernel itself as lowerToTileIR wrote it). Each
// other configuration is a fresh parse and analysis of the module with sema's autotune choice
// set, so types, shapes, group shape and body all see the candidate's values, lowered into the
// same Tile IR module as `<kernel>__at<i>`. Then:
//   - determinism: a candidate other than the first is kept only where the compiler can tell
//     that it gives the same bits (orderNeutral below); otherwise only the first is compiled,
//     with a warning naming the floating-point reduction, unless the kernel opts out
//     (`deterministic=False`);
//   - pruning: a candidate whose Tile IR is identical to an earlier one's is dropped.
// The functions carry `autotune_of`, `autotune_index` and `autotune_config`; codegen turns them
// into the kernel's candidate table (docs/abi.md, "Autotuning").
#include <algorithm>

#include "frontend/Lexer.h"
#include "frontend/Parser.h"
#include "ir/AsmFormat.h"
#include "irgen/FunctionContext.h"
#include "irgen/IRGen.h"

namespace tessera {

namespace {

namespace I = tessera::ir;

// Sema refuses larger spaces (err_autotune_space_too_large); the check below is a backstop.
constexpr size_t kMaxConfigurations = kMaxAutotuneConfigurations;

using Config = AutotuneConfig;

I::Attribute configAttr(const Config& c) {
  std::vector<std::string> keys;
  std::vector<I::Attribute> vals;
  for (auto& [name, v] : c) {
    keys.push_back(name);
    vals.push_back(I::Attribute::integer(v));
  }
  return I::Attribute::dict(keys, vals);
}

bool floatValued(I::Type t) {
  if (!t) return false;
  if (I::isScalar(t)) return I::scalarClass(I::baseScalar(t)) == I::ScalarClass::Float;
  return t->elem && I::isScalar(t->elem) && I::scalarClass(I::baseScalar(t->elem)) == I::ScalarClass::Float;
}

// The tensor parameter or shared buffer a view is a slice of.
const I::Value* rootOf(const I::Value* v) {
  while (v && v->defOp && v->defOp->id == I::OpId::MemSlice) v = v->defOp->operand(0);
  return v;
}

bool isSharedLoad(const I::Value* v) {
  if (!v || !v->defOp || v->defOp->id != I::OpId::MemLoad) return false;
  const I::Value* root = rootOf(v->defOp->operand(0));
  return root && root->defOp && root->defOp->id == I::OpId::SmemAlloc;
}

// The first op of `func` whose floating-point result may depend on how the work is split: a
// reduction or product of tiles, a float shuffle, a loop carrying a float, a loop that reads and
// writes the same float memory (an accumulation through memory), or float arithmetic on a value
// another tile wrote to shared memory. Null when there is none. Deliberately conservative: the
// runtime also compares the candidates' bits when it tunes (runtime/Autotune.cpp).
const I::Operation* orderSensitiveOp(I::Operation& func) {
  const I::Operation* found = nullptr;
  bool barrier = false;
  func.walk([&](I::Operation* op) { barrier |= op->id == I::OpId::TileBarrier; });
  func.walk([&](I::Operation* op) {
    if (found) return;
    switch (op->id) {
      case I::OpId::TileDot:
      case I::OpId::TileMma:
      case I::OpId::TileSoftmax:
      case I::OpId::TileReduce:
      case I::OpId::MemReduce:
      case I::OpId::TileShuffle:
        if (op->numResults() && floatValued(op->result()->type)) found = op;
        return;
      case I::OpId::ScfFor:
      case I::OpId::TileRange:
      case I::OpId::ScfWhile: {
        for (auto& r : op->results)
          if (floatValued(r->type)) found = op;
        if (found) return;
        std::vector<const I::Value*> loaded, stored;
        op->walk([&](I::Operation* in) {
          if (in == op) return;
          if (in->id == I::OpId::MemLoad && floatValued(in->result()->type)) loaded.push_back(rootOf(in->operand(0)));
          if (in->id == I::OpId::MemStore && in->numOperands() > 1 && floatValued(in->operand(0)->type))
            stored.push_back(rootOf(in->operand(1)));
        });
        for (const I::Value* s : stored)
          if (std::find(loaded.begin(), loaded.end(), s) != loaded.end()) found = op;
        return;
      }
      case I::OpId::ArithAddF:
      case I::OpId::ArithSubF:
      case I::OpId::ArithMulF:
      case I::OpId::ArithDivF:
      case I::OpId::ArithMinF:
      case I::OpId::ArithMaxF:
      case I::OpId::MathFma:
        if (barrier)
          for (I::Value* v : op->operands)
            if (isSharedLoad(v)) found = op;
        return;
      default: return;
    }
  });
  return found;
}

// The kernel's body is exactly `for m, n, k in tile.mma(...): tile.mma_sync(m, n, k)`: its tile
// sizes change which group computes an output tile and how k is chunked, never the order in
// which an output element's products are summed (k ascending on every form), so every candidate
// gives the same bits.
bool isTileMmaLoop(const FunctionDefStmt& def) {
  const Stmt* loop = nullptr;
  for (const Stmt* s : def.body.stmts) {
    if (isa<PassStmt>(s)) continue;
    if (auto* e = dyn_cast<ExprStmt>(s); e && isa<StringLiteralExpr>(e->expr)) continue;  // docstring
    if (loop) return false;
    loop = s;
  }
  auto* f = loop ? dyn_cast<ForStmt>(loop) : nullptr;
  auto* call = f ? dyn_cast<CallExpr>(f->iter) : nullptr;
  const BuiltinInfo* b = call ? irgen::builtinOf(call->callee) : nullptr;
  if (!b || b->id != BuiltinId::TileMma || f->body.stmts.size() != 1) return false;
  auto* e = dyn_cast<ExprStmt>(f->body.stmts[0]);
  auto* sync = e ? dyn_cast<CallExpr>(e->expr) : nullptr;
  const BuiltinInfo* sb = sync ? irgen::builtinOf(sync->callee) : nullptr;
  return sb && sb->id == BuiltinId::TileMmaSync;
}

// Collects the first error of an analysis (a candidate's), printing nothing.
class FirstError : public DiagnosticConsumer {
 public:
  void handle(const Diagnostic& d) override {
    if (d.severity == Severity::Error && message.empty()) message = d.message;
  }
  std::string message;
};

// The function's text with its name and autotune attributes left out.
std::string bodyKey(I::Operation& f) {
  std::vector<I::NamedAttr> saved = f.attrs;
  f.setAttr(I::AttrId::SymName, I::Attribute::symbol("candidate"));
  for (I::AttrId a : {I::AttrId::Autotune, I::AttrId::AutotuneOf, I::AttrId::AutotuneIndex, I::AttrId::AutotuneConfig})
    f.removeAttr(a);
  std::string key = I::printOp(f);
  f.attrs = std::move(saved);
  return key;
}

void eraseFunc(I::Module& m, I::Operation* f) {
  f->dropAllReferences();
  m.body().erase(f);
}

class CandidateLowering {
 public:
  CandidateLowering(const Module& ast, const SemaContext& sema, I::Module& m, DiagnosticEngine& diags)
      : ast_(ast), sema_(sema), m_(m), diags_(diags) {}

  // Adds the candidates of kernel `def`; false after an error.
  bool run(const FunctionDefStmt& def, const FunctionInfo& info) {
    I::Operation* base = m_.lookupFunc(def.name);
    if (!base) return true;  // not lowered (reported already)
    std::vector<Config> configs = autotuneConfigurations(info.autotuneSpace);
    if (configs.size() > kMaxConfigurations) {
      diags_.report(diag::err_autotune_space_too_large, info.kernelDecoratorRange)
          << def.name << static_cast<unsigned long long>(kMaxConfigurations);
      return false;
    }
    base->setAttr(I::AttrId::AutotuneIndex, I::Attribute::integer(0));
    base->setAttr(I::AttrId::AutotuneConfig, configAttr(configs[0]));
    std::vector<I::Operation*> kept = {base};
    std::vector<Config> keptConfigs = {configs[0]};
    for (size_t c = 1; c < configs.size(); ++c) {
      I::Operation* f = lower(def, info, configs[c], def.name + "__at" + std::to_string(c));
      if (!f) return false;
      kept.push_back(f);
      keptConfigs.push_back(configs[c]);
    }
    if (kept.size() > 1 && info.deterministic && !isTileMmaLoop(def)) {
      for (I::Operation* f : kept)
        if (const I::Operation* op = orderSensitiveOp(*f)) {
          diags_.report(diag::warn_lower_autotune_order, op->loc)
              << def.name << autotuneConfigText(configs[0]) << op->name();
          for (size_t i = 1; i < kept.size(); ++i) eraseFunc(m_, kept[i]);
          kept.resize(1);
          break;
        }
    }
    // Candidates with the same Tile IR as an earlier one are not compiled twice.
    std::vector<std::string> keys;
    std::vector<I::Operation*> distinct;
    std::vector<Config> distinctConfigs;
    for (size_t i = 0; i < kept.size(); ++i) {
      std::string key = bodyKey(*kept[i]);
      if (std::find(keys.begin(), keys.end(), key) != keys.end()) {
        eraseFunc(m_, kept[i]);
        continue;
      }
      keys.push_back(std::move(key));
      distinct.push_back(kept[i]);
      distinctConfigs.push_back(keptConfigs[i]);
    }
    for (size_t i = 1; i < distinct.size(); ++i) {
      distinct[i]->setAttr(I::AttrId::AutotuneOf, I::Attribute::symbol(def.name));
      distinct[i]->setAttr(I::AttrId::AutotuneIndex, I::Attribute::integer(static_cast<int64_t>(i)));
      distinct[i]->setAttr(I::AttrId::AutotuneConfig, configAttr(distinctConfigs[i]));
    }
    return true;
  }

 private:
  // A fresh parse and analysis with `config` chosen, then the kernel lowered as `name`.
  I::Operation* lower(const FunctionDefStmt& def, const FunctionInfo& info, const Config& config,
                      const std::string& name) {
    FirstError first;
    DiagnosticEngine quiet(sema_.sm);
    quiet.addConsumer(&first);
    ASTContext actx;
    SemaContext sc(sema_.sm, actx);  // sema checked every candidate with the module
    Module* mod = analyzeCandidate(sema_, ast_.file, def.name, config, actx, sc, quiet);
    if (mod && !quiet.hasErrors() && lowerKernelInto(*mod, sc, def.name, name, m_, quiet) && !quiet.hasErrors())
      return m_.lookupFunc(name);
    if (I::Operation* partial = m_.lookupFunc(name)) eraseFunc(m_, partial);
    diags_.report(diag::err_lower_autotune_candidate, info.kernelDecoratorRange)
        << autotuneConfigText(config) << def.name << (first.message.empty() ? "it cannot be lowered" : first.message);
    return nullptr;
  }

  const Module& ast_;
  const SemaContext& sema_;
  I::Module& m_;
  DiagnosticEngine& diags_;
};

}  // namespace

bool lowerAutotuneCandidates(const Module& ast, const SemaContext& sema, ir::Module& m, DiagnosticEngine& diags) {
  CandidateLowering lowering(ast, sema, m, diags);
  bool ok = true;
  for (Stmt* s : ast.stmts) {
    auto* f = dyn_cast<FunctionDefStmt>(s);
    if (!f) continue;
    auto it = sema.functions.find(f);
    if (it == sema.functions.end() || !it->second->isKernel() || it->second->autotuneSpace.empty()) continue;
    ok &= lowering.run(*f, *it->second);
  }
  return ok;
}

}  // namespace tessera
