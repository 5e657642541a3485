// The NVPTX end of code generation: optimising an LLVM module for a GPU architecture and
// emitting PTX with LLVM's NVPTX back end.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace llvm {
class Module;
class TargetMachine;
}  // namespace llvm

namespace tessera::codegen {

struct GpuArch {
  std::string name;           // "sm_90a"
  unsigned sm = 0;            // 90
  bool archSpecific = false;  // the 'a' suffix: Hopper-only instructions (wgmma, setmaxnreg)
  unsigned ptxVersion = 0;    // PTX ISA version the back end targets, e.g. 80 for 8.0
};

// Accepts sm_70 .. sm_90a. Returns nullopt with `error` set otherwise.
std::optional<GpuArch> parseGpuArch(const std::string& name, std::string& error);
// "sm_80,sm_90a" -> archs, in order, without duplicates.
bool parseGpuArchList(const std::string& list, std::vector<GpuArch>& archs, std::string& error);

// The NVPTX target triple and data layout every device module uses.
const char* nvptxTriple();
// Creates the target machine for `arch` (the NVPTX target is initialised on first use).
std::unique_ptr<llvm::TargetMachine> createNVPTXTargetMachine(const GpuArch& arch, unsigned optLevel,
                                                              std::string& error);

// Runs LLVM's standard pipeline at -O0..-O3 over `module` (already configured for `tm`).
void optimizeModule(llvm::Module& module, llvm::TargetMachine& tm, unsigned optLevel);

// Sets triple and data layout, optimises, and returns PTX text.
std::optional<std::string> emitPTX(llvm::Module& module, const GpuArch& arch, unsigned optLevel, std::string& error);

}  // namespace tessera::codegen
