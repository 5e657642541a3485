//===- NcclTransport.cpp - GPU ranks: NCCL communicators ------------------------------------===//
//
// Each transport holds two NCCL communicators over the same ranks:
// - a nonblocking one (ncclConfig_t.blocking = 0) for initialisation and splits, which are then
//   polled with ncclCommGetAsyncError against the deadline, a timeout aborting it instead of
//   waiting for a peer that is gone;
// - a blocking one, split from it, for the data. NCCL starts a host thread for every group of a
//   nonblocking communicator (every collective), which cost more than 100 us per call on two
//   H200s, on NCCL's own collectives as on ours. A blocking call only enqueues, except where
//   NCCL first connects to a peer; a HostCallGuard aborts the communicators from the watchdog
//   thread if such a call has not returned by the deadline, so that it does.
//
//===----------------------------------------------------------------------------------------===//
#include "runtime/Status.h"
#include "runtime/dist/Nccl.h"

#if !TESSERA_DIST_HAVE_NCCL
namespace tessera::dist {
tessera_status makeNcclTransport(std::unique_ptr<Bootstrap>, const Deadline&, std::unique_ptr<Transport>&) {
  return rt::fail(TESSERA_ERROR_NOT_SUPPORTED,
                  "libtessera_dist was built without nccl.h (CUDA toolkit), so GPU "
                  "ranks are unavailable; run CPU ranks with TESSERA_DEVICE=cpu");
}
}  // namespace tessera::dist
#else

#include <atomic>
#include <cstring>
#include <mutex>

#include "runtime/CudaDriver.h"
#include "runtime/dist/Watchdog.h"

namespace tessera::dist {

using rt::concat;
using rt::fail;

namespace {
bool ncclType(int dtype, int version, ncclDataType_t& out) {
  switch (dtype) {
    case TESSERA_F64: out = ncclFloat64; return true;
    case TESSERA_F32: out = ncclFloat32; return true;
    case TESSERA_F16: out = ncclFloat16; return true;
    case TESSERA_BF16: out = ncclBfloat16; return true;
    case TESSERA_F8_E4M3: out = ncclFloat8e4m3; return version >= 22400;
    case TESSERA_F8_E5M2: out = ncclFloat8e5m2; return version >= 22400;
    case TESSERA_I8: out = ncclInt8; return true;
    case TESSERA_U8: out = ncclUint8; return true;
    case TESSERA_I32: out = ncclInt32; return true;
    case TESSERA_U32: out = ncclUint32; return true;
    case TESSERA_I64: out = ncclInt64; return true;
    case TESSERA_U64: out = ncclUint64; return true;
  }
  return false;
}

bool ncclOp(int op, ncclRedOp_t& out) {
  switch (op) {
    case 0: out = ncclSum; return true;
    case 1: out = ncclMax; return true;
    case 2: out = ncclMin; return true;
    case 3: out = ncclAvg; return true;
  }
  return false;
}

ncclConfig_t configOf(bool blocking) {
  ncclConfig_t c = NCCL_CONFIG_INITIALIZER;
  c.blocking = blocking ? 1 : 0;
  return c;
}

std::string lastError(const NcclLib& n, ncclComm_t c) {
  std::string detail = c ? n.ncclGetLastError(c) : "";
  return detail.empty() ? "" : ": " + detail;
}

// Polls a nonblocking communicator until its last call finished; on a failure or at the deadline
// it is aborted (and `aborted` set).
tessera_status waitComm(const NcclLib& n, ncclComm_t c, const Deadline& d, const char* call, bool& aborted) {
  Poller poller;
  for (;;) {
    ncclResult_t st = ncclInProgress;
    ncclResult_t r = n.ncclCommGetAsyncError(c, &st);
    if (r != ncclSuccess) st = r;
    if (st == ncclSuccess) return TESSERA_SUCCESS;
    if (st != ncclInProgress || d.passed()) {
      std::string detail = lastError(n, c);
      aborted = true;
      n.ncclCommAbort(c);
      if (st != ncclInProgress)
        return fail(TESSERA_ERROR_COMM_ABORTED, call, " failed: ", n.ncclGetErrorString(st), detail);
      return fail(TESSERA_ERROR_TIMEOUT, call, " did not finish within ", d.seconds,
                  " s (a rank died or stalled); the NCCL communicator was aborted");
    }
    poller.pause();
  }
}

// Splits the nonblocking `parent` into a communicator of `blocking` mode (NCCL_COMM_NULL where
// color < 0), polling the parent.
tessera_status splitComm(const NcclLib& n, ncclComm_t parent, int color, int key, bool blocking, const Deadline& d,
                         ncclComm_t& out, bool& parentAborted) {
  ncclConfig_t config = configOf(blocking);
  out = nullptr;
  ncclResult_t r = n.ncclCommSplit(parent, color < 0 ? NCCL_SPLIT_NOCOLOR : color, key, &out, &config);
  if (r != ncclSuccess && r != ncclInProgress)
    return fail(TESSERA_ERROR_COMM_ABORTED, "ncclCommSplit failed: ", n.ncclGetErrorString(r), lastError(n, parent));
  TESSERA_TRY(waitComm(n, parent, d, "ncclCommSplit", parentAborted));
  if (color >= 0 && !out) return fail(TESSERA_ERROR_INTERNAL, "ncclCommSplit finished without a communicator");
  return TESSERA_SUCCESS;
}

class NcclTransport final : public Transport {
 public:
  NcclTransport(const NcclLib& n, ncclComm_t setup, ncclComm_t data, std::unique_ptr<Bootstrap> boot)
      : n_(n), setup_(setup), comm_(data), boot_(std::move(boot)) {}
  ~NcclTransport() override {
    if (aborted_.load()) return;
    if (comm_) n_.ncclCommDestroy(comm_);
    if (setup_) n_.ncclCommDestroy(setup_);
  }

  // The two communicators, with a unique id from `boot`'s rank 0.
  static tessera_status create(const NcclLib& n, std::unique_ptr<Bootstrap> boot, const Deadline& d,
                               std::unique_ptr<Transport>& out) {
    ncclUniqueId id{};
    if (boot->rank() == 0) {
      ncclResult_t r = n.ncclGetUniqueId(&id);
      if (r != ncclSuccess)
        return fail(TESSERA_ERROR_NOT_SUPPORTED, "ncclGetUniqueId failed: ", n.ncclGetErrorString(r));
    }
    std::vector<ncclUniqueId> all(boot->size());
    TESSERA_TRY(boot->allGather(&id, sizeof id, all.data(), d));
    ncclConfig_t config = configOf(false);
    ncclComm_t setup = nullptr;
    ncclResult_t r = n.ncclCommInitRankConfig(&setup, boot->size(), all[0], boot->rank(), &config);
    if (r != ncclSuccess && r != ncclInProgress)
      return fail(TESSERA_ERROR_NOT_SUPPORTED, "ncclCommInitRankConfig failed: ", n.ncclGetErrorString(r),
                  lastError(n, setup));
    bool aborted = false;
    TESSERA_TRY(waitComm(n, setup, d, "ncclCommInitRankConfig", aborted));
    ncclComm_t data = nullptr;
    if (tessera_status st = splitComm(n, setup, 0, boot->rank(), true, d, data, aborted); st != TESSERA_SUCCESS) {
      if (!aborted) n.ncclCommAbort(setup);
      return st;
    }
    out = std::make_unique<NcclTransport>(n, setup, data, std::move(boot));
    return TESSERA_SUCCESS;
  }

  tessera_dist_transport kind() const override { return TESSERA_TRANSPORT_NCCL; }
  int rank() const override { return boot_->rank(); }
  int size() const override { return boot_->size(); }
  Bootstrap& bootstrap() override { return *boot_; }
  ncclComm_t comm() const { return comm_; }

  // A blocking call's result; `guard` fired when the watchdog had to abort the communicators.
  tessera_status finish(ncclResult_t r, const HostCallGuard& guard, const Deadline& d, const char* call) {
    if (guard.fired())
      return fail(TESSERA_ERROR_TIMEOUT, call, " did not return within ", d.seconds,
                  " s (a rank died or stalled while NCCL connected to it); the NCCL communicator was aborted");
    if (r == ncclSuccess) return TESSERA_SUCCESS;
    return fail(TESSERA_ERROR_COMM_ABORTED, call, " failed: ", n_.ncclGetErrorString(r), lastError(n_, comm_));
  }
  HostCallGuard guard(const Deadline& d) {
    return HostCallGuard([this] { abort(); }, d);
  }

  tessera_status exchange(const std::vector<PeerTransfer>& transfers, void* stream, const Deadline& d) override {
    auto s = static_cast<cudaStream_t>(stream);
    HostCallGuard g = guard(d);
    n_.ncclGroupStart();
    for (const PeerTransfer& t : transfers) {
      if (t.sendBytes) n_.ncclSend(t.send, t.sendBytes, ncclUint8, t.peer, comm_, s);
      if (t.recvBytes) n_.ncclRecv(t.recv, t.recvBytes, ncclUint8, t.peer, comm_, s);
    }
    return finish(n_.ncclGroupEnd(), g, d, "ncclSend/ncclRecv");
  }
  tessera_status allGather(const void* send, void* recv, size_t bytes, void* stream, const Deadline& d) override {
    HostCallGuard g = guard(d);
    ncclResult_t r = n_.ncclAllGather(send, recv, bytes, ncclUint8, comm_, static_cast<cudaStream_t>(stream));
    return finish(r, g, d, "ncclAllGather");
  }
  tessera_status broadcast(void* buffer, size_t bytes, int root, void* stream, const Deadline& d) override {
    HostCallGuard g = guard(d);
    ncclResult_t r = n_.ncclBroadcast(buffer, buffer, bytes, ncclUint8, root, comm_, static_cast<cudaStream_t>(stream));
    return finish(r, g, d, "ncclBroadcast");
  }
  tessera_status barrier(void* stream, const Deadline& d) override {
    if (!scratch_) {
      std::string why;
      const rt::CudaDriver* cu = rt::CudaDriver::load(why);
      if (!cu || cu->cuMemAlloc(&scratch_, 16) != CUDA_SUCCESS)
        return fail(TESSERA_ERROR_OUT_OF_MEMORY, "barrier: cannot allocate 16 bytes on the GPU");
    }
    void* p = reinterpret_cast<void*>(scratch_);
    HostCallGuard g = guard(d);
    ncclResult_t r = n_.ncclAllReduce(p, p, 1, ncclInt32, ncclSum, comm_, static_cast<cudaStream_t>(stream));
    return finish(r, g, d, "ncclAllReduce (barrier)");
  }
  tessera_status nativeAllReduce(const void* send, void* recv, size_t count, int dtype, int op, void* stream,
                                 const Deadline& d) override {
    ncclDataType_t t;
    ncclRedOp_t o;
    if (!ncclType(dtype, n_.version, t) || !ncclOp(op, o)) return TESSERA_ERROR_NOT_SUPPORTED;
    HostCallGuard g = guard(d);
    ncclResult_t r = n_.ncclAllReduce(send, recv, count, t, o, comm_, static_cast<cudaStream_t>(stream));
    return finish(r, g, d, "ncclAllReduce");
  }
  tessera_status nativeReduceScatter(const void* send, void* recv, size_t recvCount, int dtype, int op, void* stream,
                                     const Deadline& d) override {
    ncclDataType_t t;
    ncclRedOp_t o;
    if (!ncclType(dtype, n_.version, t) || !ncclOp(op, o)) return TESSERA_ERROR_NOT_SUPPORTED;
    HostCallGuard g = guard(d);
    ncclResult_t r = n_.ncclReduceScatter(send, recv, recvCount, t, o, comm_, static_cast<cudaStream_t>(stream));
    return finish(r, g, d, "ncclReduceScatter");
  }
  // Both communicators split from the nonblocking one, in the same order on every rank.
  tessera_status split(int color, int key, const Deadline& d, std::unique_ptr<Transport>& out) override {
    std::unique_ptr<Bootstrap> boot;
    TESSERA_TRY(boot_->split(color, key, d, boot));  // every rank is there before NCCL waits
    out = nullptr;
    ncclComm_t setup = nullptr, data = nullptr;
    bool parentAborted = false;
    tessera_status st = splitComm(n_, setup_, color, key, false, d, setup, parentAborted);
    if (st == TESSERA_SUCCESS) st = splitComm(n_, setup_, color, key, true, d, data, parentAborted);
    if (parentAborted) abort();
    if (st != TESSERA_SUCCESS) {
      for (ncclComm_t c : {setup, data})
        if (c) n_.ncclCommAbort(c);
      return st;
    }
    if (color >= 0) out = std::make_unique<NcclTransport>(n_, setup, data, std::move(boot));
    return TESSERA_SUCCESS;
  }
  void abort() override {
    if (aborted_.exchange(true)) return;
    n_.ncclCommAbort(comm_);
    n_.ncclCommAbort(setup_);
  }
  tessera_status asyncError() override {
    if (aborted_.load()) return TESSERA_SUCCESS;
    ncclResult_t st = ncclSuccess;
    if (n_.ncclCommGetAsyncError(comm_, &st) != ncclSuccess || st == ncclSuccess || st == ncclInProgress)
      return TESSERA_SUCCESS;
    return fail(TESSERA_ERROR_COMM_ABORTED, "NCCL reported an error: ", n_.ncclGetErrorString(st),
                lastError(n_, comm_));
  }

 private:
  const NcclLib& n_;
  ncclComm_t setup_, comm_;
  std::unique_ptr<Bootstrap> boot_;
  std::atomic<bool> aborted_{false};
  CUdeviceptr scratch_ = 0;
};

}  // namespace

ncclComm_t ncclCommOf(Transport& t) {
  auto* n = dynamic_cast<NcclTransport*>(&t);
  return n ? n->comm() : nullptr;
}

tessera_status makeNcclTransport(std::unique_ptr<Bootstrap> boot, const Deadline& d, std::unique_ptr<Transport>& out) {
  std::string why;
  const NcclLib* n = NcclLib::load(why);
  if (!n) return fail(TESSERA_ERROR_NOT_SUPPORTED, "GPU ranks need NCCL: ", why);
  return NcclTransport::create(*n, std::move(boot), d, out);
}

}  // namespace tessera::dist
#endif
