// The host half of a compiled module: the runtime's registration data for every kernel (the
// structs of runtime/include/tessera/runtime.h, laid out by LLVM for x86-64), a load-time
// constructor that registers the module and a destructor that unregisters it, one C launch
// stub per kernel, and the object file and header that carry them.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "codegen/host/HostEntry.h"
#include "codegen/lower/KernelInterface.h"

namespace llvm {
class Module;
class TargetMachine;
}  // namespace llvm

namespace tessera::codegen {

struct HostModuleInput {
  std::string moduleName;  // a C identifier, e.g. "saxpy" for saxpy.tessera
  std::string sourceName;  // for comments in the header
  std::string fatbin;      // cubins + PTX; empty when the module has no GPU code
  std::vector<KernelInterface> kernels;
  std::vector<HostEntry> entries;  // host functions' entry points (codegen/host/HostEntries.cpp)
};

// "my-kernels.v2" -> "my_kernels_v2"; a leading digit gets a '_' prefix.
std::string cIdentifier(const std::string& name);
// The C launch stub's name for a kernel: <module>_<kernel>.
std::string launchStubName(const HostModuleInput& in, const KernelInterface& k);

// The x86-64 target machine for host objects (position-independent code).
std::unique_ptr<llvm::TargetMachine> createHostTargetMachine(unsigned optLevel, std::string& error);

// Adds the registration data, constructor/destructor and launch stubs to `m`. CPU entries named
// by the kernels must already be defined in `m`.
bool buildHostModule(llvm::Module& m, const HostModuleInput& in, std::string& error);

// Optimises the CPU executor's kernels in `m` (the functions named `entries` and what they call)
// before buildHostModule adds the glue: every launch stub refers to the descriptor table, which
// refers to every kernel, so LLVM's call graph walked the whole table once per stub (2,000
// kernels: quadratic). The glue is straight-line code over runtime calls and is not optimised.
bool optimizeCpuKernels(llvm::Module& m, const std::vector<std::string>& entries, unsigned optLevel,
                        std::string& error);

// Optimises `m` (unless `optimize` is false: optimizeCpuKernels did) and writes an ELF object
// into `object`.
bool emitHostObject(llvm::Module& m, unsigned optLevel, std::string& object, std::string& error, bool optimize = true);

// The C header with a C++ wrapper for the module's launch stubs.
std::string writeHeader(const HostModuleInput& in);

// A parameter's name as the header spells it: C/C++ keywords and `opts` get a trailing underscore.
std::string headerParamName(const std::string& name);

}  // namespace tessera::codegen
