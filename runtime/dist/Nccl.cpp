//===- Nccl.cpp - dlopen of libnccl.so.2 ----------------------------------------------------===//
#include "runtime/dist/Nccl.h"

#if TESSERA_DIST_HAVE_NCCL
#include <cstdlib>
#include <dlfcn.h>
#include <mutex>

namespace tessera::dist {

const NcclLib* NcclLib::load(std::string& why) {
  static NcclLib lib;
  static std::string failure;
  static bool ok = false;
  static std::once_flag once;
  std::call_once(once, [] {
    const char* path = std::getenv("TESSERA_NCCL_LIBRARY");
    void* h = dlopen(path ? path : "libnccl.so.2", RTLD_NOW | RTLD_LOCAL);
    if (!h && !path) h = dlopen("libnccl.so", RTLD_NOW | RTLD_LOCAL);
    if (!h) {
      const char* e = dlerror();
      failure = std::string("cannot load NCCL (") + (path ? path : "libnccl.so.2") + ": " + (e ? e : "?") +
                "); put it on LD_LIBRARY_PATH or name it in TESSERA_NCCL_LIBRARY";
      return;
    }
#define TESSERA_NCCL_RESOLVE(fn)                                   \
  lib.fn = reinterpret_cast<decltype(lib.fn)>(dlsym(h, #fn));      \
  if (!lib.fn) {                                                   \
    failure = "NCCL lacks " #fn " (NCCL 2.18 or newer is needed)"; \
    return;                                                        \
  }
    TESSERA_NCCL_FUNCTIONS(TESSERA_NCCL_RESOLVE)
#undef TESSERA_NCCL_RESOLVE
    lib.ncclGetVersion(&lib.version);
    ok = true;
  });
  if (!ok) why = failure;
  return ok ? &lib : nullptr;
}

}  // namespace tessera::dist
#endif
