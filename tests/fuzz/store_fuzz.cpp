// The rendezvous protocol (runtime/dist/StoreProtocol.h) under arbitrary bytes from several
// connections at once: some start with a correct handshake (so that requests are reached), the
// others send whatever the input says. The input is a script of steps: a connection, how many
// bytes it sends, a time step. The server's state may never crash, never hold more than its
// bounds, and a refused or stalled connection must be closed. A broken rule traps.
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "runtime/dist/StoreProtocol.h"

using namespace tessera::dist::store;

namespace {

const char* kSecret = "fuzz-secret";

struct Conn {
  uint64_t id = 0;
  bool open = false;
};

void check(bool ok) {
  if (!ok) __builtin_trap();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  uint64_t counter = 0;
  Limits limits;
  limits.handshakeSeconds = 2;
  limits.messageSeconds = 2;
  Core core(kSecret, limits, [&counter] { return std::string(kNonce, static_cast<char>('a' + (counter++ % 26))); });
  std::vector<Conn> conns(4);
  double now = 0;
  for (size_t c = 0; c < conns.size(); ++c) {
    conns[c].id = core.open(now);
    conns[c].open = true;
    std::string hello = core.output(conns[c].id);
    check(hello.size() == kHelloBytes && hello.compare(0, 4, "TSRV") == 0);
    core.output(conns[c].id).clear();
    if (c % 2 == 0) {  // the first two connections authenticate correctly
      std::string nonce(kNonce, 'c');
      std::string auth = "TCLI" + nonce + clientProof(kSecret, hello.substr(5), nonce);
      std::string why;
      check(core.receive(conns[c].id, auth.data(), auth.size(), now, why));
      check(core.output(conns[c].id).size() == 1 + kMac);
      core.output(conns[c].id).clear();
    }
  }
  size_t at = 0;
  while (at + 2 <= size) {
    uint8_t which = data[at] % conns.size(), step = data[at + 1];
    at += 2;
    size_t n = std::min<size_t>(step & 0x3f, size - at);
    now += (step >> 6) * 0.75;  // time passes in steps of 0, 0.75, 1.5 or 2.25 s
    Conn& c = conns[which];
    if (!c.open) {
      c.id = core.open(now);
      c.open = true;
    }
    std::string why;
    if (!core.receive(c.id, reinterpret_cast<const char*>(data + at), n, now, why)) {
      check(!why.empty());
      core.close(c.id);
      c.open = false;
    } else {
      core.output(c.id).clear();  // the peer read its replies
    }
    at += n;
    std::vector<std::string> reasons;
    for (uint64_t id : core.stalled(now, reasons)) {
      for (Conn& k : conns)
        if (k.open && k.id == id) k.open = false;
      core.close(id);
    }
    check(core.storedBytes() <= kMaxStoredBytes);
    check(core.connections() <= conns.size());
  }
  return 0;
}
