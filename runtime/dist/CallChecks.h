//===- CallChecks.h - What every collective call checks before anything moves ------*- C++ -*-===//
//
// Each collective of the C API checks its arguments locally (dense views of the right dtypes and
// sizes, memory the device can use, no partial overlaps), then the ranks agree on the call's
// signature, then the algorithm is issued on the stream. These are the shared first steps
// (CollectiveApi.cpp, OverlapApi.cpp).
//
//===----------------------------------------------------------------------------------------===//
#ifndef TESSERA_RUNTIME_DIST_CALLCHECKS_H
#define TESSERA_RUNTIME_DIST_CALLCHECKS_H

#include <string>

#include "runtime/dist/Comm.h"
#include "runtime/dist/Signature.h"

namespace tessera::dist {

struct Call {
  const char* fn;  // "tessera_all_reduce"
  OpKind kind;
  tessera_comm comm;
  std::string name = "tensor";
  tessera_stream stream = nullptr;
  bool deterministic = true;
  int32_t order = TESSERA_ORDER_TREE;
  std::string what() const;  // "all_reduce of 'grads'"
};

struct View {
  const tessera_tensor* t = nullptr;
  int64_t numel = 0;
  size_t bytes = 0;
  char* data() const { return static_cast<char*>(t->data); }
};

// The communicator, and the options (name, stream, flags, order).
tessera_status begin(Call& c, const tessera_collective_options* opts);
// A dense view of memory the communicator's device can use.
tessera_status checkView(const Call& c, const char* role, const tessera_tensor* t, View& v);
tessera_status sameDtype(const Call& c, const View& a, const View& b);
tessera_status noOverlap(const Call& c, const View& a, const View& b);
tessera_status checkReducible(const Call& c, int32_t dtype, int32_t op);
Signature signatureOf(const Call& c, const View& v, int32_t p0 = 0, int32_t p1 = 0);
std::string sizeMismatch(const Call& c, const char* rule, const View& send, const View& recv);
// The call's options, both views, one dtype.
tessera_status beginSendRecv(Call& c, const tessera_collective_options* opts, const tessera_tensor* send,
                             const tessera_tensor* recv, View& s, View& r);
// send and recv of as many elements, either the same memory (in place) or not overlapping.
tessera_status sameSizeInPlaceOrApart(const Call& c, const View& s, const View& r);

}  // namespace tessera::dist

#endif
