#include "codegen/target/ResourceUsage.h"

#include <cstdio>

#include "codegen/target/CubinInfo.h"
#include "codegen/target/Occupancy.h"

namespace tessera::codegen {

namespace {

constexpr uint32_t kDefaultGroupThreads = 256;  // runtime/LaunchPlan.h kDefaultGroupTiles

std::string bytes(uint64_t n) {
  char buf[64];
  if (n >= 1024 && n % 1024 == 0)
    std::snprintf(buf, sizeof buf, "%llu KiB", (unsigned long long)(n / 1024));
  else
    std::snprintf(buf, sizeof buf, "%llu bytes", (unsigned long long)n);
  return buf;
}

}  // namespace

uint32_t defaultGroupThreads(const KernelInterface& k) {
  return k.grouped ? k.groupShape[0] * k.groupShape[1] * k.groupShape[2] : kDefaultGroupThreads;
}

bool collectResources(std::vector<KernelInterface>& kernels, const GpuArch& arch, const std::string& cubin,
                      const std::string& ptxasReport, const std::string& ptx, std::string& error) {
  std::vector<CubinFunction> functions;
  if (!readCubin(cubin, functions, error)) return false;
  std::map<std::string, PtxasFunctionInfo> report = parsePtxasInfo(ptxasReport);
  std::map<std::string, InstructionMix> mixes = countPtxInstructions(ptx);
  const ArchLimits* limits = archLimits(arch.sm);
  for (KernelInterface& k : kernels) {
    if (k.gpuEntry.empty()) continue;
    const CubinFunction* f = nullptr;
    for (const CubinFunction& c : functions)
      if (c.name == k.gpuEntry) f = &c;
    if (!f) {
      error =
          "internal error: kernel '" + k.name + "' has no function '" + k.gpuEntry + "' in its " + arch.name + " cubin";
      return false;
    }
    GpuResources r;
    r.arch = arch.name;
    r.sm = arch.sm;
    r.archSpecific = arch.archSpecific;
    r.registers = f->registers;
    r.stackBytes = f->stackBytes;
    r.staticSharedBytes = f->sharedBytes;
    r.sharedIncludesReserved = f->sharedIncludesReserved;
    r.localBytes = f->localBytes;
    const PtxasFunctionInfo& p = report[k.gpuEntry];
    r.spillStoreBytes = p.spillStoreBytes;
    r.spillLoadBytes = p.spillLoadBytes;
    const InstructionMix& m = mixes[k.gpuEntry];
    r.mma = m.mma, r.wgmma = m.wgmma, r.tma = m.tma, r.cpAsync = m.cpAsync, r.ldmatrix = m.ldmatrix;
    r.threadsPerGroup = defaultGroupThreads(k);
    if (limits) {
      Occupancy o = computeOccupancy(*limits, r.threadsPerGroup, r.registers, r.staticSharedBytes + k.sharedBytes,
                                     f->sharedIncludesReserved);
      r.groupsPerSM = o.groupsPerSM;
      r.warpsPerSM = o.warpsPerSM;
      r.maxWarpsPerSM = limits->maxWarpsPerSM;
      r.limitedBy = o.limitedBy;
    }
    k.resources.push_back(std::move(r));
  }
  return true;
}

std::string formatResourcesText(const std::string& module, const std::vector<KernelInterface>& kernels) {
  std::string out;
  char line[512];
  for (const KernelInterface& k : kernels)
    for (const GpuResources& r : k.resources) {
      std::snprintf(line, sizeof line,
                    "%s: kernel '%s' for %s: %u registers, %u bytes spill stores, %u bytes spill loads, "
                    "%u bytes stack, %s local\n",
                    module.c_str(), k.name.c_str(), r.arch.c_str(), r.registers, r.spillStoreBytes, r.spillLoadBytes,
                    r.stackBytes, bytes(r.localBytes).c_str());
      out += line;
      std::snprintf(line, sizeof line, "  shared memory: %s static%s, %s dynamic per group of %u threads\n",
                    bytes(r.staticSharedBytes).c_str(),
                    r.sharedIncludesReserved ? " (with the 1 KiB the system reserves)" : "",
                    bytes(k.sharedBytes).c_str(), r.threadsPerGroup);
      out += line;
      std::snprintf(line, sizeof line, "  occupancy: %u groups per SM, %u of %u warps (%.0f%%), limited by %s\n",
                    r.groupsPerSM, r.warpsPerSM, r.maxWarpsPerSM,
                    r.maxWarpsPerSM ? 100.0 * r.warpsPerSM / r.maxWarpsPerSM : 0.0, r.limitedBy.c_str());
      out += line;
      std::snprintf(line, sizeof line, "  instructions: %u mma.sync, %u wgmma, %u TMA, %u cp.async, %u ldmatrix\n",
                    r.mma, r.wgmma, r.tma, r.cpAsync, r.ldmatrix);
      out += line;
    }
  return out;
}

std::string formatResourcesJson(const std::string& module, const std::vector<KernelInterface>& kernels) {
  std::string out = "{\"module\": \"" + module + "\", \"kernels\": [";
  char buf[1024];
  bool first = true;
  for (const KernelInterface& k : kernels)
    for (const GpuResources& r : k.resources) {
      std::snprintf(buf, sizeof buf,
                    "%s\n  {\"kernel\": \"%s\", \"function\": \"%s\", \"arch\": \"%s\", \"registers\": %u, "
                    "\"spill_store_bytes\": %u, \"spill_load_bytes\": %u, \"stack_bytes\": %u, \"local_bytes\": %llu, "
                    "\"static_shared_bytes\": %llu, \"static_shared_includes_reserved\": %s, \"dynamic_shared_bytes\": "
                    "%llu, \"threads_per_group\": %u, "
                    "\"occupancy\": {\"groups_per_sm\": %u, \"warps_per_sm\": %u, \"max_warps_per_sm\": %u, "
                    "\"fraction\": %.4f, \"limited_by\": \"%s\"}, "
                    "\"instructions\": {\"mma\": %u, \"wgmma\": %u, \"tma\": %u, \"cp_async\": %u, \"ldmatrix\": %u}}",
                    first ? "" : ",", k.name.c_str(), k.gpuEntry.c_str(), r.arch.c_str(), r.registers,
                    r.spillStoreBytes, r.spillLoadBytes, r.stackBytes, (unsigned long long)r.localBytes,
                    (unsigned long long)r.staticSharedBytes, r.sharedIncludesReserved ? "true" : "false",
                    (unsigned long long)k.sharedBytes, r.threadsPerGroup, r.groupsPerSM, r.warpsPerSM, r.maxWarpsPerSM,
                    r.maxWarpsPerSM ? double(r.warpsPerSM) / r.maxWarpsPerSM : 0.0, r.limitedBy.c_str(), r.mma, r.wgmma,
                    r.tma, r.cpAsync, r.ldmatrix);
      out += buf;
      first = false;
    }
  return out + "\n]}\n";
}

}  // namespace tessera::codegen
