// libtessera_pyrt.so: libtessera_rt and libtessera_dist linked whole into one shared library, so
// that the extension and every compiled module the package loads (each a shared object linked
// against it) share one registry of kernels and one device. This file only gives the library a
// translation unit of its own; everything else comes from the two archives.
#include "tessera/runtime.h"

extern "C" int tessera_pyrt_abi_version(void) { return TESSERA_ABI_VERSION; }
