//===- StoreProtocol.cpp - The rendezvous server's state machine ----------------------------===//
#include "runtime/dist/StoreProtocol.h"

#include <algorithm>
#include <cstring>

#include "runtime/dist/Hmac.h"

namespace tessera::dist::store {

namespace {

constexpr char kServerMagic[4] = {'T', 'S', 'R', 'V'}, kClientMagic[4] = {'T', 'C', 'L', 'I'};
constexpr size_t kMaxWaitsPerConnection = 64;

void putU32(std::string& s, uint32_t v) {
  for (int i = 0; i < 4; ++i) s.push_back(static_cast<char>((v >> (8 * i)) & 0xff));
}
uint32_t getU32(const std::string& s, size_t at) {
  uint32_t v = 0;
  for (int i = 0; i < 4; ++i) v |= uint32_t(static_cast<uint8_t>(s[at + i])) << (8 * i);
  return v;
}
std::string asString(const Digest& d) { return std::string(reinterpret_cast<const char*>(d.data()), d.size()); }

}  // namespace

std::string clientProof(const std::string& secret, const std::string& serverNonce, const std::string& clientNonce) {
  return asString(hmacSha256(secret, "tessera rendezvous client" + serverNonce + clientNonce));
}
std::string serverProof(const std::string& secret, const std::string& clientNonce, const std::string& serverNonce) {
  return asString(hmacSha256(secret, "tessera rendezvous server" + clientNonce + serverNonce));
}

std::string encodeRequest(uint8_t op, const std::string& key, const std::string& value) {
  std::string m(1, static_cast<char>(op));
  putU32(m, static_cast<uint32_t>(key.size()));
  m += key;
  putU32(m, static_cast<uint32_t>(value.size()));
  return m + value;
}

std::string encodeReply(uint8_t status, const std::string& bytes) {
  std::string r(1, static_cast<char>(status));
  putU32(r, static_cast<uint32_t>(bytes.size()));
  return r + bytes;
}

Core::Core(std::string secret, Limits limits, Nonces nonces)
    : secret_(std::move(secret)), limits_(limits), nonces_(std::move(nonces)) {}

uint64_t Core::open(double now) {
  uint64_t id = next_++;
  Session& s = sessions_[id];
  s.nonce = nonces_();
  s.nonce.resize(kNonce, '\0');
  s.since = now;
  s.out.assign(kServerMagic, 4);
  s.out.push_back(static_cast<char>(kVersion));
  s.out += s.nonce;
  return id;
}

void Core::close(uint64_t id) {
  for (auto it = waiting_.begin(); it != waiting_.end();) it = it->second == id ? waiting_.erase(it) : std::next(it);
  sessions_.erase(id);
}

std::string& Core::output(uint64_t id) {
  static std::string none;
  auto it = sessions_.find(id);
  if (it == sessions_.end()) {
    none.clear();
    return none;
  }
  return it->second.out;
}

std::vector<uint64_t> Core::stalled(double now, std::vector<std::string>& why) const {
  std::vector<uint64_t> out;
  for (const auto& [id, s] : sessions_) {
    if (s.refused) continue;
    if (!s.authenticated && now - s.since > limits_.handshakeSeconds) {
      out.push_back(id);
      why.push_back("did not finish the handshake within " + std::to_string(limits_.handshakeSeconds) + " s");
    } else if (s.authenticated && !s.in.empty() && now - s.since > limits_.messageSeconds) {
      out.push_back(id);
      why.push_back("left a message unfinished for " + std::to_string(limits_.messageSeconds) + " s");
    }
  }
  return out;
}

bool Core::refuse(Session& s, const std::string& message, std::string& why) {
  s.out += encodeReply(1, message);
  s.refused = true;
  s.in.clear();
  why = message;
  return false;
}

bool Core::receive(uint64_t id, const char* data, size_t bytes, double now, std::string& why) {
  auto it = sessions_.find(id);
  if (it == sessions_.end()) {
    why = "unknown connection";
    return false;
  }
  Session& s = it->second;
  if (s.refused) {
    why = "the connection was refused";
    return false;
  }
  bool wasEmpty = s.in.empty();
  s.in.append(data, bytes);
  if (!s.authenticated) {
    if (!handshake(s, why)) return false;
    if (!s.authenticated) return true;
    wasEmpty = true;
  }
  while (!s.in.empty()) {
    size_t before = s.in.size();
    if (!request(id, s, why)) return false;
    if (s.in.size() == before) break;  // an unfinished message
    wasEmpty = true;
  }
  if (s.in.empty())
    s.since = 0;
  else if (wasEmpty)
    s.since = now;
  if (s.out.size() > kMaxPendingOutput) {
    why = "the peer does not read its replies";
    return false;
  }
  return true;
}

bool Core::handshake(Session& s, std::string& why) {
  size_t magic = std::min<size_t>(s.in.size(), 4);
  if (std::memcmp(s.in.data(), kClientMagic, magic) != 0)
    return refuse(s, "not a Tessera rendezvous client (bad greeting)", why);
  if (s.in.size() < kAuthBytes) return true;
  std::string clientNonce = s.in.substr(4, kNonce), proof = s.in.substr(4 + kNonce, kMac);
  std::string want = clientProof(secret_, s.nonce, clientNonce);
  if (!equalDigests(proof.data(), want.data(), kMac))
    return refuse(s,
                  "wrong job secret: this connection does not know the TESSERA_DIST_SECRET of rank 0 (every rank "
                  "of a job must be given the same one; tessera-run does that)",
                  why);
  s.in.erase(0, kAuthBytes);
  s.authenticated = true;
  s.out.push_back('\0');
  s.out += serverProof(secret_, clientNonce, s.nonce);
  return true;
}

// One complete request from s.in, or nothing when it is unfinished; lengths are checked as soon
// as they arrive, so an oversized message is refused before its body is buffered.
bool Core::request(uint64_t id, Session& s, std::string& why) {
  uint8_t op = static_cast<uint8_t>(s.in[0]);
  if (op != kSet && op != kGet && op != kDel)
    return refuse(s, "unknown request " + std::to_string(op) + " (1 SET, 2 GET, 3 DEL)", why);
  if (s.in.size() < 5) return true;
  uint32_t klen = getU32(s.in, 1);
  if (klen > kMaxKey)
    return refuse(s, "a key of " + std::to_string(klen) + " bytes (at most " + std::to_string(kMaxKey) + ")", why);
  if (s.in.size() < 9 + size_t(klen)) return true;
  uint32_t vlen = getU32(s.in, 5 + klen);
  if (vlen > kMaxValue)
    return refuse(s, "a value of " + std::to_string(vlen) + " bytes (at most " + std::to_string(kMaxValue) + ")", why);
  size_t total = 9 + size_t(klen) + vlen;
  if (s.in.size() < total) return true;
  std::string key = s.in.substr(5, klen), value = s.in.substr(9 + klen, vlen);
  s.in.erase(0, total);
  if (op == kSet) {
    auto old = table_.find(key);
    size_t grown = key.size() + value.size(), freed = old == table_.end() ? 0 : old->first.size() + old->second.size();
    if (stored_ - freed + grown > kMaxStoredBytes)
      return refuse(s,
                    "the rendezvous already holds " + std::to_string(stored_) + " bytes (at most " +
                        std::to_string(kMaxStoredBytes) + ")",
                    why);
  }
  if (op == kGet && !table_.count(key)) {
    size_t mine = 0;
    for (const auto& w : waiting_) mine += w.second == id;
    if (mine >= kMaxWaitsPerConnection) return refuse(s, "too many unanswered GETs on one connection", why);
  }
  apply(id, op, std::move(key), std::move(value));
  return true;
}

void Core::apply(uint64_t id, uint8_t op, std::string key, std::string value) {
  Session& s = sessions_[id];
  if (op == kGet) {
    if (auto it = table_.find(key); it != table_.end())
      s.out += encodeReply(0, it->second);
    else
      waiting_.emplace(std::move(key), id);
    return;
  }
  if (auto it = table_.find(key); it != table_.end()) {
    stored_ -= it->first.size() + it->second.size();
    table_.erase(it);
  }
  s.out += encodeReply(0, "");
  if (op == kDel) return;
  auto [lo, hi] = waiting_.equal_range(key);
  for (auto w = lo; w != hi; ++w)
    if (auto other = sessions_.find(w->second); other != sessions_.end()) other->second.out += encodeReply(0, value);
  waiting_.erase(lo, hi);
  stored_ += key.size() + value.size();
  table_.emplace(std::move(key), std::move(value));
}

}  // namespace tessera::dist::store
