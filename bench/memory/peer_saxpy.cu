// Peer for bench_memory: hand-written CUDA saxpy (one float per thread, and float4 per thread)
// and a read-only sum, against cudaMemcpy device-to-device, timed the same way (median of 20
// event-timed runs after 3 warm-ups). Build on a machine with nvcc:
//   nvcc -O3 -arch=sm_90a bench/memory/peer_saxpy.cu -o peer_saxpy && ./peer_saxpy
#include <algorithm>
#include <cstdio>
#include <functional>
#include <vector>

#define CHECK(x)                                                              \
  do {                                                                        \
    cudaError_t e = (x);                                                      \
    if (e != cudaSuccess) {                                                   \
      std::printf("FAIL %s: %s\n", #x, cudaGetErrorString(e));                \
      return 1;                                                               \
    }                                                                         \
  } while (0)

__global__ void saxpy1(const float* x, float* y, float a, long n) {
  long i = blockIdx.x * (long)blockDim.x + threadIdx.x;
  if (i < n) y[i] = a * x[i] + y[i];
}

__global__ void saxpy4(const float4* x, float4* y, float a, long n4) {
  long i = blockIdx.x * (long)blockDim.x + threadIdx.x;
  if (i < n4) {
    float4 xv = x[i], yv = y[i];
    yv.x = a * xv.x + yv.x;
    yv.y = a * xv.y + yv.y;
    yv.z = a * xv.z + yv.z;
    yv.w = a * xv.w + yv.w;
    y[i] = yv;
  }
}

// Grid-stride sums per thread, then a shared-memory tree per block: the shape of group_sum.
__global__ void blockSum(const float* x, float* out, long n) {
  __shared__ float s[128];
  float acc = 0;
  for (long k = blockIdx.x * 128L + threadIdx.x; k < n; k += (long)gridDim.x * 128) acc += x[k];
  s[threadIdx.x] = acc;
  __syncthreads();
  if (threadIdx.x == 0) {
    float t = 0;
    for (int i = 0; i < 128; ++i) t += s[i];
    out[blockIdx.x] = t;
  }
}

static float medianMs(const std::function<void()>& run) {
  cudaEvent_t a, b;
  cudaEventCreate(&a);
  cudaEventCreate(&b);
  for (int i = 0; i < 3; ++i) run();
  cudaDeviceSynchronize();
  std::vector<float> ms;
  for (int i = 0; i < 20; ++i) {
    cudaEventRecord(a);
    run();
    cudaEventRecord(b);
    cudaEventSynchronize(b);
    float t;
    cudaEventElapsedTime(&t, a, b);
    ms.push_back(t);
  }
  std::sort(ms.begin(), ms.end());
  return ms[ms.size() / 2];
}

int main() {
  long n = 1L << 28;
  size_t bytes = n * sizeof(float);
  float *x, *y, *z, *out;
  CHECK(cudaMalloc(&x, bytes));
  CHECK(cudaMalloc(&y, bytes));
  CHECK(cudaMalloc(&z, bytes));
  CHECK(cudaMalloc(&out, 132 * 64 * sizeof(float)));
  CHECK(cudaMemset(x, 0x3c, bytes));  // nonzero data
  CHECK(cudaMemset(y, 0x3d, bytes));
  float copy = medianMs([&] { cudaMemcpyAsync(z, x, bytes, cudaMemcpyDeviceToDevice); });
  float s1 = medianMs([&] { saxpy1<<<(n + 255) / 256, 256>>>(x, y, 1.0001f, n); });
  float s4 = medianMs([&] { saxpy4<<<(n / 4 + 255) / 256, 256>>>((float4*)x, (float4*)y, 1.0001f, n / 4); });
  CHECK(cudaGetLastError());
  double copyGBs = 2.0 * bytes / copy / 1e6;
  std::printf("%-40s %10s %10s %8s\n", "CUDA C++ peer", "ms", "GB/s", "vs copy");
  std::printf("%-40s %10.3f %10.1f %8s\n", "cudaMemcpy device to device", copy, copyGBs, "1.00");
  auto row = [&](const char* name, float ms, double moved) {
    std::printf("%-40s %10.3f %10.1f %8.2f\n", name, ms, moved / ms / 1e6, moved / ms / 1e6 / copyGBs);
  };
  row("saxpy, 1 float per thread", s1, 3.0 * bytes);
  row("saxpy, float4 per thread", s4, 3.0 * bytes);
  for (int perSM : {16, 64}) {
    int g = 132 * perSM;
    float t = medianMs([&] { blockSum<<<g, 128>>>(x, out, n); });
    char name[64];
    std::snprintf(name, sizeof name, "block sum, %d blocks of 128", g);
    row(name, t, 1.0 * bytes);
  }
  CHECK(cudaGetLastError());
  return 0;
}
