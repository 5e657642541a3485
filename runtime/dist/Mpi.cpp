//===- Mpi.cpp - MPI bootstrap and transport ------------------------------------------------===//
#include "runtime/dist/Mpi.h"

#include "runtime/Status.h"

#if !TESSERA_DIST_HAVE_MPI
#include <cstdlib>
#include <unistd.h>
namespace tessera::dist {
namespace {
tessera_status noMpi() {
  return rt::fail(TESSERA_ERROR_NOT_SUPPORTED,
                  "libtessera_dist was built without MPI (install "
                  "libopenmpi-dev and rebuild): CPU ranks and mpirun launches are unavailable");
}
}  // namespace
bool haveMpi() { return false; }
tessera_status mpiInit(bool&, int&, int&) { return noMpi(); }
tessera_status mpiFinalize() { return noMpi(); }
void mpiAbort(int code) { ::_exit(code); }
tessera_status mpiLocalRank(int&, int&) { return noMpi(); }
tessera_status makeMpiWorldBootstrap(std::unique_ptr<Bootstrap>&) { return noMpi(); }
tessera_status makeMpiWorldTransport(std::unique_ptr<Transport>&) { return noMpi(); }
}  // namespace tessera::dist
#else

// The C API only: no C++ bindings (they would need libmpi_cxx).
#define OMPI_SKIP_MPICXX 1
#define MPICH_SKIP_MPICXX 1
#include <algorithm>
#include <climits>
#include <cstring>
#include <mpi.h>
#include <unistd.h>
#include <vector>

namespace tessera::dist {

using rt::concat;
using rt::fail;

namespace {

constexpr int kDataTag = 7301, kExchangeTag = 7302;
constexpr size_t kSegment = size_t(1) << 30;  // bytes per MPI message (counts are int)

std::string mpiError(int rc) {
  char text[MPI_MAX_ERROR_STRING];
  int len = 0;
  if (MPI_Error_string(rc, text, &len) != MPI_SUCCESS) return concat("MPI error ", rc);
  return std::string(text, static_cast<size_t>(len));
}

tessera_status check(int rc, const char* call) {
  if (rc == MPI_SUCCESS) return TESSERA_SUCCESS;
  return fail(TESSERA_ERROR_COMM_ABORTED, call, " failed: ", mpiError(rc));
}

// "rank 2" / "ranks 1 and 3" (communicator ranks, in order, once each).
std::string rankNames(std::vector<int> ranks) {
  std::sort(ranks.begin(), ranks.end());
  ranks.erase(std::unique(ranks.begin(), ranks.end()), ranks.end());
  std::string s = ranks.size() == 1 ? "rank " : "ranks ";
  for (size_t i = 0; i < ranks.size(); ++i) s += concat(i == 0 ? "" : i + 1 == ranks.size() ? " and " : ", ", ranks[i]);
  return s;
}

// Polls the requests until all completed or the deadline passed (the requests then stay
// pending: the caller aborts the communicator). `peers` (one per request, if given) lets a
// timeout name the ranks that did not answer.
tessera_status waitAll(std::vector<MPI_Request>& reqs, const Deadline& d, const std::vector<int>* peers = nullptr) {
  Poller poller;
  for (;;) {
    int done = 0;
    int rc = MPI_Testall(static_cast<int>(reqs.size()), reqs.data(), &done, MPI_STATUSES_IGNORE);
    if (rc != MPI_SUCCESS)
      return fail(TESSERA_ERROR_COMM_ABORTED,
                  "MPI reported an error while waiting for the other ranks: ", mpiError(rc));
    if (done) return TESSERA_SUCCESS;
    if (d.passed()) {
      std::vector<int> late;
      for (size_t i = 0; peers && i < reqs.size(); ++i) {
        int flag = 0;
        MPI_Test(&reqs[i], &flag, MPI_STATUS_IGNORE);
        if (!flag) late.push_back((*peers)[i]);
      }
      return fail(TESSERA_ERROR_TIMEOUT, late.empty() ? std::string("the other ranks") : rankNames(late),
                  " did not answer within ", d.seconds, " s (a rank died or stalled)");
    }
    poller.pause();
  }
}

// A duplicated communicator that returns errors; freed with its last user.
struct CommHandle {
  MPI_Comm comm = MPI_COMM_NULL;
  bool aborted = false;
  ~CommHandle() {
    int finalized = 0;
    MPI_Finalized(&finalized);
    if (comm != MPI_COMM_NULL && !finalized && !aborted) MPI_Comm_free(&comm);
  }
};
using Comm = std::shared_ptr<CommHandle>;

Comm adopt(MPI_Comm c) {
  auto h = std::make_shared<CommHandle>();
  h->comm = c;
  MPI_Comm_set_errhandler(c, MPI_ERRORS_RETURN);
  return h;
}

int rankOf(MPI_Comm c) {
  int r = 0;
  MPI_Comm_rank(c, &r);
  return r;
}
int sizeOf(MPI_Comm c) {
  int s = 0;
  MPI_Comm_size(c, &s);
  return s;
}

// Posts the sends and receives of `bytes` bytes in messages of at most kSegment bytes.
void postSends(std::vector<MPI_Request>& reqs, const void* buf, size_t bytes, int peer, int tag, MPI_Comm c) {
  for (size_t off = 0; off < bytes; off += kSegment) {
    reqs.emplace_back();
    MPI_Isend(static_cast<const char*>(buf) + off, static_cast<int>(std::min(kSegment, bytes - off)), MPI_BYTE, peer,
              tag, c, &reqs.back());
  }
}
void postRecvs(std::vector<MPI_Request>& reqs, void* buf, size_t bytes, int peer, int tag, MPI_Comm c) {
  for (size_t off = 0; off < bytes; off += kSegment) {
    reqs.emplace_back();
    MPI_Irecv(static_cast<char*>(buf) + off, static_cast<int>(std::min(kSegment, bytes - off)), MPI_BYTE, peer, tag, c,
              &reqs.back());
  }
}

class MpiBootstrap final : public Bootstrap {
 public:
  explicit MpiBootstrap(Comm c) : c_(std::move(c)) {}
  int rank() const override { return rankOf(c_->comm); }
  int size() const override { return sizeOf(c_->comm); }
  tessera_status allGather(const void* mine, size_t bytes, void* all, const Deadline& d) override {
    std::vector<MPI_Request> reqs(1);
    TESSERA_TRY(check(MPI_Iallgather(mine, static_cast<int>(bytes), MPI_BYTE, all, static_cast<int>(bytes), MPI_BYTE,
                                     c_->comm, &reqs[0]),
                      "MPI_Iallgather"));
    return waitAll(reqs, d);
  }
  tessera_status split(int color, int key, const Deadline& d, std::unique_ptr<Bootstrap>& out) override {
    Comm c;
    TESSERA_TRY(splitComm(color, key, d, c));
    out = c ? std::make_unique<MpiBootstrap>(c) : nullptr;
    return TESSERA_SUCCESS;
  }
  // Everyone confirms (within the deadline) that it takes part before MPI_Comm_split, which
  // cannot time out.
  tessera_status splitComm(int color, int key, const Deadline& d, Comm& out) {
    int mine[2] = {color, key};
    std::vector<int> all(2 * size());
    TESSERA_TRY(allGather(mine, sizeof mine, all.data(), d));
    MPI_Comm nc = MPI_COMM_NULL;
    TESSERA_TRY(check(MPI_Comm_split(c_->comm, color < 0 ? MPI_UNDEFINED : color, key, &nc), "MPI_Comm_split"));
    out = nc == MPI_COMM_NULL ? nullptr : adopt(nc);
    return TESSERA_SUCCESS;
  }
  tessera_status exchange(int peer, const void* mine, void* theirs, size_t bytes, const Deadline& d) override {
    std::vector<MPI_Request> reqs;
    postRecvs(reqs, theirs, bytes, peer, kExchangeTag, c_->comm);
    postSends(reqs, mine, bytes, peer, kExchangeTag, c_->comm);
    std::vector<int> peers(reqs.size(), peer);
    return waitAll(reqs, d, &peers);
  }
  std::string describe() const override { return "MPI"; }
  const Comm& comm() const { return c_; }

 private:
  Comm c_;
};

MPI_Datatype mpiType(int dtype) {
  switch (dtype) {
    case TESSERA_F64: return MPI_DOUBLE;
    case TESSERA_F32: return MPI_FLOAT;
    case TESSERA_I8: return MPI_INT8_T;
    case TESSERA_I16: return MPI_INT16_T;
    case TESSERA_I32: return MPI_INT32_T;
    case TESSERA_I64: return MPI_INT64_T;
    case TESSERA_U8: return MPI_UINT8_T;
    case TESSERA_U16: return MPI_UINT16_T;
    case TESSERA_U32: return MPI_UINT32_T;
    case TESSERA_U64: return MPI_UINT64_T;
  }
  return MPI_DATATYPE_NULL;
}
MPI_Op mpiOp(int op) {
  switch (op) {
    case 0: return MPI_SUM;
    case 1: return MPI_MAX;
    case 2: return MPI_MIN;
  }
  return MPI_OP_NULL;
}

class MpiTransport final : public Transport {
 public:
  explicit MpiTransport(Comm c) : boot_(c), c_(std::move(c)) {}
  tessera_dist_transport kind() const override { return TESSERA_TRANSPORT_MPI; }
  int rank() const override { return rankOf(c_->comm); }
  int size() const override { return sizeOf(c_->comm); }
  Bootstrap& bootstrap() override { return boot_; }

  tessera_status exchange(const std::vector<PeerTransfer>& transfers, void*, const Deadline& d) override {
    std::vector<MPI_Request> reqs;
    std::vector<int> peers;
    for (const PeerTransfer& t : transfers) {
      postRecvs(reqs, t.recv, t.recvBytes, t.peer, kDataTag, c_->comm);
      peers.resize(reqs.size(), t.peer);
    }
    for (const PeerTransfer& t : transfers) {
      postSends(reqs, t.send, t.sendBytes, t.peer, kDataTag, c_->comm);
      peers.resize(reqs.size(), t.peer);
    }
    return waitAll(reqs, d, &peers);
  }
  tessera_status allGather(const void* send, void* recv, size_t bytes, void* stream, const Deadline& d) override {
    int me = rank(), n = size();
    char* mine = static_cast<char*>(recv) + size_t(me) * bytes;
    if (bytes > size_t(INT_MAX)) {
      if (send != mine) std::memmove(mine, send, bytes);
      std::vector<PeerTransfer> t;
      for (int r = 0; r < n; ++r)
        if (r != me) t.push_back({r, mine, bytes, static_cast<char*>(recv) + size_t(r) * bytes, bytes});
      return exchange(t, stream, d);
    }
    std::vector<MPI_Request> reqs(1);
    int count = static_cast<int>(bytes);
    TESSERA_TRY(check(
        MPI_Iallgather(send == mine ? MPI_IN_PLACE : send, count, MPI_BYTE, recv, count, MPI_BYTE, c_->comm, &reqs[0]),
        "MPI_Iallgather"));
    return waitAll(reqs, d);
  }
  tessera_status broadcast(void* buffer, size_t bytes, int root, void*, const Deadline& d) override {
    std::vector<MPI_Request> reqs;
    for (size_t off = 0; off < bytes; off += kSegment) {
      reqs.emplace_back();
      TESSERA_TRY(check(MPI_Ibcast(static_cast<char*>(buffer) + off, static_cast<int>(std::min(kSegment, bytes - off)),
                                   MPI_BYTE, root, c_->comm, &reqs.back()),
                        "MPI_Ibcast"));
    }
    return waitAll(reqs, d);
  }
  tessera_status barrier(void*, const Deadline& d) override {
    std::vector<MPI_Request> reqs(1);
    TESSERA_TRY(check(MPI_Ibarrier(c_->comm, &reqs[0]), "MPI_Ibarrier"));
    return waitAll(reqs, d);
  }
  tessera_status nativeAllReduce(const void* send, void* recv, size_t count, int dtype, int op, void*,
                                 const Deadline& d) override {
    MPI_Datatype t = mpiType(dtype);
    MPI_Op o = mpiOp(op);
    if (t == MPI_DATATYPE_NULL || o == MPI_OP_NULL || count > size_t(INT_MAX)) return TESSERA_ERROR_NOT_SUPPORTED;
    std::vector<MPI_Request> reqs(1);
    TESSERA_TRY(check(
        MPI_Iallreduce(send == recv ? MPI_IN_PLACE : send, recv, static_cast<int>(count), t, o, c_->comm, &reqs[0]),
        "MPI_Iallreduce"));
    return waitAll(reqs, d);
  }
  tessera_status nativeReduceScatter(const void* send, void* recv, size_t recvCount, int dtype, int op, void*,
                                     const Deadline& d) override {
    MPI_Datatype t = mpiType(dtype);
    MPI_Op o = mpiOp(op);
    if (t == MPI_DATATYPE_NULL || o == MPI_OP_NULL || recvCount > size_t(INT_MAX)) return TESSERA_ERROR_NOT_SUPPORTED;
    std::vector<MPI_Request> reqs(1);
    TESSERA_TRY(check(MPI_Ireduce_scatter_block(send, recv, static_cast<int>(recvCount), t, o, c_->comm, &reqs[0]),
                      "MPI_Ireduce_scatter_block"));
    return waitAll(reqs, d);
  }
  tessera_status split(int color, int key, const Deadline& d, std::unique_ptr<Transport>& out) override {
    Comm c;
    TESSERA_TRY(boot_.splitComm(color, key, d, c));
    out = c ? std::make_unique<MpiTransport>(c) : nullptr;
    return TESSERA_SUCCESS;
  }
  // MPI cannot cancel what is pending: the communicator is left alone (never freed, since
  // MPI_Comm_free could wait for the dead peer).
  void abort() override { c_->aborted = true; }

 private:
  MpiBootstrap boot_;
  Comm c_;
};

Comm dupWorld() {
  MPI_Comm c = MPI_COMM_NULL;
  MPI_Comm_dup(MPI_COMM_WORLD, &c);
  return adopt(c);
}

}  // namespace

bool haveMpi() { return true; }

tessera_status mpiInit(bool& initialisedHere, int& rank, int& size) {
  int initialized = 0;
  MPI_Initialized(&initialized);
  initialisedHere = !initialized;
  if (!initialized) {
    int provided = 0;
    TESSERA_TRY(check(MPI_Init_thread(nullptr, nullptr, MPI_THREAD_SERIALIZED, &provided), "MPI_Init_thread"));
  }
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  return TESSERA_SUCCESS;
}

tessera_status mpiFinalize() { return check(MPI_Finalize(), "MPI_Finalize"); }

void mpiAbort(int code) {
  MPI_Abort(MPI_COMM_WORLD, code);
  ::_exit(code);
}

tessera_status mpiLocalRank(int& localRank, int& localSize) {
  MPI_Comm node = MPI_COMM_NULL;
  TESSERA_TRY(
      check(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node), "MPI_Comm_split_type"));
  MPI_Comm_rank(node, &localRank);
  MPI_Comm_size(node, &localSize);
  MPI_Comm_free(&node);
  return TESSERA_SUCCESS;
}

tessera_status makeMpiWorldBootstrap(std::unique_ptr<Bootstrap>& out) {
  out = std::make_unique<MpiBootstrap>(dupWorld());
  return TESSERA_SUCCESS;
}
tessera_status makeMpiWorldTransport(std::unique_ptr<Transport>& out) {
  out = std::make_unique<MpiTransport>(dupWorld());
  return TESSERA_SUCCESS;
}

}  // namespace tessera::dist
#endif
