// bench_overlap: the tensor-parallel "collective matmul" (tessera_index_launch_gathered, docs/abi.md
// 9.7) against NCCL's all_gather followed by cuBLAS, in one run on the same GPUs. One process per
// GPU (tessera-run -n 4 build/bin/bench_overlap). For each shape M x N x K (bf16, f32
// accumulation, bf16 out): X[M, K] is partitioned by rows over tp, each rank holds W[K, N/tp]
// and computes Y[M, N/tp] = all_gather(X) @ W, three ways:
//   overlapped  gemm_tc_bf16 (examples/gemm_tc.tessera) on each block of X as it arrives;
//   sequential  tessera_dtensor_all_gather, then gemm_tc_bf16 on the gathered X;
//   peer        ncclAllGather, then cublasGemmEx (libcublas loaded at run time).
// Times are medians of --iters event-timed runs after --warmup, the slowest rank's. Checks:
// overlapped and sequential Y equal bit for bit; Y against cuBLAS's within 2^-7 of |Y| + 2^-7.
// Options: --shapes M,N,K[;M,N,K...] (8192,8192,8192;16384,14336,4096), --iters N (10),
// --warmup N (3).
#include <algorithm>
#include <cmath>
#include <cstring>
#include <dlfcn.h>
#include <string>
#include <tessera/dist.hpp>
#include <vector>

#include "BenchUtil.h"
#include "gemm_tc.h"
#include "runtime/Backend.h"
#include "runtime/Device.h"
#include "runtime/dist/Peer.h"

namespace td = tessera::dist;

namespace {

// cuBLAS, resolved at run time (the benchmark must start where it is missing: it then says so).
struct Cublas {
  using Create = int (*)(void**);
  using SetStream = int (*)(void*, void*);
  using GemmEx = int (*)(void*, int, int, int, int, int, const void*, const void*, int, int, const void*, int, int,
                         const void*, void*, int, int, int, int);
  Create create = nullptr;
  SetStream setStream = nullptr;
  GemmEx gemmEx = nullptr;
  void* handle = nullptr;
  std::string why;
  bool load() {
    void* lib = nullptr;
    for (const char* name : {"libcublas.so.13", "libcublas.so.12", "libcublas.so"})
      if ((lib = dlopen(name, RTLD_NOW | RTLD_LOCAL))) break;
    if (!lib) {
      why = "no cuBLAS (libcublas.so not on LD_LIBRARY_PATH)";
      return false;
    }
    create = reinterpret_cast<Create>(dlsym(lib, "cublasCreate_v2"));
    setStream = reinterpret_cast<SetStream>(dlsym(lib, "cublasSetStream_v2"));
    gemmEx = reinterpret_cast<GemmEx>(dlsym(lib, "cublasGemmEx"));
    if (!create || !setStream || !gemmEx || create(&handle) != 0) {
      why = "no cuBLAS (cublasCreate or cublasGemmEx missing or failing)";
      return false;
    }
    return true;
  }
  // Row-major C[m, n] = A[m, k] @ B[k, n] in bf16 with f32 compute: column-major C^T = B^T A^T.
  int gemm(void* stream, int m, int n, int k, const void* A, const void* B, void* C) const {
    const float one = 1.f, zero = 0.f;
    constexpr int kOpN = 0, kR16BF = 14, kCompute32F = 68, kDefault = -1;
    setStream(handle, stream);
    return gemmEx(handle, kOpN, kOpN, n, m, k, &one, B, kR16BF, n, A, kR16BF, k, &zero, C, kR16BF, n, kCompute32F,
                  kDefault);
  }
};

struct Shape {
  int64_t M, N, K;
};

std::vector<Shape> parseShapes(const std::string& s) {
  std::vector<Shape> out;
  size_t at = 0;
  while (at < s.size()) {
    size_t end = s.find(';', at);
    std::string one = s.substr(at, end == std::string::npos ? std::string::npos : end - at);
    Shape sh{};
    if (std::sscanf(one.c_str(), "%ld,%ld,%ld", &sh.M, &sh.N, &sh.K) == 3) out.push_back(sh);
    at = end == std::string::npos ? s.size() : end + 1;
  }
  return out;
}

std::vector<uint16_t> randomBF16(uint64_t seed, size_t n) {
  std::vector<uint16_t> v(n);
  uint64_t x = seed * 0x9e3779b97f4a7c15ull + 1;
  for (size_t i = 0; i < n; ++i) {
    x ^= x << 13, x ^= x >> 7, x ^= x << 17;
    float f = float(int64_t(x % 2001) - 1000) / 1000.f;
    uint32_t b;
    std::memcpy(&b, &f, 4);
    v[i] = uint16_t((b + 0x7fff + ((b >> 16) & 1)) >> 16);
  }
  return v;
}

float fromBF16(uint16_t h) {
  uint32_t b = uint32_t(h) << 16;
  float f;
  std::memcpy(&f, &b, 4);
  return f;
}

// Median ms of `run` (enqueued on `stream`), the slowest rank's.
double medianMs(tessera_comm world, tessera_stream stream, int warmup, int iters, const std::function<void()>& run) {
  for (int i = 0; i < warmup; ++i) run();
  bench::check(tessera_stream_synchronize(stream), "warm-up");
  tessera_event a, b;
  bench::check(tessera_event_create(&a), "event");
  bench::check(tessera_event_create(&b), "event");
  std::vector<double> ms;
  for (int i = 0; i < iters; ++i) {
    bench::check(tessera_event_record(a, stream), "record");
    run();
    bench::check(tessera_event_record(b, stream), "record");
    bench::check(tessera_event_synchronize(b), "sync");
    float t = 0;
    bench::check(tessera_event_elapsed_ms(&t, a, b), "elapsed");
    ms.push_back(t);
  }
  tessera_event_destroy(a);
  tessera_event_destroy(b);
  double mine = bench::median(ms), worst = 0;
  void* d = nullptr;
  bench::check(tessera_malloc(&d, 8), "malloc");
  bench::check(tessera_memcpy(d, &mine, 8), "memcpy");
  tessera_tensor t;
  int64_t one = 1;
  tessera_tensor_init(&t, d, TESSERA_F64, 1, &one, 0);
  bench::check(tessera_all_reduce(world, &t, &t, TESSERA_REDUCE_MAX, nullptr), "max over ranks");
  bench::check(tessera_memcpy(&worst, d, 8), "memcpy");
  tessera_free(d);
  return worst;
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<Shape> shapes = parseShapes("8192,8192,8192;16384,14336,4096");
  int iters = 10, warmup = 3;
  for (int i = 1; i + 1 < argc; i += 2) {
    std::string k = argv[i];
    if (k == "--shapes")
      shapes = parseShapes(argv[i + 1]);
    else if (k == "--iters")
      iters = std::atoi(argv[i + 1]);
    else if (k == "--warmup")
      warmup = std::atoi(argv[i + 1]);
    else
      return std::printf("unknown option %s\n", argv[i]), 2;
  }
  tessera_dist_options opts{sizeof opts, TESSERA_DIST_NO_SIGNATURE_CHECKS, 0};
  bench::check(tessera_dist_init(&opts), "tessera_dist_init");
  tessera_comm world = nullptr;
  bench::check(tessera_dist_world(&world), "world");
  int32_t p = 1, r = 0;
  tessera_comm_size(world, &p);
  tessera_comm_rank(world, &r);
  Cublas blas;
  bool havePeer = blas.load();
  const tessera_kernel_desc* gemm = nullptr;
  static void* volatile keep = reinterpret_cast<void*>(&gemm_tc_gemm_tc_bf16);
  (void)keep;
  bench::check(tessera_find_kernel("gemm_tc", "gemm_tc_bf16", &gemm), "gemm_tc_bf16");
  tessera_stream stream = nullptr;
  bench::check(tessera_stream_create(&stream), "stream");
  if (r == 0)
    std::printf("bench_overlap: %s; device %s; tp=%d; peer %s + %s\n%-22s %12s %12s %12s %8s %10s\n",
                tessera_dist_describe(), tessera_device_name(), p, td::peerName(world),
                havePeer ? "cuBLAS" : blas.why.c_str(), "shape (M x N x K)", "overlap_ms", "sequential", "peer_ms",
                "speedup", "TFLOP/s");
  bool ok = true;
  for (const Shape& sh : shapes) {
    int64_t m = sh.M / p, Nl = sh.N / p;
    td::Mesh mesh;
    bench::check(td::Mesh::create({"tp"}, {p}, mesh).code(), "mesh");
    td::DTensor X, Xfull;
    bench::check(td::DTensor::create(mesh, "X", TESSERA_BF16, {sh.M, sh.K}, td::ShardSpec({"row"}, {"tp"}), X).code(),
                 "X");
    bench::check(td::DTensor::create(mesh, "Xfull", TESSERA_BF16, {sh.M, sh.K}, {}, Xfull).code(), "Xfull");
    std::vector<uint16_t> hx = randomBF16(1 + r, size_t(m * sh.K)), hw = randomBF16(100 + r, size_t(sh.K * Nl));
    bench::check(tessera_memcpy(X.local().data, hx.data(), hx.size() * 2), "upload X");
    void *w = nullptr, *y = nullptr, *y2 = nullptr, *y3 = nullptr, *xpeer = nullptr;
    size_t ybytes = size_t(sh.M * Nl) * 2;
    for (void** b : {&y, &y2, &y3}) bench::check(tessera_malloc(b, ybytes), "Y");
    bench::check(tessera_malloc(&w, hw.size() * 2), "W");
    bench::check(tessera_malloc(&xpeer, size_t(sh.M * sh.K) * 2), "X for the peer");
    bench::check(tessera_memcpy(w, hw.data(), hw.size() * 2), "upload W");
    tessera_tensor tw, ty, ty2;
    int64_t wshape[] = {sh.K, Nl}, yshape[] = {sh.M, Nl};
    tessera_tensor_init(&tw, w, TESSERA_BF16, 2, wshape, 0);
    tessera_tensor_init(&ty, y, TESSERA_BF16, 2, yshape, 0);
    tessera_tensor_init(&ty2, y2, TESSERA_BF16, 2, yshape, 0);
    tessera_dist_arg args[3] = {};
    args[0].kind = TESSERA_DIST_ARG_GATHER;
    args[0].dtensor = X.get();
    args[1].kind = TESSERA_DIST_ARG_PLAIN;
    args[1].arg = tessera_arg_tensor(&tw);
    args[2].kind = TESSERA_DIST_ARG_ROWS;
    args[2].arg = tessera_arg_tensor(&ty);
    tessera_launch_options lo{};
    lo.stream = stream;
    tessera_collective_options co{stream, 0, 0, "X"};
    auto overlapped = [&] {
      bench::check(tessera_index_launch_gathered(mesh.get(), "tp", gemm, &lo, args, 3), "overlapped");
    };
    auto sequential = [&] {
      bench::check(tessera_dtensor_all_gather(X.get(), Xfull.get(), &co), "all_gather");
      tessera_tensor xf = Xfull.local();
      tessera_arg a[] = {tessera_arg_tensor(&xf), tessera_arg_tensor(&tw), tessera_arg_tensor(&ty2)};
      bench::check(tessera_launch(gemm, &lo, a, 3), "gemm_tc_bf16");
    };
    void* native = nullptr;
    auto peer = [&] {
      bench::check(td::peerCollective(mesh.comm("tp").get(), td::PeerOp::AllGather, X.local().data, xpeer,
                                      size_t(m * sh.K), TESSERA_BF16, stream),
                   "ncclAllGather");
      if (blas.gemm(native, int(sh.M), int(Nl), int(sh.K), xpeer, w, y3) != 0)
        bench::check(TESSERA_ERROR_DRIVER, "cublasGemmEx");
    };
    tessera::rt::Backend* backend = nullptr;
    bench::check(tessera::rt::activeBackend(backend), "device");
    native = backend->nativeStream(stream);
    double tOver = medianMs(world, stream, warmup, iters, overlapped);
    double tSeq = medianMs(world, stream, warmup, iters, sequential);
    double tPeer = havePeer ? medianMs(world, stream, warmup, iters, peer) : 0;
    bench::check(tessera_stream_synchronize(stream), "synchronize");
    std::vector<uint16_t> a(size_t(sh.M * Nl)), b(a.size()), c(a.size());
    bench::check(tessera_memcpy(a.data(), y, ybytes), "download");
    bench::check(tessera_memcpy(b.data(), y2, ybytes), "download");
    bench::check(tessera_memcpy(c.data(), y3, ybytes), "download");
    size_t same = 0, close = 0;
    for (size_t i = 0; i < a.size(); ++i) {
      same += a[i] == b[i];
      double u = fromBF16(a[i]), v = fromBF16(c[i]);
      close += std::fabs(u - v) <= std::ldexp(std::fabs(v), -7) + std::ldexp(1.0, -7);
    }
    bool rowOk = same == a.size() && (!havePeer || close == a.size());
    ok = ok && rowOk;
    double flops = 2.0 * double(sh.M) * double(Nl) * double(sh.K);
    if (r == 0) {
      char name[64];
      std::snprintf(name, sizeof name, "%ld x %ld x %ld", long(sh.M), long(sh.N), long(sh.K));
      std::printf("%-22s %12.3f %12.3f %12.3f %8.3f %10.1f%s\n", name, tOver, tSeq, tPeer,
                  havePeer ? tPeer / tOver : 0.0, flops / (tOver * 1e-3) / 1e12, rowOk ? "" : "  FAIL: results differ");
      std::printf("csv,%ld,%ld,%ld,%d,%.4f,%.4f,%.4f\n", long(sh.M), long(sh.N), long(sh.K), p, tOver, tSeq, tPeer);
    }
    for (void* b : {w, y, y2, y3, xpeer}) tessera_free(b);
  }
  if (r == 0) std::printf("speedup = peer time / overlapped time; TFLOP/s per GPU, overlapped%s\n", ok ? "" : "; FAIL");
  tessera_stream_destroy(stream);
  tessera_dist_finalize();
  return ok ? 0 : 1;
}
