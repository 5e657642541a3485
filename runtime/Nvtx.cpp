//===- Nvtx.cpp - NVTX3 (header-only, from the CUDA toolkit) behind a cheap check ------------===//
#include "runtime/Nvtx.h"

#include <cstdlib>

#if TESSERA_RT_HAVE_CUDA && __has_include(<nvtx3/nvToolsExt.h>)
#include <nvtx3/nvToolsExt.h>
#define TESSERA_RT_HAVE_NVTX 1
#else
#define TESSERA_RT_HAVE_NVTX 0
#endif

namespace tessera::rt::nvtx {

bool attached() {
#if TESSERA_RT_HAVE_NVTX
  static const bool on = std::getenv("NVTX_INJECTION64_PATH") != nullptr;
  return on;
#else
  return false;
#endif
}

#if TESSERA_RT_HAVE_NVTX
namespace {
nvtxDomainHandle_t domain() {
  static nvtxDomainHandle_t d = nvtxDomainCreateA("Tessera");
  return d;
}
}  // namespace

void push(const char* name) {
  nvtxEventAttributes_t a = {};
  a.version = NVTX_VERSION;
  a.size = NVTX_EVENT_ATTRIB_STRUCT_SIZE;
  a.messageType = NVTX_MESSAGE_TYPE_ASCII;
  a.message.ascii = name;
  nvtxDomainRangePushEx(domain(), &a);
}
void pop() { nvtxDomainRangePop(domain()); }
#else
void push(const char*) {}
void pop() {}
#endif

}  // namespace tessera::rt::nvtx
