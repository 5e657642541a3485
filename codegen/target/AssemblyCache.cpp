#include "codegen/target/AssemblyCache.h"

#include <array>
#include <cstdint>
#include <cstdlib>
#include <fstream>
#include <sstream>

#include "llvm/ADT/SmallString.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/SHA256.h"

namespace tessera::codegen {

namespace {

constexpr char kMagic[] = "tessera-ptxas-entry-1\n";
constexpr size_t kMagicSize = sizeof(kMagic) - 1;

std::string env(const char* name) {
  const char* v = std::getenv(name);
  return v ? v : "";
}

void putSize(std::string& out, uint64_t v) {
  for (int i = 0; i < 8; ++i) out.push_back(static_cast<char>((v >> (8 * i)) & 0xff));
}

uint64_t getSize(const std::string& in, size_t at) {
  uint64_t v = 0;
  for (int i = 0; i < 8; ++i) v |= static_cast<uint64_t>(static_cast<unsigned char>(in[at + i])) << (8 * i);
  return v;
}

}  // namespace

AssemblyCache AssemblyCache::fromEnvironment() {
  AssemblyCache c;
  std::string dir = env("TESSERA_CACHE_DIR");
  if (dir == "off" || dir == "0") return c;
  if (dir.empty()) {
    std::string base = env("XDG_CACHE_HOME");
    if (base.empty() && !env("HOME").empty()) base = env("HOME") + "/.cache";
    if (base.empty()) return c;
    dir = base + "/tessera";
  }
  dir += "/ptxas";
  if (llvm::sys::fs::create_directories(dir)) return c;  // cannot make it: no cache
  c.dir_ = dir;
  return c;
}

std::string AssemblyCache::key(const std::string& ptxasRelease, const std::vector<std::string>& args,
                               const std::string& ptx) {
  llvm::SHA256 h;
  // Lengths before each part, so that no two different inputs hash the same text.
  auto part = [&](const std::string& s) {
    std::string n = std::to_string(s.size()) + ":";
    h.update(n);
    h.update(s);
  };
  part(ptxasRelease);
  for (const std::string& a : args) part(a);
  part(ptx);
  std::array<uint8_t, 32> digest = h.final();
  return llvm::toHex(digest, /*LowerCase=*/true);
}

std::optional<AssemblyCache::Entry> AssemblyCache::lookup(const std::string& key) const {
  if (disabled()) return std::nullopt;
  std::ifstream in(dir_ + "/" + key, std::ios::binary);
  if (!in) return std::nullopt;
  std::ostringstream ss;
  ss << in.rdbuf();
  std::string data = ss.str();
  if (data.size() < kMagicSize + 16 || data.compare(0, kMagicSize, kMagic) != 0) return std::nullopt;
  uint64_t cubinSize = getSize(data, kMagicSize), reportSize = getSize(data, kMagicSize + 8);
  size_t body = kMagicSize + 16;
  if (cubinSize == 0 || cubinSize + reportSize != data.size() - body) return std::nullopt;
  return Entry{data.substr(body, cubinSize), data.substr(body + cubinSize, reportSize)};
}

void AssemblyCache::store(const std::string& key, const Entry& entry) const {
  if (disabled() || entry.cubin.empty()) return;
  std::string data(kMagic, kMagicSize);
  putSize(data, entry.cubin.size());
  putSize(data, entry.report.size());
  data += entry.cubin;
  data += entry.report;
  int fd;
  llvm::SmallString<256> tmp;
  if (llvm::sys::fs::createUniqueFile(dir_ + "/tmp-%%%%%%%%%%%%", fd, tmp)) return;
  llvm::sys::fs::closeFile(fd);
  {
    std::ofstream out(std::string(tmp.str()), std::ios::binary | std::ios::trunc);
    out << data;
    if (!out) {
      llvm::sys::fs::remove(tmp);
      return;
    }
  }
  // rename() replaces atomically: a reader sees the old entry, the new one, or none.
  if (llvm::sys::fs::rename(tmp, dir_ + "/" + key)) llvm::sys::fs::remove(tmp);
}

}  // namespace tessera::codegen
