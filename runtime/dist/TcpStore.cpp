//===- TcpStore.cpp - Rendezvous server, client and the store-backed bootstrap --------------===//
#include "runtime/dist/TcpStore.h"

#include <algorithm>
#include <arpa/inet.h>
#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <map>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <unistd.h>
#include <unordered_map>
#include <vector>

#include "runtime/Status.h"
#include "runtime/dist/Hmac.h"

namespace tessera::dist {

using rt::concat;
using rt::fail;

std::string randomBytes(size_t n) {
  std::string s(n, '\0');
  for (size_t got = 0; got < n;) {
    ssize_t r = ::getrandom(s.data() + got, n - got, 0);
    if (r > 0)
      got += static_cast<size_t>(r);
    else if (errno != EINTR)
      break;
  }
  return s;
}

namespace {

double nowSeconds() { return std::chrono::duration<double>(Clock::now().time_since_epoch()).count(); }

std::string addressText(const sockaddr* a) {
  char host[INET6_ADDRSTRLEN] = "?";
  int port = 0;
  if (a->sa_family == AF_INET) {
    auto* in = reinterpret_cast<const sockaddr_in*>(a);
    ::inet_ntop(AF_INET, &in->sin_addr, host, sizeof host);
    port = ntohs(in->sin_port);
    return concat(host, ":", port);
  }
  auto* in6 = reinterpret_cast<const sockaddr_in6*>(a);
  ::inet_ntop(AF_INET6, &in6->sin6_addr, host, sizeof host);
  return concat("[", host, "]:", ntohs(in6->sin6_port));
}

// connect() that gives up at the deadline (a host that drops the SYN would otherwise block for
// minutes); the socket is blocking again afterwards.
bool connectWithin(int fd, const sockaddr* addr, socklen_t len, const Deadline& d, std::string& error) {
  int flags = ::fcntl(fd, F_GETFL, 0);
  ::fcntl(fd, F_SETFL, flags | O_NONBLOCK);
  int rc = ::connect(fd, addr, len);
  if (rc != 0 && errno == EINPROGRESS) {
    pollfd p{fd, POLLOUT, 0};
    int left = static_cast<int>(std::max(0.0, std::min(d.remaining(), 1.0)) * 1000) + 1;
    rc = ::poll(&p, 1, left);
    int soError = 0;
    socklen_t sl = sizeof soError;
    if (rc > 0 && ::getsockopt(fd, SOL_SOCKET, SO_ERROR, &soError, &sl) == 0 && soError == 0)
      rc = 0;
    else {
      errno = rc == 0 ? ETIMEDOUT : soError;
      rc = -1;
    }
  }
  if (rc != 0) {
    error = std::strerror(errno);
    return false;
  }
  ::fcntl(fd, F_SETFL, flags);
  return true;
}

// A listening socket on `host`:`port` (the first of its addresses that binds).
int listenOn(const std::string& host, int port, std::string& error, std::string& listening) {
  addrinfo hints{}, *res = nullptr;
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_NUMERICSERV;
  std::string service = std::to_string(port);
  if (int rc = ::getaddrinfo(host.c_str(), service.c_str(), &hints, &res); rc != 0) {
    error = concat("cannot resolve '", host, "': ", gai_strerror(rc));
    return -1;
  }
  int fd = -1;
  for (addrinfo* a = res; a && fd < 0; a = a->ai_next) {
    fd = ::socket(a->ai_family, a->ai_socktype | SOCK_CLOEXEC, a->ai_protocol);
    if (fd < 0) continue;
    int one = 1;
    ::setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    if (::bind(fd, a->ai_addr, a->ai_addrlen) != 0 || ::listen(fd, 1024) != 0) {
      error = std::strerror(errno);
      ::close(fd);
      fd = -1;
      continue;
    }
    sockaddr_storage bound{};
    socklen_t len = sizeof bound;
    ::getsockname(fd, reinterpret_cast<sockaddr*>(&bound), &len);
    listening = addressText(reinterpret_cast<sockaddr*>(&bound));
  }
  ::freeaddrinfo(res);
  return fd;
}

}  // namespace

tessera_status TcpStoreServer::start(const std::string& host, int port, const std::string& secret,
                                     const store::Limits& limits, std::unique_ptr<TcpStoreServer>& out) {
  if (secret.empty())
    return fail(TESSERA_ERROR_INVALID_ARGUMENT,
                "rendezvous: no job secret (TESSERA_DIST_SECRET); the rendezvous admits only ranks that know it");
  auto s = std::unique_ptr<TcpStoreServer>(new TcpStoreServer);
  std::string error;
  s->listenFd_ = listenOn(host, port, error, s->listening_);
  if (s->listenFd_ < 0)
    return fail(TESSERA_ERROR_INVALID_ARGUMENT, "rendezvous: rank 0 cannot listen on ", host, ":", port, ": ", error,
                " (MASTER_ADDR must be an address of rank 0's host; choose another MASTER_PORT if this one is taken)");
  sockaddr_storage addr{};
  socklen_t len = sizeof addr;
  ::getsockname(s->listenFd_, reinterpret_cast<sockaddr*>(&addr), &len);
  s->port_ = addr.ss_family == AF_INET6 ? ntohs(reinterpret_cast<sockaddr_in6*>(&addr)->sin6_port)
                                        : ntohs(reinterpret_cast<sockaddr_in*>(&addr)->sin_port);
  s->secret_ = secret;
  s->limits_ = limits;
  if (::pipe2(s->wakeFds_, O_CLOEXEC) != 0)
    return fail(TESSERA_ERROR_INTERNAL, "rendezvous: pipe() failed: ", std::strerror(errno));
  s->thread_ = std::thread([p = s.get()] { p->serve(); });
  out = std::move(s);
  return TESSERA_SUCCESS;
}

TcpStoreServer::~TcpStoreServer() {
  if (thread_.joinable()) {
    char c = 0;
    (void)!::write(wakeFds_[1], &c, 1);
    thread_.join();
  }
  for (int fd : {listenFd_, wakeFds_[0], wakeFds_[1]})
    if (fd >= 0) ::close(fd);
}

void TcpStoreServer::waitForConnections(size_t n, const Deadline& d) const {
  Poller poller;
  while (connections_.load() > n && !d.passed()) poller.pause();
}

void TcpStoreServer::serve() {
  store::Core core(secret_, limits_, [] { return randomBytes(store::kNonce); });
  std::unordered_map<int, uint64_t> idOf;  // connection fd -> its session
  auto drop = [&](int fd) {
    core.close(idOf[fd]);
    ::close(fd);
    idOf.erase(fd);
    connections_.store(idOf.size());
  };
  // Sends what the session has to say; false when the connection is gone.
  auto flush = [&](int fd) {
    std::string& out = core.output(idOf[fd]);
    while (!out.empty()) {
      ssize_t n = ::send(fd, out.data(), out.size(), MSG_NOSIGNAL | MSG_DONTWAIT);
      if (n > 0)
        out.erase(0, static_cast<size_t>(n));
      else
        return n < 0 && (errno == EAGAIN || errno == EINTR);
    }
    return true;
  };
  for (;;) {
    std::vector<pollfd> fds{{wakeFds_[0], POLLIN, 0}, {listenFd_, POLLIN, 0}};
    for (auto& [fd, id] : idOf)
      fds.push_back({fd, static_cast<short>(POLLIN | (core.output(id).empty() ? 0 : POLLOUT)), 0});
    // A timeout, so that stalled connections are noticed while nothing else happens.
    if (::poll(fds.data(), fds.size(), 250) < 0 && errno != EINTR) break;
    if (fds[0].revents) break;
    double now = nowSeconds();
    if (fds[1].revents & POLLIN) {
      int fd = ::accept4(listenFd_, nullptr, nullptr, SOCK_CLOEXEC | SOCK_NONBLOCK);
      if (fd >= 0 && idOf.size() >= store::kMaxConnections) {
        ::close(fd);
      } else if (fd >= 0) {
        int one = 1;
        ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
        idOf[fd] = core.open(now);
        connections_.store(idOf.size());
        if (!flush(fd)) drop(fd);
      }
    }
    for (size_t i = 2; i < fds.size(); ++i) {
      int fd = fds[i].fd;
      if (!idOf.count(fd) || !fds[i].revents) continue;
      if (fds[i].revents & (POLLIN | POLLHUP | POLLERR)) {
        char buf[65536];
        ssize_t n = ::read(fd, buf, sizeof buf);
        std::string why;
        if (n == 0 || (n < 0 && errno != EAGAIN && errno != EINTR)) {
          drop(fd);
          continue;
        }
        if (n > 0 && !core.receive(idOf[fd], buf, static_cast<size_t>(n), now, why)) {
          flush(fd);  // the refusal's reply, best effort
          drop(fd);
          continue;
        }
      }
      if (!flush(fd)) drop(fd);
    }
    std::vector<std::string> why;
    std::vector<uint64_t> stalled = core.stalled(now, why);
    for (auto it = idOf.begin(); it != idOf.end();) {
      int fd = it->first;
      ++it;
      if (std::find(stalled.begin(), stalled.end(), idOf[fd]) != stalled.end()) drop(fd);
    }
    // Every session's replies to other sessions (a SET answering their GETs) are sent next pass.
  }
  for (auto& [fd, id] : idOf) ::close(fd);
  connections_.store(0);
}

TcpStoreClient::~TcpStoreClient() {
  if (fd_ >= 0) ::close(fd_);
}

tessera_status TcpStoreClient::connect(const std::string& host, int port, const std::string& secret, const Deadline& d,
                                       std::shared_ptr<TcpStoreClient>& out) {
  if (secret.empty())
    return fail(TESSERA_ERROR_INVALID_ARGUMENT,
                "rendezvous: no job secret (TESSERA_DIST_SECRET); rank 0 admits only ranks that know it");
  addrinfo hints{}, *res = nullptr;
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  std::string service = std::to_string(port);
  std::string lastError;
  Poller poller;
  for (;;) {
    int rc = ::getaddrinfo(host.c_str(), service.c_str(), &hints, &res);
    if (rc != 0) {
      lastError = concat("cannot resolve '", host, "': ", gai_strerror(rc));
    } else {
      int fd = -1;
      for (addrinfo* a = res; a && fd < 0; a = a->ai_next) {
        fd = ::socket(a->ai_family, a->ai_socktype | SOCK_CLOEXEC, a->ai_protocol);
        if (fd >= 0 && !connectWithin(fd, a->ai_addr, a->ai_addrlen, d, lastError)) {
          ::close(fd);
          fd = -1;
        }
      }
      ::freeaddrinfo(res);
      res = nullptr;
      if (fd >= 0) {
        int one = 1;
        ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
        auto c = std::shared_ptr<TcpStoreClient>(new TcpStoreClient);
        c->fd_ = fd;
        c->host_ = host;
        c->port_ = port;
        TESSERA_TRY(c->handshake(secret, d));
        out = std::move(c);
        return TESSERA_SUCCESS;
      }
    }
    if (d.passed())
      return fail(TESSERA_ERROR_TIMEOUT, "rendezvous: cannot reach rank 0 at ", host, ":", port, " within ", d.seconds,
                  " s (", lastError, "); is rank 0 running, and are MASTER_ADDR/MASTER_PORT right?");
    poller.pause();
  }
}

// Waits until the socket is ready for `events` or the deadline passed.
static tessera_status waitFor(int fd, short events, const std::string& address, const std::string& what,
                              const Deadline& d, bool& broken) {
  pollfd p{fd, events, 0};
  for (;;) {
    double left = d.remaining();
    if (left <= 0) {
      broken = true;
      return fail(TESSERA_ERROR_TIMEOUT, "rendezvous at ", address, ": no answer for ", what, " within ", d.seconds,
                  " s (a rank died or stalled)");
    }
    int rc = ::poll(&p, 1, static_cast<int>(std::min(left * 1000 + 1, 1e6)));
    if (rc > 0) return TESSERA_SUCCESS;
    if (rc < 0 && errno != EINTR) {
      broken = true;
      return fail(TESSERA_ERROR_COMM_ABORTED, "rendezvous at ", address, ": poll failed: ", std::strerror(errno));
    }
  }
}

tessera_status TcpStoreClient::sendAll(const std::string& bytes, const std::string& what, const Deadline& d) {
  for (size_t sent = 0; sent < bytes.size();) {
    TESSERA_TRY(waitFor(fd_, POLLOUT, address(), what, d, broken_));
    ssize_t n = ::send(fd_, bytes.data() + sent, bytes.size() - sent, MSG_NOSIGNAL);
    if (n <= 0) {
      broken_ = true;
      return fail(TESSERA_ERROR_COMM_ABORTED, "rendezvous at ", address(), ": the connection dropped while sending ",
                  what, " (did rank 0 exit?)");
    }
    sent += static_cast<size_t>(n);
  }
  return TESSERA_SUCCESS;
}

tessera_status TcpStoreClient::readExact(char* dst, size_t len, const std::string& what, const Deadline& d) {
  for (size_t got = 0; got < len;) {
    TESSERA_TRY(waitFor(fd_, POLLIN, address(), what, d, broken_));
    ssize_t n = ::recv(fd_, dst + got, len - got, 0);
    if (n <= 0) {
      broken_ = true;
      return fail(TESSERA_ERROR_COMM_ABORTED, "rendezvous at ", address(),
                  ": the connection dropped while waiting for ", what, " (did rank 0 exit?)");
    }
    got += static_cast<size_t>(n);
  }
  return TESSERA_SUCCESS;
}

// A reply: status, length (bounded before anything is allocated), bytes. A refusal is an error.
tessera_status TcpStoreClient::readReply(std::string& value, const std::string& what, const Deadline& d) {
  unsigned char head[5];
  TESSERA_TRY(readExact(reinterpret_cast<char*>(head), 5, what, d));
  uint32_t len = uint32_t(head[1]) | uint32_t(head[2]) << 8 | uint32_t(head[3]) << 16 | uint32_t(head[4]) << 24;
  if (head[0] > 1 || len > store::kMaxValue) {
    broken_ = true;
    return fail(TESSERA_ERROR_COMM_ABORTED, "rendezvous at ", address(), ": a malformed reply to ", what, " (status ",
                int(head[0]), ", ", len, " bytes)");
  }
  value.assign(len, '\0');
  TESSERA_TRY(readExact(value.data(), len, what, d));
  if (head[0] == 1) {
    broken_ = true;
    return fail(TESSERA_ERROR_INVALID_ARGUMENT, "rendezvous at ", address(), " refused ", what, ": ", value);
  }
  return TESSERA_SUCCESS;
}

tessera_status TcpStoreClient::handshake(const std::string& secret, const Deadline& d) {
  std::string hello(store::kHelloBytes, '\0');
  TESSERA_TRY(readExact(hello.data(), hello.size(), "the rendezvous greeting", d));
  if (hello.compare(0, 4, "TSRV") != 0 || hello[4] != static_cast<char>(store::kVersion))
    return fail(TESSERA_ERROR_INVALID_ARGUMENT, "rendezvous: ", address(),
                " is not a Tessera rendezvous of this version (is MASTER_PORT another program's?)");
  std::string serverNonce = hello.substr(5), clientNonce = randomBytes(store::kNonce);
  TESSERA_TRY(sendAll("TCLI" + clientNonce + store::clientProof(secret, serverNonce, clientNonce), "the handshake", d));
  char status = 0;
  TESSERA_TRY(readExact(&status, 1, "the handshake", d));
  if (status != 0) {
    std::string why;
    char rest[4];
    TESSERA_TRY(readExact(rest, 4, "the handshake", d));
    uint32_t len = 0;
    for (int i = 0; i < 4; ++i) len |= uint32_t(static_cast<uint8_t>(rest[i])) << (8 * i);
    why.assign(std::min<size_t>(len, 4096), '\0');
    if (readExact(why.data(), why.size(), "the handshake", d) != TESSERA_SUCCESS) why = "(no reason given)";
    broken_ = true;
    return fail(TESSERA_ERROR_INVALID_ARGUMENT, "rendezvous at ", address(), " refused this rank: ", why);
  }
  std::string proof(store::kMac, '\0');
  TESSERA_TRY(readExact(proof.data(), proof.size(), "the handshake", d));
  std::string want = store::serverProof(secret, clientNonce, serverNonce);
  if (!equalDigests(proof.data(), want.data(), store::kMac)) {
    broken_ = true;
    return fail(TESSERA_ERROR_INVALID_ARGUMENT, "rendezvous: ", address(),
                " did not prove that it knows the job secret (another program listens at MASTER_ADDR:MASTER_PORT, "
                "or rank 0 was given another TESSERA_DIST_SECRET)");
  }
  return TESSERA_SUCCESS;
}

tessera_status TcpStoreClient::request(uint8_t op, const std::string& key, const std::string& value,
                                       std::string* replyValue, const Deadline& d) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (key.size() > store::kMaxKey || value.size() > store::kMaxValue)
    return fail(TESSERA_ERROR_INVALID_ARGUMENT, "rendezvous: '", key.substr(0, 64), "' has a key of ", key.size(),
                " bytes and a value of ", value.size(), " bytes (at most ", store::kMaxKey, " and ", store::kMaxValue,
                ")");
  if (broken_)
    return fail(TESSERA_ERROR_COMM_ABORTED, "rendezvous at ", address(), ": the connection was lost earlier");
  std::string what = concat("'", key, "'");
  TESSERA_TRY(sendAll(store::encodeRequest(op, key, value), what, d));
  std::string v;
  TESSERA_TRY(readReply(v, what, d));
  if (replyValue) *replyValue = std::move(v);
  return TESSERA_SUCCESS;
}

tessera_status TcpStoreClient::set(const std::string& key, const std::string& value, const Deadline& d) {
  return request(store::kSet, key, value, nullptr, d);
}
tessera_status TcpStoreClient::get(const std::string& key, std::string& value, const Deadline& d) {
  return request(store::kGet, key, "", &value, d);
}
tessera_status TcpStoreClient::del(const std::string& key, const Deadline& d) {
  return request(store::kDel, key, "", nullptr, d);
}

namespace {

class StoreBootstrap final : public Bootstrap {
 public:
  StoreBootstrap(std::shared_ptr<TcpStoreClient> c, std::string prefix, std::vector<int> members, int me)
      : client_(std::move(c)), prefix_(std::move(prefix)), members_(std::move(members)), me_(me) {}
  int rank() const override { return me_; }
  int size() const override { return static_cast<int>(members_.size()); }

  // Every member SETs its key of round s, then GETs everyone's; a member in round s has read
  // every key of round s-1, so after the GETs the caller's own key of round s-1 can go.
  tessera_status allGather(const void* mine, size_t bytes, void* all, const Deadline& d) override {
    uint64_t s = ++round_;
    auto key = [&](uint64_t round, int r) { return concat(prefix_, "/g", round, "/", r); };
    TESSERA_TRY(client_->set(key(s, me_), std::string(static_cast<const char*>(mine), bytes), d));
    for (int r = 0; r < size(); ++r) {
      std::string v;
      TESSERA_TRY(missing(client_->get(key(s, r), v, d), r));
      if (v.size() != bytes)
        return fail(TESSERA_ERROR_INTERNAL, "rendezvous: member ", r, " sent ", v.size(), " bytes, expected ", bytes);
      std::memcpy(static_cast<char*>(all) + size_t(r) * bytes, v.data(), bytes);
    }
    if (s > 1) TESSERA_TRY(client_->del(key(s - 1, me_), d));
    return TESSERA_SUCCESS;
  }

  tessera_status split(int color, int key, const Deadline& d, std::unique_ptr<Bootstrap>& out) override {
    int mine[2] = {color, key};
    std::vector<int> all(2 * size());
    TESSERA_TRY(allGather(mine, sizeof mine, all.data(), d));
    out = nullptr;
    if (color < 0) return TESSERA_SUCCESS;
    int newRank = 0;
    std::vector<int> group;
    splitMembership(all.data(), size(), me_, newRank, group);
    std::vector<int> worldRanks;
    for (int r : group) worldRanks.push_back(members_[r]);
    out = makeStoreBootstrap(client_, concat(prefix_, "/s", round_, "c", color), std::move(worldRanks), newRank);
    return TESSERA_SUCCESS;
  }

  tessera_status exchange(int peer, const void* mine, void* theirs, size_t bytes, const Deadline& d) override {
    uint64_t n = ++pairRounds_[peer];
    auto key = [&](int from, int to, uint64_t round) { return concat(prefix_, "/x", from, ">", to, "/", round); };
    TESSERA_TRY(client_->set(key(me_, peer, n), std::string(static_cast<const char*>(mine), bytes), d));
    std::string v;
    TESSERA_TRY(missing(client_->get(key(peer, me_, n), v, d), peer));
    if (v.size() != bytes)
      return fail(TESSERA_ERROR_INTERNAL, "rendezvous: rank ", peer, " sent ", v.size(), " bytes, expected ", bytes);
    std::memcpy(theirs, v.data(), bytes);
    if (n > 1) TESSERA_TRY(client_->del(key(me_, peer, n - 1), d));
    return TESSERA_SUCCESS;
  }

  std::string describe() const override { return "the TCP rendezvous at " + client_->address(); }

 private:
  // A wait for member r that timed out names the rank that did not come.
  tessera_status missing(tessera_status st, int r) const {
    if (st != TESSERA_ERROR_TIMEOUT) return st;
    return fail(st, "world rank ", members_[r], " (member ", r,
                " of this group) did not arrive: ", tessera_last_error_message());
  }

  std::shared_ptr<TcpStoreClient> client_;
  std::string prefix_;
  std::vector<int> members_;
  int me_;
  uint64_t round_ = 0;
  std::map<int, uint64_t> pairRounds_;
};

}  // namespace

std::unique_ptr<Bootstrap> makeStoreBootstrap(std::shared_ptr<TcpStoreClient> client, std::string prefix,
                                              std::vector<int> members, int me) {
  return std::make_unique<StoreBootstrap>(std::move(client), std::move(prefix), std::move(members), me);
}

}  // namespace tessera::dist
