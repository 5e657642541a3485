// Linked into every execution test with -Wl,--wrap=tessera_launch: counts the launches the
// program makes that succeed, independently of the runtime, and writes the count to the file
// TESSERA_TEST_LAUNCH_COUNT names at exit. check_profile.py compares it with the number of
// launch events in the TESSERA_PROFILE trace. Launches on a stream that is capturing (wrapped
// tessera_stream_begin/end_capture) are recorded into a graph, not run: they are not counted
// (the trace shows each replay of the graph as one graph event instead). Captures are counted too.
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <set>
#include <tessera/runtime.h>

extern "C" tessera_status __real_tessera_launch(const tessera_kernel_desc* kernel, const tessera_launch_options* opts,
                                                const tessera_arg* args, uint32_t num_args);
extern "C" tessera_status __real_tessera_stream_begin_capture(tessera_stream stream);
extern "C" tessera_status __real_tessera_stream_end_capture(tessera_stream stream, tessera_graph* out);

namespace {
std::atomic<unsigned long> launches{0}, captures{0};
std::mutex mutex;
std::set<tessera_stream> capturing;

struct WriteAtExit {
  ~WriteAtExit() {
    if (const char* path = std::getenv("TESSERA_TEST_LAUNCH_COUNT"))
      if (FILE* f = std::fopen(path, "w")) {
        std::fprintf(f, "%lu\n", launches.load());
        std::fclose(f);
      }
  }
} writeAtExit;
}  // namespace

extern "C" tessera_status __wrap_tessera_launch(const tessera_kernel_desc* kernel, const tessera_launch_options* opts,
                                                const tessera_arg* args, uint32_t num_args) {
  tessera_status s = __real_tessera_launch(kernel, opts, args, num_args);
  if (s == TESSERA_SUCCESS) {
    std::lock_guard<std::mutex> lock(mutex);
    if (!opts || !capturing.count(opts->stream)) ++launches;
  }
  return s;
}

extern "C" tessera_status __wrap_tessera_stream_begin_capture(tessera_stream stream) {
  tessera_status s = __real_tessera_stream_begin_capture(stream);
  std::lock_guard<std::mutex> lock(mutex);
  if (s == TESSERA_SUCCESS) capturing.insert(stream), ++captures;
  return s;
}

// How many captures the program began (host_autodiff_test: a capture_graph entry point called
// again with the same arguments replays its graph without capturing).
extern "C" unsigned long tessera_test_capture_count() { return captures.load(); }

extern "C" tessera_status __wrap_tessera_stream_end_capture(tessera_stream stream, tessera_graph* out) {
  {
    std::lock_guard<std::mutex> lock(mutex);
    capturing.erase(stream);
  }
  return __real_tessera_stream_end_capture(stream, out);
}
