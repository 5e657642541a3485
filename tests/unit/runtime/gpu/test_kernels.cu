// GPU kernels for runtime_unittests, written by hand in the launch ABI that tesserac's
// codegen follows (docs/abi.md): each tensor parameter is a tessera_kernel_tensor passed by
// value, scalars by value, then the int64 launch_tiles. Built into a fatbin by nvcc.
#include <stdint.h>

struct KernelTensor {
  void *data;
  int64_t shape[8];
  int64_t strides[8];
};

extern "C" __global__ void saxpy(float alpha, KernelTensor x, KernelTensor y, int64_t tiles) {
  int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x;
  if (i >= tiles) // the last hardware group of an ungrouped launch is partial
    return;
  float *yp = (float *)y.data;
  const float *xp = (const float *)x.data;
  yp[i * y.strides[0]] = alpha * xp[i * x.strides[0]] + yp[i * y.strides[0]];
}

// tile[(128,)] shared(512): each group sums its chunk with a fixed shared-memory tree.
extern "C" __global__ void group_sum(KernelTensor x, KernelTensor out, int64_t tiles) {
  extern __shared__ float smem[];
  const float *xp = (const float *)x.data;
  int64_t n = x.shape[0], groups = gridDim.x, g = blockIdx.x;
  int64_t chunk = (n + groups - 1) / groups, begin = g * chunk;
  int64_t end = begin + chunk < n ? begin + chunk : n;
  unsigned i = threadIdx.x;
  float acc = 0.f;
  for (int64_t k = begin + i; k < end; k += blockDim.x)
    acc += xp[k];
  smem[i] = acc;
  __syncthreads();
  for (unsigned s = blockDim.x / 2; s > 0; s /= 2) {
    if (i < s)
      smem[i] += smem[i + s];
    __syncthreads();
  }
  if (i == 0)
    ((float *)out.data)[g] = smem[0];
}

// Uses 64 KiB of dynamic shared memory: needs the opt-in attribute above 48 KiB.
extern "C" __global__ void big_shared(KernelTensor out, int64_t tiles) {
  extern __shared__ float s[];
  const int n = 64 * 1024 / 4;
  for (int j = threadIdx.x; j < n; j += blockDim.x)
    s[j] = (float)j;
  __syncthreads();
  if (threadIdx.x == 0) {
    double acc = 0;
    for (int j = 0; j < n; ++j)
      acc += s[j];
    ((double *)out.data)[blockIdx.x] = acc;
  }
}

// Writes through a wild pointer: an illegal address fault.
extern "C" __global__ void fault(KernelTensor y, int64_t tiles) {
  *(volatile float *)(uintptr_t)0x10 = 1.f;
}
