// The handler of each builtin, keyed by its id: generated from sema/Builtins.def, so that a
// builtin kernels may call (context Kernel or Both) cannot lack one (the member handle<Id> must
// be defined, or for an ELEMENTWISE row the Tile IR op it names must exist), and where a row sits
// in the table does not matter.
#include <iterator>

#include "irgen/FunctionContext.h"

namespace tessera::irgen {

namespace {

using Handler = Lowered (FunctionContext::*)(const BuiltinCall&);

struct Entry {
  Handler handler;  // null for host builtins and ELEMENTWISE rows
  I::OpId op;       // the op of an ELEMENTWISE row; NumOps otherwise
};

}  // namespace

Lowered BuiltinTable::dispatch(FunctionContext& cx, const BuiltinCall& call) {
  static constexpr Entry kEntries[] = {
#define IRGEN_ENTRY_Kernel(ID) {&FunctionContext::handle##ID, I::OpId::NumOps},
#define IRGEN_ENTRY_Both(ID) {&FunctionContext::handle##ID, I::OpId::NumOps},
#define IRGEN_ENTRY_Host(ID) {nullptr, I::OpId::NumOps},
#define BUILTIN(ID, NAME, SIG, CTX, EFF, DOC) IRGEN_ENTRY_##CTX(ID)
#define ELEMENTWISE(ID, NAME, OP, DOC) {nullptr, I::OpId::OP},
#include "sema/Builtins.def"
  };
  static_assert(std::size(kEntries) == static_cast<size_t>(BuiltinId::NumBuiltins));
  const Entry& e = kEntries[static_cast<size_t>(call.info.id)];
  if (e.op != I::OpId::NumOps) return cx.handleElementwise(call, e.op);
  // Host builtins do not reach lowering (sema rejects them in kernels).
  if (!e.handler) return cx.unsupportedBuiltin(call);
  return (cx.*e.handler)(call);
}

}  // namespace tessera::irgen
