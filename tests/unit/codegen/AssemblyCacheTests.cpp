// The ptxas cache (codegen/target/AssemblyCache.h): keys, entries that read back whole or not at
// all, and CudaToolkit::assemble answering from it.
#include <cstdlib>
#include <doctest/doctest.h>
#include <fstream>
#include <string>

#include "codegen/target/AssemblyCache.h"
#include "codegen/target/CudaToolkit.h"
#include "codegen/target/GpuTarget.h"
#include "llvm/ADT/SmallString.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"

using namespace tessera::codegen;

namespace {

// A fresh cache folder for one test, set as TESSERA_CACHE_DIR while it lives.
struct ScopedCacheDir {
  llvm::SmallString<128> path;
  ScopedCacheDir() {
    REQUIRE_FALSE(llvm::sys::fs::createUniqueDirectory("tessera-cache-test", path));
    setenv("TESSERA_CACHE_DIR", path.c_str(), 1);
  }
  ~ScopedCacheDir() {
    unsetenv("TESSERA_CACHE_DIR");
    llvm::sys::fs::remove_directories(path);
  }
  std::vector<std::string> entries() const {
    std::vector<std::string> names;
    std::error_code ec;
    for (llvm::sys::fs::directory_iterator it(std::string(path.str()) + "/ptxas", ec), end; !ec && it != end;
         it.increment(ec))
      names.push_back(it->path());
    return names;
  }
};

const char* kPtx =
    ".version 8.0\n.target sm_80\n.address_size 64\n"
    ".visible .entry k(.param .u64 p)\n{\n.reg .b64 %rd<2>;\n.reg .b32 %r<2>;\n"
    "ld.param.u64 %rd1, [p];\ncvta.to.global.u64 %rd1, %rd1;\nmov.u32 %r1, 7;\n"
    "st.global.u32 [%rd1], %r1;\nret;\n}\n";

}  // namespace

TEST_CASE("assembly cache keys cover every input") {
  std::string k = AssemblyCache::key("ptxas 13.0", {"-arch=sm_90a", "-O3"}, "ptx");
  CHECK(k.size() == 64);
  CHECK(k == AssemblyCache::key("ptxas 13.0", {"-arch=sm_90a", "-O3"}, "ptx"));
  CHECK(k != AssemblyCache::key("ptxas 13.1", {"-arch=sm_90a", "-O3"}, "ptx"));
  CHECK(k != AssemblyCache::key("ptxas 13.0", {"-arch=sm_80", "-O3"}, "ptx"));
  CHECK(k != AssemblyCache::key("ptxas 13.0", {"-v", "-arch=sm_90a", "-O3"}, "ptx"));
  CHECK(k != AssemblyCache::key("ptxas 13.0", {"-arch=sm_90a", "-O3"}, "ptx "));
  // Parts are length-prefixed: moving text between them changes the key.
  CHECK(AssemblyCache::key("a", {"bc"}, "d") != AssemblyCache::key("ab", {"c"}, "d"));
}

TEST_CASE("assembly cache entries read back whole or not at all") {
  ScopedCacheDir dir;
  AssemblyCache cache = AssemblyCache::fromEnvironment();
  REQUIRE_FALSE(cache.disabled());
  std::string key = AssemblyCache::key("r", {"-O3"}, "x");
  CHECK_FALSE(cache.lookup(key));
  cache.store(key, {"\x7f"
                    "ELF cubin",
                    "ptxas info: 8 registers"});
  auto hit = cache.lookup(key);
  REQUIRE(hit);
  CHECK(hit->cubin ==
        "\x7f"
        "ELF cubin");
  CHECK(hit->report == "ptxas info: 8 registers");
  REQUIRE(dir.entries().size() == 1);  // no temporary file left behind

  // A truncated entry (a disk that filled up, a copy cut short) is ignored.
  std::string file = dir.entries()[0];
  std::string data;
  {
    std::ifstream in(file, std::ios::binary);
    data.assign(std::istreambuf_iterator<char>(in), {});
  }
  std::ofstream(file, std::ios::binary | std::ios::trunc) << data.substr(0, data.size() - 3);
  CHECK_FALSE(cache.lookup(key));
  std::ofstream(file, std::ios::binary | std::ios::trunc) << "not an entry";
  CHECK_FALSE(cache.lookup(key));

  setenv("TESSERA_CACHE_DIR", "off", 1);
  CHECK(AssemblyCache::fromEnvironment().disabled());
}

TEST_CASE("ptxas results come from the cache when it holds them") {
  CudaToolkit cuda = CudaToolkit::locate();
#if TESSERA_EXPECT_CUDA
  REQUIRE_MESSAGE(cuda.found(), cuda.missingReason());
#else
  if (!cuda.found()) {
    MESSAGE("skipped: " << cuda.missingReason());
    return;
  }
#endif
  ScopedCacheDir dir;
  std::string error;
  std::optional<GpuArch> parsed = parseGpuArch("sm_80", error);
  REQUIRE(parsed);
  GpuArch arch = *parsed;
  std::string cold, report;
  REQUIRE_MESSAGE(cuda.assemble(kPtx, arch, 3, false, cold, error, &report), error);
  REQUIRE(dir.entries().size() == 1);
  std::string warm, warmReport;
  REQUIRE_MESSAGE(cuda.assemble(kPtx, arch, 3, false, warm, error, &warmReport), error);
  CHECK(warm == cold);
  CHECK(warmReport == report);
  CHECK(dir.entries().size() == 1);

  // Replacing the entry's cubin shows that the second compile read the cache, not ptxas.
  std::string key = llvm::sys::path::filename(dir.entries()[0]).str();
  AssemblyCache::fromEnvironment().store(key, {"\x7f"
                                               "ELF planted",
                                               report});
  std::string planted;
  REQUIRE(cuda.assemble(kPtx, arch, 3, false, planted, error, &warmReport));
  CHECK(planted ==
        "\x7f"
        "ELF planted");

  // Other flags are another entry; with the cache off ptxas runs again.
  std::string other;
  REQUIRE(cuda.assemble(kPtx, arch, 3, true, other, error));
  CHECK(dir.entries().size() == 2);
  setenv("TESSERA_CACHE_DIR", "off", 1);
  std::string off, offReport;
  REQUIRE(cuda.assemble(kPtx, arch, 3, false, off, error, &offReport));
  CHECK(off == cold);  // -v is part of the key: it changes the cubin (ptxas records its flags)
}
