// --version: what a bug report needs: the compiler's version, the LLVM it was built with, and
// the CUDA toolkit it found (where, and ptxas's release), as `nvcc --version` does.
#pragma once

#include <ostream>

namespace tessera {

void printVersion(std::ostream& os);

}  // namespace tessera
