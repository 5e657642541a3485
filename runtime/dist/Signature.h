//===- Signature.h - Every rank agrees on a collective before data moves -----------*- C++ -*-===//
//
// Before a collective (and when a distributed tensor or mesh is created) the ranks exchange a
// fixed-size signature on the host: the operation, the tensor's name, dtype and shape, and the
// operation's parameters. Ranks that disagree fail together, on every rank, with a message that
// names the tensor and which ranks passed what (DTYPE_MISMATCH, SHAPE_MISMATCH, or
// INVALID_ARGUMENT for different operations or parameters), instead of NCCL hanging or reading
// past a buffer. TESSERA_DIST_NO_SIGNATURE_CHECKS skips the exchange for speed.
//
//===----------------------------------------------------------------------------------------===//
#ifndef TESSERA_RUNTIME_DIST_SIGNATURE_H
#define TESSERA_RUNTIME_DIST_SIGNATURE_H

#include <string>

#include "runtime/dist/Comm.h"

namespace tessera::dist {

enum class OpKind : int32_t {
  AllReduce,
  AllGather,
  ReduceScatter,
  Broadcast,
  AllToAll,
  SendRecv,
  Barrier,
  Split,
  MeshCreate,
  DTensorCreate,
  AllGatherOverlap,
  ReduceScatterOverlap,
  Count
};
const char* opKindName(OpKind k);

struct Signature {
  int32_t kind = 0;   // OpKind
  int32_t dtype = 0;  // tessera_dtype, 0 when the operation has no tensor
  int32_t rank = 0;
  int32_t param[4] = {0, 0, 0, 0};  // reduce op, root, order, flags; what each operation adds
  int64_t shape[TESSERA_MAX_RANK] = {};
  char name[40] = {};    // the tensor (or mesh) name, truncated
  char layout[64] = {};  // distributed tensors: their shard spec, as text
};

Signature makeSignature(OpKind kind, const char* name, int32_t dtype, int32_t rank, const int64_t* shape);
// "f32[1024, 3]"
std::string typeString(int32_t dtype, int32_t rank, const int64_t* shape);

// Exchanges signatures over c (or over `boot` for the world before a communicator exists) and
// compares them; a disagreement is an error on every rank. `what` names the call for messages.
tessera_status agree(tessera_comm_t& c, const Signature& mine, const std::string& what);
tessera_status agreeOver(Bootstrap& boot, const Signature& mine, const std::string& what, const std::string& where,
                         const Deadline& d);
// Send/recv: the two ranks swap signatures.
tessera_status agreePair(tessera_comm_t& c, int peer, const Signature& mine, const std::string& what);

}  // namespace tessera::dist

#endif
