// The CPU executor with hand-written kernels in the CPU entry ABI (what codegen will emit):
// one tile per element, shared memory with barriers, warp shuffles and votes, cooperative
// partitions; each checked against a reference on fresh random inputs, every element, and for
// identical bits across runs and thread counts.
#include <cmath>
#include <cstring>
#include <doctest/doctest.h>
#include <thread>

#include "RuntimeTestUtil.h"

using namespace rttest;

namespace {

float* f32(void* arg) { return static_cast<float*>(static_cast<tessera_kernel_tensor*>(arg)->data); }
int64_t stride0(void* arg) { return static_cast<tessera_kernel_tensor*>(arg)->strides[0]; }
int64_t extent0(void* arg) { return static_cast<tessera_kernel_tensor*>(arg)->shape[0]; }

float saxpyOp(float a, float x, float y) { return a * x + y; }

// def saxpy(alpha: f32, x: f32[n], y: mut f32[n]): i = tile.linear_id(); y[i] = alpha*x[i] + y[i]
void saxpyCpu(void** args, const tessera_cpu_ctx* ctx) {
  float alpha = *static_cast<float*>(args[0]);
  uint64_t i = ctx->global_linear;  // tile.linear_id() of an ungrouped kernel
  float *x = f32(args[1]), *y = f32(args[2]);
  int64_t sx = stride0(args[1]), sy = stride0(args[2]);
  y[i * sy] = saxpyOp(alpha, x[i * sx], y[i * sy]);
}

// @kernel tile[(128,)] shared(512)
// def group_sum(x: f32[n], out: mut f32[grid_groups]): each group sums its chunk of x with a
// fixed shared-memory tree and barriers (also inside the loop).
constexpr uint32_t kGroup = 128;
void groupSumCpu(void** args, const tessera_cpu_ctx* ctx) {
  const float* x = f32(args[0]);
  float* out = f32(args[1]);
  int64_t n = extent0(args[0]);
  uint64_t groups = ctx->grid_groups, g = ctx->group_linear;
  int64_t chunk = (n + groups - 1) / groups, begin = g * chunk, end = std::min<int64_t>(n, begin + chunk);
  float* smem = static_cast<float*>(ctx->shared);
  uint32_t i = ctx->tile_linear;
  float acc = 0.f;
  for (int64_t k = begin + i; k < end; k += ctx->group_tiles) acc += x[k];
  smem[i] = acc;
  ctx->ops->barrier(ctx);
  for (uint32_t s = ctx->group_tiles / 2; s > 0; s /= 2) {
    if (i < s) smem[i] += smem[i + s];
    ctx->ops->barrier(ctx);
  }
  if (i == 0) out[g] = smem[0];
}

// def warp_reduce_sum(X: f32[n], Out: mut f32[n/32]) with tile.warp_shuffle_down, tile[(128,)].
void warpReduceCpu(void** args, const tessera_cpu_ctx* ctx) {
  uint64_t tid = ctx->global_linear;
  float val = f32(args[0])[tid];
  for (int offset = 16; offset > 0; offset /= 2) {
    uint32_t bits;
    std::memcpy(&bits, &val, 4);
    uint64_t got = ctx->ops->warp_shuffle(ctx, bits, TESSERA_SHFL_DOWN, offset, 32);
    uint32_t got32 = static_cast<uint32_t>(got);
    float other;
    std::memcpy(&other, &got32, 4);
    val += other;
  }
  if (ctx->tile_linear % 32 == 0) f32(args[1])[tid / 32] = val;
}

// Votes over (x > 0) per warp, in a group of 48 tiles (a full and a partial warp).
void voteCpu(void** args, const tessera_cpu_ctx* ctx) {
  uint64_t tid = ctx->global_linear;
  int pred = f32(args[0])[tid] > 0.f;
  uint32_t ballot = ctx->ops->warp_vote(ctx, TESSERA_VOTE_BALLOT, pred);
  uint32_t all = ctx->ops->warp_vote(ctx, TESSERA_VOTE_ALL, pred);
  uint32_t anyv = ctx->ops->warp_vote(ctx, TESSERA_VOTE_ANY, pred);
  uint32_t lane = ctx->tile_linear % 32, warp = ctx->tile_linear / 32;
  uint32_t xorPartner = static_cast<uint32_t>(ctx->ops->warp_shuffle(ctx, lane, TESSERA_SHFL_XOR, 1, 32));
  auto* out = static_cast<uint32_t*>(static_cast<tessera_kernel_tensor*>(args[1])->data);
  out[tid] = xorPartner;
  if (lane == 0) {
    auto* votes = static_cast<uint32_t*>(static_cast<tessera_kernel_tensor*>(args[2])->data);
    uint64_t w = ctx->group_linear * 2 + warp;
    votes[w * 3 + 0] = ballot;
    votes[w * 3 + 1] = all;
    votes[w * 3 + 2] = anyv;
  }
}

// cooperative_group(size=64): write, sync the partition, read the neighbour's slot.
void coopCpu(void** args, const tessera_cpu_ctx* ctx) {
  auto* smem = static_cast<uint32_t*>(ctx->shared);
  uint32_t i = ctx->tile_linear, base = i / 64 * 64;
  smem[i] = i * 7 + static_cast<uint32_t>(ctx->group_linear);
  ctx->ops->partition_sync(ctx, 64);
  auto* out = static_cast<uint32_t*>(static_cast<tessera_kernel_tensor*>(args[0])->data);
  out[ctx->global_linear] = smem[base + (i - base + 1) % 64];
}

// Faults in groups 3 and 5; the launch reports group 3 whatever the thread count.
void faultCpu(void** args, const tessera_cpu_ctx* ctx) {
  if ((ctx->group_linear == 3 || ctx->group_linear == 5) && ctx->tile_linear == 1) {
    ctx->ops->fault(ctx, ctx->group_linear == 3 ? "index 99 out of bounds for y[4]" : "other");
    return;
  }
  f32(args[0])[ctx->global_linear] = 1.f;
}

// Tile 0 waits at the group barrier, the rest at a warp sync: a deadlock the runtime reports.
void deadlockCpu(void**, const tessera_cpu_ctx* ctx) {
  if (ctx->tile_linear == 0)
    ctx->ops->barrier(ctx);
  else
    ctx->ops->partition_sync(ctx, 32);
}

// Exited tiles do not count at a barrier (CUDA semantics): half the group returns early.
void earlyExitCpu(void** args, const tessera_cpu_ctx* ctx) {
  auto* smem = static_cast<float*>(ctx->shared);
  if (ctx->tile_linear >= 64) return;
  smem[ctx->tile_linear] = 1.f;
  ctx->ops->barrier(ctx);
  if (ctx->tile_linear == 0) {
    float s = 0;
    for (int k = 0; k < 64; ++k) s += smem[k];
    f32(args[0])[ctx->group_linear] = s;
  }
}

KernelSpec spec(const char* name, tessera_cpu_fn fn, std::vector<ParamSpec> params, std::vector<std::string> symbols,
                uint32_t group = 0, uint64_t shared = 0, int32_t gridSymbol = -1) {
  KernelSpec k;
  k.name = name;
  k.cpu = fn;
  k.params = std::move(params);
  k.symbols = std::move(symbols);
  k.gridSymbol = gridSymbol;
  k.shared = shared;
  if (group) {
    k.flags |= TESSERA_KERNEL_GROUPED;
    k.group[0] = group;
  }
  return k;
}

const std::vector<tessera_expr_op> kNOver32 = {
    {TESSERA_EXPR_SYMBOL, 0, 0}, {TESSERA_EXPR_CONST, 0, 32}, {TESSERA_EXPR_DIV, 0, 0}};

struct Kernels {
  TestModule m{"cpu_exec",
               {spec("saxpy", saxpyCpu,
                     {scalarParam("alpha", TESSERA_F32), tensorParam("x", TESSERA_F32, {sym(0)}),
                      tensorParam("y", TESSERA_F32, {sym(0)}, true)},
                     {"n"}),
                spec("group_sum", groupSumCpu,
                     {tensorParam("x", TESSERA_F32, {sym(0)}), tensorParam("out", TESSERA_F32, {sym(1)}, true)},
                     {"n", "grid_groups"}, kGroup, kGroup * 4, 1),
                spec("warp_reduce_sum", warpReduceCpu,
                     {tensorParam("X", TESSERA_F32, {sym(0)}), tensorParam("Out", TESSERA_F32, {expr(kNOver32)}, true)},
                     {"n"}, 128),
                spec("votes", voteCpu,
                     {tensorParam("x", TESSERA_F32, {sym(0)}), tensorParam("xor", TESSERA_U32, {sym(0)}, true),
                      tensorParam("votes", TESSERA_U32, {any()}, true)},
                     {"n"}, 48),
                spec("coop", coopCpu, {tensorParam("out", TESSERA_U32, {any()}, true)}, {}, 128, 128 * 4),
                spec("faulty", faultCpu, {tensorParam("y", TESSERA_F32, {any()}, true)}, {}, 4),
                spec("deadlock", deadlockCpu, {tensorParam("y", TESSERA_F32, {any()}, true)}, {}, 64),
                spec("early_exit", earlyExitCpu, {tensorParam("out", TESSERA_F32, {sym(0)}, true)}, {"grid_groups"},
                     128, 512, 0)}};
  Kernels() {
    for (uint32_t i = 1; i < 8; ++i)
      if (i != 5) m.mutableKernel(i)->flags |= TESSERA_KERNEL_CPU_SYNC;
    REQUIRE(m.status == TESSERA_SUCCESS);
  }
  ~Kernels() { tessera_cpu_set_threads(0); }
};

std::vector<float> runGroupSum(const Kernels& k, const std::vector<float>& x, uint32_t groups) {
  std::vector<float> out(groups, -1.f);
  tessera_tensor xt = tessera::tensor(x.data(), {static_cast<int64_t>(x.size())});
  tessera_tensor ot = tessera::tensor(out.data(), {groups});
  REQUIRE(cpuLaunch(k.m.kernel(1), nullptr, {tessera::arg(xt), tessera::arg(ot)}) == TESSERA_SUCCESS);
  return out;
}

}  // namespace

TEST_CASE("cpu: saxpy, one tile per element, strided input, every element") {
  Kernels k;
  uint64_t seed = freshSeed();
  INFO("seed ", seed);
  const int64_t n = 1000;  // not a multiple of the runtime's 256-tile groups
  std::vector<float> xs = randomFloats(3 * n, seed), y = randomFloats(n, seed + 1), ref = y;
  float alpha = randomFloats(1, seed + 2)[0];
  tessera_tensor xt = tessera::tensor(xs.data(), {n});
  xt.strides[0] = 3;  // every third element
  tessera_tensor yt = tessera::tensor(y.data(), {n});
  REQUIRE(cpuLaunch(k.m.kernel(0), nullptr, {tessera::scalar(alpha), tessera::arg(xt), tessera::arg(yt)}) ==
          TESSERA_SUCCESS);
  int bad = 0;
  for (int64_t i = 0; i < n; ++i) bad += y[i] != saxpyOp(alpha, xs[3 * i], ref[i]);
  CHECK(bad == 0);
}

TEST_CASE("cpu: group_sum with shared memory and barriers, against a double reference") {
  Kernels k;
  uint64_t seed = freshSeed();
  INFO("seed ", seed);
  const uint32_t groups = 37;
  std::vector<float> x = randomFloats(100003, seed);
  std::vector<float> out = runGroupSum(k, x, groups);
  int64_t n = x.size(), chunk = (n + groups - 1) / groups;
  for (uint32_t g = 0; g < groups; ++g) {
    double ref = 0, mag = 0;
    for (int64_t i = g * chunk; i < std::min<int64_t>(n, (g + 1) * chunk); ++i) {
      ref += x[i];
      mag += std::fabs(x[i]);
    }
    CHECK_MESSAGE(std::fabs(out[g] - ref) <= 1e-5 * mag, "group ", g, ": ", out[g], " vs ", ref);
  }
}

TEST_CASE("cpu: results are identical bits across runs and thread counts 1, 2, N") {
  Kernels k;
  uint64_t seed = freshSeed();
  INFO("seed ", seed);
  std::vector<float> x = randomFloats(1 << 18, seed);
  unsigned n = std::max(4u, std::thread::hardware_concurrency());
  std::vector<float> first;
  for (unsigned threads : {1u, 2u, n, 1u, 3u}) {
    REQUIRE(tessera_cpu_set_threads(threads) == TESSERA_SUCCESS);
    CHECK(tessera_cpu_threads() == threads);
    std::vector<float> out = runGroupSum(k, x, 61);
    if (first.empty()) first = out;
    CHECK_MESSAGE(std::memcmp(first.data(), out.data(), out.size() * 4) == 0, "threads ", threads);
  }
}

TEST_CASE("cpu: warp shuffle reduction matches the same shuffle tree bit for bit") {
  Kernels k;
  uint64_t seed = freshSeed();
  INFO("seed ", seed);
  const int64_t n = 128 * 9;
  std::vector<float> x = randomFloats(n, seed), out(n / 32, 0.f);
  tessera_tensor xt = tessera::tensor(x.data(), {n}), ot = tessera::tensor(out.data(), {n / 32});
  tessera_launch_options o = gridOptions(n / 128);
  REQUIRE(cpuLaunch(k.m.kernel(2), &o, {tessera::arg(xt), tessera::arg(ot)}) == TESSERA_SUCCESS);
  int bad = 0;
  for (int64_t w = 0; w < n / 32; ++w) {
    float v[32];
    for (int l = 0; l < 32; ++l) v[l] = x[w * 32 + l];
    for (int off = 16; off > 0; off /= 2) {
      float nv[32];
      for (int l = 0; l < 32; ++l) nv[l] = v[l] + (l + off < 32 ? v[l + off] : v[l]);  // out of range: own value
      std::memcpy(v, nv, sizeof v);
    }
    bad += out[w] != v[0];
  }
  CHECK(bad == 0);
  // The Out extent is n/32: a mismatch is caught before launch.
  tessera_tensor wrong = tessera::tensor(out.data(), {n / 32 - 1});
  CHECK(cpuLaunch(k.m.kernel(2), &o, {tessera::arg(xt), tessera::arg(wrong)}) == TESSERA_ERROR_SHAPE_MISMATCH);
  CHECK(std::string(tessera_last_error_message()) ==
        "kernel 'warp_reduce_sum': parameter 'Out': dimension 0 has size 35, expected n/32 = 36");
}

TEST_CASE("cpu: warp votes and xor shuffles over a full and a partial warp") {
  Kernels k;
  uint64_t seed = freshSeed();
  INFO("seed ", seed);
  const uint32_t groups = 5, n = groups * 48;
  std::vector<float> x = randomFloats(n, seed);
  for (uint32_t i = 0; i < 16; ++i)  // group 0's second warp: all positive
    x[32 + i] = 1.f + i;
  std::vector<uint32_t> xr(n), votes(groups * 2 * 3);
  tessera_tensor xt = tessera::tensor(x.data(), {n}), rt = tessera::tensor(xr.data(), {n}),
                 vt = tessera::tensor(votes.data(), {static_cast<int64_t>(votes.size())});
  tessera_launch_options o = gridOptions(groups);
  REQUIRE(cpuLaunch(k.m.kernel(3), &o, {tessera::arg(xt), tessera::arg(rt), tessera::arg(vt)}) == TESSERA_SUCCESS);
  for (uint32_t g = 0; g < groups; ++g)
    for (uint32_t w = 0; w < 2; ++w) {
      uint32_t lanes = w == 0 ? 32 : 16, ballot = 0;
      for (uint32_t l = 0; l < lanes; ++l) {
        ballot |= uint32_t(x[g * 48 + w * 32 + l] > 0.f) << l;
        CHECK(xr[g * 48 + w * 32 + l] == (l ^ 1u));
      }
      uint32_t full = lanes == 32 ? ~0u : (1u << lanes) - 1;
      const uint32_t* v = &votes[(g * 2 + w) * 3];
      CHECK(v[0] == ballot);
      CHECK(v[1] == uint32_t(ballot == full));
      CHECK(v[2] == uint32_t(ballot != 0));
    }
  CHECK(votes[1 * 3 + 1] == 1u);  // the all-positive partial warp votes ALL
}

TEST_CASE("cpu: cooperative group partition sync of 64 tiles") {
  Kernels k;
  const uint32_t groups = 6, n = groups * 128;
  std::vector<uint32_t> out(n, 0);
  tessera_tensor ot = tessera::tensor(out.data(), {n});
  tessera_launch_options o = gridOptions(groups);
  REQUIRE(cpuLaunch(k.m.kernel(4), &o, {tessera::arg(ot)}) == TESSERA_SUCCESS);
  int bad = 0;
  for (uint32_t g = 0; g < groups; ++g)
    for (uint32_t i = 0; i < 128; ++i) {
      uint32_t base = i / 64 * 64, j = base + (i - base + 1) % 64;
      bad += out[g * 128 + i] != j * 7 + g;
    }
  CHECK(bad == 0);
}

TEST_CASE("cpu: a fault reports the lowest faulting group for any thread count") {
  Kernels k;
  for (unsigned threads : {1u, 2u, 8u}) {
    REQUIRE(tessera_cpu_set_threads(threads) == TESSERA_SUCCESS);
    std::vector<float> y(8 * 4);
    tessera_tensor yt = tessera::tensor(y.data(), {32});
    tessera_launch_options o = gridOptions(8);
    CHECK(cpuLaunch(k.m.kernel(5), &o, {tessera::arg(yt)}) == TESSERA_ERROR_KERNEL_FAULT);
    CHECK(std::string(tessera_last_error_message()) ==
          "kernel 'faulty': group 3 faulted on the CPU: index 99 out of bounds for y[4]");
  }
}

TEST_CASE("cpu: mismatched barriers are reported as a deadlock, not a hang") {
  Kernels k;
  std::vector<float> y(64);
  tessera_tensor yt = tessera::tensor(y.data(), {64});
  tessera_launch_options o = gridOptions(2);
  CHECK(cpuLaunch(k.m.kernel(6), &o, {tessera::arg(yt)}) == TESSERA_ERROR_KERNEL_FAULT);
  CHECK(std::string(tessera_last_error_message()) ==
        "kernel 'deadlock': group 0 faulted on the CPU: barrier deadlock: tile 0 waits at a barrier "
        "of 64 tiles that the other tiles never reach");
  // The executor recovers: the next launch on the same threads works.
  std::vector<float> x = randomFloats(4096, 7);
  std::vector<float> out = runGroupSum(k, x, 3);
  CHECK(out[0] != -1.f);
}

TEST_CASE("cpu: tiles that exit do not count at a barrier") {
  Kernels k;
  std::vector<float> out(3, 0.f);
  tessera_tensor ot = tessera::tensor(out.data(), {3});
  REQUIRE(cpuLaunch(k.m.kernel(7), nullptr, {tessera::arg(ot)}) == TESSERA_SUCCESS);
  CHECK(out[0] == 64.f);
  CHECK(out[2] == 64.f);
}

TEST_CASE("cpu: a barrier in a kernel not marked CPU_SYNC faults instead of crashing") {
  Kernels k;
  tessera_kernel_desc* d = k.m.mutableKernel(7);
  d->flags &= ~TESSERA_KERNEL_CPU_SYNC;
  std::vector<float> out(1, 0.f);
  tessera_tensor ot = tessera::tensor(out.data(), {1});
  CHECK(cpuLaunch(d, nullptr, {tessera::arg(ot)}) == TESSERA_ERROR_KERNEL_FAULT);
  CHECK(std::string(tessera_last_error_message()) ==
        "kernel 'early_exit': group 0 faulted on the CPU: kernel uses a barrier or warp operation "
        "but its descriptor lacks TESSERA_KERNEL_CPU_SYNC");
}

TEST_CASE("cpu: launches from several host threads at once are each correct") {
  Kernels k;
  uint64_t seed = freshSeed();
  INFO("seed ", seed);
  const int64_t n = 5000;
  std::vector<std::vector<float>> xs, ys, refs;
  for (int t = 0; t < 4; ++t) {
    xs.push_back(randomFloats(n, seed + 2 * t));
    ys.push_back(randomFloats(n, seed + 2 * t + 1));
    refs.push_back(ys.back());
  }
  std::vector<std::thread> threads;
  std::vector<int> failures(4, 0);
  for (int t = 0; t < 4; ++t)
    threads.emplace_back([&, t] {
      tessera_tensor xt = tessera::tensor(xs[t].data(), {n}), yt = tessera::tensor(ys[t].data(), {n});
      for (int rep = 0; rep < 10; ++rep)
        failures[t] += cpuLaunch(k.m.kernel(0), nullptr, {tessera::scalar(0.5f), tessera::arg(xt), tessera::arg(yt)}) !=
                       TESSERA_SUCCESS;
      // group_sum on this thread too: fibers on the caller's runner. (No doctest assertions
      // off the main thread.)
      std::vector<float> out(7, -1.f);
      tessera_tensor ot = tessera::tensor(out.data(), {7});
      failures[t] += cpuLaunch(k.m.kernel(1), nullptr, {tessera::arg(xt), tessera::arg(ot)}) != TESSERA_SUCCESS;
      failures[t] += out[6] == -1.f;
    });
  for (std::thread& th : threads) th.join();
  for (int t = 0; t < 4; ++t) {
    CHECK(failures[t] == 0);
    int bad = 0;
    for (int64_t i = 0; i < n; ++i) {
      float r = refs[t][i];
      for (int rep = 0; rep < 10; ++rep) r = saxpyOp(0.5f, xs[t][i], r);
      bad += ys[t][i] != r;
    }
    CHECK(bad == 0);
  }
}
