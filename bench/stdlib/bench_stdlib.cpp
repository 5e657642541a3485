// bench_stdlib: every memory-bound entry of the standard library on an R x N problem (default
// 32768 x 8192) in f32 and bf16, against the device copy of the same bytes in the same run;
// randn and rand writing 1 GiB; saxpy on views one element past 16-byte alignment. Bandwidth
// counts the bytes each kernel must read and write once (a row kernel: the input read and the
// output written; a reduction: the input read); "vs copy" divides it by the copy's (bytes read +
// written). Median of 20 event-timed runs after 3 warm-ups.
//   bench_stdlib [R N]
#include <tessera/std.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "BenchUtil.h"
#include "saxpy.h"

namespace {

constexpr int kWarm = 3, kRuns = 20;

double gbs(double bytes, double ms) { return bytes / ms / 1e6; }

struct Row {
  std::string name;
  double ms, gb;
};

std::vector<Row> rows;
double copyGbs = 0;

void report(const std::string& name, double bytes, const std::function<void()>& run) {
  double ms = bench::medianEventMs(run, kWarm, kRuns);
  rows.push_back({name, ms, gbs(bytes, ms)});
  std::printf("%-34s %9.3f ms %9.1f GB/s %6.2f of copy\n", name.c_str(), ms, gbs(bytes, ms), gbs(bytes, ms) / copyGbs);
  std::fflush(stdout);
}

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

}  // namespace

int main(int argc, char** argv) {
  int64_t R = argc > 2 ? std::atoll(argv[1]) : 32768, N = argc > 2 ? std::atoll(argv[2]) : 8192;
  bench::check(tessera_init(), "tessera_init");
  std::printf("device: %s; rows %lld x %lld\n", tessera_device_name(), static_cast<long long>(R), static_cast<long long>(N));
  size_t elems = static_cast<size_t>(R * N);
  void* x = alloc(elems * 4);
  void* y = alloc(elems * 4);
  void* w = alloc(N * 4);
  void* b = alloc(N * 4);
  void* t = alloc(R * 8);
  void* out = alloc(R * 8);
  {  // inputs: random rows for the row kernels (so exp, max and the norms see real data)
    tessera_tensor tx = view(x, TESSERA_F32, {static_cast<int64_t>(elems)});
    bench::check(tessera_std_random_randn_f32(nullptr, &tx, 7, 0), "randn inputs");
    std::vector<float> ones(N, 1.0f);
    bench::check(tessera_memcpy(w, ones.data(), N * 4), "w");
    bench::check(tessera_synchronize(), "inputs");
  }
  for (int pass = 0; pass < 2; ++pass) {
    bool f32 = pass == 0;
    tessera_dtype dt = f32 ? TESSERA_F32 : TESSERA_BF16;
    size_t es = f32 ? 4 : 2;
    double io = 2.0 * elems * es, in = 1.0 * elems * es;
    std::string suffix = f32 ? "_f32" : "_bf16";
    // bf16 inputs: the f32 normals' bytes read as bf16 (finite, varied)
    copyGbs = 1;
    double copyMs = bench::medianEventMs([&] { bench::check(tessera_memcpy(y, x, elems * es), "copy"); }, kWarm, kRuns);
    copyGbs = gbs(io, copyMs);
    std::printf("%-34s %9.3f ms %9.1f GB/s %6.2f of copy\n", ("device copy" + suffix).c_str(), copyMs, copyGbs, 1.0);
    tessera_tensor tx = view(x, dt, {R, N}), ty = view(y, dt, {R, N}), tw = view(w, dt, {N}), tb = view(b, dt, {N});
    tessera_tensor tt = view(t, TESSERA_I64, {R}), tl = view(out, TESSERA_F32, {R}), ti = view(out, TESSERA_I64, {R});
    report("softmax" + suffix, io, [&] { bench::check((f32 ? tessera_std_nn_softmax_f32 : tessera_std_nn_softmax_bf16)(nullptr, &tx, &ty), "softmax"); });
    report("log_softmax" + suffix, io, [&] { bench::check((f32 ? tessera_std_nn_log_softmax_f32 : tessera_std_nn_log_softmax_bf16)(nullptr, &tx, &ty), "log_softmax"); });
    report("rmsnorm_safe" + suffix, io, [&] { bench::check((f32 ? tessera_std_nn_rmsnorm_safe_f32 : tessera_std_nn_rmsnorm_safe_bf16)(nullptr, &tx, &tw, &ty, 1e-5f), "rmsnorm"); });
    report("layernorm_safe" + suffix, io, [&] { bench::check((f32 ? tessera_std_nn_layernorm_safe_f32 : tessera_std_nn_layernorm_safe_bf16)(nullptr, &tx, &tw, &tb, &ty, 1e-5f), "layernorm"); });
    report("cross_entropy" + suffix, in, [&] { bench::check((f32 ? tessera_std_nn_cross_entropy_f32 : tessera_std_nn_cross_entropy_bf16)(nullptr, &tx, &tt, &tl), "cross_entropy"); });
    report("sum" + suffix, in, [&] { bench::check((f32 ? tessera_std_reduce_sum_f32 : tessera_std_reduce_sum_bf16)(nullptr, &tx, &tl), "sum"); });
    report("argmax" + suffix, in, [&] { bench::check((f32 ? tessera_std_reduce_argmax_f32 : tessera_std_reduce_argmax_bf16)(nullptr, &tx, &ti), "argmax"); });
    report("bias_gelu" + suffix, io, [&] { bench::check((f32 ? tessera_std_nn_bias_gelu_f32 : tessera_std_nn_bias_gelu_bf16)(nullptr, &tx, &tb, &ty), "bias_gelu"); });
    if (f32) {
      tessera_tensor flat = view(y, TESSERA_F32, {static_cast<int64_t>(elems)});
      report("randn_f32 (writes " + std::to_string(elems * 4 >> 20) + " MiB)", in, [&] { bench::check(tessera_std_random_randn_f32(nullptr, &flat, 11, 0), "randn"); });
      report("rand_f32", in, [&] { bench::check(tessera_std_random_rand_f32(nullptr, &flat, 11, 0), "rand"); });
      int64_t n = static_cast<int64_t>(elems), m = n - 1;
      tessera_tensor ax = view(x, TESSERA_F32, {n}), ay = view(y, TESSERA_F32, {n});
      tessera_tensor ux = view(static_cast<float*>(x) + 1, TESSERA_F32, {m}), uy = view(static_cast<float*>(y) + 1, TESSERA_F32, {m});
      report("saxpy, aligned views", 12.0 * n, [&] { bench::check(saxpy_saxpy(nullptr, &ax, &ay, 0.5f), "saxpy"); });
      report("saxpy, views 4 bytes past alignment", 12.0 * m, [&] { bench::check(saxpy_saxpy(nullptr, &ux, &uy, 0.5f), "saxpy"); });
    }
  }
  tessera_free(x), tessera_free(y), tessera_free(w), tessera_free(b), tessera_free(t), tessera_free(out);
  return 0;
}
