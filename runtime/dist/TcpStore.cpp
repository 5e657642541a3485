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
#include <sys/socket.h>
#include <unistd.h>
#include <unordered_map>
#include <vector>

#include "runtime/Status.h"

namespace tessera::dist {

using rt::concat;
using rt::fail;

namespace {

enum : uint8_t { kSet = 1, kGet = 2, kDel = 3 };

void putU32(std::string& s, uint32_t v) { s.append(reinterpret_cast<const char*>(&v), 4); }

// One client connection on the server: bytes received so far, parsed into requests.
struct Conn {
  int fd;
  std::string in, out;
};

bool parseRequest(std::string& in, uint8_t& op, std::string& key, std::string& value) {
  if (in.size() < 9) return false;
  uint32_t klen, vlen;
  std::memcpy(&klen, in.data() + 1, 4);
  if (in.size() < 9 + size_t(klen)) return false;
  std::memcpy(&vlen, in.data() + 5 + klen, 4);
  size_t total = 9 + size_t(klen) + vlen;
  if (in.size() < total) return false;
  op = static_cast<uint8_t>(in[0]);
  key.assign(in, 5, klen);
  value.assign(in, 9 + klen, vlen);
  in.erase(0, total);
  return true;
}

std::string reply(const std::string& value) {
  std::string r;
  putU32(r, static_cast<uint32_t>(value.size()));
  return r + value;
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

}  // namespace

tessera_status TcpStoreServer::start(int port, std::unique_ptr<TcpStoreServer>& out) {
  auto s = std::unique_ptr<TcpStoreServer>(new TcpStoreServer);
  s->listenFd_ = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (s->listenFd_ < 0)
    return fail(TESSERA_ERROR_INVALID_ARGUMENT, "rendezvous: socket() failed: ", std::strerror(errno));
  int one = 1;
  ::setsockopt(s->listenFd_, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_ANY);
  addr.sin_port = htons(static_cast<uint16_t>(port));
  if (::bind(s->listenFd_, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0 || ::listen(s->listenFd_, 1024) != 0)
    return fail(TESSERA_ERROR_INVALID_ARGUMENT, "rendezvous: rank 0 cannot listen on port ", port, ": ",
                std::strerror(errno), " (choose another MASTER_PORT)");
  socklen_t len = sizeof addr;
  ::getsockname(s->listenFd_, reinterpret_cast<sockaddr*>(&addr), &len);
  s->port_ = ntohs(addr.sin_port);
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

void TcpStoreServer::serve() {
  std::vector<Conn> conns;
  std::unordered_map<std::string, std::string> store;
  std::multimap<std::string, int> waiting;  // key -> fd of a GET waiting for it
  auto connOf = [&](int fd) -> Conn* {
    for (Conn& c : conns)
      if (c.fd == fd) return &c;
    return nullptr;
  };
  for (;;) {
    std::vector<pollfd> fds{{wakeFds_[0], POLLIN, 0}, {listenFd_, POLLIN, 0}};
    for (Conn& c : conns) fds.push_back({c.fd, static_cast<short>(POLLIN | (c.out.empty() ? 0 : POLLOUT)), 0});
    if (::poll(fds.data(), fds.size(), -1) < 0 && errno != EINTR) return;
    if (fds[0].revents) break;
    if (fds[1].revents & POLLIN) {
      int fd = ::accept4(listenFd_, nullptr, nullptr, SOCK_CLOEXEC | SOCK_NONBLOCK);
      if (fd >= 0) {
        int one = 1;
        ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
        conns.push_back({fd, {}, {}});
      }
    }
    std::vector<int> closed;
    for (size_t i = 2; i < fds.size(); ++i) {
      Conn* c = connOf(fds[i].fd);
      if (fds[i].revents & (POLLIN | POLLHUP | POLLERR)) {
        char buf[65536];
        ssize_t n = ::read(c->fd, buf, sizeof buf);
        if (n <= 0 && !(n < 0 && (errno == EAGAIN || errno == EINTR))) {
          closed.push_back(c->fd);
          continue;
        }
        if (n > 0) c->in.append(buf, static_cast<size_t>(n));
        uint8_t op;
        std::string key, value;
        while (parseRequest(c->in, op, key, value)) {
          if (op == kSet) {
            store[key] = value;
            c->out += reply("");
            auto [lo, hi] = waiting.equal_range(key);
            for (auto it = lo; it != hi; ++it)
              if (Conn* w = connOf(it->second)) w->out += reply(value);
            waiting.erase(lo, hi);
          } else if (op == kGet) {
            if (auto it = store.find(key); it != store.end())
              c->out += reply(it->second);
            else
              waiting.emplace(key, c->fd);
          } else {
            store.erase(key);
            c->out += reply("");
          }
        }
      }
      if (!c->out.empty()) {
        ssize_t n = ::write(c->fd, c->out.data(), c->out.size());
        if (n > 0)
          c->out.erase(0, static_cast<size_t>(n));
        else if (n < 0 && errno != EAGAIN && errno != EINTR)
          closed.push_back(c->fd);
      }
    }
    for (int fd : closed) {
      ::close(fd);
      for (auto it = waiting.begin(); it != waiting.end();) it = it->second == fd ? waiting.erase(it) : std::next(it);
      conns.erase(std::remove_if(conns.begin(), conns.end(), [fd](const Conn& c) { return c.fd == fd; }), conns.end());
    }
  }
  for (Conn& c : conns) ::close(c.fd);
}

TcpStoreClient::~TcpStoreClient() {
  if (fd_ >= 0) ::close(fd_);
}

tessera_status TcpStoreClient::connect(const std::string& host, int port, const Deadline& d,
                                       std::shared_ptr<TcpStoreClient>& out) {
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
      for (addrinfo* a = res; a; a = a->ai_next) {
        int fd = ::socket(a->ai_family, a->ai_socktype | SOCK_CLOEXEC, a->ai_protocol);
        if (fd < 0) continue;
        if (connectWithin(fd, a->ai_addr, a->ai_addrlen, d, lastError)) {
          ::freeaddrinfo(res);
          int one = 1;
          ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
          auto c = std::shared_ptr<TcpStoreClient>(new TcpStoreClient);
          c->fd_ = fd;
          c->host_ = host;
          c->port_ = port;
          out = std::move(c);
          return TESSERA_SUCCESS;
        }
        ::close(fd);
      }
      ::freeaddrinfo(res);
      res = nullptr;
    }
    if (d.passed())
      return fail(TESSERA_ERROR_TIMEOUT, "rendezvous: cannot reach rank 0 at ", host, ":", port, " within ", d.seconds,
                  " s (", lastError, "); is rank 0 running, and are MASTER_ADDR/MASTER_PORT right?");
    poller.pause();
  }
}

tessera_status TcpStoreClient::request(uint8_t op, const std::string& key, const std::string& value,
                                       std::string* replyValue, const Deadline& d) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (broken_)
    return fail(TESSERA_ERROR_COMM_ABORTED, "rendezvous at ", address(), ": the connection was lost earlier");
  std::string msg(1, static_cast<char>(op));
  putU32(msg, static_cast<uint32_t>(key.size()));
  msg += key;
  putU32(msg, static_cast<uint32_t>(value.size()));
  msg += value;
  auto lost = [&](const char* what) {
    broken_ = true;
    return fail(TESSERA_ERROR_COMM_ABORTED, "rendezvous at ", address(), ": ", what, " (did rank 0 exit?)");
  };
  auto waitFor = [&](short events) -> tessera_status {
    pollfd p{fd_, events, 0};
    for (;;) {
      double left = d.remaining();
      if (left <= 0) {
        broken_ = true;
        return fail(TESSERA_ERROR_TIMEOUT, "rendezvous at ", address(), ": no answer for '", key, "' within ",
                    d.seconds, " s (a rank died or stalled)");
      }
      int rc = ::poll(&p, 1, static_cast<int>(std::min(left * 1000 + 1, 1e6)));
      if (rc > 0) return TESSERA_SUCCESS;
      if (rc < 0 && errno != EINTR) return lost("poll failed");
    }
  };
  for (size_t sent = 0; sent < msg.size();) {
    TESSERA_TRY(waitFor(POLLOUT));
    ssize_t n = ::send(fd_, msg.data() + sent, msg.size() - sent, MSG_NOSIGNAL);
    if (n <= 0) return lost("the connection dropped");
    sent += static_cast<size_t>(n);
  }
  auto readExact = [&](char* dst, size_t len) -> tessera_status {
    for (size_t got = 0; got < len;) {
      TESSERA_TRY(waitFor(POLLIN));
      ssize_t n = ::recv(fd_, dst + got, len - got, 0);
      if (n <= 0) return lost("the connection dropped");
      got += static_cast<size_t>(n);
    }
    return TESSERA_SUCCESS;
  };
  uint32_t len = 0;
  TESSERA_TRY(readExact(reinterpret_cast<char*>(&len), 4));
  std::string v(len, '\0');
  TESSERA_TRY(readExact(v.data(), len));
  if (replyValue) *replyValue = std::move(v);
  return TESSERA_SUCCESS;
}

tessera_status TcpStoreClient::set(const std::string& key, const std::string& value, const Deadline& d) {
  return request(kSet, key, value, nullptr, d);
}
tessera_status TcpStoreClient::get(const std::string& key, std::string& value, const Deadline& d) {
  return request(kGet, key, "", &value, d);
}
tessera_status TcpStoreClient::del(const std::string& key, const Deadline& d) {
  return request(kDel, key, "", nullptr, d);
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
      TESSERA_TRY(client_->get(key(s, r), v, d));
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
    TESSERA_TRY(client_->get(key(peer, me_, n), v, d));
    if (v.size() != bytes)
      return fail(TESSERA_ERROR_INTERNAL, "rendezvous: rank ", peer, " sent ", v.size(), " bytes, expected ", bytes);
    std::memcpy(theirs, v.data(), bytes);
    if (n > 1) TESSERA_TRY(client_->del(key(me_, peer, n - 1), d));
    return TESSERA_SUCCESS;
  }

  std::string describe() const override { return "the TCP rendezvous at " + client_->address(); }

 private:
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
