#include "codegen/lower/KernelInterface.h"

#include "runtime/include/tessera/runtime.h"

namespace tessera::codegen {

// The C types, names and sizes of basic/DTypes.def, by tessera_dtype number.
const char* scalarCType(int32_t dtype) {
  switch (dtype) {
#define DTYPE(ID, NAME, SHORT, BITS, KIND, EXP, MANT, ABI, IR, IRNAME, LLVM, CTYPE, DOC) \
  case ABI: return CTYPE;
#include "basic/DTypes.def"
  }
  return "uint8_t";
}

const char* dtypeName(int32_t dtype) {
  switch (dtype) {
#define DTYPE(ID, NAME, SHORT, BITS, KIND, EXP, MANT, ABI, IR, IRNAME, LLVM, CTYPE, DOC) \
  case ABI: return SHORT;
#include "basic/DTypes.def"
  }
  return "invalid";
}

unsigned scalarBytes(int32_t dtype) {
  switch (dtype) {
#define DTYPE(ID, NAME, SHORT, BITS, KIND, EXP, MANT, ABI, IR, IRNAME, LLVM, CTYPE, DOC) \
  case ABI: return BITS <= 8 ? 1 : BITS / 8;
#include "basic/DTypes.def"
  }
  return 1;
}

}  // namespace tessera::codegen
