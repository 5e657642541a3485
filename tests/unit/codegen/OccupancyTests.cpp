// Occupancy from the architecture limits, against hand-computed cases of the CUDA occupancy
// calculator's rules, and the PTX instruction counts of --resource-usage.
#include <doctest/doctest.h>

#include "codegen/target/CubinInfo.h"
#include "codegen/target/Occupancy.h"

using namespace tessera::codegen;

TEST_CASE("occupancy: full when nothing limits it") {
  const ArchLimits* h100 = archLimits(90);
  REQUIRE(h100);
  Occupancy o = computeOccupancy(*h100, 256, 32, 0);
  CHECK(o.groupsPerSM == 8);
  CHECK(o.warpsPerSM == 64);
  CHECK(o.fraction == doctest::Approx(1.0));
  CHECK(std::string(o.limitedBy) == "warps");
}

TEST_CASE("occupancy: registers are allocated per warp in 256s over 4 sub-partitions") {
  // 255 registers: 8160 per warp -> 8192; 16384 per sub-partition hold 2 warps, 8 per SM; groups
  // of 4 warps: 2.
  Occupancy o = computeOccupancy(*archLimits(80), 128, 255, 0);
  CHECK(o.groupsPerSM == 2);
  CHECK(o.warpsPerSM == 8);
  CHECK(std::string(o.limitedBy) == "registers");
  // 40 registers -> 1280 per warp: 12 warps per sub-partition, 48 per SM, 6 groups of 8 warps.
  o = computeOccupancy(*archLimits(90), 256, 40, 0);
  CHECK(o.groupsPerSM == 6);
  CHECK(std::string(o.limitedBy) == "registers");
  // More than 255 registers cannot launch.
  CHECK(computeOccupancy(*archLimits(90), 32, 256, 0).groupsPerSM == 0);
}

TEST_CASE("occupancy: shared memory counts the reserved KiB once") {
  const ArchLimits* h100 = archLimits(90);
  // 100 KiB + 1 KiB reserved per group: 2 groups in 228 KiB.
  Occupancy o = computeOccupancy(*h100, 128, 16, 100 * 1024);
  CHECK(o.groupsPerSM == 2);
  CHECK(std::string(o.limitedBy) == "shared memory");
  // 113 KiB + 1 KiB: exactly 2 groups; 1 byte more: 1.
  CHECK(computeOccupancy(*h100, 128, 16, 113 * 1024).groupsPerSM == 2);
  CHECK(computeOccupancy(*h100, 128, 16, 113 * 1024 + 1).groupsPerSM == 1);
  // A cubin whose static shared memory already holds the reserved KiB is not charged twice.
  CHECK(computeOccupancy(*h100, 128, 16, 114 * 1024, true).groupsPerSM == 2);
  // Over the per-group maximum: none.
  CHECK(computeOccupancy(*h100, 128, 16, 228 * 1024).groupsPerSM == 0);
}

TEST_CASE("occupancy: architectures without a row take the nearest older one") {
  CHECK(archLimits(60) == nullptr);
  CHECK(archLimits(90)->sm == 90);
  CHECK(archLimits(100)->sm == 90);
  CHECK(archLimits(81)->sm == 80);
}

TEST_CASE("PTX instruction counts per function") {
  const char* ptx = R"(
.visible .entry k(
  .param .u64 k_param_0
)
{
  mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%f1}, {%r1}, {%r2}, {%f1};
  @%p1 cp.async.cg.shared.global [%r3], [%rd1], 16;
  cp.async.commit_group;
  cp.async.wait_group 0;
  ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%r1, %r2, %r3, %r4}, [%r5];
  // mma.sync in a comment does not count
  wgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16 {%f1}, %rd1, %rd2, 1, 1, 1, 0, 0;
  cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes [%r1], [%rd3, {%r2, %r3}], [%r4];
  cp.async.bulk.commit_group;
}
.func (.param .b32 r) helper(
  .param .b32 a
)
{
  mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%f1}, {%r1}, {%r2}, {%f1};
  mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%f1}, {%r1}, {%r2}, {%f1};
}
)";
  auto mix = countPtxInstructions(ptx);
  CHECK(mix["k"].mma == 1);
  CHECK(mix["k"].cpAsync == 1);
  CHECK(mix["k"].ldmatrix == 1);
  CHECK(mix["k"].wgmma == 1);
  CHECK(mix["k"].tma == 1);
  CHECK(mix["helper"].mma == 2);
}

TEST_CASE("ptxas -v reports per function") {
  const char* log =
      "ptxas info    : 0 bytes gmem\n"
      "ptxas info    : Compiling entry function 'k' for 'sm_90a'\n"
      "ptxas info    : Function properties for k\n"
      "    16 bytes stack frame, 8 bytes spill stores, 4 bytes spill loads\n"
      "ptxas info    : Used 72 registers, used 1 barriers, 1024 bytes smem\n";
  auto info = parsePtxasInfo(log);
  REQUIRE(info.count("k"));
  CHECK(info["k"].registers == 72);
  CHECK(info["k"].stackFrameBytes == 16);
  CHECK(info["k"].spillStoreBytes == 8);
  CHECK(info["k"].spillLoadBytes == 4);
  CHECK(info["k"].sharedBytes == 1024);
}

TEST_CASE("a non-ELF image is refused") {
  std::vector<CubinFunction> fns;
  std::string error;
  CHECK_FALSE(readCubin("not a cubin", fns, error));
  CHECK(error.find("not an ELF cubin") != std::string::npos);
}
