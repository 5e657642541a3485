// bench_stdlib: every memory-bound entry of the standard library on an R x N problem (default
// 32768 x 8192) in f32 and bf16, against the device copy of the same bytes in the same run;
// randn and rand writing R * N f32 (1 GiB); saxpy on views one element past 16-byte alignment.
// Bandwidth counts the bytes each kernel must read and write once (a row kernel: the input read
// and the output written; a reduction: the input read); "of copy" divides it by the copy's
// (bytes read + written). Median of 20 event-timed runs after 3 warm-ups.
// Determinism: after timing, each entry runs 10 more times from the same inputs and every byte
// of its output must match the first of them (a 64-bit hash of the whole output per run).
//   bench_stdlib [R N [FILTER]]
// FILTER (a comma-separated list): only the entries whose name contains one of the words; the
// fixed-grid variants run only without a filter or when it names "grid". BENCH_SAME_RUNS=n sets
// the runs of the determinism check (0: timing only, for sweeps).
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <tessera/std.h>
#include <thread>
#include <vector>

#include "BenchUtil.h"
#include "saxpy.h"

namespace {

constexpr int kWarm = 3, kRuns = 20;
int kSameRuns = 10;
std::vector<std::string> gFilter;  // empty: every entry

bool wanted(const std::string& name) {
  for (const std::string& w : gFilter)
    if (name.find(w) != std::string::npos) return true;
  return gFilter.empty();
}

double gbs(double bytes, double ms) { return bytes / ms / 1e6; }

struct Output {  // where an entry writes, for the determinism check
  void* p;
  size_t bytes;
};

struct Bench {
  double copyGbs = 1;
  std::vector<char> host;
  bool allSame = true;

  // A hash of every byte of the output (8 threads over 64-bit words: order-independent per
  // thread, combined in order).
  uint64_t hash(const Output& o) {
    host.resize(o.bytes);
    bench::check(tessera_memcpy(host.data(), o.p, o.bytes), "copy out");
    size_t words = o.bytes / 8, parts = 8;
    std::vector<uint64_t> part(parts);
    std::vector<std::thread> ts;
    for (size_t t = 0; t < parts; ++t)
      ts.emplace_back([&, t] {
        const uint64_t* w = reinterpret_cast<const uint64_t*>(host.data());
        uint64_t h = 0x9E3779B97F4A7C15ull * (t + 1);
        for (size_t i = words * t / parts; i < words * (t + 1) / parts; ++i) h = (h ^ w[i]) * 0x100000001B3ull + i;
        part[t] = h;
      });
    for (auto& t : ts) t.join();
    uint64_t h = o.bytes;
    for (uint64_t p : part) h = (h ^ p) * 0x100000001B3ull;
    for (size_t i = words * 8; i < o.bytes; ++i) h = (h ^ uint8_t(host[i])) * 0x100000001B3ull;
    return h;
  }

  // Times run(), prints GB/s and the fraction of copy; then runs it kSameRuns times (each after
  // reset(), which restores the inputs of an entry that updates in place, and after the output
  // is overwritten with 0xA5) and compares the output's bits.
  void report(const std::string& name, double bytes, const std::function<void()>& run, Output out,
              const std::function<void()>& reset = nullptr) {
    if (!wanted(name)) return;
    double ms = bench::medianEventMs(run, kWarm, kRuns);
    uint64_t first = 0;
    int differ = 0;
    for (int i = 0; i < kSameRuns; ++i) {
      bench::check(tessera_memset(out.p, 0xA5, out.bytes), "poison");
      if (reset) reset();
      run();
      bench::check(tessera_synchronize(), name.c_str());
      uint64_t h = hash(out);
      if (i == 0) first = h;
      differ += h != first;
    }
    allSame &= differ == 0;
    std::printf("%-40s %9.3f ms %9.1f GB/s %6.2f of copy  %s\n", name.c_str(), ms, gbs(bytes, ms),
                gbs(bytes, ms) / copyGbs,
                kSameRuns == 0 ? ""
                : differ       ? "DIFFERENT BITS across the runs"
                               : "same bits on every run");
    std::fflush(stdout);
  }

  void copy(const std::string& name, void* dst, const void* src, size_t bytes) {
    double ms = bench::medianEventMs([&] { bench::check(tessera_memcpy(dst, src, bytes), "copy"); }, kWarm, kRuns);
    copyGbs = gbs(2.0 * bytes, ms);
    std::printf("%-40s %9.3f ms %9.1f GB/s %6.2f of copy\n", name.c_str(), ms, copyGbs, 1.0);
  }
};

void* alloc(size_t bytes) {
  void* p = nullptr;
  bench::check(tessera_malloc(&p, bytes), "tessera_malloc");
  bench::check(tessera_memset(p, 0, bytes), "tessera_memset");
  return p;
}

tessera_tensor view(void* p, tessera_dtype dt, std::vector<int64_t> shape) {
  tessera_tensor t;
  tessera_tensor_init(&t, p, dt, static_cast<int32_t>(shape.size()), shape.data(), 0);
  return t;
}

#define STD(fn, isF32) ((isF32) ? tessera_std_##fn##_f32 : tessera_std_##fn##_bf16)

// The row kernels and reductions in one dtype, on x (normal random numbers) into y / out.
void rowEntries(Bench& b, bool f32, int64_t R, int64_t N, void* x, void* y, void* w, void* bias, void* t, void* out) {
  tessera_dtype dt = f32 ? TESSERA_F32 : TESSERA_BF16;
  size_t es = f32 ? 4 : 2, elems = static_cast<size_t>(R * N);
  double io = 2.0 * elems * es, in = 1.0 * elems * es;
  std::string sfx = f32 ? " f32" : " bf16";
  tessera_tensor flat = view(x, dt, {R * N});
  bench::check(
      f32 ? tessera_std_random_randn_f32(nullptr, &flat, 7, 0) : tessera_std_random_randn_bf16(nullptr, &flat, 7, 0),
      "inputs");
  std::vector<float> ones(N, 1.0f);
  std::vector<uint16_t> onesBf16(N, 0x3F80);
  bench::check(tessera_memcpy(w, f32 ? static_cast<void*>(ones.data()) : onesBf16.data(), N * es), "w");
  bench::check(tessera_synchronize(), "inputs");
  b.copy("device copy" + sfx, y, x, elems * es);
  tessera_tensor tx = view(x, dt, {R, N}), ty = view(y, dt, {R, N}), tw = view(w, dt, {N}), tb = view(bias, dt, {N});
  tessera_tensor tt = view(t, TESSERA_I64, {R}), tl = view(out, TESSERA_F32, {R}), ti = view(out, TESSERA_I64, {R});
  Output rows{y, elems * es}, f32s{out, static_cast<size_t>(R) * 4}, i64s{out, static_cast<size_t>(R) * 8};
  b.report("softmax" + sfx, io, [&] { bench::check(STD(nn_softmax, f32)(nullptr, &tx, &ty), "softmax"); }, rows);
  b.report(
      "log_softmax" + sfx, io, [&] { bench::check(STD(nn_log_softmax, f32)(nullptr, &tx, &ty), "log_softmax"); }, rows);
  b.report(
      "rmsnorm_safe" + sfx, io,
      [&] { bench::check(STD(nn_rmsnorm_safe, f32)(nullptr, &tx, &tw, &ty, 1e-5f), "rmsnorm"); }, rows);
  b.report(
      "layernorm_safe" + sfx, io,
      [&] { bench::check(STD(nn_layernorm_safe, f32)(nullptr, &tx, &tw, &tb, &ty, 1e-5f), "layernorm"); }, rows);
  b.report(
      "cross_entropy" + sfx, in,
      [&] { bench::check(STD(nn_cross_entropy, f32)(nullptr, &tx, &tt, &tl), "cross_entropy"); }, f32s);
  b.report("sum" + sfx, in, [&] { bench::check(STD(reduce_sum, f32)(nullptr, &tx, &tl), "sum"); }, f32s);
  b.report("argmax" + sfx, in, [&] { bench::check(STD(reduce_argmax, f32)(nullptr, &tx, &ti), "argmax"); }, i64s);
  b.report(
      "bias_gelu" + sfx, io, [&] { bench::check(STD(nn_bias_gelu, f32)(nullptr, &tx, &tb, &ty), "bias_gelu"); }, rows);
}

// randn and rand writing R * N f32, and saxpy on aligned views and on views one element in.
void flatEntries(Bench& b, int64_t R, int64_t N, void* x, void* y, void* y0) {
  int64_t n = R * N, m = n - 1;
  size_t bytes = static_cast<size_t>(n) * 4;
  tessera_tensor flat = view(y, TESSERA_F32, {n});
  Output all{y, bytes};
  b.report(
      "randn f32 (writes " + std::to_string(bytes >> 20) + " MiB)", 1.0 * bytes,
      [&] { bench::check(tessera_std_random_randn_f32(nullptr, &flat, 11, 0), "randn"); }, all);
  b.report(
      "rand f32", 1.0 * bytes, [&] { bench::check(tessera_std_random_rand_f32(nullptr, &flat, 11, 0), "rand"); }, all);
  // saxpy updates y in place: timed as it goes; for the bits, each run starts from y0.
  tessera_tensor xn = view(x, TESSERA_F32, {n}), yn = view(y, TESSERA_F32, {n});
  tessera_tensor xu = view(static_cast<float*>(x) + 1, TESSERA_F32, {m}),
                 yu = view(static_cast<float*>(y) + 1, TESSERA_F32, {m});
  auto reset = [&] { bench::check(tessera_memcpy(y, y0, bytes), "restore y"); };
  b.report(
      "saxpy, aligned views", 12.0 * n, [&] { bench::check(saxpy_saxpy(nullptr, &xn, &yn, 0.5f), "saxpy"); }, all,
      reset);
  b.report(
      "saxpy, views 4 bytes past alignment", 12.0 * m,
      [&] { bench::check(saxpy_saxpy(nullptr, &xu, &yu, 0.5f), "saxpy"); }, all, reset);
}

// The row kernels launch one group per row by default (32768 groups here). The same kernels on a
// fixed grid that strides over rows (1056 and 2112 groups: 8 and 16 per multiprocessor of an
// H100), timed only: does starting fewer groups pay?
void gridVariants(Bench& b, bool f32, int64_t R, int64_t N, void* x, void* y, void* w, void* bias, void* t, void* out) {
  tessera_dtype dt = f32 ? TESSERA_F32 : TESSERA_BF16;
  size_t es = f32 ? 4 : 2, elems = static_cast<size_t>(R * N);
  double io = 2.0 * elems * es, in = 1.0 * elems * es;
  tessera_tensor tx = view(x, dt, {R, N}), ty = view(y, dt, {R, N}), tw = view(w, dt, {N}), tb = view(bias, dt, {N});
  tessera_tensor tt = view(t, TESSERA_I64, {R}), tl = view(out, TESSERA_F32, {R}), ti = view(out, TESSERA_I64, {R});
  if (!gFilter.empty() && !wanted("grid")) return;
  for (uint32_t groups : {1056u, 2112u}) {
    tessera_launch_options o = {};
    o.grid[0] = groups, o.grid[1] = 1, o.grid[2] = 1;
    std::string sfx = std::string(f32 ? " f32" : " bf16") + ", grid " + std::to_string(groups);
    auto timed = [&](const std::string& name, double bytes, const std::function<void()>& run) {
      double ms = bench::medianEventMs(run, kWarm, kRuns);
      std::printf("%-40s %9.3f ms %9.1f GB/s %6.2f of copy\n", (name + sfx).c_str(), ms, gbs(bytes, ms),
                  gbs(bytes, ms) / b.copyGbs);
    };
    timed("softmax", io, [&] { bench::check(STD(nn_softmax, f32)(&o, &tx, &ty), "softmax"); });
    timed("rmsnorm_safe", io, [&] { bench::check(STD(nn_rmsnorm_safe, f32)(&o, &tx, &tw, &ty, 1e-5f), "rmsnorm"); });
    timed("layernorm_safe", io,
          [&] { bench::check(STD(nn_layernorm_safe, f32)(&o, &tx, &tw, &tb, &ty, 1e-5f), "layernorm"); });
    timed("cross_entropy", in, [&] { bench::check(STD(nn_cross_entropy, f32)(&o, &tx, &tt, &tl), "cross_entropy"); });
    timed("argmax", in, [&] { bench::check(STD(reduce_argmax, f32)(&o, &tx, &ti), "argmax"); });
  }
}

}  // namespace

int main(int argc, char** argv) {
  int64_t R = argc > 2 ? std::atoll(argv[1]) : 32768, N = argc > 2 ? std::atoll(argv[2]) : 8192;
  for (std::string f = argc > 3 ? argv[3] : ""; !f.empty();) {
    size_t comma = f.find(',');
    gFilter.push_back(f.substr(0, comma));
    f = comma == std::string::npos ? "" : f.substr(comma + 1);
  }
  if (const char* same = std::getenv("BENCH_SAME_RUNS")) kSameRuns = std::atoi(same);
  bench::check(tessera_init(), "tessera_init");
  std::printf("device: %s; rows %lld x %lld\n", tessera_device_name(), static_cast<long long>(R),
              static_cast<long long>(N));
  size_t elems = static_cast<size_t>(R * N);
  void *x = alloc(elems * 4), *y = alloc(elems * 4), *y0 = alloc(elems * 4), *w = alloc(N * 4), *bias = alloc(N * 4);
  void *t = alloc(R * 8), *out = alloc(R * 8);
  Bench b;
  rowEntries(b, true, R, N, x, y, w, bias, t, out);
  gridVariants(b, true, R, N, x, y, w, bias, t, out);
  {  // saxpy's x and y0: normal numbers (f32)
    tessera_tensor tx = view(x, TESSERA_F32, {R * N}), ty = view(y0, TESSERA_F32, {R * N});
    bench::check(tessera_std_random_randn_f32(nullptr, &tx, 3, 0), "x");
    bench::check(tessera_std_random_randn_f32(nullptr, &ty, 5, 0), "y0");
    b.copy("device copy f32 (again)", y, x, elems * 4);
    flatEntries(b, R, N, x, y, y0);
  }
  rowEntries(b, false, R, N, x, y, w, bias, t, out);
  gridVariants(b, false, R, N, x, y, w, bias, t, out);
  std::printf("determinism (%d runs each): %s\n", kSameRuns,
              b.allSame ? "every entry gave the same bits on every run" : "FAIL: some entry's bits changed");
  tessera_free(x), tessera_free(y), tessera_free(y0), tessera_free(w), tessera_free(bias), tessera_free(t),
      tessera_free(out);
  return b.allSame ? 0 : 1;
}
