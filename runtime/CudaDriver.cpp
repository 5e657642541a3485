//===- CudaDriver.cpp - dlopen of libcuda.so.1 ----------------------------------------------===//
#include "runtime/CudaDriver.h"

#if TESSERA_RT_HAVE_CUDA
#include <dlfcn.h>
#include <mutex>
#include <string>

namespace tessera::rt {

#define TESSERA_STR(x) #x
#define TESSERA_XSTR(x) TESSERA_STR(x)

const CudaDriver* CudaDriver::load(std::string& why) {
  static CudaDriver driver;
  static std::string failure;
  static bool ok = false;
  static std::once_flag once;
  std::call_once(once, [] {
    void* lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!lib) {
      const char* e = dlerror();
      failure = std::string("cannot load the CUDA driver libcuda.so.1 (") + (e ? e : "?") + ")";
      return;
    }
    // The versioned name cuda.h maps the call to. cuEventElapsedTime_v2 (CUDA 12.8+) has the
    // old prototype, so an older driver's unversioned symbol will do for it alone.
#define TESSERA_CUDA_RESOLVE(fn)                                                            \
  {                                                                                         \
    void* sym = dlsym(lib, TESSERA_XSTR(fn));                                               \
    if (!sym && std::string(#fn) == "cuEventElapsedTime") sym = dlsym(lib, #fn);            \
    if (!sym) {                                                                             \
      failure = "the CUDA driver lacks " TESSERA_XSTR(fn) " (driver too old for CUDA 13?)"; \
      return;                                                                               \
    }                                                                                       \
    driver.fn = reinterpret_cast<decltype(driver.fn)>(sym);                                 \
  }
    TESSERA_CUDA_FUNCTIONS(TESSERA_CUDA_RESOLVE)
    TESSERA_CUDA_DIST_FUNCTIONS(TESSERA_CUDA_RESOLVE)
#undef TESSERA_CUDA_RESOLVE
    ok = true;
  });
  if (!ok) why = failure;
  return ok ? &driver : nullptr;
}

std::string CudaDriver::describe(CUresult r) const {
  const char *name = nullptr, *text = nullptr;
  if (cuGetErrorName(r, &name) != CUDA_SUCCESS) name = nullptr;
  if (cuGetErrorString(r, &text) != CUDA_SUCCESS) text = nullptr;
  return std::string(name ? name : "CUDA error " + std::to_string(static_cast<int>(r))) + ": " +
         (text ? text : "unknown");
}

}  // namespace tessera::rt
#endif
