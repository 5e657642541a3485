// The rendezvous of torchrun-style launches: a store served by "rank 0", groups of ranks (threads
// here) gathering, splitting and exchanging through it, and the failures: a member that never
// comes is a TIMEOUT, a server that goes away is COMM_ABORTED. It lets no one in
// (RendezvousSecurityTests.cpp).
#include <doctest/doctest.h>
#include <thread>
#include <vector>

#include "runtime/dist/TcpStore.h"

using namespace tessera::dist;

namespace {

const char* kSecret = "unit-test-secret";

struct Store {
  std::unique_ptr<TcpStoreServer> server;
  Store() { REQUIRE(TcpStoreServer::start("127.0.0.1", 0, kSecret, {}, server) == TESSERA_SUCCESS); }
  std::unique_ptr<Bootstrap> member(int rank, int size, const char* prefix = "t") {
    std::shared_ptr<TcpStoreClient> c;
    REQUIRE(TcpStoreClient::connect("127.0.0.1", server->port(), kSecret, Deadline::after(10), c) == TESSERA_SUCCESS);
    std::vector<int> members(size);
    for (int r = 0; r < size; ++r) members[r] = r;
    return makeStoreBootstrap(c, prefix, members, rank);
  }
};

}  // namespace

TEST_CASE("tcp store: members gather, split and exchange") {
  Store s;
  constexpr int n = 4;
  std::vector<std::unique_ptr<Bootstrap>> boots;
  for (int r = 0; r < n; ++r) boots.push_back(s.member(r, n));
  std::vector<std::vector<int>> gathered(n, std::vector<int>(n));
  std::vector<int> splitRank(n, -1), splitSize(n, -1), splitSum(n, -1), swapped(n, -1);
  std::vector<tessera_status> status(n, TESSERA_ERROR_INTERNAL);
  std::vector<std::thread> threads;
  for (int r = 0; r < n; ++r)
    threads.emplace_back([&, r] {
      Deadline d = Deadline::after(10);
      Bootstrap& b = *boots[r];
      for (int round = 0; round < 3; ++round) {  // several rounds reuse and delete keys
        int mine = r * 10 + round;
        if ((status[r] = b.allGather(&mine, sizeof mine, gathered[r].data(), d)) != TESSERA_SUCCESS) return;
      }
      std::unique_ptr<Bootstrap> half;
      // Colors: even ranks and odd ranks; keys reverse the order.
      if ((status[r] = b.split(r % 2, -r, d, half)) != TESSERA_SUCCESS) return;
      splitRank[r] = half->rank();
      splitSize[r] = half->size();
      std::vector<int> all(half->size());
      if ((status[r] = half->allGather(&r, sizeof r, all.data(), d)) != TESSERA_SUCCESS) return;
      splitSum[r] = all[0] * 100 + all[1];
      int peer = r ^ 1, theirs = -1;
      if ((status[r] = b.exchange(peer, &r, &theirs, sizeof r, d)) != TESSERA_SUCCESS) return;
      swapped[r] = theirs;
    });
  for (std::thread& t : threads) t.join();
  for (int r = 0; r < n; ++r) {
    CHECK(status[r] == TESSERA_SUCCESS);
    CHECK(gathered[r] == std::vector<int>{2, 12, 22, 32});
    CHECK(splitSize[r] == 2);
    CHECK(splitRank[r] == (r < 2 ? 1 : 0));  // key -r: the higher rank comes first
    CHECK(splitSum[r] == (r % 2 == 0 ? 200 : 301));
    CHECK(swapped[r] == (r ^ 1));
  }
}

TEST_CASE("tcp store: a member that never comes is a timeout") {
  Store s;
  auto b = s.member(0, 2);
  int mine = 1, all[2];
  auto start = Clock::now();
  CHECK(b->allGather(&mine, sizeof mine, all, Deadline::after(0.3)) == TESSERA_ERROR_TIMEOUT);
  double took = std::chrono::duration<double>(Clock::now() - start).count();
  CHECK(took >= 0.29);
  CHECK(took < 3.0);
  std::string msg = tessera_last_error_message();
  CHECK(msg.find("world rank 1 (member 1 of this group) did not arrive: ") != std::string::npos);
  CHECK(msg.find("no answer for 't/g1/1' within 0.3 s (a rank died or stalled)") != std::string::npos);
  // The connection is not reused after a timeout.
  CHECK(b->allGather(&mine, sizeof mine, all, Deadline::after(1)) == TESSERA_ERROR_COMM_ABORTED);
}

TEST_CASE("tcp store: a server that goes away") {
  Store s;
  auto b = s.member(0, 2);
  s.server.reset();
  int mine = 1, all[2];
  tessera_status st = b->allGather(&mine, sizeof mine, all, Deadline::after(5));
  CHECK(st == TESSERA_ERROR_COMM_ABORTED);
  CHECK(std::string(tessera_last_error_message()).find("did rank 0 exit?") != std::string::npos);
}

TEST_CASE("tcp store: nobody listening") {
  std::unique_ptr<TcpStoreServer> probe;
  REQUIRE(TcpStoreServer::start("127.0.0.1", 0, kSecret, {}, probe) == TESSERA_SUCCESS);
  int port = probe->port();
  probe.reset();  // the port is free again
  std::shared_ptr<TcpStoreClient> c;
  CHECK(TcpStoreClient::connect("127.0.0.1", port, kSecret, Deadline::after(0.3), c) == TESSERA_ERROR_TIMEOUT);
  CHECK(std::string(tessera_last_error_message()).find("cannot reach rank 0 at 127.0.0.1:") != std::string::npos);
}
