//===- AutotuneCache.cpp - Tuning winners on disk -------------------------------------------===//
#include "runtime/AutotuneCache.h"

#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <mutex>
#include <set>
#include <sstream>
#include <sys/stat.h>
#include <unistd.h>

namespace tessera::rt::autotune {

namespace {

constexpr const char* kMagic = "tessera-autotune 1";

void warnOnce(const std::string& path, const std::string& why) {
  static std::mutex mutex;
  static std::set<std::string> warned;
  std::lock_guard<std::mutex> lock(mutex);
  if (warned.insert(path).second)
    std::fprintf(stderr, "tessera: warning: autotune cache: %s: %s (ignored; the kernel is tuned again)\n",
                 path.c_str(), why.c_str());
}

std::string hex(uint64_t v) {
  char buf[17];
  std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(v));
  return buf;
}

std::string valuesText(const tessera_autotune_desc& t, uint32_t candidate) {
  std::string s;
  for (uint32_t p = 0; p < t.num_params; ++p)
    s += std::string(p ? "," : "") + t.param_names[p] + "=" +
         std::to_string(t.values[size_t(candidate) * t.num_params + p]);
  return s;
}

// mkdir -p
bool makeDirectories(const std::string& path) {
  for (size_t i = 1; i <= path.size(); ++i)
    if (i == path.size() || path[i] == '/') {
      std::string part = path.substr(0, i);
      if (mkdir(part.c_str(), 0755) != 0 && errno != EEXIST) return false;
    }
  return true;
}

}  // namespace

std::string cacheEntryPath(const std::string& key) {
  std::string dir = cacheDirectory();
  return dir.empty() ? "" : dir + "/" + hex(hash64(key)) + ".txt";
}

uint64_t hash64(const std::string& text) {
  uint64_t h = 1469598103934665603ull;
  for (unsigned char c : text) {
    h ^= c;
    h *= 1099511628211ull;
  }
  return h;
}

std::string cacheDirectory() {
  const char* xdg = std::getenv("XDG_CACHE_HOME");
  if (xdg && *xdg == '/') return std::string(xdg) + "/tessera/autotune";
  const char* home = std::getenv("HOME");
  if (home && *home) return std::string(home) + "/.cache/tessera/autotune";
  return "";
}

std::optional<uint32_t> cacheRead(const std::string& key, const tessera_autotune_desc& table, std::string* problem) {
  std::string path = cacheEntryPath(key);
  auto unusable = [&](const std::string& why) -> std::optional<uint32_t> {
    warnOnce(path, why);
    if (problem) *problem = why;
    return std::nullopt;
  };
  if (path.empty()) return std::nullopt;
  std::ifstream f(path, std::ios::binary);
  if (!f) return std::nullopt;  // no entry
  // An entry is a few hundred bytes; more than this is not one of ours.
  constexpr size_t kMaxEntryBytes = 1 << 16;
  std::string text(kMaxEntryBytes + 1, '\0');
  f.read(text.data(), static_cast<std::streamsize>(text.size()));
  text.resize(static_cast<size_t>(f.gcount()));
  if (text.size() > kMaxEntryBytes) return unusable("larger than any entry (overwritten)");
  // Layout: magic, "key <key>", "candidate <i>", "values <P=v,...>", "checksum <hex>", each a line.
  size_t sum = text.rfind("checksum ");
  if (text.compare(0, std::strlen(kMagic), kMagic) != 0 || sum == std::string::npos)
    return unusable("not a complete entry (truncated or overwritten)");
  std::string body = text.substr(0, sum), want = text.substr(sum + 9);
  while (!want.empty() && (want.back() == '\n' || want.back() == '\r')) want.pop_back();
  if (want != hex(hash64(body))) return unusable("its checksum does not match its contents (corrupt)");
  std::istringstream lines(body);
  std::string magic, keyLine, candLine, valuesLine;
  std::getline(lines, magic);
  std::getline(lines, keyLine);
  std::getline(lines, candLine);
  std::getline(lines, valuesLine);
  if (keyLine != "key " + key) return std::nullopt;  // another key with the same hash
  char* end = nullptr;
  unsigned long cand = candLine.rfind("candidate ", 0) == 0 ? std::strtoul(candLine.c_str() + 10, &end, 10) : ~0ul;
  if (!end || *end || cand >= table.num_candidates || valuesLine != "values " + valuesText(table, uint32_t(cand)))
    return unusable("it names a candidate this kernel does not have");
  return static_cast<uint32_t>(cand);
}

bool cacheWrite(const std::string& key, const tessera_autotune_desc& table, uint32_t candidate) {
  std::string dir = cacheDirectory();
  if (dir.empty()) return false;
  if (!makeDirectories(dir)) {
    warnOnce(dir, std::string("cannot create the directory: ") + std::strerror(errno));
    return false;
  }
  std::string path = cacheEntryPath(key);
  std::string body = std::string(kMagic) + "\nkey " + key + "\ncandidate " + std::to_string(candidate) + "\nvalues " +
                     valuesText(table, candidate) + "\n";
  std::string text = body + "checksum " + hex(hash64(body)) + "\n";
  // A private temporary name, then an atomic rename: readers see the old entry or the new one.
  static std::atomic<uint64_t> sequence{0};
  std::string tmp = path + ".tmp." + std::to_string(getpid()) + "." + std::to_string(sequence++);
  {
    std::ofstream f(tmp, std::ios::binary | std::ios::trunc);
    f << text;
    if (!f.flush()) {
      warnOnce(tmp, "cannot write the entry");
      std::remove(tmp.c_str());
      return false;
    }
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0) {
    warnOnce(path, std::string("cannot replace the entry: ") + std::strerror(errno));
    std::remove(tmp.c_str());
    return false;
  }
  return true;
}

}  // namespace tessera::rt::autotune
