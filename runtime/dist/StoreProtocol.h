//===- StoreProtocol.h - The rendezvous protocol, without sockets ------------------*- C++ -*-===//
//
// What rank 0's rendezvous server does with the bytes of its connections, as a pure state
// machine (the server in TcpStore.cpp moves the bytes; tests/fuzz/store_fuzz.cpp feeds it
// arbitrary ones). A connection must prove that it knows the job's secret before anything else:
//
//   server -> client  hello:  "TSRV" 1 nonce_s[16]
//   client -> server  auth:   "TCLI" nonce_c[16] HMAC(secret, "client" nonce_s nonce_c)[32]
//   server -> client  0 HMAC(secret, "server" nonce_c nonce_s)[32]    (accepted; the client checks it)
//                     1 u32 length, message                            (refused, then closed)
//
// then requests  op[1] key_length[u32] key value_length[u32] value  (op: 1 SET, 2 GET, 3 DEL;
// GET is answered once the key exists) and replies  status[1] length[u32] bytes  (status 0: the
// value or nothing; 1: an error message, after which the connection is closed). Lengths are
// little-endian. Keys are at most kMaxKey bytes and values kMaxValue: a longer one is refused
// without reading it. A connection that does not finish its handshake within
// Limits::handshakeSeconds, or leaves a message unfinished for Limits::messageSeconds, is
// closed; a connection waiting for a GET's key is not idle (its peer may take a whole
// collective's timeout to arrive).
//
//===----------------------------------------------------------------------------------------===//
#ifndef TESSERA_RUNTIME_DIST_STOREPROTOCOL_H
#define TESSERA_RUNTIME_DIST_STOREPROTOCOL_H

#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <unordered_map>
#include <vector>

namespace tessera::dist::store {

enum Op : uint8_t { kSet = 1, kGet = 2, kDel = 3 };

constexpr size_t kNonce = 16, kMac = 32;
constexpr size_t kHelloBytes = 4 + 1 + kNonce, kAuthBytes = 4 + kNonce + kMac;
constexpr uint8_t kVersion = 1;
constexpr size_t kMaxKey = 512;                        // bytes of a key
constexpr size_t kMaxValue = size_t(1) << 16;          // bytes of a value
constexpr size_t kMaxStoredBytes = size_t(64) << 20;   // all keys and values together
constexpr size_t kMaxPendingOutput = size_t(4) << 20;  // replies a connection has not read
constexpr size_t kMaxConnections = 4096;

struct Limits {
  double handshakeSeconds = 30;
  double messageSeconds = 30;
};

// The client's proof and the server's, over both nonces.
std::string clientProof(const std::string& secret, const std::string& serverNonce, const std::string& clientNonce);
std::string serverProof(const std::string& secret, const std::string& clientNonce, const std::string& serverNonce);

// A request or reply in wire format.
std::string encodeRequest(uint8_t op, const std::string& key, const std::string& value);
std::string encodeReply(uint8_t status, const std::string& bytes);

// The server's state: every key, the GETs waiting for keys, and each connection's session.
class Core {
 public:
  using Nonces = std::function<std::string()>;  // kNonce random bytes
  Core(std::string secret, Limits limits, Nonces nonces);

  // A new connection at time `now` (seconds, any origin); its hello is in output(id).
  uint64_t open(double now);
  // Handles received bytes. False: close the connection (`why` says why; a refusal's reply
  // is already in output(id), to be sent before closing).
  bool receive(uint64_t id, const char* data, size_t bytes, double now, std::string& why);
  void close(uint64_t id);
  // Bytes to send to the connection; the caller erases what it sent.
  std::string& output(uint64_t id);
  // Connections that stalled in their handshake or in a message: to be closed.
  std::vector<uint64_t> stalled(double now, std::vector<std::string>& why) const;
  size_t connections() const { return sessions_.size(); }
  size_t storedBytes() const { return stored_; }

 private:
  struct Session {
    bool authenticated = false;
    std::string nonce;  // the server's, sent in the hello
    std::string in, out;
    double since = 0;  // the handshake's start, or the unfinished message's first byte
    bool refused = false;
  };
  bool handshake(Session& s, std::string& why);
  bool request(uint64_t id, Session& s, std::string& why);
  bool refuse(Session& s, const std::string& message, std::string& why);
  void apply(uint64_t id, uint8_t op, std::string key, std::string value);

  std::string secret_;
  Limits limits_;
  Nonces nonces_;
  uint64_t next_ = 1;
  std::unordered_map<uint64_t, Session> sessions_;
  std::unordered_map<std::string, std::string> table_;
  std::multimap<std::string, uint64_t> waiting_;  // key -> connection whose GET waits for it
  size_t stored_ = 0;
};

}  // namespace tessera::dist::store

#endif
