// Host functions on the GPU (bench/host/host_bench.tessera): the spec's attention module called
// through its entry point (which allocates its result and the log-sum-exp, launches the fused
// attention kernel, waits and frees) against the same generated kernel launched directly into
// preallocated tensors; and the spec's transformer block forward. Median of 20 timed calls after
// 3 warm-ups, by events on the default stream. peer_host.py times PyTorch eager on the same
// problems in the same run.
#include "host_bench.h"

#include <random>

#include "BenchUtil.h"

namespace {

struct Buffer {
  void* data = nullptr;
  tessera_tensor view(std::vector<int64_t> shape) {
    tessera_tensor t;
    tessera_tensor_init(&t, data, TESSERA_F32, static_cast<int32_t>(shape.size()), shape.data(), 0);
    return t;
  }
};

Buffer randomBuffer(size_t n, float scale) {
  std::mt19937 rng(42);
  std::uniform_real_distribution<float> d(-scale, scale);
  std::vector<float> host(n);
  for (float& x : host) x = d(rng);
  Buffer b;
  bench::check(tessera_malloc(&b.data, n * sizeof(float)), "malloc");
  bench::check(tessera_memcpy(b.data, host.data(), n * sizeof(float)), "copy in");
  return b;
}

}  // namespace

int main() {
  const int64_t S = 4096, D = 64;
  Buffer q = randomBuffer(S * D, 1), k = randomBuffer(S * D, 1), v = randomBuffer(S * D, 1);
  Buffer o = randomBuffer(S * D, 0), lse = randomBuffer(S, 0);
  tessera_tensor Q = q.view({S, D}), K = k.view({S, D}), V = v.view({S, D}), O = o.view({S, D}), L = lse.view({1, S});
  double flops = 4.0 * S * S * D;
  double entry = bench::medianEventMs([&] {
    tessera_tensor out;
    bench::check(host_bench_attention(nullptr, &Q, &K, &V, &out), "attention entry");
    bench::check(tessera_free(out.data), "free");
  }, 3, 20);
  double direct = bench::medianEventMs([&] {
    bench::check(host_bench_attention__k0_flash_attention(nullptr, &Q, &K, &V, &O, &L), "attention kernel");
  }, 3, 20);

  const int64_t T = 2048, E = 1024;
  Buffer x = randomBuffer(T * E, 1), wqkv = randomBuffer(E * 3 * E, 0.03f), wo = randomBuffer(E * E, 0.03f);
  tessera_tensor X = x.view({T, E}), Wqkv = wqkv.view({E, 3 * E}), Wo = wo.view({E, E});
  double blockMs = bench::medianEventMs([&] {
    tessera_tensor out;
    bench::check(host_bench_block(nullptr, &X, &Wqkv, &Wo, &out), "block entry");
    bench::check(tessera_free(out.data), "free");
  }, 3, 20);
  double blockFlops = 2.0 * T * E * 3 * E + 4.0 * T * T * E + 2.0 * T * E * E;

  std::printf("%-52s %10s %10s\n", "host functions (f32)", "ms", "GFLOP/s");
  std::printf("%-52s %10.3f %10.1f\n", "attention module entry S4096 D64", entry, flops / entry / 1e6);
  std::printf("%-52s %10.3f %10.1f\n", "its flash_attention kernel launched directly", direct, flops / direct / 1e6);
  std::printf("%-52s %10.3f\n", "entry / direct", entry / direct);
  std::printf("%-52s %10.3f %10.1f\n", "transformer block forward S2048 E1024 H16", blockMs, blockFlops / blockMs / 1e6);
  return 0;
}
