// Helpers for the programs that run under mpirun (tests/dist): a check counter that names the
// rank, the test seed agreed by every rank, deterministic per-rank inputs, and device buffers.
#pragma once

#include <cstdarg>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <string>
#include <tessera/dist.h>
#include <tessera/runtime.h>
#include <vector>

namespace disttest {

inline int& failures() {
  static int n = 0;
  return n;
}
inline int& myRank() {
  static int r = 0;
  return r;
}

// Records a failed expectation with the rank and a printf-style message.
inline void expect(bool ok, const char* fmt, ...) {
  if (ok) return;
  ++failures();
  if (failures() > 20) return;
  va_list ap;
  va_start(ap, fmt);
  std::printf("rank %d: FAIL: ", myRank());
  std::vprintf(fmt, ap);
  std::printf("\n");
  va_end(ap);
}

inline void require(tessera_status s, const char* what) {
  if (s != TESSERA_SUCCESS) {
    std::printf("rank %d: FAIL: %s: %s: %s\n", myRank(), what, tessera_status_name(s), tessera_last_error_message());
    std::fflush(stdout);
    tessera_dist_abort(1);
  }
}

// splitmix64: inputs are a pure function of (seed, stream, index), so every rank can compute
// every other rank's inputs and the reference.
inline uint64_t mix(uint64_t x) {
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}
inline uint64_t rnd(uint64_t seed, uint64_t stream, uint64_t i) { return mix(seed ^ mix(stream * 1000003ull + i)); }

// The seed: TESSERA_TEST_SEED, else rank 0's clock, broadcast so that every rank uses it.
inline uint64_t agreeSeed(tessera_comm world) {
  uint64_t seed = 0;
  if (const char* env = std::getenv("TESSERA_TEST_SEED"))
    seed = std::strtoull(env, nullptr, 10);
  else if (myRank() == 0)
    seed = static_cast<uint64_t>(std::time(nullptr)) * 2654435761ull;
  void* d = nullptr;
  require(tessera_malloc(&d, 8), "tessera_malloc");
  require(tessera_memcpy(d, &seed, 8), "tessera_memcpy");
  tessera_tensor t;
  int64_t one = 1;
  tessera_tensor_init(&t, d, TESSERA_U64, 1, &one, 0);
  require(tessera_broadcast(world, &t, &t, 0, nullptr), "broadcast of the seed");
  require(tessera_comm_synchronize(world, nullptr), "synchronize");
  require(tessera_memcpy(&seed, d, 8), "tessera_memcpy");
  tessera_free(d);
  if (myRank() == 0) std::printf("seed %llu (TESSERA_TEST_SEED replays it)\n", static_cast<unsigned long long>(seed));
  return seed;
}

// Device memory holding `bytes`, with host copies in and out.
class Buffer {
 public:
  explicit Buffer(size_t bytes) : bytes_(bytes) { require(tessera_malloc(&p_, bytes ? bytes : 1), "tessera_malloc"); }
  ~Buffer() { tessera_free(p_); }
  Buffer(const Buffer&) = delete;
  Buffer& operator=(const Buffer&) = delete;
  void upload(const std::vector<uint8_t>& h) {
    if (bytes_) require(tessera_memcpy(p_, h.data(), bytes_), "tessera_memcpy to device");
  }
  std::vector<uint8_t> download() const {
    std::vector<uint8_t> h(bytes_);
    if (bytes_) require(tessera_memcpy(h.data(), p_, bytes_), "tessera_memcpy to host");
    return h;
  }
  tessera_tensor view(int32_t dtype, std::vector<int64_t> shape) const {
    tessera_tensor t;
    tessera_tensor_init(&t, p_, dtype, static_cast<int32_t>(shape.size()), shape.data(), 0);
    return t;
  }
  void* data() const { return p_; }

 private:
  void* p_ = nullptr;
  size_t bytes_;
};

// FNV-1a of bytes (printed so that runs can be compared bit for bit).
inline uint64_t digest(const std::vector<uint8_t>& v, uint64_t h = 1469598103934665603ull) {
  for (uint8_t b : v) h = (h ^ b) * 1099511628211ull;
  return h;
}

// Joins the world and sets the rank; prints tessera_dist_describe() on rank 0.
inline tessera_comm start(double timeout = 30) {
  tessera_dist_options o{sizeof o, 0, timeout};
  tessera_status s = tessera_dist_init(&o);
  if (s != TESSERA_SUCCESS) {
    std::printf("FAIL: tessera_dist_init: %s: %s\n", tessera_status_name(s), tessera_last_error_message());
    std::exit(1);
  }
  tessera_dist_info info;
  tessera_dist_get_info(&info);
  myRank() = info.rank;
  if (info.rank == 0) std::printf("%s; device: %s\n", tessera_dist_describe(), tessera_device_name());
  tessera_comm w = nullptr;
  tessera_dist_world(&w);
  return w;
}

// Finalizes and returns the exit status: 0 when this rank saw no failure.
inline int finish(const char* name) {
  tessera_status s = tessera_dist_finalize();
  expect(s == TESSERA_SUCCESS, "tessera_dist_finalize: %s: %s", tessera_status_name(s), tessera_last_error_message());
  std::printf("rank %d: %s: %s (%d failures)\n", myRank(), name, failures() ? "FAIL" : "PASS", failures());
  return failures() ? 1 : 0;
}

}  // namespace disttest
