//===- GpuBackend.cpp - Primary context, modules, launches, memory, streams, graphs ----------===//
#include "runtime/GpuBackend.h"

#if !TESSERA_RT_HAVE_CUDA
namespace tessera::rt {
std::unique_ptr<Backend> createGpuBackend(std::string& why, int) {
  why = "libtessera_rt was built without CUDA headers (set CUDA_HOME and rebuild)";
  return nullptr;
}
}  // namespace tessera::rt
#else

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "runtime/CudaDriver.h"
#include "runtime/Registry.h"
#include "runtime/Status.h"
#include "runtime/TensorMap.h"

namespace tessera::rt {

namespace {

constexpr uint64_t kDefaultSharedLimit = 48 * 1024;  // above this a kernel must opt in

struct GpuStream : tessera_stream_t {
  CUstream s = nullptr;
  bool owned = true;  // false: another library's stream (tessera_stream_wrap), never destroyed here
};
struct GpuEvent : tessera_event_t {
  CUevent e = nullptr;
};
struct GpuGraph : tessera_graph_t {
  CUgraph graph = nullptr;
  CUgraphExec exec = nullptr;
};

CUstream raw(tessera_stream s) { return s ? static_cast<GpuStream*>(s)->s : nullptr; }

bool isFault(CUresult r) {
  switch (r) {
    case CUDA_ERROR_ILLEGAL_ADDRESS:
    case CUDA_ERROR_LAUNCH_FAILED:
    case CUDA_ERROR_ILLEGAL_INSTRUCTION:
    case CUDA_ERROR_MISALIGNED_ADDRESS:
    case CUDA_ERROR_INVALID_ADDRESS_SPACE:
    case CUDA_ERROR_INVALID_PC:
    case CUDA_ERROR_HARDWARE_STACK_ERROR:
    case CUDA_ERROR_ASSERT:
    case CUDA_ERROR_LAUNCH_TIMEOUT:
    case CUDA_ERROR_ECC_UNCORRECTABLE: return true;
    default: return false;
  }
}

// Memory the default pool keeps reserved between launches (see the constructor).
constexpr uint64_t kPoolKeepBytes = uint64_t(1) << 30;

class GpuBackend final : public Backend {
 public:
  GpuBackend(const CudaDriver& d, CUdevice dev, CUcontext ctx, int ordinal)
      : d_(d), dev_(dev), ctx_(ctx), ordinal_(ordinal) {
    char buf[256] = {};
    d_.cuDeviceGetName(buf, sizeof buf, dev_);
    int major = 0, minor = 0;
    d_.cuDeviceGetAttribute(&major, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, dev_);
    d_.cuDeviceGetAttribute(&minor, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, dev_);
    name_ = std::string(buf) + " (sm_" + std::to_string(major * 10 + minor) + ")";
    // Stream-ordered allocations (the workspace of tile values, the scratch matrix of variant
    // chains) come from the device's default pool, whose default release threshold (0) hands its
    // memory back at every synchronisation, so that the next launch maps it again (tens of
    // microseconds for a 16 MiB scratch matrix). Keep up to kPoolKeepBytes between launches.
    CUmemoryPool pool = nullptr;
    if (d_.cuDeviceGetDefaultMemPool(&pool, dev_) == CUDA_SUCCESS && pool) {
      cuuint64_t keep = kPoolKeepBytes;
      d_.cuMemPoolSetAttribute(pool, CU_MEMPOOL_ATTR_RELEASE_THRESHOLD, &keep);
    }
    auto attr = [&](CUdevice_attribute a, uint32_t fallback) {
      int v = 0;
      return d_.cuDeviceGetAttribute(&v, a, dev_) == CUDA_SUCCESS && v > 0 ? uint32_t(v) : fallback;
    };
    limits_.maxGroupTiles = attr(CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK, 1024);
    limits_.maxGroupDim[0] = attr(CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_X, 1024);
    limits_.maxGroupDim[1] = attr(CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Y, 1024);
    limits_.maxGroupDim[2] = attr(CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Z, 64);
    limits_.maxGrid[0] = attr(CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_X, 2147483647u);
    limits_.maxGrid[1] = attr(CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Y, 65535);
    limits_.maxGrid[2] = attr(CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Z, 65535);
    limits_.maxSharedBytes = attr(CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN, 48 * 1024);
    sm_ = static_cast<uint32_t>(major * 10 + minor);
    multiprocessors_ = attr(CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, 1);
    // TESSERA_GPU_VARIANTS=off runs every kernel's portable entry; =<i> tries only variant i
    // (comparisons, debugging; docs/abi.md 4.3).
    if (const char* v = std::getenv("TESSERA_GPU_VARIANTS")) {
      if (std::strcmp(v, "off") == 0)
        variantsEnabled_ = false;
      else if (*v >= '0' && *v <= '9')
        onlyVariant_ = std::atoi(v);
    }
    Registry::instance().setUnloadHook([this](const tessera_module_desc* m) { unload(m); });
  }

  tessera_device_kind kind() const override { return TESSERA_DEVICE_GPU; }
  std::string name() const override { return name_; }
  const DeviceLimits& limits() const override { return limits_; }
  void* nativeStream(tessera_stream s) override { return raw(s); }
  tessera_status enterDevice() override { return enter(); }
  int deviceOrdinal() const override { return ordinal_; }

  // Makes the primary context current on this thread and reports an earlier fault.
  tessera_status enter() {
    if (!faultMessage_.empty()) return fail(TESSERA_ERROR_KERNEL_FAULT, faultMessage_);
    return check(d_.cuCtxSetCurrent(ctx_), "cuCtxSetCurrent");
  }

  // Turns a driver result into a status; faults poison every later call (the CUDA context is
  // unusable after one), so the fault is what the next runtime call reports.
  tessera_status check(CUresult r, const char* call) {
    if (r == CUDA_SUCCESS) return TESSERA_SUCCESS;
    if (isFault(r)) {
      std::lock_guard<std::mutex> lock(mutex_);
      if (faultMessage_.empty())
        faultMessage_ = concat("a kernel faulted on the GPU (", d_.describe(r), "), reported by ", call,
                               "; the GPU context is unusable for the rest of the process");
      return fail(TESSERA_ERROR_KERNEL_FAULT, faultMessage_);
    }
    if (r == CUDA_ERROR_OUT_OF_MEMORY) return fail(TESSERA_ERROR_OUT_OF_MEMORY, call, " failed: ", d_.describe(r));
    return fail(TESSERA_ERROR_DRIVER, call, " failed: ", d_.describe(r));
  }

  bool pointerUsable(const void* ptr, std::string& why) override {
    unsigned int type = 0;
    CUresult r = d_.cuPointerGetAttribute(&type, CU_POINTER_ATTRIBUTE_MEMORY_TYPE, reinterpret_cast<CUdeviceptr>(ptr));
    if (r == CUDA_SUCCESS) return true;
    why = r == CUDA_ERROR_INVALID_VALUE ? "the CUDA driver does not know it: pageable host memory" : d_.describe(r);
    return false;
  }

  tessera_status function(const LaunchPlan& plan, CUfunction& out) {
    const tessera_kernel_desc& k = *plan.kernel;
    if (!plan.module->fatbin || !k.gpu_entry)
      return fail(TESSERA_ERROR_NOT_SUPPORTED, "kernel '", k.name, "' has no GPU code (module '", plan.module->name,
                  "' was built without a fatbin)");
    std::lock_guard<std::mutex> lock(mutex_);
    if (auto it = functions_.find(&k); it != functions_.end()) {
      out = it->second;
      return TESSERA_SUCCESS;
    }
    CUmodule& mod = modules_[plan.module];
    if (!mod) {
      CUresult r = d_.cuModuleLoadData(&mod, plan.module->fatbin);
      if (r != CUDA_SUCCESS) {
        modules_.erase(plan.module);
        return fail(r == CUDA_ERROR_NO_BINARY_FOR_GPU ? TESSERA_ERROR_NOT_SUPPORTED : TESSERA_ERROR_DRIVER, "module '",
                    plan.module->name, "': cuModuleLoadData failed for ", name_, ": ", d_.describe(r));
      }
      // Looked up once, and only in a module with bounds-checked kernels: the others have no
      // record (0), and asking the driver for it would fail (an API error that compute-sanitizer
      // reports), at every synchronisation before.
      bool checked = false;
      for (uint32_t i = 0; i < plan.module->num_kernels; ++i)
        checked |= (tessera_module_kernel(plan.module, i)->flags & TESSERA_KERNEL_BOUNDS_CHECKED) != 0;
      CUdeviceptr rec = 0;
      size_t bytes = 0;
      if (!checked || d_.cuModuleGetGlobal(&rec, &bytes, mod, TESSERA_FAULT_RECORD) != CUDA_SUCCESS ||
          bytes != sizeof(tessera_fault_record))
        rec = 0;
      faultRecords_[plan.module] = rec;
    }
    CUresult r = d_.cuModuleGetFunction(&out, mod, k.gpu_entry);
    if (r != CUDA_SUCCESS)
      return fail(TESSERA_ERROR_DRIVER, "kernel '", k.name, "': function '", k.gpu_entry, "' not found in module '",
                  plan.module->name, "': ", d_.describe(r));
    functions_[&k] = out;
    return TESSERA_SUCCESS;
  }

  // Raises f's dynamic shared-memory limit to `bytes` once.
  tessera_status optInShared(CUfunction f, uint64_t bytes, const char* kernel) {
    if (bytes <= kDefaultSharedLimit) return TESSERA_SUCCESS;
    std::lock_guard<std::mutex> lock(mutex_);
    uint64_t& optedIn = sharedOptIn_[f];
    if (bytes > optedIn) {
      CUresult r = d_.cuFuncSetAttribute(f, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, static_cast<int>(bytes));
      if (r != CUDA_SUCCESS)
        return fail(TESSERA_ERROR_INVALID_GRID, "kernel '", kernel, "': cannot use ", bytes,
                    " bytes of shared memory: ", d_.describe(r));
      optedIn = bytes;
    }
    return TESSERA_SUCCESS;
  }

  // The entry of variant v in the loaded module, or null when the image for this device lacks
  // it (a fatbin without sm_90a code).
  CUfunction variantFunction(const LaunchPlan& plan, const tessera_gpu_variant& v) {
    std::lock_guard<std::mutex> lock(mutex_);
    auto it = variantFunctions_.find(&v);
    if (it != variantFunctions_.end()) return it->second;
    CUfunction f = nullptr;
    auto mod = modules_.find(plan.module);
    if (mod == modules_.end() || d_.cuModuleGetFunction(&f, mod->second, v.gpu_entry) != CUDA_SUCCESS) f = nullptr;
    return variantFunctions_[&v] = f;
  }

  // Encodes the tensor maps of variant v into maps; a map whose param is num_params + j reads
  // scratch matrix j of `scratch` (a chain's). False when a view cannot have one.
  bool variantMaps(const LaunchPlan& plan, const tessera_gpu_variant& v,
                   const std::vector<tessera_kernel_tensor>& scratch, const std::vector<tessera_chain_scratch>& kinds,
                   CUtensorMap* maps) {
    const tessera_kernel_desc& k = *plan.kernel;
    std::string why;
    for (uint32_t m = 0; m < v.num_tensor_maps; ++m) {
      const tessera_tensor_map_desc& req = v.tensor_maps[m];
      bool ok = false;
      size_t j = static_cast<size_t>(req.param) - k.num_params;
      if (req.param >= static_cast<int32_t>(k.num_params) && j < scratch.size())
        ok = tensorMaps_.get(d_, scratch[j], kinds[j].dtype, 2, req, maps[m], why);
      else
        ok = req.param >= 0 && static_cast<uint32_t>(req.param) < k.num_params &&
             k.params[req.param].kind == TESSERA_PARAM_TENSOR &&
             tensorMaps_.get(d_, plan.tensors[req.param], k.params[req.param].dtype, k.params[req.param].rank, req,
                             maps[m], why);
      if (!ok) return false;
    }
    return true;
  }

  // Launches variant v (function f) as a persistent grid of at most `groups` groups, one per
  // multiprocessor (and no more clusters than fit at once); each walks the output tiles.
  // `workspace`, when not null, is passed as the workspace argument. `launched` stays false when
  // no cluster of the variant's size fits.
  tessera_status launchVariant(const LaunchPlan& plan, const tessera_gpu_variant& v, CUfunction f, CUtensorMap* maps,
                               CUdeviceptr* workspace, uint64_t groups, tessera_stream stream, bool& launched) {
    TESSERA_TRY(optInShared(f, v.shared_bytes, plan.kernel->name));
    std::vector<void*> args = plan.argPtrs;
    if (workspace) args[plan.kernel->num_params + 1] = workspace;
    for (uint32_t m = 0; m < v.num_tensor_maps; ++m) args.push_back(&maps[m]);
    const uint32_t cluster = v.cluster_dim > 1 ? v.cluster_dim : 1;
    uint64_t grid = std::min<uint64_t>(std::max<uint64_t>(groups, cluster), multiprocessors_);
    CUlaunchAttribute attr{};
    attr.id = CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION;
    attr.value.clusterDim.x = cluster;
    attr.value.clusterDim.y = attr.value.clusterDim.z = 1;
    CUlaunchConfig cfg{};
    cfg.blockDimX = v.block_threads;
    cfg.blockDimY = cfg.blockDimZ = 1;
    cfg.gridDimY = cfg.gridDimZ = 1;
    cfg.sharedMemBytes = static_cast<unsigned>(v.shared_bytes);
    cfg.hStream = raw(stream);
    cfg.attrs = &attr;
    cfg.numAttrs = cluster > 1 ? 1 : 0;
    if (cluster > 1) {
      grid = std::min<uint64_t>(grid, maxClusters(f, cfg) * cluster);
      grid -= grid % cluster;
      if (grid == 0) return TESSERA_SUCCESS;  // no cluster of this size fits: try the next variant
    }
    cfg.gridDimX = static_cast<unsigned>(grid);
    launched = true;
    return check(d_.cuLaunchKernelEx(&cfg, f, args.data(), nullptr), "cuLaunchKernelEx");
  }

  // Launches the first GPU variant of the kernel that this device and launch allow (docs/abi.md:
  // default grid, sm version, an image with the entry, tensor maps for every view it names), or
  // every step of its variant chain. `launched` stays false when none applies; the portable
  // entry runs then.
  tessera_status tryVariants(const LaunchPlan& plan, tessera_stream stream, bool& launched) {
    const tessera_kernel_desc& k = *plan.kernel;
    launched = false;
    if (!variantsEnabled_ || !plan.defaultGrid || !tessera_kernel_has_v4(&k) || !k.gpu_variants) return TESSERA_SUCCESS;
    if (const tessera_variant_chain* chain = tessera_kernel_chain(&k)) return tryChain(plan, *chain, stream, launched);
    for (uint32_t i = 0; i < k.num_gpu_variants; ++i) {
      const tessera_gpu_variant& v = k.gpu_variants[i];
      constexpr uint32_t kMaxMaps = 8;  // the attention backward form takes 5
      if (sm_ < v.min_sm || v.num_tensor_maps > kMaxMaps || v.block_threads == 0 ||
          (onlyVariant_ >= 0 && static_cast<uint32_t>(onlyVariant_) != i))
        continue;
      CUfunction f = variantFunction(plan, v);
      CUtensorMap maps[kMaxMaps];
      if (!f || !variantMaps(plan, v, {}, {}, maps)) continue;
      TESSERA_TRY(launchVariant(plan, v, f, maps, nullptr, plan.groups, stream, launched));
      if (launched) return TESSERA_SUCCESS;
    }
    return TESSERA_SUCCESS;
  }

  // A variant chain (docs/abi.md 4.4): every step or none. The scratch matrices are allocated for
  // the launch and freed after its last step, stream-ordered like the workspace. Only with every
  // variant allowed (TESSERA_GPU_VARIANTS unset): one step alone is not the kernel.
  tessera_status tryChain(const LaunchPlan& plan, const tessera_variant_chain& chain, tessera_stream stream,
                          bool& launched) {
    const tessera_kernel_desc& k = *plan.kernel;
    constexpr uint32_t kMaxSteps = 4, kMaxMaps = 4;
    if (onlyVariant_ >= 0 || chain.num_steps > kMaxSteps) return TESSERA_SUCCESS;
    CUfunction fs[kMaxSteps];
    for (uint32_t i = 0; i < chain.num_steps; ++i) {
      const tessera_gpu_variant& v = k.gpu_variants[i];
      if (sm_ < v.min_sm || v.num_tensor_maps > kMaxMaps || v.block_threads == 0 || v.cluster_dim > 1 ||
          !(fs[i] = variantFunction(plan, v)))
        return TESSERA_SUCCESS;
    }
    std::vector<tessera_chain_scratch> kinds = chainScratch(plan.module, chain);
    std::vector<tessera_kernel_tensor> scratch(kinds.size());
    std::vector<uint64_t> bytes(kinds.size());
    for (size_t j = 0; j < kinds.size(); ++j) {
      tessera_kernel_tensor& t = scratch[j];
      t.shape[0] = plan.tensors[kinds[j].rows_param].shape[kinds[j].rows_axis];
      t.shape[1] = plan.tensors[kinds[j].cols_param].shape[kinds[j].cols_axis];
      t.strides[0] = t.shape[1];
      t.strides[1] = 1;
      bytes[j] = static_cast<uint64_t>(t.shape[0]) * static_cast<uint64_t>(t.shape[1]) *
                 tessera_dtype_bits(kinds[j].dtype) / 8;
      if (t.shape[0] <= 0 || t.shape[1] <= 0 || bytes[j] == 0) return TESSERA_SUCCESS;
    }
    CUtensorMap maps[kMaxSteps][kMaxMaps];
    std::vector<CUdeviceptr> buffers(kinds.size(), 0);
    auto release = [&] {
      tessera_status r = TESSERA_SUCCESS;
      for (CUdeviceptr b : buffers)
        if (b && r == TESSERA_SUCCESS) r = check(d_.cuMemFreeAsync(b, raw(stream)), "cuMemFreeAsync");
      return r;
    };
    for (size_t j = 0; j < kinds.size(); ++j) {
      CUresult r = d_.cuMemAllocAsync(&buffers[j], bytes[j], raw(stream));
      if (r != CUDA_SUCCESS) {
        buffers[j] = 0;
        release();
        return fail(r == CUDA_ERROR_OUT_OF_MEMORY ? TESSERA_ERROR_OUT_OF_MEMORY : TESSERA_ERROR_DRIVER, "kernel '",
                    k.name, "': cannot allocate ", bytes[j],
                    " bytes of scratch for its steps of products: ", d_.describe(r));
      }
      scratch[j].data = reinterpret_cast<void*>(buffers[j]);
    }
    bool ok = true;
    for (uint32_t i = 0; i < chain.num_steps && ok; ++i)
      ok = variantMaps(plan, k.gpu_variants[i], scratch, kinds, maps[i]);
    tessera_status s = TESSERA_SUCCESS;
    for (uint32_t i = 0; i < chain.num_steps && ok && s == TESSERA_SUCCESS; ++i) {
      // The step's workspace argument: the scratch matrix it writes (every step: ABI 6's one).
      CUdeviceptr* workspace = nullptr;
      for (size_t j = 0; j < kinds.size() && !workspace; ++j)
        if (kinds[j].step == static_cast<int32_t>(i) || kinds[j].step < 0) workspace = &buffers[j];
      bool stepLaunched = false;
      s = launchVariant(plan, k.gpu_variants[i], fs[i], maps[i], workspace, multiprocessors_, stream, stepLaunched);
      launched = true;  // from the first step on, the chain is the kernel's launch
    }
    tessera_status f2 = release();
    return s != TESSERA_SUCCESS ? s : f2;
  }

  // How many clusters of cfg's shape can be resident at once (queried once per function).
  uint64_t maxClusters(CUfunction f, CUlaunchConfig cfg) {
    std::lock_guard<std::mutex> lock(mutex_);
    auto it = maxClusters_.find(f);
    if (it != maxClusters_.end()) return it->second;
    cfg.gridDimX = multiprocessors_ - multiprocessors_ % cfg.attrs[0].value.clusterDim.x;
    int n = 0;
    if (d_.cuOccupancyMaxActiveClusters(&n, f, &cfg) != CUDA_SUCCESS || n < 0) n = 0;
    return maxClusters_[f] = static_cast<uint64_t>(n);
  }

  tessera_status prepare(const LaunchPlan& plan) override {
    TESSERA_TRY(enter());
    CUfunction f = nullptr;
    return function(plan, f);
  }

  tessera_status launch(const LaunchPlan& plan, tessera_stream stream) override {
    TESSERA_TRY(enter());
    CUfunction f = nullptr;
    TESSERA_TRY(function(plan, f));
    if (plan.groups == 0 || plan.launchTiles == 0) return TESSERA_SUCCESS;
    bool launched = false;
    TESSERA_TRY(tryVariants(plan, stream, launched));
    if (launched) return TESSERA_SUCCESS;
    TESSERA_TRY(optInShared(f, plan.sharedBytes, plan.kernel->name));
    // Tile values kept in memory get a workspace for this launch, stream-ordered: allocated
    // before the kernel and freed after it on the same stream (graph capture records both).
    std::vector<void*> args = plan.argPtrs;
    CUdeviceptr workspace = 0;
    if (plan.workspaceGroupBytes) {
      uint64_t bytes = plan.workspaceGroupBytes * plan.groups;
      CUresult r = d_.cuMemAllocAsync(&workspace, bytes, raw(stream));
      if (r != CUDA_SUCCESS)
        return fail(r == CUDA_ERROR_OUT_OF_MEMORY ? TESSERA_ERROR_OUT_OF_MEMORY : TESSERA_ERROR_DRIVER, "kernel '",
                    plan.kernel->name, "': cannot allocate ", bytes,
                    " bytes of workspace for its tile values: ", d_.describe(r));
      args[plan.kernel->num_params + 1] = &workspace;
    }
    GpuLaunchDims dims = gpuLaunchDims(plan);
    tessera_status s = check(
        d_.cuLaunchKernel(f, dims.grid[0], dims.grid[1], dims.grid[2], dims.block[0], dims.block[1], dims.block[2],
                          static_cast<unsigned>(plan.sharedBytes), raw(stream), args.data(), nullptr),
        "cuLaunchKernel");
    if (workspace) {
      tessera_status f2 = check(d_.cuMemFreeAsync(workspace, raw(stream)), "cuMemFreeAsync");
      if (s == TESSERA_SUCCESS) s = f2;
    }
    // A bounds-checked kernel reports its first failed check in the module's fault record: wait
    // for it and read the record, so the launch itself fails (a captured launch is checked at
    // the next synchronisation instead).
    if (s == TESSERA_SUCCESS && (plan.kernel->flags & TESSERA_KERNEL_BOUNDS_CHECKED) && !capturing(stream)) {
      TESSERA_TRY(check(d_.cuStreamSynchronize(raw(stream)), "cuStreamSynchronize"));
      s = readFaultRecords(plan.module, plan.kernel->name);
    }
    return s;
  }

  // The fault records of `only` (or of every loaded module): the first one set fails with the
  // fault it describes, after clearing it for the next launch. `kernel`: the launch just made.
  tessera_status readFaultRecords(const tessera_module_desc* only = nullptr, const char* kernel = nullptr) {
    std::vector<std::pair<const tessera_module_desc*, CUdeviceptr> > records;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      for (auto& [desc, rec] : faultRecords_)
        if (rec && (!only || desc == only))  // 0: no bounds-checked kernel in this module
          records.push_back({desc, rec});
    }
    for (auto& [desc, rec] : records) {
      tessera_fault_record r{};
      TESSERA_TRY(check(d_.cuMemcpy(reinterpret_cast<CUdeviceptr>(&r), rec, sizeof r), "cuMemcpy"));
      if (!r.flag) continue;
      TESSERA_TRY(check(d_.cuMemsetD8(rec, 0, sizeof r), "cuMemsetD8"));
      r.site[sizeof r.site - 1] = 0;
      char text[512];
      std::snprintf(text, sizeof text, TESSERA_BOUNDS_FAULT_FORMAT, r.site, static_cast<long long>(r.index),
                    static_cast<long long>(r.extent), static_cast<long long>(r.tile));
      std::string who =
          kernel ? "kernel '" + std::string(kernel) + "'" : "a kernel of module '" + std::string(desc->name) + "'";
      return fail(TESSERA_ERROR_KERNEL_FAULT, who, ": group ", r.group, " faulted on the GPU: ", text);
    }
    return TESSERA_SUCCESS;
  }

  tessera_status allocate(void** ptr, size_t bytes) override {
    TESSERA_TRY(enter());
    CUdeviceptr p = 0;
    CUresult r = d_.cuMemAlloc(&p, bytes ? bytes : 1);
    if (r == CUDA_ERROR_OUT_OF_MEMORY)
      return fail(TESSERA_ERROR_OUT_OF_MEMORY, "tessera_malloc: cannot allocate ", bytes, " bytes on ", name_);
    TESSERA_TRY(check(r, "cuMemAlloc"));
    *ptr = reinterpret_cast<void*>(p);
    return TESSERA_SUCCESS;
  }
  tessera_status release(void* ptr) override {
    TESSERA_TRY(enter());
    if (takeAsync(ptr))  // a pool allocation: freed after the work of the blocking streams
      return check(d_.cuMemFreeAsync(reinterpret_cast<CUdeviceptr>(ptr), nullptr), "cuMemFreeAsync");
    return check(d_.cuMemFree(reinterpret_cast<CUdeviceptr>(ptr)), "cuMemFree");
  }
  // From the device's default memory pool, which keeps freed memory for reuse (the constructor
  // raises its release threshold): an entry point's results and temporaries cost no
  // cuMemAlloc/cuMemFree (and no implied synchronisation) after the first call, as with
  // PyTorch's caching allocator.
  tessera_status allocateAsync(void** ptr, size_t bytes, tessera_stream stream) override {
    TESSERA_TRY(enter());
    CUdeviceptr p = 0;
    CUresult r = d_.cuMemAllocAsync(&p, bytes ? bytes : 1, raw(stream));
    if (r == CUDA_ERROR_OUT_OF_MEMORY)
      return fail(TESSERA_ERROR_OUT_OF_MEMORY, "tessera_malloc_async: cannot allocate ", bytes, " bytes on ", name_);
    TESSERA_TRY(check(r, "cuMemAllocAsync"));
    {
      std::lock_guard<std::mutex> lock(mutex_);
      asyncPtrs_.insert(p);
    }
    *ptr = reinterpret_cast<void*>(p);
    return TESSERA_SUCCESS;
  }
  tessera_status releaseAsync(void* ptr, tessera_stream stream) override {
    TESSERA_TRY(enter());
    if (!takeAsync(ptr)) {
      TESSERA_TRY(streamSynchronize(stream));
      return check(d_.cuMemFree(reinterpret_cast<CUdeviceptr>(ptr)), "cuMemFree");
    }
    return check(d_.cuMemFreeAsync(reinterpret_cast<CUdeviceptr>(ptr), raw(stream)), "cuMemFreeAsync");
  }
  bool takeAsync(void* ptr) {
    std::lock_guard<std::mutex> lock(mutex_);
    return asyncPtrs_.erase(reinterpret_cast<CUdeviceptr>(ptr)) > 0;
  }
  tessera_status copy(void* dst, const void* src, size_t bytes, tessera_stream stream, bool async) override {
    TESSERA_TRY(enter());
    auto d = reinterpret_cast<CUdeviceptr>(dst);
    auto s = reinterpret_cast<CUdeviceptr>(src);
    return async ? check(d_.cuMemcpyAsync(d, s, bytes, raw(stream)), "cuMemcpyAsync")
                 : check(d_.cuMemcpy(d, s, bytes), "cuMemcpy");
  }
  tessera_status fill(void* dst, int value, size_t bytes) override {
    TESSERA_TRY(enter());
    return check(d_.cuMemsetD8(reinterpret_cast<CUdeviceptr>(dst), static_cast<unsigned char>(value), bytes),
                 "cuMemsetD8");
  }
  tessera_status synchronize() override {
    TESSERA_TRY(enter());
    TESSERA_TRY(check(d_.cuCtxSynchronize(), "cuCtxSynchronize"));
    return readFaultRecords();
  }

  // A new handle whose driver object `make` creates (a stream, an event).
  template <typename Handle, typename Out, typename Make>
  tessera_status newHandle(Out* out, Make make) {
    TESSERA_TRY(enter());
    auto h = std::make_unique<Handle>();
    TESSERA_TRY(make(*h));
    *out = h.release();
    return TESSERA_SUCCESS;
  }
  tessera_status streamCreate(tessera_stream* out) override {
    return newHandle<GpuStream>(
        out, [&](GpuStream& s) { return check(d_.cuStreamCreate(&s.s, CU_STREAM_DEFAULT), "cuStreamCreate"); });
  }
  tessera_status streamWrap(void* native, tessera_stream* out) override {
    return newHandle<GpuStream>(out, [&](GpuStream& s) {
      s.s = static_cast<CUstream>(native);
      s.owned = false;
      return TESSERA_SUCCESS;
    });
  }
  tessera_status streamDestroy(tessera_stream stream) override {
    d_.cuCtxSetCurrent(ctx_);  // destroys work even after a fault
    std::unique_ptr<GpuStream> s(static_cast<GpuStream*>(stream));
    return s->owned ? check(d_.cuStreamDestroy(s->s), "cuStreamDestroy") : TESSERA_SUCCESS;
  }
  tessera_status streamSynchronize(tessera_stream stream) override {
    TESSERA_TRY(enter());
    TESSERA_TRY(check(d_.cuStreamSynchronize(raw(stream)), "cuStreamSynchronize"));
    return readFaultRecords();
  }
  tessera_status eventCreate(tessera_event* out) override {
    return newHandle<GpuEvent>(
        out, [&](GpuEvent& e) { return check(d_.cuEventCreate(&e.e, CU_EVENT_DEFAULT), "cuEventCreate"); });
  }
  tessera_status eventDestroy(tessera_event event) override {
    d_.cuCtxSetCurrent(ctx_);  // destroys work even after a fault
    std::unique_ptr<GpuEvent> e(static_cast<GpuEvent*>(event));
    return check(d_.cuEventDestroy(e->e), "cuEventDestroy");
  }
  tessera_status eventRecord(tessera_event event, tessera_stream stream) override {
    TESSERA_TRY(enter());
    return check(d_.cuEventRecord(static_cast<GpuEvent*>(event)->e, raw(stream)), "cuEventRecord");
  }
  tessera_status eventSynchronize(tessera_event event) override {
    TESSERA_TRY(enter());
    return check(d_.cuEventSynchronize(static_cast<GpuEvent*>(event)->e), "cuEventSynchronize");
  }
  tessera_status eventQuery(tessera_event event) override {
    CUresult r = d_.cuEventQuery(static_cast<GpuEvent*>(event)->e);
    return r == CUDA_ERROR_NOT_READY ? TESSERA_ERROR_NOT_READY : check(r, "cuEventQuery");
  }
  tessera_status streamWaitEvent(tessera_stream stream, tessera_event event) override {
    TESSERA_TRY(enter());
    return check(d_.cuStreamWaitEvent(raw(stream), static_cast<GpuEvent*>(event)->e, 0), "cuStreamWaitEvent");
  }
  tessera_status eventElapsed(float* ms, tessera_event start, tessera_event end) override {
    TESSERA_TRY(enter());
    CUresult r = d_.cuEventElapsedTime(ms, static_cast<GpuEvent*>(start)->e, static_cast<GpuEvent*>(end)->e);
    if (r == CUDA_ERROR_NOT_READY)
      return fail(TESSERA_ERROR_NOT_READY, "tessera_event_elapsed_ms: an event has not completed");
    return check(r, "cuEventElapsedTime");
  }
  bool capturing(tessera_stream stream) override {
    CUstreamCaptureStatus status = CU_STREAM_CAPTURE_STATUS_NONE;
    return d_.cuStreamIsCapturing(raw(stream), &status) == CUDA_SUCCESS && status != CU_STREAM_CAPTURE_STATUS_NONE;
  }
  tessera_status beginCapture(tessera_stream stream) override {
    TESSERA_TRY(enter());
    // Relaxed: lazily loading a module during capture must stay legal.
    return check(d_.cuStreamBeginCapture(raw(stream), CU_STREAM_CAPTURE_MODE_RELAXED), "cuStreamBeginCapture");
  }
  tessera_status endCapture(tessera_stream stream, tessera_graph* out) override {
    TESSERA_TRY(enter());
    auto g = std::make_unique<GpuGraph>();
    TESSERA_TRY(check(d_.cuStreamEndCapture(raw(stream), &g->graph), "cuStreamEndCapture"));
    CUresult r = d_.cuGraphInstantiate(&g->exec, g->graph, 0);
    if (r != CUDA_SUCCESS) {
      d_.cuGraphDestroy(g->graph);
      return check(r, "cuGraphInstantiate");
    }
    *out = g.release();
    return TESSERA_SUCCESS;
  }
  tessera_status graphLaunch(tessera_graph graph, tessera_stream stream) override {
    TESSERA_TRY(enter());
    return check(d_.cuGraphLaunch(static_cast<GpuGraph*>(graph)->exec, raw(stream)), "cuGraphLaunch");
  }
  tessera_status graphUpdate(tessera_graph exec, tessera_graph from, bool& updated) override {
    TESSERA_TRY(enter());
    auto *e = static_cast<GpuGraph*>(exec), *f = static_cast<GpuGraph*>(from);
    CUgraphExecUpdateResultInfo info{};
    // A refusal (CUDA_ERROR_GRAPH_EXEC_UPDATE_FAILURE: another topology, or nodes it cannot
    // update) is not an error: the caller instantiates `from` instead.
    updated = d_.cuGraphExecUpdate(e->exec, f->graph, &info) == CUDA_SUCCESS;
    if (updated) std::swap(e->graph, f->graph);  // the exec's source graph is `from`'s now
    return TESSERA_SUCCESS;
  }
  tessera_status graphDestroy(tessera_graph graph) override {
    d_.cuCtxSetCurrent(ctx_);  // destroys work even after a fault
    auto* g = static_cast<GpuGraph*>(graph);
    CUresult r1 = d_.cuGraphExecDestroy(g->exec), r2 = d_.cuGraphDestroy(g->graph);
    delete g;
    TESSERA_TRY(check(r1, "cuGraphExecDestroy"));
    return check(r2, "cuGraphDestroy");
  }

 private:
  void unload(const tessera_module_desc* m) {
    std::lock_guard<std::mutex> lock(mutex_);
    auto it = modules_.find(m);
    if (it == modules_.end()) return;
    auto forget = [&](const tessera_kernel_desc* kd) {
      auto f = functions_.find(kd);
      if (f != functions_.end()) {
        sharedOptIn_.erase(f->second);
        functions_.erase(f);
      }
      for (uint32_t v = 0; tessera_kernel_has_v4(kd) && kd->gpu_variants && v < kd->num_gpu_variants; ++v) {
        auto vf = variantFunctions_.find(&kd->gpu_variants[v]);
        if (vf != variantFunctions_.end()) {
          sharedOptIn_.erase(vf->second);
          maxClusters_.erase(vf->second);
          variantFunctions_.erase(vf);
        }
      }
    };
    for (uint32_t i = 0; i < m->num_kernels; ++i) {
      const tessera_kernel_desc* kd = tessera_module_kernel(m, i);
      forget(kd);
      // The candidates of an autotuned kernel live in its table (functions are by descriptor).
      if (const tessera_autotune_desc* t = tessera_kernel_autotune(kd))
        for (uint32_t c = 0; c < t->num_candidates; ++c) forget(tessera_autotune_candidate(t, c));
    }
    d_.cuModuleUnload(it->second);
    modules_.erase(it);
    faultRecords_.erase(m);
  }

  const CudaDriver& d_;
  CUdevice dev_;
  CUcontext ctx_;
  int ordinal_;
  std::string name_;
  DeviceLimits limits_;
  std::mutex mutex_;
  std::string faultMessage_;
  std::unordered_set<CUdeviceptr> asyncPtrs_;  // from allocateAsync, not yet released
  std::unordered_map<const tessera_module_desc*, CUmodule> modules_;
  std::unordered_map<const tessera_module_desc*, CUdeviceptr> faultRecords_;  // 0: none
  std::unordered_map<const tessera_kernel_desc*, CUfunction> functions_;
  std::unordered_map<CUfunction, uint64_t> sharedOptIn_;
  std::unordered_map<const tessera_gpu_variant*, CUfunction> variantFunctions_;
  std::unordered_map<CUfunction, uint64_t> maxClusters_;
  int onlyVariant_ = -1;
  TensorMapCache tensorMaps_;
  uint32_t sm_ = 0, multiprocessors_ = 1;
  bool variantsEnabled_ = true;
};

}  // namespace

std::unique_ptr<Backend> createGpuBackend(std::string& why, int ordinal) {
  const CudaDriver* d = CudaDriver::load(why);
  if (!d) return nullptr;
  CUresult r = d->cuInit(0);
  if (r != CUDA_SUCCESS) {
    why = "cuInit failed: " + d->describe(r);
    return nullptr;
  }
  int count = 0;
  if ((r = d->cuDeviceGetCount(&count)) != CUDA_SUCCESS || count == 0) {
    why = r != CUDA_SUCCESS ? "cuDeviceGetCount failed: " + d->describe(r) : "no CUDA device";
    return nullptr;
  }
  if (ordinal < 0 || ordinal >= count) {
    why = "GPU " + std::to_string(ordinal) + " was asked for but this machine has " + std::to_string(count) +
          " (ordinals 0.." + std::to_string(count - 1) + ")";
    return nullptr;
  }
  CUdevice dev = 0;
  CUcontext ctx = nullptr;
  if ((r = d->cuDeviceGet(&dev, ordinal)) != CUDA_SUCCESS ||
      (r = d->cuDevicePrimaryCtxRetain(&ctx, dev)) != CUDA_SUCCESS || (r = d->cuCtxSetCurrent(ctx)) != CUDA_SUCCESS) {
    why = "cannot set up the primary context of device " + std::to_string(ordinal) + ": " + d->describe(r);
    return nullptr;
  }
  return std::make_unique<GpuBackend>(*d, dev, ctx, ordinal);
}

}  // namespace tessera::rt
#endif
