// Linked into every execution test with -Wl,--wrap=tessera_launch: counts the launches the
// program makes that succeed, independently of the runtime, and writes the count to the file
// TESSERA_TEST_LAUNCH_COUNT names at exit. check_profile.py compares it with the number of
// launch events in the TESSERA_PROFILE trace.
#include <tessera/runtime.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>

extern "C" tessera_status __real_tessera_launch(const tessera_kernel_desc *kernel, const tessera_launch_options *opts,
                                                const tessera_arg *args, uint32_t num_args);

namespace {
std::atomic<unsigned long> launches{0};

struct WriteAtExit {
  ~WriteAtExit() {
    if (const char *path = std::getenv("TESSERA_TEST_LAUNCH_COUNT"))
      if (FILE *f = std::fopen(path, "w")) {
        std::fprintf(f, "%lu\n", launches.load());
        std::fclose(f);
      }
  }
} writeAtExit;
}  // namespace

extern "C" tessera_status __wrap_tessera_launch(const tessera_kernel_desc *kernel, const tessera_launch_options *opts,
                                                const tessera_arg *args, uint32_t num_args) {
  tessera_status s = __real_tessera_launch(kernel, opts, args, num_args);
  if (s == TESSERA_SUCCESS) ++launches;
  return s;
}
