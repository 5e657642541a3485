//===- TcpStore.h - The rendezvous of torchrun-style launches ----------------------*- C++ -*-===//
//
// A key-value store served by rank 0 at MASTER_ADDR:MASTER_PORT, as torch.distributed's
// TCPStore: SET, GET (answered once the key exists) and DEL over TCP. Only small host messages
// go through it (the NCCL unique id, device kinds, signatures of collectives); data moves over
// NCCL. Every client call has a deadline; a lost connection is COMM_ABORTED.
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

namespace tessera::dist {

class TcpStoreServer {
 public:
  ~TcpStoreServer();
  // Listens on `port` of every interface (0: a free port, see port()).
  static tessera_status start(int port, std::unique_ptr<TcpStoreServer>& out);
  int port() const { return port_; }

 private:
  void serve();
  int listenFd_ = -1, wakeFds_[2] = {-1, -1}, port_ = 0;
  std::thread thread_;
};

class TcpStoreClient {
 public:
  ~TcpStoreClient();
  // Connects, retrying until the deadline (rank 0 may start later than the others).
  static tessera_status connect(const std::string& host, int port, const Deadline& d,
                                std::shared_ptr<TcpStoreClient>& out);
  tessera_status set(const std::string& key, const std::string& value, const Deadline& d);
  tessera_status get(const std::string& key, std::string& value, const Deadline& d);
  tessera_status del(const std::string& key, const Deadline& d);
  std::string address() const { return host_ + ":" + std::to_string(port_); }

 private:
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

}  // namespace tessera::dist

#endif
