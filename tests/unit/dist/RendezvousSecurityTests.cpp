// The rendezvous lets no one in (runtime/dist/StoreProtocol.h): it listens on the interface it is
// given, a connection without the job's secret is refused (and a server without it is refused by
// the ranks), oversized keys and values are refused before they are buffered, connections that
// stall in the handshake or in a message are closed, and through all of that the job's own
// ranks keep working. Hostile peers are raw sockets here.
#include <arpa/inet.h>
#include <cstring>
#include <doctest/doctest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <thread>
#include <unistd.h>
#include <vector>

#include "runtime/dist/Hmac.h"
#include "runtime/dist/TcpStore.h"

using namespace tessera::dist;

namespace {

const char* kSecret = "the-job-secret";

std::string hex(const Digest& d) {
  std::string s;
  char b[3];
  for (uint8_t x : d) std::snprintf(b, sizeof b, "%02x", x), s += b;
  return s;
}

// A raw TCP connection to the server.
struct Raw {
  int fd = -1;
  explicit Raw(int port) {
    fd = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_port = htons(static_cast<uint16_t>(port));
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    REQUIRE(::connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0);
    timeval tv{20, 0};  // longer than any wait below: a read that ends sooner saw the server's close
    ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
  }
  ~Raw() { ::close(fd); }
  void send(const std::string& s) { REQUIRE(::send(fd, s.data(), s.size(), MSG_NOSIGNAL) == ssize_t(s.size())); }
  // Everything until the server closes the connection (or 20 s pass).
  std::string readToClose() {
    std::string all;
    char buf[4096];
    for (ssize_t n; (n = ::recv(fd, buf, sizeof buf, 0)) > 0;) all.append(buf, static_cast<size_t>(n));
    return all;
  }
  std::string read(size_t n) {
    std::string s(n, '\0');
    for (size_t got = 0; got < n;) {
      ssize_t r = ::recv(fd, s.data() + got, n - got, 0);
      REQUIRE(r > 0);
      got += static_cast<size_t>(r);
    }
    return s;
  }
  // The handshake done right (the hostile peer knows the secret in these cases).
  void authenticate(const std::string& secret) {
    std::string hello = read(store::kHelloBytes), nonce(store::kNonce, 'n');
    send("TCLI" + nonce + store::clientProof(secret, hello.substr(5), nonce));
    REQUIRE(read(1) == std::string(1, '\0'));
    read(store::kMac);
  }
};

struct Server {
  std::unique_ptr<TcpStoreServer> s;
  explicit Server(store::Limits limits = {}) {
    REQUIRE(TcpStoreServer::start("127.0.0.1", 0, kSecret, limits, s) == TESSERA_SUCCESS);
  }
  std::shared_ptr<TcpStoreClient> client() {
    std::shared_ptr<TcpStoreClient> c;
    REQUIRE(TcpStoreClient::connect("127.0.0.1", s->port(), kSecret, Deadline::after(5), c) == TESSERA_SUCCESS);
    return c;
  }
};

// The job's own ranks still work: a SET and a GET through a fresh client.
void stillServes(Server& srv) {
  auto c = srv.client();
  CHECK(c->set("k", "v", Deadline::after(5)) == TESSERA_SUCCESS);
  std::string v;
  CHECK(c->get("k", v, Deadline::after(5)) == TESSERA_SUCCESS);
  CHECK(v == "v");
}

}  // namespace

TEST_CASE("rendezvous: SHA-256 and HMAC-SHA256 test vectors") {
  CHECK(hex(sha256("", 0)) == "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  CHECK(hex(sha256("abc", 3)) == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  std::string two = "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq";  // two blocks
  CHECK(hex(sha256(two.data(), two.size())) == "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
  std::string million(1000000, 'a');
  CHECK(hex(sha256(million.data(), million.size())) ==
        "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
  // RFC 4231 cases 1 and 2.
  CHECK(hex(hmacSha256(std::string(20, '\x0b'), "Hi There")) ==
        "b0344c61d8db38535ca8afceaf0bf12b881dc200c9833da726e9376c2e32cff7");
  CHECK(hex(hmacSha256("Jefe", "what do ya want for nothing?")) ==
        "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843");
  // A key longer than a block is hashed first (RFC 4231 case 6).
  CHECK(hex(hmacSha256(std::string(131, '\xaa'), "Test Using Larger Than Block-Size Key - Hash Key First")) ==
        "60e431591ee0b67f0d8a26aacbf5b77f8e0bc6213728c5140546040f0ee37f54");
}

TEST_CASE("rendezvous: the server listens only on the interface it is given") {
  Server srv;
  CHECK(srv.s->listening() == "127.0.0.1:" + std::to_string(srv.s->port()));
  std::unique_ptr<TcpStoreServer> bad;
  // 192.0.2.1 (TEST-NET-1) is never an address of this host.
  CHECK(TcpStoreServer::start("192.0.2.1", 0, kSecret, {}, bad) == TESSERA_ERROR_INVALID_ARGUMENT);
  CHECK(std::string(tessera_last_error_message()).find("MASTER_ADDR must be an address of rank 0's host") !=
        std::string::npos);
}

TEST_CASE("rendezvous: a connection without the job's secret is refused") {
  Server srv;
  std::shared_ptr<TcpStoreClient> c;
  CHECK(TcpStoreClient::connect("127.0.0.1", srv.s->port(), "another-secret", Deadline::after(5), c) ==
        TESSERA_ERROR_INVALID_ARGUMENT);
  std::string msg = tessera_last_error_message();
  CHECK(msg.find("refused this rank: wrong job secret") != std::string::npos);
  // A peer that sends a request without any handshake is refused too, and never reaches a key.
  {
    Raw r(srv.s->port());
    r.read(store::kHelloBytes);
    r.send(store::encodeRequest(store::kSet, "tessera/g1/0", "hijacked"));
    std::string reply = r.readToClose();
    CHECK(reply.find("not a Tessera rendezvous client") != std::string::npos);
  }
  {
    Raw r(srv.s->port());  // the right greeting, a forged proof
    r.read(store::kHelloBytes);
    r.send("TCLI" + std::string(store::kNonce, 'x') + std::string(store::kMac, 'y'));
    CHECK(r.readToClose().find("wrong job secret") != std::string::npos);
  }
  auto ok = srv.client();
  std::string v;
  CHECK(ok->get("tessera/g1/0", v, Deadline::after(0.3)) == TESSERA_ERROR_TIMEOUT);  // never set
  stillServes(srv);
  CHECK(TcpStoreClient::connect("127.0.0.1", srv.s->port(), "", Deadline::after(1), c) ==
        TESSERA_ERROR_INVALID_ARGUMENT);
}

TEST_CASE("rendezvous: a server that does not know the secret is refused by the ranks") {
  // An impostor listening at MASTER_ADDR:MASTER_PORT, which sends the greeting and accepts
  // anything: it cannot produce the server's proof.
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  REQUIRE(::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0);
  REQUIRE(::listen(fd, 4) == 0);
  socklen_t len = sizeof a;
  ::getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len);
  std::thread impostor([fd] {
    int c = ::accept(fd, nullptr, nullptr);
    std::string hello = "TSRV" + std::string(1, char(store::kVersion)) + std::string(store::kNonce, 'z');
    (void)!::send(c, hello.data(), hello.size(), MSG_NOSIGNAL);
    char buf[store::kAuthBytes];
    (void)!::recv(c, buf, sizeof buf, MSG_WAITALL);
    std::string accept = std::string(1, '\0') + std::string(store::kMac, 'q');
    (void)!::send(c, accept.data(), accept.size(), MSG_NOSIGNAL);
    ::usleep(200000);
    ::close(c);
  });
  std::shared_ptr<TcpStoreClient> c;
  CHECK(TcpStoreClient::connect("127.0.0.1", ntohs(a.sin_port), kSecret, Deadline::after(5), c) ==
        TESSERA_ERROR_INVALID_ARGUMENT);
  CHECK(std::string(tessera_last_error_message()).find("did not prove that it knows the job secret") !=
        std::string::npos);
  impostor.join();
  ::close(fd);
}

TEST_CASE("rendezvous: oversized keys and values are refused") {
  Server srv;
  // From a client of the job: refused before sending, and the connection stays usable.
  auto c = srv.client();
  CHECK(c->set(std::string(store::kMaxKey + 1, 'k'), "v", Deadline::after(5)) == TESSERA_ERROR_INVALID_ARGUMENT);
  CHECK(std::string(tessera_last_error_message()).find("a key of 513 bytes") != std::string::npos);
  CHECK(c->set("k", std::string(store::kMaxValue + 1, 'v'), Deadline::after(5)) == TESSERA_ERROR_INVALID_ARGUMENT);
  CHECK(c->set("k", std::string(store::kMaxValue, 'v'), Deadline::after(5)) == TESSERA_SUCCESS);
  // From a peer that knows the secret but claims a 4 GiB value: refused from the header alone.
  Raw r(srv.s->port());
  r.authenticate(kSecret);
  std::string header(1, char(store::kSet));
  header += std::string("\x01\x00\x00\x00", 4) + "k" + std::string("\xff\xff\xff\xff", 4);
  r.send(header);
  std::string reply = r.readToClose();
  REQUIRE(reply.size() > 5);
  CHECK(reply[0] == 1);
  CHECK(reply.find("a value of 4294967295 bytes (at most 65536)") != std::string::npos);
  Raw k(srv.s->port());
  k.authenticate(kSecret);
  k.send(std::string(1, char(store::kGet)) + std::string("\xff\xff\xff\x7f", 4));
  CHECK(k.readToClose().find("a key of 2147483647 bytes") != std::string::npos);
  srv.s->waitForConnections(1, Deadline::after(5));  // the refused two are gone; `c` stays
  CHECK(srv.s->connections() == 1);
  stillServes(srv);
}

TEST_CASE("rendezvous: peers that stall in the handshake or mid-message are closed") {
  store::Limits quick;
  quick.handshakeSeconds = quick.messageSeconds = 0.4;
  Server srv(quick);
  auto start = Clock::now();
  Raw silent(srv.s->port());  // never answers the greeting
  Raw half(srv.s->port());    // stops in the middle of a request
  half.authenticate(kSecret);
  std::string msg = store::encodeRequest(store::kSet, "key", "value");
  half.send(msg.substr(0, msg.size() - 2));
  // A rank of the job waiting for a key is not idle: it outlives both.
  auto waiter = srv.client();
  std::string v;
  std::thread setter([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(1500));
    srv.client()->set("late", "here", Deadline::after(5));
  });
  silent.readToClose();
  half.readToClose();
  double took = std::chrono::duration<double>(Clock::now() - start).count();
  CHECK(took >= 0.4);
  CHECK(took < 10.0);  // closed by the server, not by the 20 s receive timeout
  CHECK(waiter->get("late", v, Deadline::after(10)) == TESSERA_SUCCESS);
  CHECK(v == "here");
  setter.join();
  stillServes(srv);
}
