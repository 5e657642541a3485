// Lowering from the typed AST to Tile IR: the module. Kernels are lowered in source order; the
// device functions they call are lowered from their calls, once per argument types.
#include "irgen/IRGen.h"

#include <functional>
#include <pthread.h>

#include "irgen/FunctionContext.h"

namespace tessera {

namespace irgen {

namespace {

// Runs `fn` on a new thread with a stack of `bytes` and waits for it (the caller's thread does
// nothing meanwhile, so no state is shared concurrently). Falls back to the caller's stack.
void runOnFreshStack(size_t bytes, const std::function<void()>& fn) {
  pthread_attr_t attr;
  pthread_t thread;
  auto trampoline = [](void* p) -> void* {
    (*static_cast<const std::function<void()>*>(p))();
    return nullptr;
  };
  if (pthread_attr_init(&attr) == 0 && pthread_attr_setstacksize(&attr, bytes) == 0 &&
      pthread_create(&thread, &attr, trampoline, const_cast<std::function<void()>*>(&fn)) == 0) {
    pthread_attr_destroy(&attr);
    pthread_join(thread, nullptr);
    return;
  }
  fn();
}

// A helper's body lowers its callees on the native stack, recursively; every this many nested
// helpers the next continues on a fresh stack, so a chain of thousands of helpers calling each
// other does not overflow it.
constexpr unsigned kHelpersPerStack = 64;
constexpr size_t kHelperStackBytes = size_t(64) << 20;

}  // namespace

std::string ModuleContext::uniqueName(const std::string& base) {
  std::string n = base;
  for (unsigned k = 1; names.count(n); ++k) n = base + "_" + std::to_string(k);
  names.insert(n);
  return n;
}

void ModuleContext::eraseFunction(const std::string& name, bool kernelOnly) {
  for (auto& op : module->body().ops)
    if (op->id == I::OpId::TileFunc && op->funcName() == name && (!kernelOnly || op->hasAttr(I::AttrId::Kernel))) {
      I::Operation* f = op.get();
      f->dropAllReferences();
      module->body().erase(f);
      return;
    }
}

bool ModuleContext::device(const FunctionDefStmt* def, const std::vector<I::Type>& args, SourceRange callAt,
                           DeviceFn& out) {
  DeviceKey key{def, args};
  auto it = devices.find(key);
  if (it != devices.end()) {
    out = it->second;
    return true;
  }
  if (inProgress.count(def)) {
    // Sema reports every call cycle reachable from a kernel (err_recursive_call); this guard
    // only keeps the lowering finite should one slip through.
    diags.report(diag::err_lower_unsupported, callAt)
        << "recursion (a call of '" + def->name + "' inside itself)" << "";
    return false;
  }
  inProgress.insert(def);
  FunctionContext fl(*this, def, info(def), false);
  std::vector<I::Type> results;
  bool ok = true;
  std::string name = uniqueName(def->name);
  std::function<void()> lower = [&] {
    try {
      fl.lowerDevice(name, args, results);
    } catch (LowerAbort&) {
      ok = false;
    }
  };
  if (++deviceDepth % kHelpersPerStack == 0)
    runOnFreshStack(kHelperStackBytes, lower);
  else
    lower();
  --deviceDepth;
  inProgress.erase(def);
  if (!ok) {
    eraseFunction(name, false);  // the partial function
    return false;
  }
  out = DeviceFn{name, results};
  devices[key] = out;
  return true;
}

}  // namespace irgen

namespace {

// Lowers the kernels of `ast` (those named `only`, when given, as `name`) into ml's module.
bool lowerKernels(irgen::ModuleContext& ml, const Module& ast, const std::string& only, const std::string& name) {
  using namespace irgen;
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
    if (!info || !info->isKernel() || (!only.empty() && f->name != only)) continue;
    std::string irName = only.empty() ? f->name : name;
    FunctionContext fl(ml, f, info, true);
    fl.funcName_ = irName;
    try {
      if (fl.needsShapeInference()) {
        // A dry run collects which extents of unannotated parameters are equal; it is dropped.
        FunctionContext dry(ml, f, info, true);
        dry.dryRun_ = true;
        dry.funcName_ = irName;
        ir::Operation* fn = dry.lowerKernel();
        fl.rename_ = dry.extentClasses();
        fn->dropAllReferences();
        ml.module->body().erase(fn);
        ml.insertBefore = nullptr;
      }
      fl.lowerKernel();
    } catch (LowerAbort&) {
      ok = false;
      ml.eraseFunction(irName, true);
    }
    ml.insertBefore = nullptr;
  }
  return ok;
}

}  // namespace

std::unique_ptr<ir::Module> lowerToTileIR(const Module& ast, const SemaContext& sema, DiagnosticEngine& diags) {
  irgen::ModuleContext ml(sema, diags);
  if (!lowerKernels(ml, ast, "", "")) return nullptr;
  return std::move(ml.owned);
}

bool lowerKernelInto(const Module& ast, const SemaContext& sema, const std::string& kernel, const std::string& name,
                     ir::Module& into, DiagnosticEngine& diags) {
  irgen::ModuleContext ml(sema, diags, &into);
  for (ir::Operation* f : into.funcs()) ml.names.insert(f->funcName());
  ml.names.insert(name);
  return lowerKernels(ml, ast, kernel, name) && into.lookupFunc(name);
}

}  // namespace tessera