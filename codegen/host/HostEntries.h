// The C entry points of host functions in the module's host object (codegen/host/HostEntries.cpp)
// and their declarations in the generated header.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "codegen/host/HostEntry.h"

namespace llvm {
class GlobalVariable;
class LLVMContext;
class Module;
class Type;
}  // namespace llvm

namespace tessera::codegen {

// <module>_<function>.
std::string hostEntryName(const std::string& module, const HostEntry& e);
// Adds every entry point to `m`; `kernels` is the module's array of kernel descriptors and
// `kernelIndex` the position of each kernel in it.
bool emitHostEntries(llvm::Module& m, const std::string& module, const std::vector<HostEntry>& entries,
                     llvm::GlobalVariable* kernels, const std::map<std::string, size_t>& kernelIndex,
                     std::string& error);
// The C declaration with its comment (ownership of the results).
std::string hostEntryDeclaration(const std::string& module, const HostEntry& e);
// The LLVM type of a scalar argument of `dtype` (tessera_dtype) passed by value.
llvm::Type* scalarLLVMType(llvm::LLVMContext& c, int32_t dtype);

}  // namespace tessera::codegen
