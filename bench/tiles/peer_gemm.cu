// Peer for bench/tiles: cuBLAS bf16 GEMM (C = A @ B, row-major, f32 and bf16 output) at the
// shapes bench_tiles times, and cuBLASLt fp8 e4m3 GEMM (D = A @ Bt^T, bf16 output, the "TN" form
// fp8 requires) at 4096^3 and 8192^3. Median of 30 event-timed runs after 5 warm-ups; pseudo-random inputs
// from bench_tiles' generator.
//   nvcc -O3 -arch=sm_90a peer_gemm.cu -lcublas -lcublasLt -o peer_gemm && ./peer_gemm [M N K]
#include <cublasLt.h>
#include <cublas_v2.h>
#include <cuda_bf16.h>
#include <cuda_fp8.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <vector>

namespace {

void ok(bool good, const char* what) {
  if (!good) {
    std::printf("peer_gemm: %s failed\n", what);
    std::exit(1);
  }
}

double medianMs(const std::function<void()>& run) {
  cudaEvent_t e0, e1;
  cudaEventCreate(&e0);
  cudaEventCreate(&e1);
  for (int i = 0; i < 5; ++i) run();
  ok(cudaDeviceSynchronize() == cudaSuccess, "warm-up");
  std::vector<float> ms;
  for (int i = 0; i < 30; ++i) {
    cudaEventRecord(e0);
    run();
    cudaEventRecord(e1);
    cudaEventSynchronize(e1);
    float t;
    cudaEventElapsedTime(&t, e0, e1);
    ms.push_back(t);
  }
  ok(cudaGetLastError() == cudaSuccess, "timed runs");
  std::sort(ms.begin(), ms.end());
  return ms[ms.size() / 2];
}

// bench_tiles' generator: a 32-bit LCG, uniform in [-1, 1), truncated to bf16 (fp8 rounds
// them further).
template <class T>
T* deviceBuffer(size_t n, T (*make)(float)) {
  static uint32_t state = 12345;
  std::vector<T> h(n);
  for (size_t i = 0; i < n; ++i) {
    state = state * 1664525u + 1013904223u;
    float f = static_cast<float>(state >> 8) * (2.0f / 16777216.0f) - 1.0f;
    uint32_t bits;
    std::memcpy(&bits, &f, 4);
    bits &= 0xFFFF0000u;
    std::memcpy(&f, &bits, 4);
    h[i] = make(f);
  }
  T* d;
  ok(cudaMalloc(&d, n * sizeof(T)) == cudaSuccess, "cudaMalloc");
  ok(cudaMemcpy(d, h.data(), n * sizeof(T), cudaMemcpyHostToDevice) == cudaSuccess, "cudaMemcpy");
  return d;
}

void bf16Gemm(cublasHandle_t handle, long M, long N, long K) {
  auto* a = deviceBuffer<__nv_bfloat16>(M * K, [](float f) { return __float2bfloat16(f); });
  auto* b = deviceBuffer<__nv_bfloat16>(K * N, [](float f) { return __float2bfloat16(f); });
  void* c;
  ok(cudaMalloc(&c, M * N * 4) == cudaSuccess, "cudaMalloc");
  for (bool f32 : {true, false}) {
    float one = 1, zero = 0;
    // Row-major C = A B is column-major C^T = B^T A^T.
    double ms = medianMs([&] {
      ok(cublasGemmEx(handle, CUBLAS_OP_N, CUBLAS_OP_N, N, M, K, &one, b, CUDA_R_16BF, N, a, CUDA_R_16BF, K, &zero, c,
                      f32 ? CUDA_R_32F : CUDA_R_16BF, N, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT) ==
             CUBLAS_STATUS_SUCCESS,
         "cublasGemmEx");
    });
    char what[80];
    std::snprintf(what, sizeof what, "cuBLAS %ldx%ldx%ld (bf16 -> %s)", M, N, K, f32 ? "f32" : "bf16");
    std::printf("%-44s %10.3f %10.1f\n", what, ms, 2.0 * M * N * K / ms / 1e9);
  }
  cudaFree(a), cudaFree(b), cudaFree(c);
}

// D[M,N] (row-major, bf16) = A[M,K] Bt[N,K]^T: column-major D^T = Bt^T... as cuBLASLt's TN.
void fp8Gemm(long M, long N, long K) {
  cublasLtHandle_t lt;
  ok(cublasLtCreate(&lt) == CUBLAS_STATUS_SUCCESS, "cublasLtCreate");
  auto* a = deviceBuffer<__nv_fp8_e4m3>(M * K, [](float f) { return __nv_fp8_e4m3(f); });
  auto* bt = deviceBuffer<__nv_fp8_e4m3>(N * K, [](float f) { return __nv_fp8_e4m3(f); });
  __nv_bfloat16* d;
  ok(cudaMalloc(&d, M * N * 2) == cudaSuccess, "cudaMalloc");
  size_t wsBytes = 64 << 20;
  void* ws;
  ok(cudaMalloc(&ws, wsBytes) == cudaSuccess, "cudaMalloc");
  cublasLtMatmulDesc_t op;
  cublasLtMatrixLayout_t la, lb, ld;
  ok(cublasLtMatmulDescCreate(&op, CUBLAS_COMPUTE_32F, CUDA_R_32F) == CUBLAS_STATUS_SUCCESS, "desc");
  cublasOperation_t ta = CUBLAS_OP_T, tb = CUBLAS_OP_N;
  cublasLtMatmulDescSetAttribute(op, CUBLASLT_MATMUL_DESC_TRANSA, &ta, sizeof ta);
  cublasLtMatmulDescSetAttribute(op, CUBLASLT_MATMUL_DESC_TRANSB, &tb, sizeof tb);
  cublasLtMatrixLayoutCreate(&la, CUDA_R_8F_E4M3, K, N, K);
  cublasLtMatrixLayoutCreate(&lb, CUDA_R_8F_E4M3, K, M, K);
  cublasLtMatrixLayoutCreate(&ld, CUDA_R_16BF, N, M, N);
  cublasLtMatmulPreference_t pref;
  cublasLtMatmulPreferenceCreate(&pref);
  cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &wsBytes, sizeof wsBytes);
  cublasLtMatmulHeuristicResult_t res;
  int found = 0;
  cublasLtMatmulAlgoGetHeuristic(lt, op, la, lb, ld, ld, pref, 1, &res, &found);
  ok(found > 0, "cuBLASLt fp8 heuristic");
  float alpha = 1, beta = 0;
  double ms = medianMs([&] {
    ok(cublasLtMatmul(lt, op, &alpha, bt, la, a, lb, &beta, d, ld, d, ld, &res.algo, ws, wsBytes, 0) ==
           CUBLAS_STATUS_SUCCESS,
       "cublasLtMatmul");
  });
  char what[80];
  std::snprintf(what, sizeof what, "cuBLASLt %ldx%ldx%ld (fp8 e4m3 -> bf16)", M, N, K);
  std::printf("%-44s %10.3f %10.1f\n", what, ms, 2.0 * M * N * K / ms / 1e9);
  cudaFree(a), cudaFree(bt), cudaFree(d), cudaFree(ws);
}

}  // namespace

int main(int argc, char** argv) {
  cublasHandle_t handle;
  ok(cublasCreate(&handle) == CUBLAS_STATUS_SUCCESS, "cublasCreate");
  if (argc > 3) {
    bf16Gemm(handle, std::atol(argv[1]), std::atol(argv[2]), std::atol(argv[3]));
    return 0;
  }
  const long shapes[][3] = {{4096, 4096, 4096}, {8192, 8192, 8192}, {8192, 8192, 1024}, {4096, 14336, 4096}};
  for (auto& s : shapes) bf16Gemm(handle, s[0], s[1], s[2]);
  fp8Gemm(4096, 4096, 4096);
  fp8Gemm(8192, 8192, 8192);
  return 0;
}
