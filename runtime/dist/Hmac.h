//===- Hmac.h - SHA-256 and HMAC-SHA256 for the rendezvous handshake ---------------*- C++ -*-===//
//
// The TCP rendezvous proves in both directions that a peer knows the job's secret without
// sending it (TcpStore.cpp: challenge and response over fresh nonces). FIPS 180-4 SHA-256 and
// RFC 2104 HMAC, small enough to keep libtessera_dist free of a crypto library.
//
//===----------------------------------------------------------------------------------------===//
#ifndef TESSERA_RUNTIME_DIST_HMAC_H
#define TESSERA_RUNTIME_DIST_HMAC_H

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>

namespace tessera::dist {

using Digest = std::array<uint8_t, 32>;

Digest sha256(const void* data, size_t bytes);
Digest hmacSha256(const std::string& key, const std::string& message);
// Compares without an early exit, so the time does not tell how many bytes matched.
bool equalDigests(const void* a, const void* b, size_t bytes);

}  // namespace tessera::dist

#endif
