// The back half of the compiler, from Tile IR to the artefacts a user links: for the GPU, LLVM
// IR -> PTX (per architecture) -> cubins -> one fatbin; for the host, the CPU executor's code,
// the registration data and launch stubs in one x86-64 object; and the C/C++ header.
#pragma once

#include <string>
#include <vector>

#include "codegen/host/HostEntry.h"
#include "codegen/lower/KernelInterface.h"
#include "codegen/target/GpuTarget.h"

namespace tessera::ir {
class Module;
}

namespace tessera::codegen {

struct CompileOptions {
  std::string moduleName;      // C identifier used for the launch functions (<module>_<kernel>)
  std::string sourceName;      // for the header's comment
  std::vector<GpuArch> archs;  // empty: no GPU code
  bool cpu = true;             // CPU executor code in the object
  unsigned optLevel = 3;
  bool lineInfo = false;           // -g
  bool boundsCheck = false;        // --bounds-check (docs/abi.md "Bounds checking")
  std::vector<HostEntry> entries;  // host functions' entry points (docs/abi.md "Host entry points")
};

struct CompileOutput {
  std::string gpuLLVM;              // LLVM IR text of the device module (before optimisation)
  std::string cpuLLVM;              // LLVM IR text of the host module (before optimisation)
  std::vector<std::string> ptx;     // per architecture, in options order
  std::vector<std::string> cubins;  // per architecture
  std::string fatbin;
  std::string object;
  std::string header;
  std::vector<KernelInterface> kernels;
};

enum class StopAfter { LLVM, PTX, Cubin, Object };

// Runs code generation on `m` (already through the Tile IR pipeline: inlined, shared memory
// planned). Returns false with `error` set.
bool compileModule(ir::Module& m, const CompileOptions& opts, StopAfter stop, CompileOutput& out, std::string& error);

}  // namespace tessera::codegen
