#include "codegen/target/CudaToolkit.h"

#include <cstdlib>
#include <fstream>
#include <sstream>

#include "codegen/target/AssemblyCache.h"
#include "llvm/ADT/SmallString.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Program.h"

namespace tessera::codegen {

namespace {

// A temporary file removed when it goes out of scope.
struct TempFile {
  llvm::SmallString<128> path;
  bool create(const char* prefix, const char* suffix, std::string& error) {
    int fd;
    if (auto ec = llvm::sys::fs::createTemporaryFile(prefix, suffix, fd, path)) {
      error = "cannot create a temporary file: " + ec.message();
      return false;
    }
    llvm::sys::fs::closeFile(fd);
    return true;
  }
  ~TempFile() {
    if (!path.empty()) llvm::sys::fs::remove(path);
  }
};

bool writeFile(const std::string& path, const std::string& data, std::string& error) {
  std::ofstream out(path, std::ios::binary);
  out << data;
  if (!out) error = "cannot write '" + path + "'";
  return static_cast<bool>(out);
}

bool readFile(const std::string& path, std::string& data, std::string& error) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    error = "cannot read '" + path + "'";
    return false;
  }
  std::ostringstream ss;
  ss << in.rdbuf();
  data = ss.str();
  return true;
}

// Runs a program; on failure `error` holds its name, status and the diagnostics it printed.
// `output`, when given, receives what it printed (stdout and stderr) on success.
bool runTool(const std::string& program, const std::vector<std::string>& args, std::string& error,
             std::string* output = nullptr) {
  TempFile log;
  if (!log.create("tessera-tool", "log", error)) return false;
  std::vector<llvm::StringRef> argv;
  argv.push_back(program);
  for (const std::string& a : args) argv.push_back(a);
  std::optional<llvm::StringRef> redirects[] = {std::nullopt, log.path.str(), log.path.str()};
  std::string execError;
  int rc = llvm::sys::ExecuteAndWait(program, argv, std::nullopt, redirects, 0, 0, &execError);
  if (rc == 0) return !output || readFile(std::string(log.path.str()), *output, error);
  std::string printed;
  std::string ignored;
  readFile(std::string(log.path.str()), printed, ignored);
  error = program + " failed (status " + std::to_string(rc) + ")" + (execError.empty() ? "" : ": " + execError) +
          (printed.empty() ? "" : "\n" + printed);
  return false;
}

}  // namespace

CudaToolkit CudaToolkit::locate() {
  CudaToolkit t;
  const char* env = std::getenv("CUDA_HOME");
  t.root_ = env && *env ? env : "/usr/local/cuda";
  auto exe = [&](const char* name) {
    std::string p = t.root_ + "/bin/" + name;
    return llvm::sys::fs::can_execute(p) ? p : std::string();
  };
  t.ptxas_ = exe("ptxas");
  t.fatbinary_ = exe("fatbinary");
  return t;
}

std::string CudaToolkit::version() const {
  if (ptxas_.empty()) return "";
  std::string out, error;
  if (!runTool(ptxas_, {"--version"}, error, &out)) return "";
  // "Cuda compilation tools, release 13.0, V13.0.48": the line with the release.
  size_t at = out.find("release ");
  if (at == std::string::npos) return "";
  size_t end = out.find('\n', at);
  return out.substr(at, end == std::string::npos ? std::string::npos : end - at);
}

std::string CudaToolkit::missingReason() const {
  return "the CUDA toolkit was not found at '" + root_ + "' (ptxas and fatbinary are needed; set CUDA_HOME)";
}

bool CudaToolkit::assemble(const std::string& ptx, const GpuArch& arch, unsigned optLevel, bool lineInfo,
                           std::string& cubin, std::string& error, std::string* info) const {
  if (!found()) {
    error = missingReason();
    return false;
  }
  std::vector<std::string> flags = {"-arch=" + arch.name, "-O" + std::to_string(optLevel > 3 ? 3 : optLevel)};
  if (lineInfo) flags.insert(flags.begin(), "-lineinfo");
  if (info) flags.insert(flags.begin(), "-v");
  AssemblyCache cache = AssemblyCache::fromEnvironment();
  std::string key;
  if (!cache.disabled()) {
    if (release_.empty()) release_ = ptxas_ + " " + version();
    key = AssemblyCache::key(release_, flags, ptx);
    if (std::optional<AssemblyCache::Entry> hit = cache.lookup(key)) {
      cubin = std::move(hit->cubin);
      if (info) *info = std::move(hit->report);
      return true;
    }
  }
  TempFile in, out;
  if (!in.create("tessera", "ptx", error) || !out.create("tessera", "cubin", error)) return false;
  if (!writeFile(std::string(in.path.str()), ptx, error)) return false;
  std::vector<std::string> args = flags;
  for (std::string a : {std::string("-o"), std::string(out.path.str()), std::string(in.path.str())}) args.push_back(a);
  std::string report;
  if (!runTool(ptxas_, args, error, &report)) return false;
  if (!readFile(std::string(out.path.str()), cubin, error)) return false;
  if (!cache.disabled()) cache.store(key, {cubin, report});
  if (info) *info = std::move(report);
  return true;
}

bool CudaToolkit::fatbinary(const std::vector<Image>& images, const std::string& ptx, const GpuArch& ptxArch,
                            std::string& fatbin, std::string& error) const {
  if (!found()) {
    error = missingReason();
    return false;
  }
  std::vector<TempFile> files(images.size() + 2);
  std::vector<std::string> args = {"--64", "--create", ""};
  if (!files[0].create("tessera", "fatbin", error)) return false;
  args[2] = std::string(files[0].path.str());
  for (size_t i = 0; i < images.size(); ++i) {
    TempFile& f = files[i + 1];
    if (!f.create("tessera", "cubin", error) || !writeFile(std::string(f.path.str()), images[i].cubin, error))
      return false;
    args.push_back("--image3=kind=elf,sm=" + std::to_string(images[i].arch.sm) +
                   (images[i].arch.archSpecific ? "a" : "") + ",file=" + std::string(f.path.str()));
  }
  if (!ptx.empty()) {
    TempFile& f = files.back();
    if (!f.create("tessera", "ptx", error) || !writeFile(std::string(f.path.str()), ptx, error)) return false;
    args.push_back("--image3=kind=ptx,sm=" + std::to_string(ptxArch.sm) + (ptxArch.archSpecific ? "a" : "") +
                   ",file=" + std::string(f.path.str()));
  }
  if (!runTool(fatbinary_, args, error)) return false;
  return readFile(std::string(files[0].path.str()), fatbin, error);
}

}  // namespace tessera::codegen
