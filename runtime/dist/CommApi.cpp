//===- CommApi.cpp - The C API of communicators ---------------------------------------------===//
#include <cmath>

#include "runtime/Status.h"
#include "runtime/dist/Signature.h"
#include "runtime/dist/World.h"

using namespace tessera::dist;
using tessera::rt::concat;
using tessera::rt::fail;

extern "C" {

tessera_status tessera_dist_world(tessera_comm* out) {
  if (!out) return fail(TESSERA_ERROR_INVALID_ARGUMENT, "tessera_dist_world: null output");
  TESSERA_TRY(requireInit("tessera_dist_world"));
  *out = worldState().world.get();
  return TESSERA_SUCCESS;
}

tessera_status tessera_comm_split(tessera_comm parent, int32_t color, int32_t key, const char* name,
                                  tessera_comm* out) {
  if (!out) return fail(TESSERA_ERROR_INVALID_ARGUMENT, "tessera_comm_split: null output");
  *out = nullptr;
  TESSERA_TRY(checkComm("tessera_comm_split", parent));
  TESSERA_TRY(parent->live());
  std::string label = name ? name : concat(parent->name, "/", color);
  Signature sig = makeSignature(OpKind::Split, "", 0, 0, nullptr);
  TESSERA_TRY(agree(*parent, sig, "tessera_comm_split"));
  std::unique_ptr<Transport> t;
  if (tessera_status st = parent->transport->split(color, key, Deadline::after(parent->timeout), t);
      st != TESSERA_SUCCESS) {
    std::string msg = concat("tessera_comm_split on ", parent->where(), ": ", tessera_last_error_message());
    if (st == TESSERA_ERROR_TIMEOUT || st == TESSERA_ERROR_COMM_ABORTED) parent->abort(st, msg);
    return fail(st, msg);
  }
  if (!t) return TESSERA_SUCCESS;
  std::unique_ptr<tessera_comm_t> c;
  TESSERA_TRY(makeComm(std::move(t), label, parent->timeout, parent->checkSignatures, c));
  *out = registerComm(std::move(c), false);
  return TESSERA_SUCCESS;
}

tessera_status tessera_comm_destroy(tessera_comm comm) {
  TESSERA_TRY(checkComm("tessera_comm_destroy", comm));
  if (comm->owned)
    return fail(TESSERA_ERROR_INVALID_ARGUMENT, "tessera_comm_destroy: ", comm->where(),
                " belongs to the world or to a mesh and goes with it");
  destroyComm(comm);
  return TESSERA_SUCCESS;
}

tessera_status tessera_comm_rank(tessera_comm comm, int32_t* out) {
  if (!out) return fail(TESSERA_ERROR_INVALID_ARGUMENT, "tessera_comm_rank: null output");
  TESSERA_TRY(checkComm("tessera_comm_rank", comm));
  *out = comm->rank();
  return TESSERA_SUCCESS;
}

tessera_status tessera_comm_size(tessera_comm comm, int32_t* out) {
  if (!out) return fail(TESSERA_ERROR_INVALID_ARGUMENT, "tessera_comm_size: null output");
  TESSERA_TRY(checkComm("tessera_comm_size", comm));
  *out = comm->size();
  return TESSERA_SUCCESS;
}

tessera_status tessera_comm_set_timeout(tessera_comm comm, double seconds) {
  TESSERA_TRY(checkComm("tessera_comm_set_timeout", comm));
  if (!(seconds > 0) || std::isinf(seconds))
    return fail(TESSERA_ERROR_INVALID_ARGUMENT, "tessera_comm_set_timeout: ", seconds,
                " is not a positive, finite number of seconds");
  comm->timeout = seconds;
  return TESSERA_SUCCESS;
}

tessera_status tessera_comm_synchronize(tessera_comm comm, tessera_stream stream) {
  TESSERA_TRY(checkComm("tessera_comm_synchronize", comm));
  return synchronizeComm(*comm, stream);
}

tessera_status tessera_comm_abort(tessera_comm comm) {
  TESSERA_TRY(checkComm("tessera_comm_abort", comm));
  comm->abort(TESSERA_ERROR_COMM_ABORTED, "tessera_comm_abort was called");
  return TESSERA_SUCCESS;
}

}  // extern "C"
