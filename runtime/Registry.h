//===- Registry.h - Modules registered by compiled objects -----------------------*- C++ -*-===//
//
// Compiled modules register their static descriptors at load time. The registry validates
// them once (ABI version, struct sizes, parameter tables) so launches can trust the metadata,
// and maps a kernel descriptor back to its module (the GPU backend loads modules lazily).
//
//===----------------------------------------------------------------------------------------===//
#ifndef TESSERA_RUNTIME_REGISTRY_H
#define TESSERA_RUNTIME_REGISTRY_H

#include <functional>
#include <mutex>
#include <string>
#include <vector>

#include "tessera/runtime.h"

namespace tessera::rt {

class Registry {
 public:
  static Registry& instance();

  tessera_status add(const tessera_module_desc* module);
  tessera_status remove(const tessera_module_desc* module);
  tessera_status find(const char* module, const char* kernel, const tessera_kernel_desc** out) const;
  // The module holding `kernel`, or null if it is not registered.
  const tessera_module_desc* moduleOf(const tessera_kernel_desc* kernel) const;
  // Why the module holding `kernel` was refused by add(), or "" (launch errors quote it).
  std::string rejectionOf(const tessera_kernel_desc* kernel) const;
  // Called (under no registry lock) before a module is removed, so backends drop caches.
  void setUnloadHook(std::function<void(const tessera_module_desc*)> hook);

 private:
  mutable std::mutex mutex_;
  std::vector<const tessera_module_desc*> modules_;
  // Kernel ranges of refused modules and why (copied: the descriptors may go away).
  struct Rejection {
    const tessera_kernel_desc *begin, *end;
    std::string why;
  };
  std::vector<Rejection> rejected_;
  std::function<void(const tessera_module_desc*)> unloadHook_;
};

// Checks one descriptor's internal consistency; the message names the module and kernel.
tessera_status validateModule(const tessera_module_desc* module);

// The scratch matrices of a variant chain of `module`: its list (ABI 7), or the one matrix of an
// ABI 6 chain, which every step gets as its workspace (step -1).
std::vector<tessera_chain_scratch> chainScratch(const tessera_module_desc* module, const tessera_variant_chain& chain);

}  // namespace tessera::rt

#endif
