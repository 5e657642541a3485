// print inside a kernel (docs/language.md, "Printing from kernels"): the kernel's stdout is
// captured around one launch of odd size on fresh random values, and every line is compared with
// the one the host formats with the documented conversions (integers in decimal, f32 with %.9g
// and f64 with %.17g after promotion to double, bools as True/False, `{{`/`}}` as braces, sep=
// and end=). Lines of different tiles come in an unspecified order: both sides are sorted.
#include "kernel_print.h"

#include <algorithm>
#include <cstdarg>
#include <fcntl.h>
#include <string>
#include <unistd.h>

#include "ExecTest.h"

namespace {

// Runs `launch` with stdout (file descriptor 1) redirected into a file; returns what it printed.
template <class F>
std::string captureStdout(F launch) {
  std::fflush(stdout);
  char path[] = "/tmp/tessera_print_XXXXXX";
  int fd = mkstemp(path);
  if (fd < 0) {
    std::printf("FAIL: mkstemp\n");
    std::exit(1);
  }
  int saved = dup(1);
  dup2(fd, 1);
  launch();
  std::fflush(stdout);
  dup2(saved, 1);
  close(saved);
  std::string out;
  lseek(fd, 0, SEEK_SET);
  char buf[65536];
  for (ssize_t r; (r = read(fd, buf, sizeof buf)) > 0;) out.append(buf, static_cast<size_t>(r));
  close(fd);
  unlink(path);
  return out;
}

std::vector<std::string> lines(const std::string& text) {
  std::vector<std::string> out;
  size_t start = 0;
  for (size_t i = 0; i < text.size(); ++i)
    if (text[i] == '\n') {
      out.push_back(text.substr(start, i - start));
      start = i + 1;
    }
  if (start < text.size()) out.push_back(text.substr(start) + " (no newline)");
  return out;
}

std::string format(const char* fmt, ...) __attribute__((format(printf, 1, 2)));
std::string format(const char* fmt, ...) {
  char buf[512];
  va_list ap;
  va_start(ap, fmt);
  std::vsnprintf(buf, sizeof buf, fmt, ap);
  va_end(ap);
  return buf;
}

}  // namespace

int main() {
  exec::requireDevice();
  std::uniform_int_distribution<int64_t> sizeD(1, 200);
  int64_t n = sizeD(exec::rng());
  std::vector<int32_t> x = exec::randomInts(n, INT32_MIN, INT32_MAX);
  std::vector<float> f = exec::randomFloats(n, -1000.0f, 1000.0f);
  std::vector<double> d(n);
  std::vector<uint8_t> u(n);
  std::vector<int64_t> big(n);
  std::uniform_int_distribution<int64_t> bigD(INT64_MIN, INT64_MAX);
  for (int64_t i = 0; i < n; ++i) {
    d[i] = static_cast<double>(f[i]) / 3.0;
    u[i] = static_cast<uint8_t>(x[i] & 0xff);
    big[i] = bigD(exec::rng());
  }
  tessera_launch_options opts{};
  opts.grid[0] = static_cast<uint32_t>((n + 31) / 32);
  opts.grid[1] = opts.grid[2] = 1;
  exec::DeviceArray<int32_t> dx(x);
  exec::DeviceArray<float> df(f);
  exec::DeviceArray<double> dd(d);
  exec::DeviceArray<uint8_t> du(u);
  exec::DeviceArray<int64_t> dbig(big);
  std::string text = captureStdout([&] {
    exec::check(kernel_print::show(dx.view(TESSERA_I32, {n}), df.view(TESSERA_F32, {n}), dd.view(TESSERA_F64, {n}),
                                   du.view(TESSERA_U8, {n}), dbig.view(TESSERA_I64, {n}), &opts),
                "show");
    exec::check(tessera_synchronize(), "synchronize");
  });
  std::vector<std::string> got = lines(text), want;
  for (int64_t i = 0; i < n; ++i) {
    want.push_back(format("row %lld %d %.9g %.17g %s %u %lld", static_cast<long long>(i), x[i],
                          static_cast<double>(f[i]), d[i], f[i] > 0.0f ? "True" : "False", unsigned(u[i]),
                          static_cast<long long>(big[i])));
    want.push_back(format("x[%lld] = %d; 100%% {braces}, tail!", static_cast<long long>(i), x[i]));
  }
  std::sort(got.begin(), got.end());
  std::sort(want.begin(), want.end());
  size_t bad = 0;
  for (size_t i = 0; i < std::max(got.size(), want.size()); ++i) {
    const std::string g = i < got.size() ? got[i] : "(missing)", w = i < want.size() ? want[i] : "(extra)";
    if (g != w && bad++ < 5) std::printf("  line %zu: got '%s', expected '%s'\n", i, g.c_str(), w.c_str());
  }
  std::printf("printed lines: %zu, expected %zu, %zu differ\n", got.size(), want.size(), bad);
  return exec::finish(bad == 0 && got.size() == want.size());
}
