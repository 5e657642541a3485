//===- Autotune.cpp - Choosing and searching the candidates of autotuned kernels ------------===//
#include "runtime/Autotune.h"

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

#include "runtime/AutotuneCache.h"
#include "runtime/LaunchChecks.h"
#include "runtime/Status.h"
#include "runtime/TensorView.h"

namespace tessera::rt::autotune {

namespace {

tessera_autotune_mode modeFromEnvironment() {
  const char* v = std::getenv("TESSERA_AUTOTUNE");
  if (!v || !*v || !std::strcmp(v, "on")) return TESSERA_AUTOTUNE_ON;
  if (!std::strcmp(v, "off")) return TESSERA_AUTOTUNE_OFF;
  if (!std::strcmp(v, "cached")) return TESSERA_AUTOTUNE_CACHED;
  std::fprintf(stderr, "tessera: warning: TESSERA_AUTOTUNE=%s is not off, cached or on; using on\n", v);
  return TESSERA_AUTOTUNE_ON;
}

std::atomic<int>& modeSlot() {
  static std::atomic<int> slot{modeFromEnvironment()};
  return slot;
}

unsigned repeats() {
  const char* v = std::getenv("TESSERA_AUTOTUNE_REPEATS");
  long n = v ? std::strtol(v, nullptr, 10) : 5;
  return static_cast<unsigned>(std::clamp(n, 1l, 100l));
}

// Winners recorded in this process, and keys whose disk entry was looked up and missing.
struct Memory {
  std::mutex mutex;
  std::unordered_map<std::string, uint32_t> winners;
  std::unordered_map<std::string, bool> diskChecked;
};
Memory& memory() {
  static Memory* m = new Memory;
  return *m;
}

std::string configText(const tessera_autotune_desc& t, uint32_t i) {
  std::string s;
  for (uint32_t p = 0; p < t.num_params; ++p)
    s += std::string(p ? ", " : "") + t.param_names[p] + "=" + std::to_string(t.values[size_t(i) * t.num_params + p]);
  return s;
}

tessera_status sync(Backend& b, tessera_stream stream) {
  return stream ? b.streamSynchronize(stream) : b.synchronize();
}

// The mut tensors of a launch: saved before a search, restored before every run and at the end.
class MutState {
 public:
  MutState(Backend& b, tessera_stream stream) : b_(b), stream_(stream) {}
  ~MutState() {
    for (Saved& s : saved_)
      if (s.copy) b_.release(s.copy);
  }
  tessera_status save(const tessera_kernel_desc& k, const tessera_arg* args) {
    for (uint32_t i = 0; i < k.num_params; ++i) {
      if (k.params[i].kind != TESSERA_PARAM_TENSOR || !(k.params[i].flags & TESSERA_PARAM_MUT)) continue;
      ByteSpan span = byteSpan(*args[i].value.tensor);
      if (span.empty()) continue;
      Saved s{reinterpret_cast<void*>(span.begin), span.end - span.begin, nullptr};
      TESSERA_TRY(b_.allocate(&s.copy, s.bytes));
      saved_.push_back(s);
      TESSERA_TRY(b_.copy(s.copy, s.data, s.bytes, stream_, true));
    }
    return sync(b_, stream_);
  }
  tessera_status restore() {
    for (Saved& s : saved_) TESSERA_TRY(b_.copy(s.data, s.copy, s.bytes, stream_, true));
    return TESSERA_SUCCESS;
  }
  // The current bytes of every mut tensor, on the host.
  tessera_status read(std::vector<std::vector<char>>& out) {
    out.resize(saved_.size());
    TESSERA_TRY(sync(b_, stream_));
    for (size_t i = 0; i < saved_.size(); ++i) {
      out[i].resize(saved_[i].bytes);
      TESSERA_TRY(b_.copy(out[i].data(), saved_[i].data, saved_[i].bytes, nullptr, false));
    }
    return TESSERA_SUCCESS;
  }

 private:
  struct Saved {
    void* data;
    size_t bytes;
    void* copy;
  };
  Backend& b_;
  tessera_stream stream_;
  std::vector<Saved> saved_;
};

struct Events {
  Backend& b;
  tessera_event start = nullptr, end = nullptr;
  explicit Events(Backend& b) : b(b) {}
  ~Events() {
    if (start) b.eventDestroy(start);
    if (end) b.eventDestroy(end);
  }
};

// One timed run: median of `n` event-timed launches, restoring the mut tensors before each.
tessera_status timeRuns(Backend& b, const LaunchPlan& plan, tessera_stream stream, MutState& state, Events& ev,
                        unsigned n, float& median) {
  std::vector<float> times;
  for (unsigned r = 0; r < n; ++r) {
    TESSERA_TRY(state.restore());
    TESSERA_TRY(b.eventRecord(ev.start, stream));
    TESSERA_TRY(b.launch(plan, stream));
    TESSERA_TRY(b.eventRecord(ev.end, stream));
    TESSERA_TRY(b.eventSynchronize(ev.end));
    float ms = 0;
    TESSERA_TRY(b.eventElapsed(&ms, ev.start, ev.end));
    times.push_back(ms);
  }
  std::sort(times.begin(), times.end());
  median = times[times.size() / 2];
  return TESSERA_SUCCESS;
}

void record(const std::string& key, const tessera_autotune_desc& table, uint32_t best) {
  {
    std::lock_guard<std::mutex> lock(memory().mutex);
    memory().winners[key] = best;
  }
  cacheWrite(key, table, best);
}

}  // namespace

std::string keyOf(const LaunchPlan& plan, const tessera_autotune_desc& table, Backend& backend) {
  const tessera_kernel_desc& k = *plan.kernel;
  char hash[17];
  std::snprintf(hash, sizeof hash, "%016llx", static_cast<unsigned long long>(table.code_hash));
  std::string key =
      std::string(plan.module ? plan.module->name : "?") + "|" + k.name + "|" + hash + "|" + backend.name() + "|";
  for (uint32_t s = 0; s < k.num_symbols && s < plan.symbols.size(); ++s)
    key += std::string(s ? "," : "") + k.symbols[s] + "=" + std::to_string(plan.symbols[s]);
  return key;
}

tessera_autotune_mode mode() { return static_cast<tessera_autotune_mode>(modeSlot().load()); }
void setMode(tessera_autotune_mode m) { modeSlot().store(m); }

tessera_status planCandidate(const tessera_kernel_desc* kernel, uint32_t index, const tessera_launch_options* opts,
                             const tessera_arg* args, uint32_t numArgs, Backend& backend,
                             const tessera_module_desc* module, LaunchPlan& plan) {
  const tessera_autotune_desc* t = kernel ? tessera_kernel_autotune(kernel) : nullptr;
  uint32_t count = t ? t->num_candidates : 1;
  if (index >= count)
    return fail(TESSERA_ERROR_INVALID_ARGUMENT, "kernel '", kernel ? kernel->name : "<null>", "': candidate ", index,
                " of ", count);
  const tessera_kernel_desc* k = t ? tessera_autotune_candidate(t, index) : kernel;
  return planLaunch(k, opts, args, numArgs, backend, plan, module);
}

tessera_status search(const tessera_kernel_desc* kernel, const tessera_launch_options* opts, const tessera_arg* args,
                      uint32_t numArgs, Backend& b, const LaunchPlan& plan0, tessera_autotune_result& out) {
  const tessera_autotune_desc* t = tessera_kernel_autotune(kernel);
  tessera_stream stream = opts ? opts->stream : nullptr;
  if (b.capturing(stream))
    return fail(TESSERA_ERROR_NOT_SUPPORTED, "kernel '", kernel->name,
                "': autotune search on a stream that is capturing a graph");
  out = tessera_autotune_result{};
  out.num_candidates = t ? t->num_candidates : 1;
  bool compareBits = t && (t->flags & TESSERA_AUTOTUNE_SAME_BITS) && out.num_candidates > 1;
  MutState state(b, stream);
  TESSERA_TRY(state.save(*kernel, args));
  Events ev(b);
  TESSERA_TRY(b.eventCreate(&ev.start));
  TESSERA_TRY(b.eventCreate(&ev.end));
  std::vector<std::vector<char>> reference, result;
  unsigned n = repeats();
  for (uint32_t i = 0; i < out.num_candidates; ++i) {
    LaunchPlan plan;
    if (tessera_status st = planCandidate(kernel, i, opts, args, numArgs, b, plan0.module, plan);
        st != TESSERA_SUCCESS) {
      if (i == 0) return st;
      out.ms[i] = -2;  // e.g. its group needs more shared memory than the device has
      continue;
    }
    // Warm-up (module load), whose result is the one compared.
    TESSERA_TRY(state.restore());
    TESSERA_TRY(b.launch(plan, stream));
    if (compareBits) {
      TESSERA_TRY(state.read(i == 0 ? reference : result));
      if (i > 0 && result != reference) {
        std::fprintf(stderr,
                     "tessera: warning: autotune: kernel '%s': candidate %u (%s) gave other result bits than "
                     "candidate 0 (%s) on these arguments; it is excluded\n",
                     kernel->name, i, configText(*t, i).c_str(), configText(*t, 0).c_str());
        out.ms[i] = -1;
        continue;
      }
    }
    TESSERA_TRY(timeRuns(b, plan, stream, state, ev, n, out.ms[i]));
  }
  TESSERA_TRY(state.restore());
  TESSERA_TRY(sync(b, stream));
  out.best = 0;
  // The CPU executor's choice is deterministic: candidate 0. Its times say nothing of a GPU and
  // would make a test's path depend on the machine's load; its search still checks the bits.
  if (b.kind() == TESSERA_DEVICE_CPU) return TESSERA_SUCCESS;
  for (uint32_t i = 1; i < out.num_candidates; ++i)
    if (out.ms[i] >= 0 && out.ms[i] < out.ms[out.best]) out.best = i;
  if (t && mode() != TESSERA_AUTOTUNE_OFF) record(keyOf(plan0, *t, b), *t, out.best);
  return TESSERA_SUCCESS;
}

tessera_status select(const tessera_kernel_desc* kernel, const tessera_launch_options* opts, const tessera_arg* args,
                      uint32_t numArgs, Backend& b, LaunchPlan& plan) {
  const tessera_autotune_desc* t = tessera_kernel_autotune(kernel);
  // The CPU executor always runs candidate 0 (see search).
  if (!t || t->num_candidates <= 1 || mode() == TESSERA_AUTOTUNE_OFF || b.kind() == TESSERA_DEVICE_CPU)
    return TESSERA_SUCCESS;
  // An explicit grid was computed for candidate 0's group shape.
  if (opts && (opts->grid[0] || opts->grid[1] || opts->grid[2])) return TESSERA_SUCCESS;
  std::string key = keyOf(plan, *t, b);
  std::optional<uint32_t> winner;
  bool checkDisk = false;
  {
    std::lock_guard<std::mutex> lock(memory().mutex);
    if (auto it = memory().winners.find(key); it != memory().winners.end())
      winner = it->second;
    else
      checkDisk = !memory().diskChecked[key];
  }
  if (!winner && checkDisk) {
    winner = cacheRead(key, *t);
    std::lock_guard<std::mutex> lock(memory().mutex);
    memory().diskChecked[key] = true;
    if (winner) memory().winners[key] = *winner;
  }
  tessera_stream stream = opts ? opts->stream : nullptr;
  if (!winner && mode() == TESSERA_AUTOTUNE_ON && !b.capturing(stream)) {
    tessera_autotune_result result;
    TESSERA_TRY(search(kernel, opts, args, numArgs, b, plan, result));
    winner = result.best;
  }
  if (!winner || *winner == 0) return TESSERA_SUCCESS;
  const tessera_module_desc* module = plan.module;
  return planCandidate(kernel, *winner, opts, args, numArgs, b, module, plan);
}

}  // namespace tessera::rt::autotune
