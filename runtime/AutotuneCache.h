//===- AutotuneCache.h - Tuning winners on disk ----------------------------------*- C++ -*-===//
//
// One file per tuning key under $XDG_CACHE_HOME/tessera/autotune (else ~/.cache/...), named
// by a hash of the key. A file holds the whole key (hash collisions read as misses), the
// winning candidate with its parameter values, and a checksum. Writers write a temporary file
// and rename it over the entry, so concurrent writers leave one complete entry; a file that is
// truncated, corrupt or names a candidate the kernel does not have is ignored with a warning on
// stderr (once per file) and rewritten by the next search, never a failure.
//
//===----------------------------------------------------------------------------------------===//
#ifndef TESSERA_RUNTIME_AUTOTUNECACHE_H
#define TESSERA_RUNTIME_AUTOTUNECACHE_H

#include <optional>
#include <string>

#include "tessera/runtime.h"

namespace tessera::rt::autotune {

// The directory entries live in ("" when neither XDG_CACHE_HOME nor HOME is set).
std::string cacheDirectory();
// The file that holds the entry for `key` ("" without a cache directory).
std::string cacheEntryPath(const std::string& key);
// The recorded winner for `key`, checked against the kernel's candidate table. An entry that is
// there but unusable sets `problem` (when given) to why, besides the warning.
std::optional<uint32_t> cacheRead(const std::string& key, const tessera_autotune_desc& table,
                                  std::string* problem = nullptr);
// Records `candidate` for `key`; false (after a warning) when the entry cannot be written.
bool cacheWrite(const std::string& key, const tessera_autotune_desc& table, uint32_t candidate);
// FNV-1a, 64 bits.
uint64_t hash64(const std::string& text);

}  // namespace tessera::rt::autotune

#endif
