#include "tools/tesserac/Version.h"

#include "llvm/Config/llvm-config.h"
#if HAVE_TESSERA_CODEGEN
#include "codegen/CudaToolkit.h"
#endif

#ifndef TESSERA_VERSION
#define TESSERA_VERSION "unknown"
#endif

namespace tessera {

void printVersion(std::ostream& os) {
  os << "tesserac " TESSERA_VERSION "\n";
  os << "LLVM " LLVM_VERSION_STRING " (targets: nvptx, x86-64)\n";
#if HAVE_TESSERA_CODEGEN
  codegen::CudaToolkit cuda = codegen::CudaToolkit::locate();
  if (!cuda.found()) {
    os << "CUDA toolkit: not found (" << cuda.missingReason() << ")\n";
    return;
  }
  std::string release = cuda.version();
  os << "CUDA toolkit: " << cuda.root() << " (ptxas " << (release.empty() ? "of unknown release" : release) << ")\n";
#else
  os << "CUDA toolkit: not used (this tesserac has no code generation)\n";
#endif
}

}  // namespace tessera
