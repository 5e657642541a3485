// Tile-value kernels on the GPU, in TFLOP/s (median of 30 event-timed runs after 5 warm-ups):
// gemm_tc (bf16 in, f32 out) and gemm_tc_bf16 (bf16 out) at the GEMM shapes of issue 13,
// examples/gemm_fp8 (fp8 e4m3 in, B given K-major, f32 and bf16 out) at 4096^3 and 8192^3,
// flash_attention (online softmax, B=2 H=8 S=2048 D=128, causal and not), stdlib.nn
// flash_attention_bf16 at B=4 H=32 S=4096 D=128 and B=8 H=16 S=8192 D=64, and examples/fused_mlp
// at issue 15's shapes (M=8192, D=H=E=1024; M=8192, D=4096, H=16384, E=4096). Their peers run in
// the same device call: peer_gemm.cu (cuBLAS bf16 GEMM with f32 and bf16 output, cuBLASLt fp8
// e4m3 with bf16 output), peer_attention.py (PyTorch SDPA on the same attention) and peer_mlp.py
// (PyTorch: two cuBLAS GEMMs with their bias and relu).
//   bench_tiles [gemm | fp8 | attention | mlp | M N K]   (no argument: every kernel; `gemm`: the
//                                 GEMM shapes only; `fp8`: gemm_fp8 only; `attention`:
//                                 flash_attention only; `mlp`: fused_mlp only; M N K: gemm_tc at
//                                 that shape only)
// TESSERA_GPU_VARIANTS=off times gemm_tc's portable (mma.sync) form instead of its sm_90a form.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <tessera/runtime.h>
#include <tessera/std.h>
#include <vector>

#include "BenchUtil.h"
#include "flash_attention.h"
#include "fused_mlp.h"
#include "gemm_fp8.h"
#include "gemm_tc.h"

namespace {

using bench::check;
double medianMs(const std::function<void()>& run) { return bench::medianEventMs(run, 5, 30); }

// Device memory filled with pseudo-random bf16 values in [-1, 1) (a 32-bit LCG, truncated to
// bf16; peer_gemm.cu uses the same generator). Random data: a low-entropy pattern toggles fewer
// bits and lets power-capped GPUs clock higher than real data would.
void* bf16Buffer(int64_t n) {
  static uint32_t state = 12345;
  std::vector<uint16_t> h(n);
  for (int64_t i = 0; i < n; ++i) {
    state = state * 1664525u + 1013904223u;
    float f = static_cast<float>(state >> 8) * (2.0f / 16777216.0f) - 1.0f;
    uint32_t bits;
    std::memcpy(&bits, &f, 4);
    h[i] = static_cast<uint16_t>(bits >> 16);
  }
  void* d;
  check(tessera_malloc(&d, n * 2), "malloc");
  check(tessera_memcpy(d, h.data(), n * 2), "memcpy");
  return d;
}

// The same values rounded to fp8 e4m3 (nearest, ties to even), as peer_gemm.cu's
// __nv_fp8_e4m3(float) does: a table over the bf16 codes, by search over the e4m3 values.
void* fp8Buffer(int64_t n) {
  static std::vector<uint8_t> table;
  if (table.empty()) {
    auto decode = [](int c) {
      int e = (c >> 3) & 15, m = c & 7;
      return e == 0 ? std::ldexp(static_cast<float>(m), -9) : std::ldexp(1.0f + m / 8.0f, e - 7);
    };
    table.resize(65536);
    for (uint32_t h = 0; h < 65536; ++h) {
      uint32_t bits = h << 16;
      float f;
      std::memcpy(&f, &bits, 4);
      float a = std::fabs(f);
      int best = 0;
      for (int c = 1; c < 127; ++c) {  // 127 is NaN; |values| here are below 1
        float d = std::fabs(decode(c) - a), bd = std::fabs(decode(best) - a);
        if (d < bd || (d == bd && c % 2 == 0)) best = c;
      }
      table[h] = static_cast<uint8_t>(best | (std::signbit(f) ? 0x80 : 0));
    }
  }
  void* b16 = bf16Buffer(n);
  std::vector<uint16_t> h(n);
  check(tessera_memcpy(h.data(), b16, n * 2), "memcpy");
  tessera_free(b16);
  std::vector<uint8_t> q(n);
  for (int64_t i = 0; i < n; ++i) q[i] = table[h[i]];
  void* d;
  check(tessera_malloc(&d, n), "malloc");
  check(tessera_memcpy(d, q.data(), n), "memcpy");
  return d;
}

tessera_tensor view(void* p, tessera_dtype t, std::vector<int64_t> shape) {
  tessera_tensor v;
  tessera_tensor_init(&v, p, t, static_cast<int32_t>(shape.size()), shape.data(), 0);
  return v;
}

}  // namespace

// Times launch(A, B, C) for C[M, N] in f32 or bf16 and prints one row.
template <class Launch>
void timeGemm(const char* name, const char* in, int64_t M, int64_t N, int64_t K, bool f32, tessera_tensor A,
              tessera_tensor B, Launch launch) {
  void* c;
  check(tessera_malloc(&c, M * N * 4), "malloc");
  tessera_tensor C = view(c, f32 ? TESSERA_F32 : TESSERA_BF16, {M, N});
  double ms = medianMs([&] { launch(A, B, C); });
  char what[80];
  std::snprintf(what, sizeof what, "%s %lldx%lldx%lld (%s -> %s)", name, (long long)M, (long long)N, (long long)K, in,
                f32 ? "f32" : "bf16");
  std::printf("%-44s %10.3f %10.1f\n", what, ms, 2.0 * M * N * K / ms / 1e9);
  tessera_free(c);
}

void gemm(int64_t M, int64_t N, int64_t K, bool f32) {
  void* a = bf16Buffer(M * K);
  void* b = bf16Buffer(K * N);
  timeGemm("gemm_tc", "bf16", M, N, K, f32, view(a, TESSERA_BF16, {M, K}), view(b, TESSERA_BF16, {K, N}),
           [&](tessera_tensor A, tessera_tensor B, tessera_tensor C) {
             if (f32)
               check(gemm_tc::gemm_tc(A, B, C), "gemm_tc");
             else
               check(gemm_tc::gemm_tc_bf16(A, B, C), "gemm_tc_bf16");
           });
  tessera_free(a), tessera_free(b);
}

// C[M, N] = A[M, K] @ Bt[N, K].T in fp8 e4m3 (cuBLASLt's "TN" form in peer_gemm.cu).
void gemmFp8(int64_t M, int64_t N, int64_t K, bool f32) {
  void* a = fp8Buffer(M * K);
  void* bt = fp8Buffer(N * K);
  timeGemm("gemm_fp8", "e4m3", M, N, K, f32, view(a, TESSERA_F8_E4M3, {M, K}), view(bt, TESSERA_F8_E4M3, {N, K}),
           [&](tessera_tensor A, tessera_tensor Bt, tessera_tensor C) {
             if (f32)
               check(gemm_fp8::gemm_fp8_f32(A, Bt, C), "gemm_fp8_f32");
             else
               check(gemm_fp8::gemm_fp8_bf16(A, Bt, C), "gemm_fp8_bf16");
           });
  tessera_free(a), tessera_free(bt);
}

// flash_attention (the example, `stdlib` false) or stdlib.nn flash_attention_bf16 (with LSE),
// causal and not, in TFLOP/s (causal: half the work, the FlashAttention papers' convention).
void attention(int64_t B, int64_t H, int64_t S, int64_t D, bool stdlib) {
  const int64_t n = B * H * S * D;
  void* q = bf16Buffer(n);
  void* k = bf16Buffer(n);
  void* v = bf16Buffer(n);
  void* o = bf16Buffer(n);
  void* lse = nullptr;
  check(tessera_malloc(&lse, B * H * S * 4), "malloc");
  const float scale = 1.0f / std::sqrt(float(D));
  for (bool causal : {false, true}) {
    double ms = medianMs([&] {
      tessera_tensor Q = view(q, TESSERA_BF16, {B, H, S, D}), K = view(k, TESSERA_BF16, {B, H, S, D}),
                     V = view(v, TESSERA_BF16, {B, H, S, D}), O = view(o, TESSERA_BF16, {B, H, S, D}),
                     L = view(lse, TESSERA_F32, {B, H, S});
      if (stdlib)
        check(causal ? tessera_std_nn_flash_attention_causal_bf16(nullptr, &Q, &K, &V, &O, &L, scale)
                     : tessera_std_nn_flash_attention_bf16(nullptr, &Q, &K, &V, &O, &L, scale),
              "stdlib flash_attention");
      else
        check(causal ? flash_attention::flash_attention_causal(Q, K, V, O, scale)
                     : flash_attention::flash_attention(Q, K, V, O, scale),
              "flash_attention");
    });
    char label[96];
    std::snprintf(label, sizeof label, "%s B%lld H%lld S%lld D%lld%s",
                  stdlib ? "stdlib flash_attention" : "flash_attention", (long long)B, (long long)H, (long long)S,
                  (long long)D, causal ? " causal" : "");
    std::printf("%-44s %10.3f %10.1f\n", label, ms, (causal ? 2.0 : 4.0) * B * H * S * S * D / ms / 1e9);
  }
  tessera_free(q), tessera_free(k), tessera_free(v), tessera_free(o), tessera_free(lse);
}

// examples/fused_mlp: Out = relu(X W1 + b1) W2 + b2, bf16.
void fusedMlp(int64_t M, int64_t D, int64_t H, int64_t E) {
  void* x = bf16Buffer(M * D);
  void* w1 = bf16Buffer(D * H);
  void* b1 = bf16Buffer(H);
  void* w2 = bf16Buffer(H * E);
  void* b2 = bf16Buffer(E);
  void* out = bf16Buffer(M * E);
  auto once = [&] {
    check(fused_mlp::fused_mlp(view(x, TESSERA_BF16, {M, D}), view(w1, TESSERA_BF16, {D, H}),
                               view(b1, TESSERA_BF16, {H}), view(w2, TESSERA_BF16, {H, E}), view(b2, TESSERA_BF16, {E}),
                               view(out, TESSERA_BF16, {M, E})),
          "fused_mlp");
  };
  const double flops = 2.0 * M * D * H + 2.0 * M * H * E;
  char label[96];
  std::snprintf(label, sizeof label, "fused_mlp M%lld D%lld H%lld E%lld", (long long)M, (long long)D, (long long)H,
                (long long)E);
  double ms = medianMs(once);
  std::printf("%-44s %10.3f %10.1f\n", label, ms, flops / ms / 1e9);
  // Ten launches between the events: the GPU's time per launch when the host keeps ahead (the
  // line above also counts the host's launch work before the first kernel starts).
  ms = medianMs([&] {
         for (int i = 0; i < 10; ++i) once();
       }) /
       10;
  std::snprintf(label, sizeof label, "  x10 back to back, per launch");
  std::printf("%-44s %10.3f %10.1f\n", label, ms, flops / ms / 1e9);
  tessera_free(x), tessera_free(w1), tessera_free(b1), tessera_free(w2), tessera_free(b2), tessera_free(out);
}

int main(int argc, char** argv) {
  check(tessera_init(), "init");
  std::printf("device: %s\n%-44s %10s %10s\n", tessera_device_name(), "kernel", "ms", "TFLOP/s");
  if (argc > 3) {
    gemm(std::atoll(argv[1]), std::atoll(argv[2]), std::atoll(argv[3]), true);
    return 0;
  }
  bool attentionOnly = argc > 1 && std::strcmp(argv[1], "attention") == 0;
  bool mlpOnly = argc > 1 && std::strcmp(argv[1], "mlp") == 0;
  if (argc > 1 && std::strcmp(argv[1], "fp8") == 0) {
    for (int64_t n : {4096, 8192})
      for (bool f32 : {false, true}) gemmFp8(n, n, n, f32);
    return 0;
  }
  const int64_t shapes[][3] = {{4096, 4096, 4096}, {8192, 8192, 8192}, {8192, 8192, 1024}, {4096, 14336, 4096}};
  if (!attentionOnly && !mlpOnly)
    for (auto& s : shapes)
      for (bool f32 : {true, false}) gemm(s[0], s[1], s[2], f32);
  if (!attentionOnly && !mlpOnly)
    for (int64_t n : {4096, 8192})
      for (bool f32 : {false, true}) gemmFp8(n, n, n, f32);
  if (argc > 1 && std::strcmp(argv[1], "gemm") == 0) return 0;
  // Attention at the shapes of peer_attention.py: the example at B=2 H=8 S=2048 D=128, the
  // stdlib entries (with their log-sum-exp output) at issue 15's bar shapes.
  if (!mlpOnly) {
    attention(2, 8, 2048, 128, false);
    struct Shape {
      int64_t B, H, S, D;
    } bar[] = {{4, 32, 4096, 128}, {8, 16, 8192, 64}};
    for (const Shape& sh : bar) attention(sh.B, sh.H, sh.S, sh.D, true);
  }
  if (attentionOnly) return 0;
  // fused_mlp at the shapes of peer_mlp.py.
  fusedMlp(8192, 1024, 1024, 1024);
  fusedMlp(8192, 4096, 16384, 4096);
  return 0;
}
