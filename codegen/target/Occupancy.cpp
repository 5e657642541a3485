#include "codegen/target/Occupancy.h"

#include <algorithm>
#include <limits>

namespace tessera::codegen {

namespace {

// Per-multiprocessor limits (CUDA C++ Programming Guide, "Technical Specifications per Compute
// Capability"), newest last.
const ArchLimits kArchs[] = {
    // sm, warps, groups, registers, regs/thread, shared/SM, shared/group, reserved
    {70, 64, 32, 65536, 255, 96 * 1024, 96 * 1024, 0},      {75, 32, 16, 65536, 255, 64 * 1024, 64 * 1024, 0},
    {80, 64, 32, 65536, 255, 164 * 1024, 163 * 1024, 1024}, {86, 48, 16, 65536, 255, 100 * 1024, 99 * 1024, 1024},
    {87, 48, 16, 65536, 255, 164 * 1024, 163 * 1024, 1024}, {89, 48, 24, 65536, 255, 100 * 1024, 99 * 1024, 1024},
    {90, 64, 32, 65536, 255, 228 * 1024, 227 * 1024, 1024},
};

constexpr uint32_t kWarp = 32, kRegisterUnit = 256, kSubPartitions = 4, kSharedUnit = 128;

uint64_t roundUp(uint64_t x, uint64_t unit) { return (x + unit - 1) / unit * unit; }

}  // namespace

const ArchLimits* archLimits(unsigned sm) {
  const ArchLimits* best = nullptr;
  for (const ArchLimits& a : kArchs)
    if (a.sm <= sm) best = &a;
  return best;
}

Occupancy computeOccupancy(const ArchLimits& arch, uint32_t threads, uint32_t registers, uint64_t sharedBytes,
                           bool includesReserved) {
  Occupancy o;
  uint32_t warps = std::max<uint32_t>(1, (threads + kWarp - 1) / kWarp);
  struct Limit {
    uint64_t groups;
    const char* name;
  };
  // Registers: each warp gets registers*32 rounded up to 256; the register file is split over
  // 4 sub-partitions, and a group's warps are spread over them.
  uint64_t regsPerWarp = roundUp(uint64_t(std::max<uint32_t>(registers, 1)) * kWarp, kRegisterUnit);
  uint64_t byRegisters = 0;
  if (registers <= arch.maxRegistersPerThread && regsPerWarp * roundUp(warps, kSubPartitions) <= arch.registersPerSM)
    byRegisters = (arch.registersPerSM / kSubPartitions / regsPerWarp) * kSubPartitions / warps;
  // Shared memory: the group's bytes plus the reserved KiB, in 128-byte units.
  uint64_t reserved = includesReserved ? 0 : arch.reservedSharedPerGroup;
  uint64_t perGroup = roundUp(sharedBytes + reserved, kSharedUnit);
  uint64_t byShared = sharedBytes + reserved > arch.maxSharedPerGroup + arch.reservedSharedPerGroup ? 0
                      : perGroup == 0 ? arch.maxGroupsPerSM
                                      : arch.sharedPerSM / perGroup;
  // On a tie the first named wins: full occupancy reads "warps", not "registers".
  Limit limits[] = {
      {arch.maxWarpsPerSM / warps, "warps"},
      {arch.maxGroupsPerSM, "groups per SM"},
      {byRegisters, "registers"},
      {byShared, "shared memory"},
  };
  const Limit* least = std::min_element(std::begin(limits), std::end(limits),
                                        [](const Limit& a, const Limit& b) { return a.groups < b.groups; });
  o.groupsPerSM = static_cast<uint32_t>(least->groups);
  o.limitedBy = least->name;
  o.warpsPerSM = o.groupsPerSM * warps;
  o.fraction = double(o.warpsPerSM) / arch.maxWarpsPerSM;
  return o;
}

}  // namespace tessera::codegen
