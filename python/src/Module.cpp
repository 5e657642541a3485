// The extension module `tessera._tessera`: loading compiled modules (shared objects that register
// their kernels with the runtime when loaded), and the types of the other files.
#include <dlfcn.h>
#include <pybind11/pybind11.h>
#include <string>

#include "python/src/Common.h"
#include "python/src/Dist.h"
#include "python/src/HostEntry.h"
#include "python/src/Kernel.h"
#include "python/src/Streams.h"
#include "python/src/Tensors.h"

namespace pyb = pybind11;

namespace tessera::py {

namespace {

// A loaded shared object; closed never (a module's kernels stay registered for the process, as
// Python keeps extension modules loaded).
uintptr_t loadLibrary(const std::string& path) {
  dlerror();
  void* h = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!h) {
    const char* why = dlerror();
    raise(PyExc_ImportError, "tessera.load: cannot load '" + path + "': " + (why ? why : "unknown error"));
  }
  return reinterpret_cast<uintptr_t>(h);
}

uintptr_t symbol(uintptr_t lib, const std::string& name) {
  dlerror();
  void* p = dlsym(reinterpret_cast<void*>(lib), name.c_str());
  if (!p) raise(PyExc_AttributeError, "tessera.load: the module has no symbol '" + name + "'");
  return reinterpret_cast<uintptr_t>(p);
}

// The registered descriptor of `kernel` in `module`, checked to come from the shared object at
// `path` (another module of the same name, registered first, would otherwise answer).
uintptr_t findKernel(const std::string& module, const std::string& kernel, const std::string& path) {
  const tessera_kernel_desc* k = nullptr;
  tessera_status s = tessera_find_kernel(module.c_str(), kernel.c_str(), &k);
  if (s != TESSERA_SUCCESS) raiseRuntime(s);
  Dl_info info{};
  if (!dladdr(k, &info) || !info.dli_fname)
    raise(PyExc_ImportError, "tessera.load: cannot locate kernel '" + kernel + "'");
  char* a = realpath(info.dli_fname, nullptr);
  char* b = realpath(path.c_str(), nullptr);
  bool same = a && b && std::string(a) == b;
  std::string where = a ? a : info.dli_fname;
  free(a);
  free(b);
  if (!same)
    raise(PyExc_ImportError, "tessera.load: module '" + module + "' is already registered by " + where +
                                 " (module names are unique in a process; compile with another module_name)");
  return reinterpret_cast<uintptr_t>(k);
}

pyb::dict deviceInfo() {
  const ActiveDevice& d = activeDevice(nullptr);
  pyb::dict out;
  out["kind"] = d.gpu ? "gpu" : "cpu";
  out["ordinal"] = d.ordinal;
  out["name"] = d.name;
  out["gpu_unavailable_reason"] = tessera_gpu_unavailable_reason();
  return out;
}

}  // namespace

}  // namespace tessera::py

PYBIND11_MODULE(_tessera, m) {
  using namespace tessera::py;
  m.doc() = "The C++ half of the tessera package: the runtime's launches, entry points, streams and collectives.";
  m.def("_set_errors", [](pyb::object error, pyb::object dtypeError, pyb::object shapeError) {
    ErrorClasses& c = errorClasses();
    c.error = error.release().ptr();  // kept for the life of the process
    c.dtypeError = dtypeError.release().ptr();
    c.shapeError = shapeError.release().ptr();
  });
  m.def("load_library", &loadLibrary);
  m.def("symbol", &symbol);
  m.def("find_kernel", &findKernel);
  m.def("device", &deviceInfo, "The device this process runs Tessera on (chosen at the first call).");
  m.def("device_chosen", &deviceChosen);
  m.def("set_device", &setDevice);
  m.def("synchronize", [] {
    tessera_status s;
    {
      pyb::gil_scoped_release nogil;
      s = tessera_synchronize();
    }
    check(s);
  });
  m.def("abi_version", [] { return TESSERA_ABI_VERSION; });
  addBufferType(m.ptr());
  addStreamTypes(m);
  addKernelType(m);
  addHostEntryType(m);
  addDistFunctions(m);
  addCopyFunctions(m);
}
