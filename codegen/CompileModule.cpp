#include "codegen/CompileModule.h"

#include <thread>

#include "basic/StageTimes.h"
#include "codegen/hopper/HopperForms.h"
#include "codegen/host/HostModule.h"
#include "codegen/lower/LowerToLLVM.h"
#include "codegen/target/CudaToolkit.h"
#include "codegen/target/GpuTarget.h"
#include "codegen/target/ResourceUsage.h"
#include "ir/IR.h"
#include "llvm/Bitcode/BitcodeReader.h"
#include "llvm/IR/LLVMContext.h"
#include "llvm/IR/Module.h"
#include "llvm/Linker/Linker.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/raw_ostream.h"
#include "llvm/Transforms/Utils/Cloning.h"

namespace tessera::codegen {

namespace {

std::string printLLVM(const llvm::Module& m) {
  std::string s;
  llvm::raw_string_ostream os(s);
  m.print(os, nullptr);
  return s;
}

// GPU math (exp, log, tanh, ...) calls libdevice's __nv_* functions; link the ones used.
bool linkLibdevice(llvm::Module& m, const CudaToolkit& cuda, std::string& error) {
  bool needed = false;
  for (const llvm::Function& f : m) needed |= f.isDeclaration() && f.getName().starts_with("__nv_");
  if (!needed) return true;
  std::string path = cuda.root() + "/nvvm/libdevice/libdevice.10.bc";
  auto buffer = llvm::MemoryBuffer::getFile(path);
  if (!buffer) {
    error = "cannot read libdevice at '" + path + "' (needed for GPU math functions): " + buffer.getError().message();
    return false;
  }
  auto lib = llvm::parseBitcodeFile(buffer.get()->getMemBufferRef(), m.getContext());
  if (!lib) {
    error = "cannot parse libdevice: " + llvm::toString(lib.takeError());
    return false;
  }
  (*lib)->setTargetTriple(m.getTargetTriple());
  (*lib)->setDataLayout(m.getDataLayout());
  if (llvm::Linker::linkModules(m, std::move(*lib), llvm::Linker::LinkOnlyNeeded)) {
    error = "cannot link libdevice";
    return false;
  }
  // libdevice functions are internal helpers once linked; let the optimiser inline them.
  for (llvm::Function& f : m)
    if (f.getName().starts_with("__nv_") && !f.isDeclaration()) f.setLinkage(llvm::GlobalValue::InternalLinkage);
  return true;
}

// The optimisation of the CPU executor's code on a thread of its own, beside the GPU's (each
// with its LLVMContext: LLVM keeps no state shared between contexts once its targets are
// registered), joined before anything reads the module or the compile returns.
class CpuOptimisation {
 public:
  void start(llvm::Module& m, std::vector<std::string> entries, unsigned optLevel) {
    initHostTarget();  // registration is not thread-safe
    initGpuTarget();
    thread_ = std::thread([this, &m, entries = std::move(entries), optLevel] {
      StageTimer optimise("LLVM: optimisation (CPU)");
      ok_ = optimizeCpuKernels(m, entries, optLevel, error_);
    });
  }
  bool join(std::string& error) {
    if (thread_.joinable()) thread_.join();
    if (!ok_) error = error_;
    return ok_;
  }
  ~CpuOptimisation() {
    if (thread_.joinable()) thread_.join();
  }

 private:
  std::thread thread_;
  bool ok_ = true;
  std::string error_;
};

// The GPU images: per architecture, the optimised module's PTX and ptxas's cubin (with its
// resources in `kernels`), then the fatbin.
bool buildGpuImages(ir::Module& m, const CompileOptions& opts, StopAfter stop, const CudaToolkit& cuda,
                    llvm::Module& gpu, std::vector<KernelInterface>& kernels, CompileOutput& out, std::string& error) {
  std::vector<CudaToolkit::Image> images;
  for (const GpuArch& arch : opts.archs) {
    StageTimer ptxTime("LLVM: optimisation and PTX (" + arch.name + ")");
    std::unique_ptr<llvm::Module> copy = llvm::CloneModule(gpu);
    if (arch.archSpecific && arch.sm == 90 &&
        (!emitHopperVariants(m, kernels, *copy, error) || !emitAttentionVariants(m, kernels, *copy, error) ||
         !emitAttentionBwdVariants(m, kernels, *copy, error)))
      return false;
    if (!linkLibdevice(*copy, cuda, error)) return false;
    auto ptx = emitPTX(*copy, arch, opts.optLevel, error);
    ptxTime.stop();
    if (!ptx) return false;
    out.ptx.push_back(*ptx);
    if (stop == StopAfter::PTX) continue;
    std::string cubin, report;
    StageTimer ptxas("ptxas");
    if (!cuda.assemble(*ptx, arch, opts.optLevel, opts.lineInfo, cubin, error, &report)) return false;
    ptxas.stop();
    // What the code uses (registers, spills, shared memory, occupancy): for --resource-usage
    // and the kernel descriptor.
    if (!collectResources(kernels, arch, cubin, report, *ptx, error)) return false;
    out.cubins.push_back(cubin);
    images.push_back({arch, cubin});
  }
  if (stop == StopAfter::PTX || stop == StopAfter::Cubin) return true;
  // PTX of the newest architecture rides along so that newer GPUs can JIT it.
  StageTimer fatbin("fatbinary");
  return cuda.fatbinary(images, out.ptx.back(), opts.archs.back(), out.fatbin, error);
}

}  // namespace

bool compileModule(ir::Module& m, const CompileOptions& opts, StopAfter stop, CompileOutput& out, std::string& error) {
  CudaToolkit cuda = CudaToolkit::locate();
  HostModuleInput host;
  host.moduleName = opts.moduleName;
  host.sourceName = opts.sourceName;
  host.entries = opts.entries;

  // ---- GPU: lowering
  llvm::LLVMContext ctx;
  llvm::Module gpu(opts.moduleName + ".gpu", ctx);
  if (!opts.archs.empty()) {
    gpu.setTargetTriple(nvptxTriple());
    std::vector<KernelInterface> kernels;
    StageTimer lowering("LLVM: Tile IR to LLVM (GPU)");
    if (!lowerKernels(m, DeviceTarget::Gpu, gpu, kernels, error, {opts.boundsCheck})) return false;
    // sm_90a images also get the Hopper forms of tile.mma loops and of the products of
    // whole-tensor programs (codegen/hopper/HopperGemmPlan.cpp) and of attention (codegen/hopper/HopperAttention.cpp).
    bool hopper = false;
    for (const GpuArch& arch : opts.archs) hopper |= arch.archSpecific && arch.sm == 90;
    if (hopper) {
      planHopperVariants(m, kernels);
      planAttentionVariants(m, kernels);
      planAttentionBwdVariants(m, kernels);
    } else {
      remarkProductsWithoutHopper(m, kernels);
    }
    out.gpuLLVM = printLLVM(gpu);
    lowering.stop();
    host.kernels = kernels;
    if (stop == StopAfter::LLVM && opts.cpu == false) {
      out.kernels = host.kernels;
      return true;
    }
  }

  // ---- CPU executor code: lowered now, optimised beside the GPU images
  llvm::LLVMContext hctx;
  llvm::Module hostModule(opts.moduleName, hctx);
  std::vector<KernelInterface> cpuKernels;
  if (opts.cpu) {
    StageTimer lowering("LLVM: Tile IR to LLVM (CPU)");
    if (!lowerKernels(m, DeviceTarget::Cpu, hostModule, cpuKernels, error, {opts.boundsCheck})) return false;
    out.cpuLLVM = printLLVM(hostModule);
  }
  CpuOptimisation cpuOpt;
  if (stop == StopAfter::Object) {
    std::vector<std::string> entries;
    for (const KernelInterface& k : cpuKernels) entries.push_back(k.cpuEntry);
    cpuOpt.start(hostModule, std::move(entries), opts.optLevel);
  }

  // ---- GPU: images
  if (!opts.archs.empty() && stop != StopAfter::LLVM) {
    if (!buildGpuImages(m, opts, stop, cuda, gpu, host.kernels, out, error)) return false;
    out.kernels = host.kernels;
    if (stop == StopAfter::PTX || stop == StopAfter::Cubin) return true;
    host.fatbin = out.fatbin;
  }

  // ---- host: registration, stubs
  if (host.kernels.empty()) {
    host.kernels = cpuKernels;
  } else {
    for (size_t i = 0; i < host.kernels.size() && i < cpuKernels.size(); ++i) {
      host.kernels[i].cpuEntry = cpuKernels[i].cpuEntry;
      host.kernels[i].cpuSync = cpuKernels[i].cpuSync;
      host.kernels[i].cpuPerGroup = cpuKernels[i].cpuPerGroup;
      // One workspace serves both targets. The GPU keeps some tile values in registers (mma
      // accumulators), so its slots are a subset of the CPU's, in the same order: the CPU's
      // list sizes a workspace large enough for either.
      if (cpuKernels[i].workspace.size() > host.kernels[i].workspace.size())
        host.kernels[i].workspace = cpuKernels[i].workspace;
    }
  }
  out.kernels = host.kernels;
  out.header = writeHeader(host);
  if (stop != StopAfter::Object) return true;
  if (!cpuOpt.join(error)) return false;
  StageTimer object("LLVM: host glue and x86-64 object");
  if (!buildHostModule(hostModule, host, error)) return false;
  return emitHostObject(hostModule, opts.optLevel, out.object, error, /*optimize=*/false);
}

}  // namespace tessera::codegen
