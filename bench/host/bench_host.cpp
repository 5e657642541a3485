// Host functions on the GPU (bench/host/host_bench.tessera): the spec's attention module (bf16)
// called through its entry point (which allocates its result and log-sum-exp from the stream's
// pool, launches stdlib.nn.flash_attention_bf16 on views and frees) against the stdlib entry
// tessera_std_nn_flash_attention_bf16 called directly into preallocated tensors; and the spec's
// transformer block forward in bf16 and f32, and its bf16 forward + backward (the forward entry
// point, then block_bf16_backward with a cotangent of ones, as peer_host.py's autograd), with the
// backward's attention kernels (stdlib.nn.flash_attention_grad_kv/q_bf16) timed alone. Median of 20 timed calls after 3
// warm-ups, by events on the default stream. peer_host.py times PyTorch eager on the same problems in the same run.
#include <cmath>
#include <cstring>
#include <random>

#include "BenchUtil.h"
#include "host_bench.h"
#include "tessera/std.h"

namespace {

struct Buffer {
  void* data = nullptr;
  tessera_dtype dtype = TESSERA_F32;
  tessera_tensor view(std::vector<int64_t> shape) {
    tessera_tensor t;
    tessera_tensor_init(&t, data, dtype, static_cast<int32_t>(shape.size()), shape.data(), 0);
    return t;
  }
};

uint16_t toBF16(float f) {
  uint32_t x;
  std::memcpy(&x, &f, 4);
  x += 0x7fffu + ((x >> 16) & 1u);
  return static_cast<uint16_t>(x >> 16);
}

Buffer randomBuffer(size_t n, float scale, tessera_dtype dtype) {
  std::mt19937 rng(42);
  std::uniform_real_distribution<float> d(-scale, scale);
  Buffer b;
  b.dtype = dtype;
  if (dtype == TESSERA_BF16) {
    std::vector<uint16_t> host(n);
    for (uint16_t& x : host) x = toBF16(d(rng));
    bench::check(tessera_malloc(&b.data, n * 2), "malloc");
    bench::check(tessera_memcpy(b.data, host.data(), n * 2), "copy in");
    return b;
  }
  std::vector<float> host(n);
  for (float& x : host) x = d(rng);
  bench::check(tessera_malloc(&b.data, n * sizeof(float)), "malloc");
  bench::check(tessera_memcpy(b.data, host.data(), n * sizeof(float)), "copy in");
  return b;
}

// The block's entry point, timed; its result freed after each call (on `stream`: the entry
// point's launches and the free go to that stream).
template <class Entry>
double blockMs(Entry entry, tessera_dtype dtype, tessera_stream stream = nullptr) {
  const int64_t T = 2048, E = 1024;
  Buffer x = randomBuffer(T * E, 1, dtype), wqkv = randomBuffer(E * 3 * E, 0.03f, dtype),
         wo = randomBuffer(E * E, 0.03f, dtype);
  tessera_tensor X = x.view({T, E}), Wqkv = wqkv.view({E, 3 * E}), Wo = wo.view({E, E});
  tessera_launch_options opts{};
  opts.stream = stream;
  double ms = bench::medianEventMs(
      [&] {
        tessera_tensor out;
        bench::check(entry(&opts, &X, &Wqkv, &Wo, &out), "block entry");
        bench::check(stream ? tessera_free_async(out.data, stream) : tessera_free(out.data), "free");
      },
      3, 20);
  for (Buffer* b : {&x, &wqkv, &wo}) tessera_free(b->data);
  return ms;
}

// The bf16 block's forward entry point and then its backward entry point (which recomputes the
// forward pass), timed together and the backward alone; every result freed after each call.
void blockTrainMs(double& both, double& backward) {
  const int64_t T = 2048, E = 1024;
  Buffer x = randomBuffer(T * E, 1, TESSERA_BF16), wqkv = randomBuffer(E * 3 * E, 0.03f, TESSERA_BF16),
         wo = randomBuffer(E * E, 0.03f, TESSERA_BF16), ones;
  std::vector<uint16_t> one(T * E, toBF16(1.0f));
  bench::check(tessera_malloc(&ones.data, T * E * 2), "malloc");
  bench::check(tessera_memcpy(ones.data, one.data(), T * E * 2), "copy in");
  ones.dtype = TESSERA_BF16;
  tessera_tensor X = x.view({T, E}), Wqkv = wqkv.view({E, 3 * E}), Wo = wo.view({E, E}), G = ones.view({T, E});
  auto bwd = [&] {
    tessera_tensor d[3];
    bench::check(host_bench_block_bf16_backward(nullptr, &X, &Wqkv, &Wo, &G, &d[0], &d[1], &d[2]), "backward entry");
    for (auto& t : d) bench::check(tessera_free(t.data), "free");
  };
  both = bench::medianEventMs(
      [&] {
        tessera_tensor out;
        bench::check(host_bench_block_bf16(nullptr, &X, &Wqkv, &Wo, &out), "block entry");
        bench::check(tessera_free(out.data), "free");
        bwd();
      },
      3, 20);
  backward = bench::medianEventMs(bwd, 3, 20);
  for (Buffer* b : {&x, &wqkv, &wo, &ones}) tessera_free(b->data);
}

// The attention backward of the block alone: [1, 16, 2048, 64] bf16, both stdlib kernels.
double attentionGradMs() {
  const int64_t H = 16, T = 2048, D = 64, n = H * T * D;
  Buffer q = randomBuffer(n, 1, TESSERA_BF16), k = randomBuffer(n, 1, TESSERA_BF16),
         v = randomBuffer(n, 1, TESSERA_BF16), o = randomBuffer(n, 1, TESSERA_BF16),
         g = randomBuffer(n, 1, TESSERA_BF16), dq = randomBuffer(n, 0, TESSERA_BF16),
         dk = randomBuffer(n, 0, TESSERA_BF16), dv = randomBuffer(n, 0, TESSERA_BF16),
         lse = randomBuffer(H * T, 0, TESSERA_F32);
  std::vector<int64_t> s4{1, H, T, D};
  tessera_tensor Q = q.view(s4), K = k.view(s4), V = v.view(s4), O = o.view(s4), G = g.view(s4), DQ = dq.view(s4),
                 DK = dk.view(s4), DV = dv.view(s4), L = lse.view({1, H, T});
  bench::check(tessera_std_nn_flash_attention_bf16(nullptr, &Q, &K, &V, &O, &L, 0.125f), "forward");
  double ms = bench::medianEventMs(
      [&] {
        bench::check(tessera_std_nn_flash_attention_grad_kv_bf16(nullptr, &Q, &K, &V, &O, &G, &L, &DK, &DV, 0.125f),
                     "grad kv");
        bench::check(tessera_std_nn_flash_attention_grad_q_bf16(nullptr, &Q, &K, &V, &O, &G, &L, &DQ, 0.125f),
                     "grad q");
      },
      1, 5);
  for (Buffer* b : {&q, &k, &v, &o, &g, &dq, &dk, &dv, &lse}) tessera_free(b->data);
  return ms;
}

}  // namespace

int main() {
  const int64_t S = 16384, D = 128;
  Buffer q = randomBuffer(S * D, 1, TESSERA_BF16), k = randomBuffer(S * D, 1, TESSERA_BF16),
         v = randomBuffer(S * D, 1, TESSERA_BF16), o = randomBuffer(S * D, 0, TESSERA_BF16),
         lse = randomBuffer(S, 0, TESSERA_F32);
  tessera_tensor Q = q.view({S, D}), K = k.view({S, D}), V = v.view({S, D});
  tessera_tensor Q4 = q.view({1, 1, S, D}), K4 = k.view({1, 1, S, D}), V4 = v.view({1, 1, S, D}),
                 O4 = o.view({1, 1, S, D}), L3 = lse.view({1, 1, S});
  double flops = 4.0 * S * S * D;
  double entry = bench::medianEventMs(
      [&] {
        tessera_tensor out;
        bench::check(host_bench_attention_bf16(nullptr, &Q, &K, &V, &out), "attention entry");
        bench::check(tessera_free(out.data), "free");
      },
      3, 20);
  double direct = bench::medianEventMs(
      [&] {
        bench::check(tessera_std_nn_flash_attention_bf16(nullptr, &Q4, &K4, &V4, &O4, &L3, 1.0f), "stdlib attention");
      },
      3, 20);
  double blockFlops = 2.0 * 2048 * 1024 * 3072 + 4.0 * 2048 * 2048 * 1024 + 2.0 * 2048 * 1024 * 1024;
  double bf16 = blockMs(host_bench_block_bf16, TESSERA_BF16);
  double f32 = blockMs(host_bench_block, TESSERA_F32);

  std::printf("%-52s %10s %10s\n", "host functions", "ms", "TFLOP/s");
  std::printf("%-52s %10.3f %10.1f\n", "attention module entry bf16 S16384 D128", entry, flops / entry / 1e9);
  std::printf("%-52s %10.3f %10.1f\n", "stdlib flash_attention_bf16 called directly", direct, flops / direct / 1e9);
  std::printf("%-52s %10.3f\n", "direct / entry (bar: >= 0.9)", direct / entry);
  std::printf("%-52s %10.3f %10.1f\n", "transformer block forward bf16 S2048 E1024 H16", bf16, blockFlops / bf16 / 1e9);
  std::printf("%-52s %10.3f %10.1f\n", "transformer block forward f32 S2048 E1024 H16", f32, blockFlops / f32 / 1e9);
  tessera_stream stream = nullptr;
  bench::check(tessera_stream_create(&stream), "stream");
  double onStream = blockMs(host_bench_block_bf16, TESSERA_BF16, stream);
  double captured = blockMs(host_bench_block_bf16_graph, TESSERA_BF16, stream);
  std::printf("%-52s %10.3f\n", "  the same on a stream of its own", onStream);
  std::printf("%-52s %10.3f\n", "  capture_graph=True on that stream (replayed)", captured);
  tessera_stream_destroy(stream);
  double both = 0, backward = 0;
  blockTrainMs(both, backward);
  std::printf("%-52s %10.3f %10.1f\n", "transformer block forward + backward bf16", both, 3 * blockFlops / both / 1e9);
  std::printf("%-52s %10.3f\n", "  of which block_bf16_backward (recomputes forward)", backward);
  double attn = attentionGradMs(), attnFlops = 10.0 * 16 * 2048 * 2048 * 64;
  std::printf("%-52s %10.3f %10.1f\n", "attention backward bf16 H16 S2048 D64 (stdlib)", attn, attnFlops / attn / 1e9);
  return 0;
}
