//===- TcpStore.h - The rendezvous of torchrun-style launches ----------------------*- C++ -*-===//
//
// A key-value store served by rank 0 at MASTER_ADDR:MASTER_PORT, as torch.distributed's
// TCPStore: SET, GET (answered once the key exists) and DEL over TCP. Only small host messages
// go through it (the NCCL unique id, device kinds, signatures of collectives); data moves over
// NCCL. It lets no one in (StoreProtocol.h): the server listens only on MASTER_ADDR's interface
// (loopback when every rank is on one host), every connection proves that it knows the job's
// secret (TESSERA_DIST_SECRET, which tessera-run generates) and the server proves it back, keys
// and values are bounded, and stalled connections are closed. Every client call has a deadline;
// a lost connection is COMM_ABORTED.
//
//===----------------------------------------------------------------------------------------===//
#ifndef TESSERA_RUNTIME_DIST_TCPSTORE_H
#define TESSERA_RUNTIME_DIST_TCPSTORE_H

#include <atomic>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

#include "runtime/dist/Bootstrap.h"
#include "runtime/dist/StoreProtocol.h"

namespace tessera::dist {

class TcpStoreServer {
 public:
  ~TcpStoreServer();
  // Listens on `port` (0: a free one, see port()) of the interface whose address `host` names
  // ("127.0.0.1" for a job on one host), serving clients that know `secret`.
  static tessera_status start(const std::string& host, int port, const std::string& secret, const store::Limits& limits,
                              std::unique_ptr<TcpStoreServer>& out);
  int port() const { return port_; }
  // The address it listens on ("127.0.0.1:29500").
  const std::string& listening() const { return listening_; }
  size_t connections() const { return connections_.load(); }
  // Waits until at most `n` connections remain (the other ranks left) or the deadline passed.
  void waitForConnections(size_t n, const Deadline& d) const;

 private:
  void serve();
  int listenFd_ = -1, wakeFds_[2] = {-1, -1}, port_ = 0;
  std::string listening_, secret_;
  store::Limits limits_;
  std::atomic<size_t> connections_{0};
  std::thread thread_;
};

class TcpStoreClient {
 public:
  ~TcpStoreClient();
  // Connects, retrying until the deadline (rank 0 may start later than the others), and
  // authenticates both ways with `secret`.
  static tessera_status connect(const std::string& host, int port, const std::string& secret, const Deadline& d,
                                std::shared_ptr<TcpStoreClient>& out);
  tessera_status set(const std::string& key, const std::string& value, const Deadline& d);
  tessera_status get(const std::string& key, std::string& value, const Deadline& d);
  tessera_status del(const std::string& key, const Deadline& d);
  std::string address() const { return host_ + ":" + std::to_string(port_); }

 private:
  tessera_status handshake(const std::string& secret, const Deadline& d);
  tessera_status sendAll(const std::string& bytes, const std::string& what, const Deadline& d);
  tessera_status readExact(char* dst, size_t len, const std::string& what, const Deadline& d);
  tessera_status readReply(std::string& value, const std::string& what, const Deadline& d);
  tessera_status request(uint8_t op, const std::string& key, const std::string& value, std::string* reply,
                         const Deadline& d);
  std::mutex mutex_;
  int fd_ = -1;
  bool broken_ = false;  // a request timed out or the connection dropped: no further use
  std::string host_;
  int port_ = 0;
};

// A group of world ranks talking through the store under a key prefix.
std::unique_ptr<Bootstrap> makeStoreBootstrap(std::shared_ptr<TcpStoreClient> client, std::string prefix,
                                              std::vector<int> members, int me);

// kNonce random bytes from the kernel (getrandom).
std::string randomBytes(size_t n);

}  // namespace tessera::dist

#endif
