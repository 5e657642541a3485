// The tessera_cpu_ctx fields codegen relies on: 2-D/3-D tile and group ids, linear ids, the
// ungrouped default's partial last group, and per-group entries (TESSERA_KERNEL_CPU_PER_GROUP).
#include <doctest/doctest.h>

#include "RuntimeTestUtil.h"

using namespace rttest;

namespace {

uint32_t* u32(void* arg) { return static_cast<uint32_t*>(static_cast<tessera_kernel_tensor*>(arg)->data); }

// out[global_linear] = (group_id.x, group_id.y, tile_id.x, tile_id.y) packed in bytes, plus a
// check that the linear ids agree with the 3-d ones.
void idsCpu(void** args, const tessera_cpu_ctx* ctx) {
  uint32_t lin = ctx->tile_id[0] + ctx->group_shape[0] * (ctx->tile_id[1] + ctx->group_shape[1] * ctx->tile_id[2]);
  uint64_t glin = ctx->group_id[0] +
                  uint64_t(ctx->grid_shape[0]) * (ctx->group_id[1] + uint64_t(ctx->grid_shape[1]) * ctx->group_id[2]);
  bool ok = lin == ctx->tile_linear && glin == ctx->group_linear &&
            ctx->global_linear == ctx->group_linear * ctx->group_tiles + ctx->tile_linear &&
            ctx->launch_tiles == ctx->grid_groups * ctx->group_tiles;
  u32(args[0])[ctx->global_linear] =
      ok ? (ctx->group_id[0] | ctx->group_id[1] << 8 | ctx->tile_id[0] << 16 | ctx->tile_id[1] << 24) : 0xFFFFFFFFu;
}

// Ungrouped: records launch_tiles and marks each element once.
void markCpu(void** args, const tessera_cpu_ctx* ctx) {
  uint32_t* out = u32(args[0]);
  out[ctx->global_linear] += 1 + static_cast<uint32_t>(ctx->launch_tiles != 1000);
}

// Per-group entry: loops over its tiles itself.
void perGroupCpu(void** args, const tessera_cpu_ctx* ctx) {
  uint32_t* out = u32(args[0]);
  uint64_t first = ctx->global_linear;
  uint64_t count = std::min<uint64_t>(ctx->group_tiles, ctx->launch_tiles - first);
  for (uint64_t t = 0; t < count; ++t) out[first + t] = static_cast<uint32_t>(ctx->group_linear * 1000 + t);
}

}  // namespace

TEST_CASE("cpu ctx: 2-d groups and grids give consistent ids") {
  KernelSpec k;
  k.name = "ids";
  k.cpu = idsCpu;
  k.params = {tensorParam("out", TESSERA_U32, {any()}, true)};
  k.flags |= TESSERA_KERNEL_GROUPED;
  k.group[0] = 8;
  k.group[1] = 4;
  TestModule m("ctx_ids", {k});
  REQUIRE(m.status == TESSERA_SUCCESS);
  std::vector<uint32_t> out(3 * 2 * 32, 0xAAAAAAAAu);
  tessera_tensor ot = tessera::tensor(out.data(), {static_cast<int64_t>(out.size())});
  tessera_launch_options o{};
  o.grid[0] = 3;
  o.grid[1] = 2;
  REQUIRE(cpuLaunch(m.kernel(), &o, {tessera::arg(ot)}) == TESSERA_SUCCESS);
  int bad = 0;
  for (uint32_t gy = 0; gy < 2; ++gy)
    for (uint32_t gx = 0; gx < 3; ++gx)
      for (uint32_t ty = 0; ty < 4; ++ty)
        for (uint32_t tx = 0; tx < 8; ++tx) {
          uint64_t global = (gy * 3 + gx) * 32 + ty * 8 + tx;
          bad += out[global] != (gx | gy << 8 | tx << 16 | ty << 24);
        }
  CHECK(bad == 0);
}

TEST_CASE("cpu ctx: ungrouped launches run exactly one tile per element") {
  KernelSpec k;
  k.name = "mark";
  k.cpu = markCpu;
  k.params = {tensorParam("out", TESSERA_U32, {sym(0)}, true)};
  k.symbols = {"n"};
  TestModule m("ctx_mark", {k});
  REQUIRE(m.status == TESSERA_SUCCESS);
  std::vector<uint32_t> out(1000 + 24, 0);  // 24 guard elements past the view
  tessera_tensor ot = tessera::tensor(out.data(), {1000});
  REQUIRE(cpuLaunch(m.kernel(), nullptr, {tessera::arg(ot)}) == TESSERA_SUCCESS);
  int bad = 0;
  for (size_t i = 0; i < out.size(); ++i) bad += out[i] != (i < 1000 ? 1u : 0u);
  CHECK(bad == 0);
}

TEST_CASE("cpu ctx: per-group entries of grouped kernels are called once per group") {
  KernelSpec k;
  k.name = "per_group";
  k.cpu = perGroupCpu;
  k.params = {tensorParam("out", TESSERA_U32, {sym(0)}, true)};
  k.symbols = {"n"};
  k.flags |= TESSERA_KERNEL_CPU_PER_GROUP | TESSERA_KERNEL_GROUPED;
  k.group[0] = 256;
  TestModule m("ctx_per_group", {k});
  REQUIRE(m.status == TESSERA_SUCCESS);
  std::vector<uint32_t> out(768, 0xFFFFFFFFu);
  tessera_tensor ot = tessera::tensor(out.data(), {768});
  tessera_launch_options opts{};
  opts.grid[0] = 3;
  opts.grid[1] = opts.grid[2] = 1;
  REQUIRE(cpuLaunch(m.kernel(), &opts, {tessera::arg(ot)}) == TESSERA_SUCCESS);
  int bad = 0;
  for (uint32_t i = 0; i < 768; ++i)  // three groups of 256 tiles
    bad += out[i] != (i / 256) * 1000 + i % 256;
  CHECK(bad == 0);
}

TEST_CASE("cpu ctx: per-group entries of ungrouped kernels run whole ranges of tiles") {
  KernelSpec k;
  k.name = "per_range";
  k.cpu = perGroupCpu;
  k.params = {tensorParam("out", TESSERA_U32, {sym(0)}, true)};
  k.symbols = {"n"};
  k.flags |= TESSERA_KERNEL_CPU_PER_GROUP;
  TestModule m("ctx_per_range", {k});
  REQUIRE(m.status == TESSERA_SUCCESS);
  for (uint32_t threads : {1u, 2u, 5u}) {
    REQUIRE(tessera_cpu_set_threads(threads) == TESSERA_SUCCESS);
    std::vector<uint32_t> out(600, 0xFFFFFFFFu);
    tessera_tensor ot = tessera::tensor(out.data(), {600});
    REQUIRE(cpuLaunch(m.kernel(), nullptr, {tessera::arg(ot)}) == TESSERA_SUCCESS);
    // Every tile is run exactly once, in contiguous ranges: out[i] - i % range is the same
    // across a range, and every element was written.
    int unwritten = 0;
    for (uint32_t i = 0; i < 600; ++i) unwritten += out[i] == 0xFFFFFFFFu;
    CHECK(unwritten == 0);
    int calls = 0;
    for (uint32_t i = 0; i < 600; ++i) calls += out[i] % 1000 == 0;
    CHECK(calls >= 1);
    CHECK(calls <= static_cast<int>(threads));
  }
  REQUIRE(tessera_cpu_set_threads(0) == TESSERA_SUCCESS);
}
