// An on-disk cache of ptxas's work: the cubin and the -v report for one (ptxas release, flags,
// PTX text). ptxas is a pure function of those, so a hit is exactly what a run would give; the
// cache only saves time (ptxas is half of compiling a large module, docs/codegen.md).
//
// Where: $TESSERA_CACHE_DIR, else $XDG_CACHE_HOME/tessera, else $HOME/.cache/tessera (as Triton
// keeps ~/.triton/cache); TESSERA_CACHE_DIR=off turns it off. Entries are written to a temporary
// file in the same folder and renamed into place, so concurrent compilers never see half an
// entry; an entry that does not read back whole is ignored and rewritten.
#pragma once

#include <optional>
#include <string>
#include <vector>

namespace tessera::codegen {

class AssemblyCache {
 public:
  // The cache for this process's environment; disabled() when it is off or has no folder.
  static AssemblyCache fromEnvironment();
  bool disabled() const { return dir_.empty(); }
  const std::string& dir() const { return dir_; }

  // The key of one assembly: every input that can change ptxas's output.
  static std::string key(const std::string& ptxasRelease, const std::vector<std::string>& args, const std::string& ptx);

  struct Entry {
    std::string cubin, report;
  };
  std::optional<Entry> lookup(const std::string& key) const;
  // Best effort: a cache that cannot be written leaves the compile as it was.
  void store(const std::string& key, const Entry& entry) const;

 private:
  std::string dir_;
};

}  // namespace tessera::codegen
