// Autotuning in the runtime: the candidate table's validation, the on-disk cache (corrupt,
// truncated, foreign and concurrent entries), and the choice a launch makes in each mode, on a
// backend whose candidates take known times.
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <doctest/doctest.h>
#include <filesystem>
#include <fstream>
#include <map>
#include <thread>

#include "RuntimeTestUtil.h"
#include "runtime/Autotune.h"
#include "runtime/AutotuneCache.h"

using namespace rttest;
namespace at = tessera::rt::autotune;

namespace {

// A private cache directory for the whole test binary, removed at exit.
const std::string& cacheHome() {
  struct Dir {
    std::string path;
    Dir() {
      char tmpl[] = "/tmp/tessera-autotune-unit-XXXXXX";
      const char* d = mkdtemp(tmpl);
      REQUIRE(d);
      path = d;
      setenv("XDG_CACHE_HOME", d, 1);
    }
    ~Dir() {
      std::error_code ec;
      std::filesystem::remove_all(path, ec);
    }
  };
  static Dir dir;
  return dir.path;
}

void writeFile(const std::string& path, const std::string& text) {
  std::ofstream f(path, std::ios::binary | std::ios::trunc);
  f << text;
}
std::string readFile(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(f), {});
}

// A kernel `k(y: mut f32[n])` with three candidates (T = 32, 64, 128) that differ only in
// their descriptors' addresses.
struct TunedModule {
  const char* params[1] = {"T"};
  int64_t values[3] = {32, 64, 128};
  std::vector<tessera_kernel_desc> candidates;
  tessera_autotune_desc table{};
  TestModule module;
  explicit TunedModule(const char* name, uint32_t flags = TESSERA_AUTOTUNE_SAME_BITS)
      : module(name, {spec()}, nullptr, 0, false) {
    candidates.assign(3, *module.kernel());
    table.num_params = 1;
    table.num_candidates = 3;
    table.param_names = params;
    table.values = values;
    table.candidates = candidates.data();
    table.code_hash = 0x1234;
    table.flags = flags;
    module.mutableKernel()->autotune = &table;
  }
  static KernelSpec spec() {
    KernelSpec k;
    k.name = "k";
    k.params = {tensorParam("y", TESSERA_F32, {sym(0)}, true)};
    k.symbols = {"n"};
    k.cpu = [](void**, const tessera_cpu_ctx*) {};
    return k;
  }
  tessera_status registerNow() { return module.status = tessera_register_module(module.desc()); }
  const tessera_kernel_desc* kernel() const { return module.kernel(); }
};

// A GPU-like backend on host memory: candidate c "takes" ms[c] milliseconds and writes
// bits[c] into y[0].
class TimedBackend final : public tessera::rt::Backend {
 public:
  const tessera_autotune_desc* table = nullptr;
  float ms[3] = {3.0f, 1.0f, 2.0f};
  float bits[3] = {1.0f, 1.0f, 1.0f};
  int launches = 0;
  int lastCandidate = -1;
  tessera::rt::DeviceLimits lim;

  tessera_device_kind kind() const override { return TESSERA_DEVICE_GPU; }
  std::string name() const override { return "timed"; }
  const tessera::rt::DeviceLimits& limits() const override { return lim; }
  bool pointerUsable(const void*, std::string&) override { return true; }
  tessera_status launch(const tessera::rt::LaunchPlan& plan, tessera_stream) override {
    ++launches;
    lastCandidate = 0;
    for (uint32_t i = 0; table && i < table->num_candidates; ++i)
      if (plan.kernel == tessera_autotune_candidate(table, i)) lastCandidate = static_cast<int>(i);
    static_cast<float*>(plan.tensors[0].data)[0] = bits[lastCandidate];
    return TESSERA_SUCCESS;
  }
  tessera_status allocate(void** p, size_t bytes) override {
    *p = std::malloc(bytes ? bytes : 1);
    return TESSERA_SUCCESS;
  }
  tessera_status release(void* p) override {
    std::free(p);
    return TESSERA_SUCCESS;
  }
  tessera_status copy(void* d, const void* s, size_t n, tessera_stream, bool) override {
    std::memcpy(d, s, n);
    return TESSERA_SUCCESS;
  }
  tessera_status fill(void* d, int v, size_t n) override {
    std::memset(d, v, n);
    return TESSERA_SUCCESS;
  }
  tessera_status synchronize() override { return TESSERA_SUCCESS; }
  tessera_status streamCreate(tessera_stream*) override { return TESSERA_ERROR_NOT_SUPPORTED; }
  tessera_status streamDestroy(tessera_stream) override { return TESSERA_ERROR_NOT_SUPPORTED; }
  tessera_status streamSynchronize(tessera_stream) override { return TESSERA_SUCCESS; }
  struct Event : tessera_event_t {
    int candidate = -1;
  };
  tessera_status eventCreate(tessera_event* out) override {
    *out = new Event;
    return TESSERA_SUCCESS;
  }
  tessera_status eventDestroy(tessera_event e) override {
    delete static_cast<Event*>(e);
    return TESSERA_SUCCESS;
  }
  tessera_status eventRecord(tessera_event e, tessera_stream) override {
    static_cast<Event*>(e)->candidate = lastCandidate;
    return TESSERA_SUCCESS;
  }
  tessera_status eventSynchronize(tessera_event) override { return TESSERA_SUCCESS; }
  tessera_status eventQuery(tessera_event) override { return TESSERA_SUCCESS; }
  tessera_status streamWaitEvent(tessera_stream, tessera_event) override { return TESSERA_SUCCESS; }
  // The end event was recorded after the candidate's launch.
  tessera_status eventElapsed(float* out, tessera_event, tessera_event end) override {
    *out = ms[static_cast<Event*>(end)->candidate];
    return TESSERA_SUCCESS;
  }
  bool capturing(tessera_stream) override { return false; }
  tessera_status beginCapture(tessera_stream) override { return TESSERA_ERROR_NOT_SUPPORTED; }
  tessera_status endCapture(tessera_stream, tessera_graph*) override { return TESSERA_ERROR_NOT_SUPPORTED; }
  tessera_status graphLaunch(tessera_graph, tessera_stream) override { return TESSERA_ERROR_NOT_SUPPORTED; }
  tessera_status graphDestroy(tessera_graph) override { return TESSERA_ERROR_NOT_SUPPORTED; }
  tessera_status graphUpdate(tessera_graph, tessera_graph, bool&) override { return TESSERA_ERROR_NOT_SUPPORTED; }
};

// The candidate a launch of `k` on `y` runs, through the launch checks and autotune::select.
struct Launch {
  std::vector<float> y;
  tessera_tensor t{};
  tessera_arg arg{};
  explicit Launch(int64_t n) : y(n, 5.0f) {
    tessera_tensor_init(&t, y.data(), TESSERA_F32, 1, &n, 0);
    arg = tessera_arg_tensor(&t);
  }
  int choose(const tessera_kernel_desc* k, TimedBackend& b, tessera::rt::LaunchPlan* out = nullptr) {
    tessera::rt::LaunchPlan plan;
    REQUIRE(tessera::rt::planLaunch(k, nullptr, &arg, 1, b, plan) == TESSERA_SUCCESS);
    REQUIRE(at::select(k, nullptr, &arg, 1, b, plan) == TESSERA_SUCCESS);
    if (out) *out = plan;
    const tessera_autotune_desc* t = tessera_kernel_autotune(k);
    for (uint32_t i = 0; i < t->num_candidates; ++i)
      if (plan.kernel == tessera_autotune_candidate(t, i)) return static_cast<int>(i);
    return plan.kernel == k ? 0 : -1;
  }
  std::string key(const tessera_kernel_desc* k, TimedBackend& b) {
    tessera::rt::LaunchPlan plan;
    REQUIRE(tessera::rt::planLaunch(k, nullptr, &arg, 1, b, plan) == TESSERA_SUCCESS);
    return at::keyOf(plan, *tessera_kernel_autotune(k), b);
  }
};

struct ModeGuard {
  tessera_autotune_mode saved = tessera_autotune_get_mode();
  ~ModeGuard() { tessera_autotune_set_mode(saved); }
};

}  // namespace

TEST_CASE("autotune: the registry checks the candidate table") {
  cacheHome();
  TunedModule ok("at_reg_ok");
  CHECK(ok.registerNow() == TESSERA_SUCCESS);
  CHECK(tessera_autotune_num_candidates(ok.kernel()) == 3);
  int64_t v = 0;
  CHECK(tessera_autotune_value(ok.kernel(), 2, "T", &v) == TESSERA_SUCCESS);
  CHECK(v == 128);
  CHECK(tessera_autotune_value(ok.kernel(), 3, "T", &v) == TESSERA_ERROR_INVALID_ARGUMENT);
  CHECK(tessera_autotune_value(ok.kernel(), 0, "BM", &v) == TESSERA_ERROR_INVALID_ARGUMENT);
  CHECK(std::string(tessera_last_error_message()) == "tessera_autotune_value: kernel 'k' has no tuned parameter 'BM'");

  TunedModule other("at_reg_params");
  static tessera_param_desc wrong[1];
  wrong[0] = other.candidates[1].params[0];
  wrong[0].dtype = TESSERA_F16;
  other.candidates[1].params = wrong;
  CHECK(other.registerNow() == TESSERA_ERROR_INVALID_ARGUMENT);
  CHECK(std::string(tessera_last_error_message()) ==
        "module 'at_reg_params': kernel 'k': autotune table: candidate 1 does not take the kernel's parameters");

  TunedModule empty("at_reg_empty");
  empty.table.num_candidates = 0;
  CHECK(empty.registerNow() == TESSERA_ERROR_INVALID_ARGUMENT);
}

TEST_CASE("autotune cache: entries round-trip; bad files are warnings and misses") {
  cacheHome();
  TunedModule m("at_cache");
  const tessera_autotune_desc& t = m.table;
  const std::string key = "at_cache|k|0000000000001234|timed|n=77";
  std::string path = at::cacheEntryPath(key);
  REQUIRE(path.rfind(cacheHome() + "/tessera/autotune/", 0) == 0);
  std::string problem;
  CHECK(!at::cacheRead(key, t, &problem));
  CHECK(problem.empty());  // no entry: a plain miss
  REQUIRE(at::cacheWrite(key, t, 2));
  CHECK(at::cacheRead(key, t, &problem) == std::optional<uint32_t>(2));
  CHECK(problem.empty());
  const std::string good = readFile(path);

  struct Case {
    const char* what;
    std::string text;
  } cases[] = {
      {"truncated", good.substr(0, good.size() / 2)},
      {"empty", ""},
      {"one byte changed",
       [&] {
         std::string s = good;
         s[s.find("candidate ") + 10] = '1';
         return s;
       }()},
      {"binary garbage", std::string("\x7f\0\xff\x01garbage", 12)},
      {"oversized", std::string(1 << 17, 'x')},
  };
  for (const Case& c : cases) {
    CAPTURE(c.what);
    writeFile(path, c.text);
    problem.clear();
    CHECK(!at::cacheRead(key, t, &problem));
    CHECK(!problem.empty());
    // The next search rewrites the entry.
    REQUIRE(at::cacheWrite(key, t, 1));
    CHECK(at::cacheRead(key, t, &problem) == std::optional<uint32_t>(1));
  }

  // A complete entry whose candidate the kernel does not have (its table changed).
  int64_t more[4] = {32, 64, 128, 256};
  tessera_autotune_desc bigger = t;
  std::vector<tessera_kernel_desc> four(4, *m.kernel());
  bigger.num_candidates = 4;
  bigger.values = more;
  bigger.candidates = four.data();
  REQUIRE(at::cacheWrite(key, bigger, 3));
  problem.clear();
  CHECK(!at::cacheRead(key, t, &problem));
  CHECK(problem == "it names a candidate this kernel does not have");
  // An intact entry of another key whose hash names the same file reads as a plain miss.
  std::string body = "tessera-autotune 1\nkey another|key\ncandidate 1\nvalues T=64\n";
  char sum[17];
  std::snprintf(sum, sizeof sum, "%016llx", static_cast<unsigned long long>(at::hash64(body)));
  writeFile(path, body + "checksum " + sum + "\n");
  problem.clear();
  CHECK(!at::cacheRead(key, t, &problem));
  CHECK(problem.empty());
  CHECK(at::cacheRead("another|key", t) == std::nullopt);  // its own file is elsewhere
}

TEST_CASE("autotune cache: concurrent writers leave one complete entry") {
  cacheHome();
  TunedModule m("at_conc");
  const std::string key = "at_conc|k|0000000000001234|timed|n=5";
  std::vector<std::thread> threads;
  std::atomic<int> problems{0};
  for (int w = 0; w < 8; ++w)
    threads.emplace_back([&, w] {
      for (int i = 0; i < 50; ++i) {
        at::cacheWrite(key, m.table, static_cast<uint32_t>((w + i) % 3));
        std::string problem;
        at::cacheRead(key, m.table, &problem);
        problems += !problem.empty();
      }
    });
  for (std::thread& t : threads) t.join();
  CHECK(problems == 0);
  CHECK(at::cacheRead(key, m.table).has_value());
}

TEST_CASE("autotune: a launch searches once per key, records the fastest, and follows the mode") {
  cacheHome();
  ModeGuard guard;
  REQUIRE(tessera_autotune_set_mode(TESSERA_AUTOTUNE_ON) == TESSERA_SUCCESS);
  TunedModule m("at_select");
  REQUIRE(m.registerNow() == TESSERA_SUCCESS);
  TimedBackend b;
  b.table = &m.table;
  const tessera_kernel_desc* k = m.kernel();

  // First launch of n=100: every candidate runs (warm-up + repeats), candidate 1 is fastest.
  Launch l100(100);
  CHECK(l100.choose(k, b) == 1);
  int searched = b.launches;
  CHECK(searched == 3 * (1 + 5));
  CHECK(l100.y[0] == 5.0f);  // the search left the argument as it was
  CHECK(at::cacheRead(l100.key(k, b), m.table) == std::optional<uint32_t>(1));
  // Again: from memory, no search.
  CHECK(l100.choose(k, b) == 1);
  CHECK(b.launches == searched);

  // Another shape is another key: candidate 2 is now fastest.
  b.ms[2] = 0.5f;
  Launch l200(200);
  CHECK(l200.choose(k, b) == 2);

  // A winner on disk is used without a search.
  Launch l300(300);
  REQUIRE(at::cacheWrite(l300.key(k, b), m.table, 0));
  int before = b.launches;
  CHECK(l300.choose(k, b) == 0);
  CHECK(b.launches == before);

  // A corrupt entry: a warning, then a search that rewrites it.
  Launch l400(400);
  std::string path = at::cacheEntryPath(l400.key(k, b));
  writeFile(path, "tessera-autotune 1\nkey garbage\ncand");
  CHECK(l400.choose(k, b) == 2);
  CHECK(b.launches > before);
  CHECK(at::cacheRead(l400.key(k, b), m.table) == std::optional<uint32_t>(2));

  // CACHED: a recorded winner, else candidate 0 without timing anything.
  REQUIRE(tessera_autotune_set_mode(TESSERA_AUTOTUNE_CACHED) == TESSERA_SUCCESS);
  before = b.launches;
  CHECK(l200.choose(k, b) == 2);
  Launch l500(500);
  CHECK(l500.choose(k, b) == 0);
  CHECK(b.launches == before);
  // OFF: candidate 0 whatever is recorded.
  REQUIRE(tessera_autotune_set_mode(TESSERA_AUTOTUNE_OFF) == TESSERA_SUCCESS);
  CHECK(l200.choose(k, b) == 0);
  CHECK(tessera_autotune_set_mode(static_cast<tessera_autotune_mode>(7)) == TESSERA_ERROR_INVALID_ARGUMENT);
}

TEST_CASE("autotune: a candidate with other result bits is excluded") {
  cacheHome();
  ModeGuard guard;
  REQUIRE(tessera_autotune_set_mode(TESSERA_AUTOTUNE_ON) == TESSERA_SUCCESS);
  TunedModule m("at_bits");
  REQUIRE(m.registerNow() == TESSERA_SUCCESS);
  TimedBackend b;
  b.table = &m.table;
  b.ms[2] = 0.1f;    // the fastest,
  b.bits[2] = 2.0f;  // but it computes something else
  Launch l(64);
  tessera::rt::LaunchPlan plan;
  REQUIRE(tessera::rt::planLaunch(m.kernel(), nullptr, &l.arg, 1, b, plan) == TESSERA_SUCCESS);
  tessera_autotune_result r{};
  REQUIRE(at::search(m.kernel(), nullptr, &l.arg, 1, b, plan, r) == TESSERA_SUCCESS);
  CHECK(r.num_candidates == 3);
  CHECK(r.ms[0] == 3.0f);
  CHECK(r.ms[1] == 1.0f);
  CHECK(r.ms[2] == -1.0f);
  CHECK(r.best == 1);
  CHECK(l.y[0] == 5.0f);
  // Without TESSERA_AUTOTUNE_SAME_BITS (deterministic=False) it may win.
  m.table.flags = 0;
  REQUIRE(at::search(m.kernel(), nullptr, &l.arg, 1, b, plan, r) == TESSERA_SUCCESS);
  CHECK(r.best == 2);
}

TEST_CASE("autotune: the CPU executor always runs candidate 0") {
  cacheHome();
  ModeGuard guard;
  REQUIRE(tessera_autotune_set_mode(TESSERA_AUTOTUNE_ON) == TESSERA_SUCCESS);
  TunedModule m("at_cpu");
  REQUIRE(m.registerNow() == TESSERA_SUCCESS);
  std::unique_ptr<tessera::rt::Backend> cpu = tessera::rt::createCpuBackend();
  int64_t n = 16;
  std::vector<float> y(n, 1.0f);
  tessera_tensor t{};
  tessera_tensor_init(&t, y.data(), TESSERA_F32, 1, &n, 0);
  tessera_arg arg = tessera_arg_tensor(&t);
  tessera::rt::LaunchPlan plan;
  REQUIRE(tessera::rt::planLaunch(m.kernel(), nullptr, &arg, 1, *cpu, plan) == TESSERA_SUCCESS);
  tessera_autotune_result r{};
  REQUIRE(at::search(m.kernel(), nullptr, &arg, 1, *cpu, plan, r) == TESSERA_SUCCESS);
  CHECK(r.best == 0);
  for (uint32_t i = 0; i < 3; ++i) CHECK(r.ms[i] >= 0);
  REQUIRE(at::select(m.kernel(), nullptr, &arg, 1, *cpu, plan) == TESSERA_SUCCESS);
  CHECK(plan.kernel == m.kernel());
}
