//===- Reduce.cu - The GPU side of deterministic reductions ---------------------------------===//
//
// One kernel per (dtype, operation): out[i] = op over ranks r of in[r][i], in the fixed order of
// ReduceOps.h, which the CPU ranks share. Grid-stride loops; each thread reduces 16 bytes per
// rank at a time when every pointer is 16-byte aligned, then a scalar tail. Built by nvcc into
// a fatbin that libtessera_dist embeds (runtime/dist/CMakeLists.txt) and loads with
// cuModuleLoadData.
//
//===----------------------------------------------------------------------------------------===//
#include "runtime/dist/ReduceOps.h"

#include <cstring>

using namespace tessera::dist::reduce;

namespace {

template <class C, int OpKind> __device__ void reduceKernel(const ReduceParams &P) {
  using S = typename C::Storage;
  constexpr int V = sizeof(S) >= 16 ? 1 : 16 / static_cast<int>(sizeof(S));
  uint64_t tid = uint64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  uint64_t stride = uint64_t(gridDim.x) * blockDim.x;
  uint64_t nvec = P.vectorized ? P.n / V : 0;
  for (uint64_t i = tid; i < nvec; i += stride) {
    auto load = [&](int r) {
      uint4 raw = *reinterpret_cast<const uint4 *>(static_cast<const S *>(P.in[r]) + i * V);
      S s[V];
      memcpy(s, &raw, 16);
      Lanes<C, V> l;
      for (int j = 0; j < V; ++j)
        l.v[j] = C::load(s[j]);
      return l;
    };
    S out[V];
    reduceLanes<C, OpKind, V>(P.p, P.order, load, out);
    uint4 raw;
    memcpy(&raw, out, 16);
    *reinterpret_cast<uint4 *>(static_cast<S *>(P.out) + i * V) = raw;
  }
  for (uint64_t i = nvec * V + tid; i < P.n; i += stride) {
    auto load = [&](int r) {
      Lanes<C, 1> l;
      l.v[0] = C::load(static_cast<const S *>(P.in[r])[i]);
      return l;
    };
    reduceLanes<C, OpKind, 1>(P.p, P.order, load, static_cast<S *>(P.out) + i);
  }
}

} // namespace

// Which operations a dtype takes follows its Kind (ReduceOps.h); the host never launches the
// others (Reducible.cpp refuses them first), so only those are instantiated.
#define TESSERA_REDUCE_TYPE(dtype, suffix, codec)                                                  \
  extern "C" __global__ void tessera_reduce_##suffix##_max(ReduceParams p) { reduceKernel<codec, kMax>(p); } \
  extern "C" __global__ void tessera_reduce_##suffix##_min(ReduceParams p) { reduceKernel<codec, kMin>(p); } \
  extern "C" __global__ void tessera_reduce_##suffix##_sum(ReduceParams p) {                       \
    if constexpr (codec::kind != Kind::Bool)                                                       \
      reduceKernel<codec, kSum>(p);                                                                \
  }                                                                                                \
  extern "C" __global__ void tessera_reduce_##suffix##_avg(ReduceParams p) {                       \
    if constexpr (codec::kind == Kind::Float)                                                      \
      reduceKernel<codec, kAvg>(p);                                                                \
  }
#include "runtime/dist/ReduceTypes.def"
