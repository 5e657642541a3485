// Occupancy from a kernel's resources and its GPU architecture's limits, computed as the CUDA
// occupancy calculator does: the groups (thread blocks) that fit on one multiprocessor at once
// are the fewest allowed by registers (allocated per warp in units of 256, in 4 sub-partitions),
// shared memory (1 KiB reserved per group, allocated in 128-byte units), warps and groups.
#pragma once

#include <cstdint>
#include <string>

namespace tessera::codegen {

struct ArchLimits {
  unsigned sm;  // 80 for sm_80 / sm_80a
  uint32_t maxWarpsPerSM;
  uint32_t maxGroupsPerSM;
  uint32_t registersPerSM;
  uint32_t maxRegistersPerThread;
  uint64_t sharedPerSM;        // the largest shared-memory carveout
  uint64_t maxSharedPerGroup;  // opt-in maximum for one group
  uint32_t reservedSharedPerGroup;
};

// The limits of `sm` (the nearest known architecture at or below it); nullptr below sm_70.
const ArchLimits* archLimits(unsigned sm);

struct Occupancy {
  uint32_t groupsPerSM = 0;
  uint32_t warpsPerSM = 0;     // groupsPerSM * warps per group
  double fraction = 0;         // warpsPerSM / maxWarpsPerSM
  const char* limitedBy = "";  // "registers", "shared memory", "warps", "groups per SM"
};

// `threads` per group, `registers` per thread, `sharedBytes` per group (static + dynamic);
// `includesReserved`: sharedBytes already holds the system's reserved KiB (sm_90 cubins).
Occupancy computeOccupancy(const ArchLimits& arch, uint32_t threads, uint32_t registers, uint64_t sharedBytes,
                           bool includesReserved = false);

}  // namespace tessera::codegen
