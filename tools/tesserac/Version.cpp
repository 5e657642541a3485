#include "tools/tesserac/Version.h"

#include "codegen/target/CudaToolkit.h"
#include "llvm/Config/llvm-config.h"

#ifndef TESSERA_VERSION
#define TESSERA_VERSION "unknown"
#endif

namespace tessera {

void printVersion(std::ostream& os) {
  os << "tesserac " TESSERA_VERSION "\n";
  os << "LLVM " LLVM_VERSION_STRING " (targets: nvptx, x86-64)\n";
  codegen::CudaToolkit cuda = codegen::CudaToolkit::locate();
  if (!cuda.found()) {
    os << "CUDA toolkit: not found (" << cuda.missingReason() << ")\n";
    return;
  }
  std::string release = cuda.version();
  os << "CUDA toolkit: " << cuda.root() << " (ptxas " << (release.empty() ? "of unknown release" : release) << ")\n";
}

}  // namespace tessera
