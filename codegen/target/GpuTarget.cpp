#include "codegen/target/GpuTarget.h"

#include <mutex>

#include "codegen/target/NarrowFloatGuard.h"
#include "codegen/target/PinConstants.h"
#include "llvm/Analysis/CGSCCPassManager.h"
#include "llvm/Analysis/LoopAnalysisManager.h"
#include "llvm/IR/LegacyPassManager.h"
#include "llvm/IR/Module.h"
#include "llvm/IR/PassManager.h"
#include "llvm/IR/Verifier.h"
#include "llvm/MC/TargetRegistry.h"
#include "llvm/Passes/PassBuilder.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/TargetSelect.h"
#include "llvm/Support/raw_ostream.h"
#include "llvm/Target/TargetMachine.h"
#include "llvm/Target/TargetOptions.h"
#include "llvm/Transforms/InstCombine/InstCombine.h"
#include "llvm/Transforms/Scalar/GVN.h"

extern "C" void LLVMInitializeNVPTXTargetInfo();
extern "C" void LLVMInitializeNVPTXTarget();
extern "C" void LLVMInitializeNVPTXTargetMC();
extern "C" void LLVMInitializeNVPTXAsmPrinter();

namespace tessera::codegen {

std::optional<GpuArch> parseGpuArch(const std::string& name, std::string& error) {
  GpuArch a;
  a.name = name;
  std::string digits = name.rfind("sm_", 0) == 0 ? name.substr(3) : "";
  if (!digits.empty() && digits.back() == 'a') {
    a.archSpecific = true;
    digits.pop_back();
  }
  bool ok = !digits.empty() && digits.size() <= 3 && digits.find_first_not_of("0123456789") == std::string::npos;
  if (ok) a.sm = static_cast<unsigned>(std::stoul(digits));
  // LLVM 19's NVPTX back end knows up to sm_90a; 'a' variants exist only from sm_90.
  if (!ok || a.sm < 70 || a.sm > 90 || (a.archSpecific && a.sm != 90)) {
    error = "unsupported GPU architecture '" + name + "' (expected sm_70 .. sm_90, or sm_90a)";
    return std::nullopt;
  }
  // The lowest PTX version that supports the architecture (and every instruction we emit on it).
  a.ptxVersion = a.sm >= 90 ? 80 : a.sm >= 89 ? 78 : a.sm >= 86 ? 71 : a.sm >= 80 ? 70 : 63;
  return a;
}

bool parseGpuArchList(const std::string& list, std::vector<GpuArch>& archs, std::string& error) {
  size_t start = 0;
  while (start <= list.size()) {
    size_t comma = list.find(',', start);
    std::string item = list.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
    if (item.empty()) {
      error = "empty entry in GPU architecture list '" + list + "'";
      return false;
    }
    auto a = parseGpuArch(item, error);
    if (!a) return false;
    bool dup = false;
    for (const GpuArch& b : archs) dup |= b.name == a->name;
    if (!dup) archs.push_back(*a);
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  return true;
}

const char* nvptxTriple() { return "nvptx64-nvidia-cuda"; }

static void initNVPTX() {
  static std::once_flag once;
  std::call_once(once, [] {
    LLVMInitializeNVPTXTargetInfo();
    LLVMInitializeNVPTXTarget();
    LLVMInitializeNVPTXTargetMC();
    LLVMInitializeNVPTXAsmPrinter();
  });
}

std::unique_ptr<llvm::TargetMachine> createNVPTXTargetMachine(const GpuArch& arch, unsigned optLevel,
                                                              std::string& error) {
  initNVPTX();
  const llvm::Target* target = llvm::TargetRegistry::lookupTarget(nvptxTriple(), error);
  if (!target) return nullptr;
  llvm::TargetOptions options;
  std::string features = "+ptx" + std::to_string(arch.ptxVersion);
  auto level = optLevel == 0   ? llvm::CodeGenOptLevel::None
               : optLevel == 1 ? llvm::CodeGenOptLevel::Less
               : optLevel == 2 ? llvm::CodeGenOptLevel::Default
                               : llvm::CodeGenOptLevel::Aggressive;
  std::unique_ptr<llvm::TargetMachine> tm(
      target->createTargetMachine(nvptxTriple(), arch.name, features, options, std::nullopt, std::nullopt, level));
  if (!tm) error = "cannot create the NVPTX target machine for " + arch.name;
  return tm;
}

// Kernels often load an element twice, once for a statistic and once for the output (a row's
// maximum, then exp(x - max)), with the inlined libdevice math of a whole 16-byte chunk (over a
// hundred instructions) between the two. Two things keep LLVM's default pipeline from reusing
// the first load: GVN's memory-dependence scan stops after 100 instructions of a block, and the
// inner loops over a chunk's elements are unrolled late in the pipeline, after the last GVN. The
// copies then break the chunk's 16-byte access into 2- and 4-byte pieces (H100, cross_entropy
// bf16: one of every two chunks). So the scan goes further and GVN runs once more at the end.
constexpr unsigned kMemDepScanLimit = 1000;

void raiseMemDepScanLimit() {
  static std::once_flag once;
  std::call_once(once, [] {
    auto& options = llvm::cl::getRegisteredOptions();
    auto it = options.find("memdep-block-scan-limit");
    if (it != options.end()) it->second->addOccurrence(0, "memdep-block-scan-limit", std::to_string(kMemDepScanLimit));
  });
}

void optimizeModule(llvm::Module& module, llvm::TargetMachine& tm, unsigned optLevel) {
  if (optLevel > 0) raiseMemDepScanLimit();
  guardBFloatToHalfShrinking(module);
  llvm::LoopAnalysisManager lam;
  llvm::FunctionAnalysisManager fam;
  llvm::CGSCCAnalysisManager cgam;
  llvm::ModuleAnalysisManager mam;
  llvm::PassBuilder pb(&tm);
  if (optLevel > 0)
    pb.registerOptimizerLastEPCallback([](llvm::ModulePassManager& mpm, llvm::OptimizationLevel) {
      llvm::FunctionPassManager fpm;
      fpm.addPass(llvm::GVNPass());
      fpm.addPass(llvm::InstCombinePass());
      mpm.addPass(llvm::createModuleToFunctionPassAdaptor(std::move(fpm)));
    });
  pb.registerModuleAnalyses(mam);
  pb.registerCGSCCAnalyses(cgam);
  pb.registerFunctionAnalyses(fam);
  pb.registerLoopAnalyses(lam);
  pb.crossRegisterProxies(lam, fam, cgam, mam);
  llvm::OptimizationLevel level = optLevel == 0   ? llvm::OptimizationLevel::O0
                                  : optLevel == 1 ? llvm::OptimizationLevel::O1
                                  : optLevel == 2 ? llvm::OptimizationLevel::O2
                                                  : llvm::OptimizationLevel::O3;
  llvm::ModulePassManager mpm =
      optLevel == 0 ? pb.buildO0DefaultPipeline(level) : pb.buildPerModuleDefaultPipeline(level);
  mpm.run(module, mam);
}

std::optional<std::string> emitPTX(llvm::Module& module, const GpuArch& arch, unsigned optLevel, std::string& error) {
  auto tm = createNVPTXTargetMachine(arch, optLevel, error);
  if (!tm) return std::nullopt;
  module.setTargetTriple(nvptxTriple());
  module.setDataLayout(tm->createDataLayout());
  std::string verifyErrors;
  llvm::raw_string_ostream vs(verifyErrors);
  if (llvm::verifyModule(module, &vs)) {
    error = "internal error: invalid LLVM IR before PTX emission: " + vs.str();
    return std::nullopt;
  }
  optimizeModule(module, *tm, optLevel);
  if (optLevel > 0) pinLoopConstants(module);
  llvm::SmallString<0> ptx;
  llvm::raw_svector_ostream os(ptx);
  llvm::legacy::PassManager pm;
  if (tm->addPassesToEmitFile(pm, os, nullptr, llvm::CodeGenFileType::AssemblyFile)) {
    error = "the NVPTX back end cannot emit assembly";
    return std::nullopt;
  }
  pm.run(module);
  return std::string(ptx.str());
}

}  // namespace tessera::codegen
