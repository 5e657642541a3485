// The CUDA toolkit programs code generation calls: ptxas (PTX -> cubin) and fatbinary (cubins
// and PTX -> one fatbin). Found at $CUDA_HOME or /usr/local/cuda.
#pragma once

#include <string>
#include <vector>

#include "codegen/target/GpuTarget.h"

namespace tessera::codegen {

class CudaToolkit {
 public:
  // Looks for the toolkit; found() tells whether ptxas and fatbinary are there.
  static CudaToolkit locate();
  bool found() const { return !ptxas_.empty() && !fatbinary_.empty(); }
  const std::string& root() const { return root_; }
  // ptxas's release line ("release 13.0, V13.0.48"), or "" when it cannot be run.
  std::string version() const;
  // Why the toolkit is unusable, for error messages.
  std::string missingReason() const;

  // Assembles PTX into a cubin for `arch`. `lineInfo` keeps source line information (-g).
  // `info`, when given, receives ptxas's per-function report (-v: registers, stack, spills).
  // Results come from the on-disk assembly cache when it holds them (AssemblyCache.h).
  bool assemble(const std::string& ptx, const GpuArch& arch, unsigned optLevel, bool lineInfo, std::string& cubin,
                std::string& error, std::string* info = nullptr) const;

  struct Image {
    GpuArch arch;
    std::string cubin;
  };
  // One fatbin with a cubin per architecture, plus `ptx` (compiled for `ptxArch`) so that newer
  // GPUs can JIT it.
  bool fatbinary(const std::vector<Image>& images, const std::string& ptx, const GpuArch& ptxArch, std::string& fatbin,
                 std::string& error) const;

 private:
  std::string root_, ptxas_, fatbinary_;
  mutable std::string release_;  // ptxas's path and release, the assembly cache's key prefix
};

}  // namespace tessera::codegen
