#include "codegen/host/HostModule.h"

#include <algorithm>
#include <map>
#include <mutex>

#include "codegen/host/HostEntries.h"
#include "codegen/target/GpuTarget.h"
#include "llvm/IR/IRBuilder.h"
#include "llvm/IR/LegacyPassManager.h"
#include "llvm/IR/Module.h"
#include "llvm/IR/Verifier.h"
#include "llvm/MC/TargetRegistry.h"
#include "llvm/Support/raw_ostream.h"
#include "llvm/Target/TargetMachine.h"
#include "llvm/Target/TargetOptions.h"
#include "llvm/Transforms/Utils/ModuleUtils.h"
#include "runtime/include/tessera/runtime.h"

extern "C" void LLVMInitializeX86TargetInfo();
extern "C" void LLVMInitializeX86Target();
extern "C" void LLVMInitializeX86TargetMC();
extern "C" void LLVMInitializeX86AsmPrinter();

namespace tessera::codegen {

std::string cIdentifier(const std::string& name) {
  std::string out;
  for (char c : name) out += (isalnum(static_cast<unsigned char>(c)) || c == '_') ? c : '_';
  if (out.empty() || isdigit(static_cast<unsigned char>(out[0]))) out = "_" + out;
  return out;
}

std::string launchStubName(const HostModuleInput& in, const KernelInterface& k) {
  return cIdentifier(in.moduleName) + "_" + k.name;
}

namespace {

const char* kHostTriple = "x86_64-pc-linux-gnu";

// LLVM mirrors of the runtime's registration structs. Field order and widths follow
// runtime.h exactly; natural alignment gives the same layout (checked by a unit test).
struct AbiTypes {
  llvm::PointerType* ptr;
  llvm::StructType *exprOp, *extent, *paramDesc, *workspaceSlot, *gridBlock, *resources, *tensorMap, *variant,
      *kernelDesc, *autotune, *moduleDesc, *arg, *chain, *chainScratch;
  explicit AbiTypes(llvm::LLVMContext& c) {
    auto* i32 = llvm::Type::getInt32Ty(c);
    auto* i64 = llvm::Type::getInt64Ty(c);
    ptr = llvm::PointerType::get(c, 0);
    exprOp = llvm::StructType::create(c, {i32, i32, i64}, "tessera_expr_op");
    extent = llvm::StructType::create(c, {i32, i32, i64, ptr, i32, i32}, "tessera_extent");
    paramDesc = llvm::StructType::create(c, {ptr, i32, i32, i32, i32, ptr}, "tessera_param_desc");
    workspaceSlot = llvm::StructType::create(c, {i32, i32, ptr}, "tessera_workspace_slot");
    gridBlock = llvm::StructType::create(c, {i32, i32, i64}, "tessera_grid_block");
    resources = llvm::StructType::create(
        c, {i32, i32, i32, i32, i32, i32, i64, i64, i32, i32, i32, i32, i32, i32, i32, i32, i32, i32},
        "tessera_kernel_resources");
    tensorMap = llvm::StructType::create(c, {i32, llvm::ArrayType::get(i32, 2), i32}, "tessera_tensor_map_desc");
    variant = llvm::StructType::create(c, {ptr, i32, i32, i64, ptr, i32, i32}, "tessera_gpu_variant");
    chainScratch = llvm::StructType::create(c, {i32, i32, i32, i32, i32, i32}, "tessera_chain_scratch");
    chain = llvm::StructType::create(c, {i32, i32, i32, i32, i32, i32, i32, i32, ptr}, "tessera_variant_chain");
    kernelDesc = llvm::StructType::create(c, {i32, i32, ptr, ptr, i32, i32, ptr, i32, llvm::ArrayType::get(i32, 3),
                                              i64, ptr, ptr, i64, ptr, i32, ptr, i32, i32,
                                              ptr, i32, i32, ptr, ptr, i32, i32, ptr, ptr,
                                              ptr},
                                          "tessera_kernel_desc");
    autotune = llvm::StructType::create(c, {i32, i32, ptr, ptr, ptr, i64, i32, i32}, "tessera_autotune_desc");
    moduleDesc = llvm::StructType::create(c, {i32, i32, ptr, ptr, i64, ptr, i32, i32}, "tessera_module_desc");
    arg = llvm::StructType::create(c, {i32, i32, i64}, "tessera_arg");
  }
};

class Builder {
 public:
  Builder(llvm::Module& m) : m_(m), c_(m.getContext()), t_(c_) {}

  bool build(const HostModuleInput& in, std::string& error) {
    // Autotune candidates go into their kernel's table, not the module's list.
    std::vector<const KernelInterface*> listed;
    for (const KernelInterface& k : in.kernels)
      if (k.autotuneOf.empty()) listed.push_back(&k);
    std::vector<llvm::Constant*> kernels;
    for (const KernelInterface* k : listed) {
      llvm::Constant* table = autotuneTable(*k, in.kernels, error);
      if (!table) return false;
      llvm::Constant* kd = kernelDesc(*k, table, error);
      if (!kd) return false;
      kernels.push_back(kd);
    }
    auto* kernelArray = llvm::ConstantArray::get(llvm::ArrayType::get(t_.kernelDesc, kernels.size()), kernels);
    auto* kernelsGV = global(kernelArray, "__tessera_kernels");
    llvm::Constant* fatbin = llvm::ConstantPointerNull::get(t_.ptr);
    if (!in.fatbin.empty()) {
      auto* data = llvm::ConstantDataArray::getRaw(in.fatbin, in.fatbin.size(), llvm::Type::getInt8Ty(c_));
      auto* gv = global(data, "__tessera_fatbin");
      gv->setAlignment(llvm::Align(8));  // cuModuleLoadData wants an aligned image
      gv->setSection(".nv_fatbin");
      fatbin = gv;
    }
    auto* moduleDesc = llvm::ConstantStruct::get(
        t_.moduleDesc, {i32(TESSERA_ABI_VERSION), i32(sizeof(tessera_module_desc)), str(in.moduleName), fatbin,
                        i64(in.fatbin.size()), kernelsGV, i32(kernels.size()), i32(0)});
    auto* moduleGV = global(moduleDesc, "__tessera_module");
    registration(moduleGV);
    for (size_t i = 0; i < listed.size(); ++i)
      if (!launchStub(in, *listed[i], kernelsGV, i, error)) return false;
    std::map<std::string, size_t> index;
    for (size_t i = 0; i < listed.size(); ++i) index[listed[i]->name] = i;
    return emitHostEntries(m_, cIdentifier(in.moduleName), in.entries, kernelsGV, index, error);
  }

 private:
  llvm::Constant* i32(int64_t v) { return llvm::ConstantInt::get(llvm::Type::getInt32Ty(c_), v); }
  llvm::Constant* i64(int64_t v) { return llvm::ConstantInt::get(llvm::Type::getInt64Ty(c_), v); }
  llvm::Constant* null() { return llvm::ConstantPointerNull::get(t_.ptr); }

  llvm::GlobalVariable* global(llvm::Constant* init, const std::string& name) {
    return new llvm::GlobalVariable(m_, init->getType(), /*isConstant=*/true, llvm::GlobalValue::PrivateLinkage, init,
                                    name);
  }
  llvm::Constant* str(const std::string& s) {
    auto* gv = global(llvm::ConstantDataArray::getString(c_, s), ".str");
    gv->setUnnamedAddr(llvm::GlobalValue::UnnamedAddr::Global);
    return gv;
  }
  template <class T>
  llvm::Constant* array(llvm::Type* elem, const std::vector<llvm::Constant*>& items, const std::string& name) {
    if (items.empty()) return null();
    return global(llvm::ConstantArray::get(llvm::ArrayType::get(elem, items.size()), items), name);
  }

  llvm::Constant* exprProgram(const std::vector<ExtentOp>& program, const char* name) {
    std::vector<llvm::Constant*> ops;
    for (const ExtentOp& op : program)
      ops.push_back(llvm::ConstantStruct::get(t_.exprOp, {i32(op.op), i32(op.symbol), i64(op.value)}));
    return array<void>(t_.exprOp, ops, name);
  }

  llvm::Constant* resources(const KernelInterface& k) {
    std::vector<llvm::Constant*> items;
    for (const GpuResources& r : k.resources) {
      uint32_t flags = (r.archSpecific ? TESSERA_RESOURCES_ARCH_SPECIFIC : 0) |
                       (r.sharedIncludesReserved ? TESSERA_RESOURCES_SHARED_RESERVED : 0);
      items.push_back(llvm::ConstantStruct::get(
          t_.resources,
          {i32(r.sm), i32(flags), i32(r.registers), i32(r.stackBytes), i32(r.spillStoreBytes), i32(r.spillLoadBytes),
           i64(r.staticSharedBytes), i64(r.localBytes), i32(r.threadsPerGroup), i32(r.groupsPerSM), i32(r.warpsPerSM),
           i32(r.maxWarpsPerSM), i32(r.mma), i32(r.wgmma), i32(r.tma), i32(r.cpAsync), i32(r.ldmatrix), i32(0)}));
    }
    return array<void>(t_.resources, items, "__tessera_resources");
  }

  llvm::Constant* extent(const Extent& e) {
    llvm::Constant* expr = exprProgram(e.expr, "__tessera_extent_expr");
    return llvm::ConstantStruct::get(t_.extent,
                                     {i32(e.kind), i32(e.symbol), i64(e.value), expr, i32(e.expr.size()), i32(0)});
  }

  // The candidate table of an autotuned kernel (tessera_autotune_desc): candidate 0 is the
  // kernel itself, then its candidates by index; null when it has none.
  llvm::Constant* autotuneTable(const KernelInterface& k, const std::vector<KernelInterface>& all, std::string& error) {
    std::vector<const KernelInterface*> cands = {&k};
    for (const KernelInterface& c : all)
      if (c.autotuneOf == k.name) cands.push_back(&c);
    if (cands.size() < 2) return null();
    std::stable_sort(cands.begin() + 1, cands.end(), [](const KernelInterface* a, const KernelInterface* b) {
      return a->autotuneIndex < b->autotuneIndex;
    });
    if (cands.size() > TESSERA_AUTOTUNE_MAX_CANDIDATES) {
      error = "kernel '" + k.name + "' has more than " + std::to_string(TESSERA_AUTOTUNE_MAX_CANDIDATES) +
              " autotune candidates";
      return nullptr;
    }
    std::vector<llvm::Constant*> names, values, descs;
    for (auto& [name, v] : k.autotuneConfig) names.push_back(str(name));
    uint64_t hash = 1469598103934665603ull;
    for (const KernelInterface* c : cands) {
      if (c->autotuneConfig.size() != k.autotuneConfig.size()) {
        error = "internal error: autotune candidate '" + c->name + "' of kernel '" + k.name +
                "' sets other parameters than the kernel";
        return nullptr;
      }
      for (auto& [name, v] : c->autotuneConfig) values.push_back(i64(v));
      hash = (hash ^ c->codeHash) * 1099511628211ull;
      llvm::Constant* d = kernelDesc(*c, null(), error);
      if (!d) return nullptr;
      descs.push_back(d);
    }
    uint32_t flags = k.deterministic ? TESSERA_AUTOTUNE_SAME_BITS : 0;
    auto* i64Ty = llvm::Type::getInt64Ty(c_);
    llvm::Constant* valuesGV =
        values.empty() ? null()
                       : global(llvm::ConstantArray::get(llvm::ArrayType::get(i64Ty, values.size()), values),
                                "__tessera_autotune_values");
    auto* table = llvm::ConstantStruct::get(
        t_.autotune,
        {i32(k.autotuneConfig.size()), i32(cands.size()), array<void>(t_.ptr, names, "__tessera_autotune_params"),
         valuesGV, array<void>(t_.kernelDesc, descs, "__tessera_autotune_candidates"), i64(hash), i32(flags), i32(0)});
    return global(table, "__tessera_autotune");
  }

  llvm::Constant* kernelDesc(const KernelInterface& k, llvm::Constant* autotune, std::string& error) {
    std::vector<llvm::Constant*> params;
    for (const KernelParam& p : k.params) {
      std::vector<llvm::Constant*> extents;
      for (const Extent& e : p.extents) extents.push_back(extent(e));
      llvm::Constant* ex = array<void>(t_.extent, extents, "__tessera_extents");
      params.push_back(llvm::ConstantStruct::get(
          t_.paramDesc, {str(p.name), i32(p.isTensor ? TESSERA_PARAM_TENSOR : TESSERA_PARAM_SCALAR), i32(p.dtype),
                         i32(p.isTensor ? p.extents.size() : 0),
                         i32((p.isMut ? TESSERA_PARAM_MUT : 0) | (p.writeOnly ? TESSERA_PARAM_WRITE_ONLY : 0)), ex}));
    }
    std::vector<llvm::Constant*> symbols;
    for (const std::string& s : k.symbols) symbols.push_back(str(s));
    std::vector<llvm::Constant*> blocks;
    for (const KernelInterface::GridBlock& g : k.gridBlocks)
      blocks.push_back(llvm::ConstantStruct::get(t_.gridBlock, {i32(g.param), i32(g.axis), i64(g.step)}));
    std::vector<llvm::Constant*> slots;
    for (const WorkspaceSlot& w : k.workspace) {
      std::vector<llvm::Constant*> extents;
      for (const Extent& e : w.extents) extents.push_back(extent(e));
      slots.push_back(llvm::ConstantStruct::get(
          t_.workspaceSlot,
          {i32(w.elemBytes), i32(w.extents.size()), array<void>(t_.extent, extents, "__tessera_workspace_extents")}));
    }
    llvm::Constant* cpu = null();
    if (!k.cpuEntry.empty()) {
      llvm::Function* f = m_.getFunction(k.cpuEntry);
      if (!f) {
        error = "internal error: CPU entry '" + k.cpuEntry + "' of kernel '" + k.name + "' is not in the host module";
        return nullptr;
      }
      cpu = f;
    }
    std::vector<llvm::Constant*> variants;
    for (const GpuVariant& v : k.gpuVariants) {
      std::vector<llvm::Constant*> maps;
      for (const TensorMapRequest& t : v.tensorMaps)
        maps.push_back(llvm::ConstantStruct::get(
            t_.tensorMap, {i32(t.param),
                           llvm::ConstantArray::get(llvm::ArrayType::get(llvm::Type::getInt32Ty(c_), 2),
                                                    {i32(t.box[0]), i32(t.box[1])}),
                           i32(t.swizzle | (t.innerExtent << 16))}));
      variants.push_back(llvm::ConstantStruct::get(
          t_.variant, {str(v.entry), i32(v.minSm), i32(v.threads), i64(v.sharedBytes),
                       array<void>(t_.tensorMap, maps, "__tessera_tensor_maps"), i32(maps.size()), i32(v.cluster)}));
    }
    llvm::Constant* chain = null();
    if (k.chain.steps && !k.chain.scratch.empty()) {
      std::vector<llvm::Constant*> scratch;
      for (const auto& s : k.chain.scratch)
        scratch.push_back(llvm::ConstantStruct::get(t_.chainScratch, {i32(s.dtype), i32(s.rowsParam), i32(s.rowsAxis),
                                                                      i32(s.colsParam), i32(s.colsAxis), i32(s.step)}));
      const auto& s0 = k.chain.scratch[0];
      chain = global(
          llvm::ConstantStruct::get(t_.chain, {i32(k.chain.steps), i32(s0.dtype), i32(s0.rowsParam), i32(s0.rowsAxis),
                                               i32(s0.colsParam), i32(s0.colsAxis), i32(scratch.size()), i32(0),
                                               array<void>(t_.chainScratch, scratch, "__tessera_chain_scratch")}),
          "__tessera_variant_chain");
    }
    uint32_t flags = (k.deterministic ? TESSERA_KERNEL_DETERMINISTIC : 0) | (k.grouped ? TESSERA_KERNEL_GROUPED : 0) |
                     (k.cpuSync ? TESSERA_KERNEL_CPU_SYNC : 0) | (k.cpuPerGroup ? TESSERA_KERNEL_CPU_PER_GROUP : 0) |
                     (k.exactGrid ? TESSERA_KERNEL_EXACT_GRID : 0) |
                     (k.boundsChecked ? TESSERA_KERNEL_BOUNDS_CHECKED : 0);
    uint32_t log2Tiles = 0;  // tiles per GPU thread, as a power of two
    while ((2u << log2Tiles) <= k.gpuTilesPerThread) ++log2Tiles;
    flags |= (log2Tiles << TESSERA_KERNEL_GPU_TILES_SHIFT) & TESSERA_KERNEL_GPU_TILES_MASK;
    auto* shape = llvm::ConstantArray::get(llvm::ArrayType::get(llvm::Type::getInt32Ty(c_), 3),
                                           {i32(k.groupShape[0]), i32(k.groupShape[1]), i32(k.groupShape[2])});
    return llvm::ConstantStruct::get(t_.kernelDesc, {i32(sizeof(tessera_kernel_desc)),
                                                     i32(flags),
                                                     str(k.name),
                                                     array<void>(t_.paramDesc, params, "__tessera_params"),
                                                     i32(k.params.size()),
                                                     i32(k.symbols.size()),
                                                     array<void>(t_.ptr, symbols, "__tessera_symbols"),
                                                     i32(k.gridSymbol),
                                                     shape,
                                                     i64(k.sharedBytes),
                                                     k.gpuEntry.empty() ? null() : str(k.gpuEntry),
                                                     cpu,
                                                     i64(0),
                                                     array<void>(t_.workspaceSlot, slots, "__tessera_workspace"),
                                                     i32(slots.size()),
                                                     array<void>(t_.gridBlock, blocks, "__tessera_grid_blocks"),
                                                     i32(blocks.size()),
                                                     i32(0),
                                                     resources(k),
                                                     i32(k.resources.size()),
                                                     i32(k.flops.size()),
                                                     exprProgram(k.flops, "__tessera_flops"),
                                                     array<void>(t_.variant, variants, "__tessera_gpu_variants"),
                                                     i32(variants.size()),
                                                     i32(0),
                                                     null(),
                                                     autotune,
                                                     chain});
  }

  // A constructor registers the module when the program (or shared library) loads, and a
  // destructor unregisters it, as CUDA's own fatbin registration does.
  void registration(llvm::GlobalVariable* moduleGV) {
    auto* statusTy = llvm::Type::getInt32Ty(c_);
    auto* regTy = llvm::FunctionType::get(statusTy, {t_.ptr}, false);
    auto reg = m_.getOrInsertFunction("tessera_register_module", regTy);
    auto unreg = m_.getOrInsertFunction("tessera_unregister_module", regTy);
    auto* voidTy = llvm::FunctionType::get(llvm::Type::getVoidTy(c_), false);
    auto make = [&](const char* name, llvm::FunctionCallee callee) {
      auto* f = llvm::Function::Create(voidTy, llvm::GlobalValue::InternalLinkage, name, m_);
      llvm::IRBuilder<> b(llvm::BasicBlock::Create(c_, "entry", f));
      b.CreateCall(callee, {moduleGV});
      b.CreateRetVoid();
      return f;
    };
    llvm::appendToGlobalCtors(m_, make("__tessera_register", reg), 65535);
    llvm::appendToGlobalDtors(m_, make("__tessera_unregister", unreg), 65535);
  }

  // tessera_status <module>_<kernel>(const tessera_launch_options*, const tessera_tensor* t...,
  //                                  scalar s...): packs tessera_arg[] and calls tessera_launch.
  bool launchStub(const HostModuleInput& in, const KernelInterface& k, llvm::GlobalVariable* kernels, size_t index,
                  std::string& error) {
    std::vector<llvm::Type*> paramTypes = {t_.ptr};
    for (const KernelParam& p : k.params) paramTypes.push_back(p.isTensor ? t_.ptr : scalarType(p.dtype));
    auto* i32Ty = llvm::Type::getInt32Ty(c_);
    auto* fnTy = llvm::FunctionType::get(i32Ty, paramTypes, false);
    std::string name = launchStubName(in, k);
    if (m_.getFunction(name)) {
      error = "two kernels give the launch function name '" + name + "'";
      return false;
    }
    auto* f = llvm::Function::Create(fnTy, llvm::GlobalValue::ExternalLinkage, name, m_);
    // Code generation as at -O0: the machine scheduler's dependences between the stores of
    // the argument array grew quadratically with the parameters (5,000: 11 s).
    f->addFnAttr(llvm::Attribute::OptimizeNone);
    f->addFnAttr(llvm::Attribute::NoInline);
    llvm::IRBuilder<> b(llvm::BasicBlock::Create(c_, "entry", f));
    size_t n = k.params.size();
    llvm::Value* args = b.CreateAlloca(t_.arg, b.getInt32(n ? n : 1), "args");
    for (size_t i = 0; i < n; ++i) {
      const KernelParam& p = k.params[i];
      llvm::Value* slot = b.CreateGEP(t_.arg, args, b.getInt32(i));
      b.CreateStore(b.getInt32(p.isTensor ? TESSERA_PARAM_TENSOR : TESSERA_PARAM_SCALAR),
                    b.CreateStructGEP(t_.arg, slot, 0));
      b.CreateStore(b.getInt32(p.dtype), b.CreateStructGEP(t_.arg, slot, 1));
      llvm::Value* value = b.CreateStructGEP(t_.arg, slot, 2);
      b.CreateStore(b.getInt64(0), value);  // clear the unused bytes of narrow scalars
      b.CreateStore(f->getArg(i + 1), value);
    }
    auto launch = m_.getOrInsertFunction("tessera_launch",
                                         llvm::FunctionType::get(i32Ty, {t_.ptr, t_.ptr, t_.ptr, i32Ty}, false));
    llvm::Value* desc = b.CreateConstInBoundsGEP2_64(kernels->getValueType(), kernels, 0, index);
    b.CreateRet(b.CreateCall(launch, {desc, f->getArg(0), args, b.getInt32(n)}));
    return true;
  }

  llvm::Type* scalarType(int32_t dtype) {
    switch (dtype) {
      case TESSERA_F64: return llvm::Type::getDoubleTy(c_);
      case TESSERA_F32: return llvm::Type::getFloatTy(c_);
      default: return llvm::Type::getIntNTy(c_, scalarBytes(dtype) * 8);
    }
  }

  llvm::Module& m_;
  llvm::LLVMContext& c_;
  AbiTypes t_;
};

}  // namespace

void initHostTarget() {
  static std::once_flag once;
  std::call_once(once, [] {
    LLVMInitializeX86TargetInfo();
    LLVMInitializeX86Target();
    LLVMInitializeX86TargetMC();
    LLVMInitializeX86AsmPrinter();
  });
}

std::unique_ptr<llvm::TargetMachine> createHostTargetMachine(unsigned optLevel, std::string& error) {
  initHostTarget();
  const llvm::Target* target = llvm::TargetRegistry::lookupTarget(kHostTriple, error);
  if (!target) return nullptr;
  llvm::TargetOptions options;
  auto level = optLevel == 0   ? llvm::CodeGenOptLevel::None
               : optLevel >= 3 ? llvm::CodeGenOptLevel::Aggressive
                               : llvm::CodeGenOptLevel::Default;
  std::unique_ptr<llvm::TargetMachine> tm(
      target->createTargetMachine(kHostTriple, "x86-64", "", options, llvm::Reloc::PIC_, std::nullopt, level));
  if (!tm) error = "cannot create the x86-64 target machine";
  return tm;
}

bool buildHostModule(llvm::Module& m, const HostModuleInput& in, std::string& error) {
  Builder b(m);
  return b.build(in, error);
}

namespace {

bool prepareHostModule(llvm::Module& m, llvm::TargetMachine& tm, std::string& error) {
  m.setTargetTriple(kHostTriple);
  m.setDataLayout(tm.createDataLayout());
  if (m.getPICLevel() != llvm::PICLevel::BigPIC) m.setPICLevel(llvm::PICLevel::BigPIC);
  std::string verifyErrors;
  llvm::raw_string_ostream vs(verifyErrors);
  if (llvm::verifyModule(m, &vs)) {
    error = "internal error: invalid host LLVM IR: " + vs.str();
    return false;
  }
  return true;
}

}  // namespace

bool optimizeCpuKernels(llvm::Module& m, const std::vector<std::string>& entries, unsigned optLevel,
                        std::string& error) {
  auto tm = createHostTargetMachine(optLevel, error);
  if (!tm || !prepareHostModule(m, *tm, error)) return false;
  // Nothing refers to the entries until the descriptor table exists: external while optimising,
  // so that they are kept, and internal again afterwards.
  std::vector<llvm::Function*> internal;
  for (const std::string& name : entries)
    if (llvm::Function* f = m.getFunction(name); f && f->hasInternalLinkage()) {
      f->setLinkage(llvm::GlobalValue::ExternalLinkage);
      internal.push_back(f);
    }
  optimizeModule(m, *tm, optLevel);
  for (llvm::Function* f : internal) f->setLinkage(llvm::GlobalValue::InternalLinkage);
  return true;
}

bool emitHostObject(llvm::Module& m, unsigned optLevel, std::string& object, std::string& error, bool optimize) {
  auto tm = createHostTargetMachine(optLevel, error);
  if (!tm || !prepareHostModule(m, *tm, error)) return false;
  if (optimize) optimizeModule(m, *tm, optLevel);
  llvm::SmallString<0> buffer;
  llvm::raw_svector_ostream os(buffer);
  llvm::legacy::PassManager pm;
  if (tm->addPassesToEmitFile(pm, os, nullptr, llvm::CodeGenFileType::ObjectFile)) {
    error = "the x86-64 back end cannot emit an object file";
    return false;
  }
  pm.run(m);
  object.assign(buffer.begin(), buffer.end());
  return true;
}

}  // namespace tessera::codegen
