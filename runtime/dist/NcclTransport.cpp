//===- NcclTransport.cpp - GPU ranks: NCCL communicators ------------------------------------===//
//
// Communicators are created nonblocking (ncclConfig_t.blocking = 0), so initialisation, splits
// and enqueues are polled with ncclCommGetAsyncError against the deadline; a timeout aborts the
// communicator (ncclCommAbort) instead of waiting for a peer that is gone.
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

class NcclTransport final : public Transport {
 public:
  NcclTransport(const NcclLib& n, ncclComm_t comm, std::unique_ptr<Bootstrap> boot)
      : n_(n), comm_(comm), boot_(std::move(boot)) {}
  ~NcclTransport() override {
    if (!aborted_.load()) n_.ncclCommDestroy(comm_);
  }

  // Creates a communicator with a unique id from `boot`'s rank 0.
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
    ncclConfig_t config = NCCL_CONFIG_INITIALIZER;
    config.blocking = 0;
    ncclComm_t comm = nullptr;
    ncclResult_t r = n.ncclCommInitRankConfig(&comm, boot->size(), all[0], boot->rank(), &config);
    auto t = std::make_unique<NcclTransport>(n, comm, std::move(boot));
    if (r != ncclSuccess && r != ncclInProgress) {
      t->aborted_ = true;
      return fail(TESSERA_ERROR_NOT_SUPPORTED, "ncclCommInitRankConfig failed: ", n.ncclGetErrorString(r), ": ",
                  comm ? n.ncclGetLastError(comm) : "");
    }
    TESSERA_TRY(t->waitReady(d, "ncclCommInitRankConfig"));
    out = std::move(t);
    return TESSERA_SUCCESS;
  }

  tessera_dist_transport kind() const override { return TESSERA_TRANSPORT_NCCL; }
  int rank() const override { return boot_->rank(); }
  int size() const override { return boot_->size(); }
  Bootstrap& bootstrap() override { return *boot_; }
  ncclComm_t comm() const { return comm_; }

  // Polls a nonblocking communicator until its last call finished.
  tessera_status waitReady(const Deadline& d, const char* call) {
    Poller poller;
    for (;;) {
      ncclResult_t st = ncclInProgress;
      ncclResult_t r = n_.ncclCommGetAsyncError(comm_, &st);
      if (r != ncclSuccess) st = r;
      if (st == ncclSuccess) return TESSERA_SUCCESS;
      if (st != ncclInProgress) {
        std::string detail = n_.ncclGetLastError(comm_);
        abort();
        return fail(TESSERA_ERROR_COMM_ABORTED, call, " failed: ", n_.ncclGetErrorString(st),
                    detail.empty() ? "" : ": ", detail);
      }
      if (d.passed()) {
        abort();
        return fail(TESSERA_ERROR_TIMEOUT, call, " did not finish within ", d.seconds,
                    " s (a rank died or stalled); the NCCL communicator was aborted");
      }
      poller.pause();
    }
  }

  tessera_status finish(ncclResult_t r, const Deadline& d, const char* call) {
    if (r == ncclSuccess) return TESSERA_SUCCESS;
    if (r == ncclInProgress) return waitReady(d, call);
    std::string detail = n_.ncclGetLastError(comm_);
    return fail(TESSERA_ERROR_COMM_ABORTED, call, " failed: ", n_.ncclGetErrorString(r), detail.empty() ? "" : ": ",
                detail);
  }

  tessera_status exchange(const std::vector<PeerTransfer>& transfers, void* stream, const Deadline& d) override {
    auto s = static_cast<cudaStream_t>(stream);
    n_.ncclGroupStart();
    for (const PeerTransfer& t : transfers) {
      if (t.sendBytes) n_.ncclSend(t.send, t.sendBytes, ncclUint8, t.peer, comm_, s);
      if (t.recvBytes) n_.ncclRecv(t.recv, t.recvBytes, ncclUint8, t.peer, comm_, s);
    }
    return finish(n_.ncclGroupEnd(), d, "ncclSend/ncclRecv");
  }
  tessera_status allGather(const void* send, void* recv, size_t bytes, void* stream, const Deadline& d) override {
    return finish(n_.ncclAllGather(send, recv, bytes, ncclUint8, comm_, static_cast<cudaStream_t>(stream)), d,
                  "ncclAllGather");
  }
  tessera_status broadcast(void* buffer, size_t bytes, int root, void* stream, const Deadline& d) override {
    return finish(n_.ncclBroadcast(buffer, buffer, bytes, ncclUint8, root, comm_, static_cast<cudaStream_t>(stream)), d,
                  "ncclBroadcast");
  }
  tessera_status barrier(void* stream, const Deadline& d) override {
    if (!scratch_) {
      std::string why;
      const rt::CudaDriver* cu = rt::CudaDriver::load(why);
      if (!cu || cu->cuMemAlloc(&scratch_, 16) != CUDA_SUCCESS)
        return fail(TESSERA_ERROR_OUT_OF_MEMORY, "barrier: cannot allocate 16 bytes on the GPU");
    }
    void* p = reinterpret_cast<void*>(scratch_);
    return finish(n_.ncclAllReduce(p, p, 1, ncclInt32, ncclSum, comm_, static_cast<cudaStream_t>(stream)), d,
                  "ncclAllReduce (barrier)");
  }
  tessera_status nativeAllReduce(const void* send, void* recv, size_t count, int dtype, int op, void* stream,
                                 const Deadline& d) override {
    ncclDataType_t t;
    ncclRedOp_t o;
    if (!ncclType(dtype, n_.version, t) || !ncclOp(op, o)) return TESSERA_ERROR_NOT_SUPPORTED;
    return finish(n_.ncclAllReduce(send, recv, count, t, o, comm_, static_cast<cudaStream_t>(stream)), d,
                  "ncclAllReduce");
  }
  tessera_status nativeReduceScatter(const void* send, void* recv, size_t recvCount, int dtype, int op, void* stream,
                                     const Deadline& d) override {
    ncclDataType_t t;
    ncclRedOp_t o;
    if (!ncclType(dtype, n_.version, t) || !ncclOp(op, o)) return TESSERA_ERROR_NOT_SUPPORTED;
    return finish(n_.ncclReduceScatter(send, recv, recvCount, t, o, comm_, static_cast<cudaStream_t>(stream)), d,
                  "ncclReduceScatter");
  }
  tessera_status split(int color, int key, const Deadline& d, std::unique_ptr<Transport>& out) override {
    std::unique_ptr<Bootstrap> boot;
    TESSERA_TRY(boot_->split(color, key, d, boot));  // every rank is there before NCCL blocks
    ncclConfig_t config = NCCL_CONFIG_INITIALIZER;
    config.blocking = 0;
    ncclComm_t nc = nullptr;
    ncclResult_t r = n_.ncclCommSplit(comm_, color < 0 ? NCCL_SPLIT_NOCOLOR : color, key, &nc, &config);
    if (r != ncclSuccess && r != ncclInProgress) return finish(r, d, "ncclCommSplit");
    TESSERA_TRY(waitReady(d, "ncclCommSplit"));  // the parent, then the new communicator
    out = nullptr;
    if (color < 0 || !nc) return TESSERA_SUCCESS;
    auto t = std::make_unique<NcclTransport>(n_, nc, std::move(boot));
    TESSERA_TRY(t->waitReady(d, "ncclCommSplit"));
    out = std::move(t);
    return TESSERA_SUCCESS;
  }
  void abort() override {
    if (!aborted_.exchange(true)) n_.ncclCommAbort(comm_);
  }
  tessera_status asyncError() override {
    if (aborted_.load()) return TESSERA_SUCCESS;
    ncclResult_t st = ncclSuccess;
    if (n_.ncclCommGetAsyncError(comm_, &st) != ncclSuccess || st == ncclSuccess || st == ncclInProgress)
      return TESSERA_SUCCESS;
    std::string detail = n_.ncclGetLastError(comm_);
    return fail(TESSERA_ERROR_COMM_ABORTED, "NCCL reported an error: ", n_.ncclGetErrorString(st),
                detail.empty() ? "" : ": ", detail);
  }

 private:
  const NcclLib& n_;
  ncclComm_t comm_;
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
