#include "codegen/KernelInterface.h"

#include "runtime/include/tessera/runtime.h"

namespace tessera::codegen {

const char* scalarCType(int32_t dtype) {
  switch (dtype) {
    case TESSERA_F64: return "double";
    case TESSERA_F32: return "float";
    case TESSERA_F16:
    case TESSERA_BF16: return "uint16_t";
    case TESSERA_I8: return "int8_t";
    case TESSERA_I16: return "int16_t";
    case TESSERA_I32: return "int32_t";
    case TESSERA_I64: return "int64_t";
    case TESSERA_U16: return "uint16_t";
    case TESSERA_U32: return "uint32_t";
    case TESSERA_U64: return "uint64_t";
    case TESSERA_BOOL: return "bool";
    default: return "uint8_t";  // u8, fp8, fp6, fp4, int4: one byte
  }
}

namespace {
// Indexed by tessera_dtype (the numbers are ABI).
struct DtypeRow {
  const char* name;
  unsigned bits;
};
const DtypeRow kDtypes[TESSERA_DTYPE_COUNT] = {
    {"invalid", 0}, {"f64", 64},      {"f32", 32},      {"f16", 16},      {"bf16", 16},
    {"fp8_e4m3", 8}, {"fp8_e5m2", 8}, {"fp6_e2m3", 6}, {"fp6_e3m2", 6}, {"fp4_e2m1", 4},
    {"int4", 4},    {"i8", 8},        {"i16", 16},      {"i32", 32},      {"i64", 64},
    {"u8", 8},      {"u16", 16},      {"u32", 32},      {"u64", 64},      {"bool", 8},
};
const DtypeRow& row(int32_t dtype) { return kDtypes[dtype > 0 && dtype < TESSERA_DTYPE_COUNT ? dtype : 0]; }
}  // namespace

const char* dtypeName(int32_t dtype) { return row(dtype).name; }

unsigned scalarBytes(int32_t dtype) {
  unsigned bits = row(dtype).bits;
  return bits <= 8 ? 1 : bits / 8;
}

}  // namespace tessera::codegen
