// Differential execution fuzzing: the input chooses a random well-typed kernel (KernelGen.h)
// and its inputs; the kernel is compiled twice, at -O0 and at -O2 (each with the Tile IR
// pipeline tesserac uses at that level, and bounds checking on), each object is linked into a
// shared library, loaded and launched on the CPU executor, and every output must agree bit for
// bit between the two. The only latitude is NaN: LLVM does not preserve NaN payloads (LangRef,
// "Floating-Point Semantics"), so any NaN equals any NaN; signed zeros, infinities and every
// other bit must match. Bugs this target reports: a generated kernel refused by the compiler
// (it is well-typed by construction), a crash or sanitizer report while compiling, a launch
// that fails (a bounds fault included: indices are in range by construction), and outputs that
// differ. TESSERA_EXEC_FUZZ_PRINT=1 prints every kernel.
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <dlfcn.h>
#include <fstream>
#include <random>
#include <spawn.h>
#include <sstream>
#include <string>
#include <sys/wait.h>
#include <unistd.h>
#include <utility>
#include <vector>

#include "KernelGen.h"
#include "basic/Diagnostics.h"
#include "codegen/CompileModule.h"
#include "frontend/Parser.h"
#include "ir/IR.h"
#include "ir/Pass.h"
#include "ir/Verifier.h"
#include "irgen/IRGen.h"
#include "sema/Sema.h"
#include "tessera/runtime.h"

extern char** environ;

using namespace tessera;

namespace {

// tesserac's default pipelines at -O0 and above (ir/Pass.h), the same constants, so that a pass
// renamed or retired there cannot leave the fuzzer on a pipeline of its own.
const char* kPipelineO0 = ir::kDefaultPipelineO0;
const char* kPipelineO2 = ir::kDefaultPipeline;

std::string currentSource;  // for the report of a failure

[[noreturn]] void fail(const std::string& what) {
  std::fprintf(stderr, "exec_fuzz: %s\n--- kernel ---\n%s--------------\n", what.c_str(), currentSource.c_str());
  std::fflush(stderr);
  __builtin_trap();
}

std::string describe(const SourceManager& sm, const std::vector<Diagnostic>& ds) {
  std::string s;
  for (const Diagnostic& d : ds) {
    if (d.severity < Severity::Error) continue;
    LineColumn lc = d.range.valid() ? sm.lineColumn(d.range.begin) : LineColumn{};
    s += std::to_string(lc.line) + ":" + std::to_string(lc.column) + ": " + d.message + "\n";
  }
  return s;
}

// Source -> object at `opt`, exactly as `tesserac -O<opt> --target=cpu --bounds-check` does.
std::string compile(const std::string& source, unsigned opt, const std::string& moduleName) {
  SourceManager sm;
  FileID file = sm.addBuffer("gen.tessera", source);
  DiagnosticEngine diags(sm);
  StoringDiagnosticConsumer store;
  diags.addConsumer(&store);
  diags.setErrorLimit(0);
  ASTContext ctx;
  Module* module = parseBuffer(sm, file, ctx, diags);
  SemaContext sema(sm, ctx);
  if (module && !diags.hasErrors()) analyzeModule(*module, sema, diags);
  std::unique_ptr<ir::Module> m;
  if (module && !diags.hasErrors()) m = lowerToTileIR(*module, sema, diags);
  if (!m || diags.hasErrors())
    fail("a generated kernel was refused at -O" + std::to_string(opt) + ":\n" + describe(sm, store.diagnostics));
  ir::PassManager pm;
  if (!pm.parsePipeline(opt == 0 ? kPipelineO0 : kPipelineO2, diags) || !pm.run(*m, diags) ||
      !ir::verifyModule(*m, diags))
    fail("the Tile IR pipeline failed at -O" + std::to_string(opt) + ":\n" + describe(sm, store.diagnostics));
  codegen::CompileOptions opts;
  opts.moduleName = moduleName;
  opts.sourceName = "gen.tessera";
  opts.optLevel = opt;
  opts.boundsCheck = true;
  codegen::CompileOutput out;
  std::string error;
  if (!codegen::compileModule(*m, opts, codegen::StopAfter::Object, out, error))
    fail("code generation failed at -O" + std::to_string(opt) + ": " + error);
  return out.object;
}

// The object as a shared library (the C compiler driver adds libgcc for the half conversions),
// loaded; the caller closes it. The files live in a directory of their own that is removed as
// soon as the library is loaded, so that no run leaves anything behind in /tmp.
void* load(const std::string& object, const std::string& stem) {
  char tmpl[] = "/tmp/tessera-exec-fuzz-XXXXXX";
  const char* d = mkdtemp(tmpl);
  if (!d) {
    std::fprintf(stderr, "exec_fuzz: cannot create a directory in /tmp\n");
    std::abort();  // the environment, not the compiler
  }
  std::string dir = d;
  std::string obj = dir + "/" + stem + ".o", lib = dir + "/" + stem + ".so";
  std::ofstream(obj, std::ios::binary) << object;
  const char* cc = std::getenv("CC") ? std::getenv("CC") : "cc";
  std::vector<std::string> args = {cc, "-shared", "-o", lib, obj};
  std::vector<char*> argv;
  for (std::string& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  pid_t pid;
  int status = 0;
  bool spawned = posix_spawnp(&pid, cc, nullptr, nullptr, argv.data(), environ) == 0;
  // libFuzzer's -timeout alarm fires every second: a wait it interrupts is resumed.
  pid_t waited = -1;
  while (spawned && (waited = waitpid(pid, &status, 0)) < 0 && errno == EINTR) {
  }
  if (!spawned || waited < 0 || !WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    std::fprintf(stderr, "exec_fuzz: cannot link %s with %s\n", obj.c_str(), cc);
    std::abort();  // the environment, not the compiler
  }
  void* h = dlopen(lib.c_str(), RTLD_NOW | RTLD_LOCAL);
  std::string loadError = h ? std::string() : std::string("dlopen: ") + dlerror();
  std::remove(obj.c_str());
  std::remove(lib.c_str());
  rmdir(dir.c_str());
  if (!h) fail(loadError);
  return h;
}

// Launches `fn` (the generated C launch function, whose signature is fixed by kernelTensors())
// with the tensors in order and the two scalars.
template <size_t... I>
tessera_status launch(void* fn, const std::vector<tessera_tensor>& ts, float sf, int32_t si,
                      std::index_sequence<I...>) {
  using Fn = tessera_status (*)(const tessera_launch_options*, decltype((void)I, (const tessera_tensor*)nullptr)...,
                                float, int32_t);
  return reinterpret_cast<Fn>(fn)(nullptr, &ts[I]..., sf, si);
}

// Input values: mostly ordinary, sometimes the edges of the dtype (zeros, infinities, NaN,
// subnormals, the extremes of integers).
void fillInput(std::vector<uint8_t>& bytes, fuzz::Ty t, std::mt19937_64& rng) {
  const fuzz::TyInfo& ti = fuzz::info(t);
  size_t n = bytes.size() / ti.bytes;
  for (size_t e = 0; e < n; ++e) {
    uint64_t r = rng(), bits = 0;
    unsigned mode = r % 8;
    r >>= 3;
    if (ti.isFloat) {
      double v;
      switch (mode) {
        case 0: v = static_cast<double>(static_cast<int>(r % 17) - 8); break;
        case 1: {
          static const double special[] = {0.0, -0.0, INFINITY, -INFINITY, NAN, 1e-40, -1e-310, 65504.0, 3.4e38, 1e300};
          v = special[r % 10];
          break;
        }
        case 2: v = std::ldexp(static_cast<double>(r % 4096) - 2048, static_cast<int>((r >> 12) % 80) - 40); break;
        default: v = (static_cast<double>(r % 2000001) - 1000000) / 250000.0; break;
      }
      if (t == fuzz::Ty::F64)
        std::memcpy(&bits, &v, 8);
      else {
        float f = static_cast<float>(v);
        uint32_t u;
        std::memcpy(&u, &f, 4);
        if (t == fuzz::Ty::F32)
          bits = u;
        else if (t == fuzz::Ty::BF16)
          bits = (u + 0x7fff + ((u >> 16) & 1)) >> 16;  // round to nearest even
        else {
          _Float16 h = static_cast<_Float16>(f);  // round to nearest even
          uint16_t c;
          std::memcpy(&c, &h, 2);
          bits = c;
        }
        if (t == fuzz::Ty::BF16 && std::isnan(f)) bits = 0x7fc0;
      }
    } else {
      uint64_t width = ti.bytes * 8;
      switch (mode) {
        case 0: bits = static_cast<uint64_t>(static_cast<int64_t>(r % 17) - 8); break;
        case 1: bits = 1ull << (width - 1); break;        // MIN (signed)
        case 2: bits = (1ull << (width - 1)) - 1; break;  // MAX (signed)
        case 3: bits = r % (width + 3); break;            // shift amounts around the width
        default: bits = r; break;
      }
    }
    std::memcpy(&bytes[e * ti.bytes], &bits, ti.bytes);
  }
}

bool sameElement(fuzz::Ty t, const uint8_t* a, const uint8_t* b) {
  unsigned size = fuzz::info(t).bytes;
  if (std::memcmp(a, b, size) == 0) return true;
  uint64_t x = 0, y = 0;
  std::memcpy(&x, a, size);
  std::memcpy(&y, b, size);
  auto isNan = [&](uint64_t v) {
    switch (t) {
      case fuzz::Ty::F64: return (v & 0x7ff0000000000000ull) == 0x7ff0000000000000ull && (v & 0xfffffffffffffull);
      case fuzz::Ty::F32: return (v & 0x7f800000u) == 0x7f800000u && (v & 0x7fffffu);
      case fuzz::Ty::F16: return (v & 0x7c00u) == 0x7c00u && (v & 0x3ffu);
      case fuzz::Ty::BF16: return (v & 0x7f80u) == 0x7f80u && (v & 0x7fu);
      default: return false;
    }
  };
  return isNan(x) && isNan(y);
}

struct Run {
  tessera_status status;
  std::string message;
  std::vector<std::vector<uint8_t>> outputs;
};

Run execute(void* lib, const std::string& fnName, const std::vector<fuzz::TensorParam>& params,
            const std::vector<std::vector<uint8_t>>& inputs, int64_t n, float sf, int32_t si) {
  void* fn = dlsym(lib, fnName.c_str());
  if (!fn) fail("the launch function " + fnName + " is missing");
  std::vector<void*> buffers;
  std::vector<tessera_tensor> ts(params.size());
  for (size_t p = 0; p < params.size(); ++p) {
    size_t bytes = n * fuzz::info(params[p].ty).bytes;
    void* d = nullptr;
    if (tessera_malloc(&d, bytes) != TESSERA_SUCCESS) fail("tessera_malloc");
    if (params[p].isOutput)
      std::memset(d, 0xa5, bytes);  // unwritten elements show
    else
      std::memcpy(d, inputs[p].data(), bytes);
    buffers.push_back(d);
    tessera_tensor_init(&ts[p], d, fuzz::info(params[p].ty).dtype, 1, &n, 0);
  }
  Run r;
  r.status = launch(fn, ts, sf, si, std::make_index_sequence<fuzz::kTensorParams>());
  if (r.status == TESSERA_SUCCESS) r.status = tessera_synchronize();
  if (r.status != TESSERA_SUCCESS) r.message = tessera_last_error_message();
  for (size_t p = 0; p < params.size(); ++p) {
    if (params[p].isOutput) {
      const uint8_t* d = static_cast<const uint8_t*>(buffers[p]);
      r.outputs.emplace_back(d, d + n * fuzz::info(params[p].ty).bytes);
    }
    tessera_free(buffers[p]);
  }
  return r;
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  setenv("TESSERA_DEVICE", "cpu", 1);
  if (tessera_init() != TESSERA_SUCCESS) {
    std::fprintf(stderr, "exec_fuzz: tessera_init: %s\n", tessera_last_error_message());
    std::abort();
  }
  tessera_cpu_set_threads(2);
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size > 2048) return 0;
  fuzz::Choices choices(data, size);
  uint64_t seed = choices.u64();
  int64_t n = 1 + static_cast<int64_t>(choices.pick(200)) + (choices.percent(20) ? 300 : 0);
  fuzz::GeneratedKernel g = fuzz::KernelGenerator(choices).generate();
  currentSource = g.source;
  if (std::getenv("TESSERA_EXEC_FUZZ_PRINT")) std::fprintf(stderr, "%s\n", g.source.c_str());

  std::mt19937_64 rng(seed);
  std::vector<std::vector<uint8_t>> inputs(g.tensors.size());
  for (size_t p = 0; p < g.tensors.size(); ++p)
    if (!g.tensors[p].isOutput) {
      inputs[p].resize(n * fuzz::info(g.tensors[p].ty).bytes);
      fillInput(inputs[p], g.tensors[p].ty, rng);
    }
  float sf = static_cast<float>(static_cast<int>(rng() % 41) - 20) / 4.0f;
  int32_t si = static_cast<int32_t>(rng() % 67) - 33;

  Run runs[2];
  const unsigned levels[2] = {0, 2};
  for (int r = 0; r < 2; ++r) {
    std::string module = "fz_o" + std::to_string(levels[r]);
    std::string object = compile(g.source, levels[r], module);
    void* lib = load(object, module);
    runs[r] = execute(lib, module + "_k", g.tensors, inputs, n, sf, si);
    dlclose(lib);
    if (runs[r].status != TESSERA_SUCCESS)
      fail("the launch at -O" + std::to_string(levels[r]) + " failed: " + tessera_status_name(runs[r].status) + ": " +
           runs[r].message);
  }
  size_t o = 0;
  for (const fuzz::TensorParam& p : g.tensors) {
    if (!p.isOutput) continue;
    unsigned size = fuzz::info(p.ty).bytes;
    for (int64_t e = 0; e < n; ++e) {
      const uint8_t* a = &runs[0].outputs[o][e * size];
      const uint8_t* b = &runs[1].outputs[o][e * size];
      if (sameElement(p.ty, a, b)) continue;
      uint64_t x = 0, y = 0;
      std::memcpy(&x, a, size);
      std::memcpy(&y, b, size);
      std::ostringstream os;
      os << "outputs differ: " << p.name << "[" << e << "] (n = " << n << ", s_f32 = " << sf << ", s_i32 = " << si
         << ", input seed " << seed << "): -O0 0x" << std::hex << x << ", -O2 0x" << y;
      fail(os.str());
    }
    ++o;
  }
  return 0;
}
