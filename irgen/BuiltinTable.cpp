// The handler of each builtin, keyed by its id: generated from sema/Builtins.def, so that a
// builtin kernels may call (context Kernel or Both) cannot lack one (the member handle<Id> must
// be defined), and where a row sits in the table does not matter.
#include <iterator>

#include "irgen/FunctionContext.h"

namespace tessera::irgen {

namespace {

using Handler = Lowered (FunctionContext::*)(const BuiltinCall&);

}  // namespace

Lowered BuiltinTable::dispatch(FunctionContext& cx, const BuiltinCall& call) {
  static constexpr Handler kHandlers[] = {
#define IRGEN_ENTRY_Kernel(ID) &FunctionContext::handle##ID,
#define IRGEN_ENTRY_Both(ID) &FunctionContext::handle##ID,
#define IRGEN_ENTRY_Host(ID) nullptr,
#define BUILTIN(ID, NAME, SIG, CTX, EFF, DOC) IRGEN_ENTRY_##CTX(ID)
#include "sema/Builtins.def"
  };
  static_assert(std::size(kHandlers) == static_cast<size_t>(BuiltinId::NumBuiltins));
  Handler h = kHandlers[static_cast<size_t>(call.info.id)];
  // Host builtins do not reach lowering (sema rejects them in kernels).
  if (!h) return cx.unsupportedBuiltin(call);
  return (cx.*h)(call);
}

}  // namespace tessera::irgen
