//===- Self.cpp - A world of one process ----------------------------------------------------===//
#include <algorithm>
#include <cstring>
#include <tuple>

#include "runtime/Status.h"
#include "runtime/dist/Transport.h"

namespace tessera::dist {

using rt::fail;

void splitMembership(const int* colorKey, int size, int me, int& newRank, std::vector<int>& members) {
  int color = colorKey[2 * me];
  members.clear();
  for (int r = 0; r < size; ++r)
    if (colorKey[2 * r] == color) members.push_back(r);
  std::stable_sort(members.begin(), members.end(), [&](int a, int b) {
    return std::make_tuple(colorKey[2 * a + 1], a) < std::make_tuple(colorKey[2 * b + 1], b);
  });
  newRank = static_cast<int>(std::find(members.begin(), members.end(), me) - members.begin());
}

namespace {

class SoloBootstrap final : public Bootstrap {
 public:
  int rank() const override { return 0; }
  int size() const override { return 1; }
  tessera_status allGather(const void* mine, size_t bytes, void* all, const Deadline&) override {
    std::memcpy(all, mine, bytes);
    return TESSERA_SUCCESS;
  }
  tessera_status split(int color, int, const Deadline&, std::unique_ptr<Bootstrap>& out) override {
    out = color < 0 ? nullptr : makeSoloBootstrap();
    return TESSERA_SUCCESS;
  }
  tessera_status exchange(int peer, const void*, void*, size_t, const Deadline&) override {
    return fail(TESSERA_ERROR_INVALID_ARGUMENT, "rank ", peer, " does not exist in a world of one");
  }
  std::string describe() const override { return "a single process"; }
};

class SelfTransport final : public Transport {
 public:
  tessera_dist_transport kind() const override { return TESSERA_TRANSPORT_SELF; }
  int rank() const override { return 0; }
  int size() const override { return 1; }
  Bootstrap& bootstrap() override { return boot_; }
  tessera_status exchange(const std::vector<PeerTransfer>& t, void*, const Deadline&) override {
    if (!t.empty())
      return fail(TESSERA_ERROR_INVALID_ARGUMENT, "rank ", t[0].peer, " does not exist in a world of one");
    return TESSERA_SUCCESS;
  }
  tessera_status allGather(const void* send, void* recv, size_t bytes, void*, const Deadline&) override {
    if (send != recv) std::memmove(recv, send, bytes);
    return TESSERA_SUCCESS;
  }
  tessera_status broadcast(void*, size_t, int, void*, const Deadline&) override { return TESSERA_SUCCESS; }
  tessera_status barrier(void*, const Deadline&) override { return TESSERA_SUCCESS; }
  tessera_status nativeAllReduce(const void*, void*, size_t, int, int, void*, const Deadline&) override {
    return TESSERA_ERROR_NOT_SUPPORTED;
  }
  tessera_status nativeReduceScatter(const void*, void*, size_t, int, int, void*, const Deadline&) override {
    return TESSERA_ERROR_NOT_SUPPORTED;
  }
  tessera_status split(int color, int, const Deadline&, std::unique_ptr<Transport>& out) override {
    out = color < 0 ? nullptr : makeSelfTransport();
    return TESSERA_SUCCESS;
  }
  void abort() override {}

 private:
  SoloBootstrap boot_;
};

}  // namespace

std::unique_ptr<Bootstrap> makeSoloBootstrap() { return std::make_unique<SoloBootstrap>(); }
std::unique_ptr<Transport> makeSelfTransport() { return std::make_unique<SelfTransport>(); }

}  // namespace tessera::dist
