// Peer for bench/tiles: cuBLAS bf16 GEMM with f32 output (C = A @ B, row-major n x n), the
// operation examples/gemm_tc.tessera computes. Median of 30 event-timed runs after 5 warm-ups.
//   nvcc -O3 -arch=sm_90a peer_gemm.cu -lcublas -o peer_gemm && ./peer_gemm [n]
#include <cublas_v2.h>
#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <vector>

int main(int argc, char** argv) {
  int n = argc > 1 ? std::atoi(argv[1]) : 4096;
  std::vector<__nv_bfloat16> h(size_t(n) * n);
  for (size_t i = 0; i < h.size(); ++i) h[i] = __float2bfloat16(((i * 37) % 63 + 1) / 64.0f * ((i & 1) ? -1 : 1));
  __nv_bfloat16 *a, *b;
  float* c;
  cudaMalloc(&a, h.size() * 2);
  cudaMalloc(&b, h.size() * 2);
  cudaMalloc(&c, h.size() * 4);
  cudaMemcpy(a, h.data(), h.size() * 2, cudaMemcpyHostToDevice);
  cudaMemcpy(b, h.data(), h.size() * 2, cudaMemcpyHostToDevice);
  cublasHandle_t handle;
  cublasCreate(&handle);
  float one = 1, zero = 0;
  // Row-major C = A B is column-major C^T = B^T A^T.
  auto run = [&] {
    cublasGemmEx(handle, CUBLAS_OP_N, CUBLAS_OP_N, n, n, n, &one, b, CUDA_R_16BF, n, a, CUDA_R_16BF, n, &zero, c,
                 CUDA_R_32F, n, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT);
  };
  cudaEvent_t e0, e1;
  cudaEventCreate(&e0);
  cudaEventCreate(&e1);
  for (int i = 0; i < 5; ++i) run();
  cudaDeviceSynchronize();
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
  std::sort(ms.begin(), ms.end());
  double t = ms[ms.size() / 2];
  std::printf("%-44s %10.3f %10.1f\n", "cuBLAS bf16 GEMM (f32 out)", t, 2.0 * n * n * n / t / 1e9);
  return cudaGetLastError() != cudaSuccess;
}
