// The GPU test module: kernels from gpu/test_kernels.cu, compiled by nvcc into
// runtime_test_kernels.fatbin next to the test binary (see runtime/CMakeLists.txt).
#ifndef TESSERA_TESTS_RUNTIME_GPU_UTIL_H
#define TESSERA_TESTS_RUNTIME_GPU_UTIL_H

#include <fstream>
#include <iterator>
#include <unistd.h>

#include "RuntimeTestUtil.h"

namespace rttest {

inline std::string testFatbinPath() {
  char buf[4096];
  ssize_t n = readlink("/proc/self/exe", buf, sizeof buf - 1);
  std::string exe(buf, n > 0 ? n : 0);
  return exe.substr(0, exe.rfind('/') + 1) + "runtime_test_kernels.fatbin";
}

inline const std::vector<char>& testFatbin() {
  static std::vector<char> bytes = [] {
    std::ifstream in(testFatbinPath(), std::ios::binary);
    return std::vector<char>(std::istreambuf_iterator<char>(in), {});
  }();
  return bytes;
}

// Why the GPU tests cannot run here ("" when they can).
inline std::string gpuSkipReason() {
  if (!activeDeviceIsGpu())
    return std::string("no GPU is the active device (") + tessera_gpu_unavailable_reason() + ")";
  if (testFatbin().empty()) return "no " + testFatbinPath() + " (nvcc was not found at build time)";
  return "";
}
inline bool gpuTestsSkipped() {
  static bool skipped = !gpuSkipReason().empty();
  return skipped;
}

inline KernelSpec gpuSpec(const char* name, std::vector<ParamSpec> params, std::vector<std::string> symbols,
                          uint32_t group = 0, uint64_t shared = 0, int32_t gridSymbol = -1) {
  KernelSpec k;
  k.name = name;
  k.gpuEntry = name;
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

struct GpuKernels {
  TestModule m{
      "gpu_tests",
      {gpuSpec("saxpy",
               {scalarParam("alpha", TESSERA_F32), tensorParam("x", TESSERA_F32, {sym(0)}),
                tensorParam("y", TESSERA_F32, {sym(0)}, true)},
               {"n"}),
       gpuSpec("group_sum", {tensorParam("x", TESSERA_F32, {sym(0)}), tensorParam("out", TESSERA_F32, {sym(1)}, true)},
               {"n", "grid_groups"}, 128, 512, 1),
       gpuSpec("big_shared", {tensorParam("out", TESSERA_F64, {sym(0)}, true)}, {"grid_groups"}, 256, 64 * 1024, 0),
       gpuSpec("fault", {tensorParam("y", TESSERA_F32, {any()}, true)}, {}, 32)},
      testFatbin().data(),
      testFatbin().size()};
  const tessera_kernel_desc *saxpy = m.kernel(0), *groupSum = m.kernel(1), *bigShared = m.kernel(2),
                            *fault = m.kernel(3);
};

}  // namespace rttest

#endif
