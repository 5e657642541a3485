//===- Registry.cpp - Module registration and lookup ----------------------------------------===//
#include "runtime/Registry.h"

#include <algorithm>
#include <cstring>

#include "runtime/Status.h"
#include "runtime/TensorView.h"

namespace tessera::rt {

Registry& Registry::instance() {
  static Registry* registry = new Registry;  // never destroyed: modules unregister at exit
  return *registry;
}

static tessera_status validateAutotune(const tessera_module_desc* m, const tessera_kernel_desc& k);

std::vector<tessera_chain_scratch> chainScratch(const tessera_module_desc* m, const tessera_variant_chain& chain) {
  if (m && m->abi_version >= 7 && chain.num_scratch) {
    if (!chain.scratch) return {};
    return std::vector<tessera_chain_scratch>(chain.scratch, chain.scratch + chain.num_scratch);
  }
  return {{chain.scratch_dtype, chain.rows_param, chain.rows_axis, chain.cols_param, chain.cols_axis, -1}};
}

static tessera_status validateKernel(const tessera_module_desc* m, const tessera_kernel_desc& k) {
  const char* kname = k.name ? k.name : "<unnamed>";
  auto bad = [&](auto... parts) {
    return fail(TESSERA_ERROR_INVALID_ARGUMENT, "module '", m->name, "': kernel '", kname, "': ", parts...);
  };
  // ABI 2 modules have the shorter descriptor without resources and flops.
  size_t want = m->abi_version == 2   ? TESSERA_KERNEL_DESC_V2_SIZE
                : m->abi_version == 3 ? TESSERA_KERNEL_DESC_V3_SIZE
                : m->abi_version == 4 ? TESSERA_KERNEL_DESC_V4_SIZE
                : m->abi_version == 5 ? TESSERA_KERNEL_DESC_V5_SIZE
                                      : sizeof(tessera_kernel_desc);
  if (k.struct_size != want)
    return fail(TESSERA_ERROR_ABI_MISMATCH, "module '", m->name, "': kernel '", kname, "': descriptor size ",
                k.struct_size, ", runtime expects ", want, " for ABI ", m->abi_version);
  if (!k.name || !*k.name) return bad("kernel without a name");
  if (k.num_params && !k.params) return bad("num_params is ", k.num_params, " but params is null");
  if (k.num_symbols && !k.symbols) return bad("num_symbols is ", k.num_symbols, " but symbols is null");
  if (k.grid_symbol >= static_cast<int32_t>(k.num_symbols) || k.grid_symbol < -1)
    return bad("grid_symbol ", k.grid_symbol, " is out of range");
  if (k.flags & TESSERA_KERNEL_GROUPED)
    for (uint32_t g : k.group_shape)
      if (g == 0) return bad("grouped kernel with a zero group dimension");
  if ((k.flags & TESSERA_KERNEL_GROUPED) && tessera_kernel_gpu_tiles(&k) > 1)
    return bad("a grouped kernel cannot run ", tessera_kernel_gpu_tiles(&k),
               " tiles per GPU thread (TESSERA_KERNEL_GPU_TILES_* is for kernels without a group shape)");
  for (uint32_t i = 0; i < k.num_params; ++i) {
    const tessera_param_desc& p = k.params[i];
    const char* pname = p.name ? p.name : "<unnamed>";
    if (!p.name) return bad("parameter ", i, " has no name");
    if (!isValidDtype(p.dtype)) return bad("parameter '", pname, "': invalid dtype ", p.dtype);
    if (p.kind == TESSERA_PARAM_SCALAR) continue;
    if (p.kind != TESSERA_PARAM_TENSOR) return bad("parameter '", pname, "': invalid kind ", p.kind);
    if (p.rank < 0 || p.rank > TESSERA_MAX_RANK)
      return bad("parameter '", pname, "': rank ", p.rank, " outside 0..", TESSERA_MAX_RANK);
    if (p.rank && !p.extents) return bad("parameter '", pname, "': no extents");
    for (int32_t d = 0; d < p.rank; ++d) {
      const tessera_extent& e = p.extents[d];
      bool symOk = e.symbol >= 0 && static_cast<uint32_t>(e.symbol) < k.num_symbols;
      if (e.kind == TESSERA_EXTENT_SYMBOL && !symOk)
        return bad("parameter '", pname, "': dimension ", d, " names symbol ", e.symbol, " of ", k.num_symbols);
      if (e.kind == TESSERA_EXTENT_EXPR) {
        if (!e.expr || !e.expr_len) return bad("parameter '", pname, "': dimension ", d, " has an empty expression");
        for (uint32_t j = 0; j < e.expr_len; ++j)
          if (e.expr[j].op == TESSERA_EXPR_SYMBOL &&
              (e.expr[j].symbol < 0 || static_cast<uint32_t>(e.expr[j].symbol) >= k.num_symbols))
            return bad("parameter '", pname, "': dimension ", d, " expression names symbol ", e.expr[j].symbol, " of ",
                       k.num_symbols);
      }
      if (e.kind < TESSERA_EXTENT_ANY || e.kind > TESSERA_EXTENT_EXPR)
        return bad("parameter '", pname, "': dimension ", d, " has invalid extent kind ", e.kind);
    }
  }
  if (tessera_kernel_has_v3(&k)) {
    if (k.num_resources && !k.resources) return bad("num_resources is ", k.num_resources, " but resources is null");
    if (k.flops_len && !k.flops) return bad("flops_len is ", k.flops_len, " but flops is null");
    for (uint32_t j = 0; j < k.flops_len; ++j)
      if (k.flops[j].op == TESSERA_EXPR_SYMBOL &&
          (k.flops[j].symbol < 0 || static_cast<uint32_t>(k.flops[j].symbol) >= k.num_symbols))
        return bad("the flops expression names symbol ", k.flops[j].symbol, " of ", k.num_symbols);
  }
  if (tessera_kernel_has_v4(&k)) {
    if (k.num_gpu_variants && !k.gpu_variants)
      return bad("num_gpu_variants is ", k.num_gpu_variants, " but gpu_variants is null");
    const tessera_variant_chain* chain = tessera_kernel_chain(&k);
    auto tensorParam = [&](int32_t p) {
      return p >= 0 && static_cast<uint32_t>(p) < k.num_params && k.params[p].kind == TESSERA_PARAM_TENSOR;
    };
    std::vector<tessera_chain_scratch> scratch = chain ? chainScratch(m, *chain) : std::vector<tessera_chain_scratch>{};
    if (chain && (chain->num_steps < 1 || chain->num_steps > k.num_gpu_variants || scratch.empty()))
      return bad("the variant chain names steps or scratch extents the kernel does not have");
    for (const tessera_chain_scratch& s : scratch)
      if (s.dtype <= 0 || !tensorParam(s.rows_param) || s.rows_axis >= k.params[s.rows_param].rank ||
          !tensorParam(s.cols_param) || s.cols_axis >= k.params[s.cols_param].rank ||
          s.step >= static_cast<int32_t>(chain->num_steps) || s.step < -1)
        return bad("the variant chain names steps or scratch extents the kernel does not have");
    for (uint32_t j = 0; j < k.num_gpu_variants; ++j) {
      const tessera_gpu_variant& v = k.gpu_variants[j];
      if (!v.gpu_entry || !*v.gpu_entry || (v.num_tensor_maps && !v.tensor_maps))
        return bad("GPU variant ", j, " has no entry name or a null tensor-map list");
      for (uint32_t t = 0; t < v.num_tensor_maps; ++t) {
        int32_t p = v.tensor_maps[t].param;
        bool readsScratch = chain && j < chain->num_steps && p >= static_cast<int32_t>(k.num_params) &&
                            static_cast<size_t>(p) < k.num_params + scratch.size();
        if (!readsScratch && !tensorParam(p))
          return bad("GPU variant ", j, ": tensor map ", t, " names parameter ", p, ", not a tensor parameter");
      }
    }
  }
  if (k.num_grid_blocks && !k.grid_blocks)
    return bad("num_grid_blocks is ", k.num_grid_blocks, " but grid_blocks is null");
  for (uint32_t i = 0; i < k.num_grid_blocks; ++i) {
    const tessera_grid_block& b = k.grid_blocks[i];
    if (b.param < 0 || static_cast<uint32_t>(b.param) >= k.num_params ||
        k.params[b.param].kind != TESSERA_PARAM_TENSOR || b.axis < 0 || b.axis >= k.params[b.param].rank || b.step <= 0)
      return bad("grid block ", i, " (parameter ", b.param, ", axis ", b.axis, ", step ", b.step,
                 ") names no dimension of a tensor parameter");
  }
  if (k.num_workspace && !k.workspace) return bad("num_workspace is ", k.num_workspace, " but workspace is null");
  for (uint32_t i = 0; i < k.num_workspace; ++i) {
    const tessera_workspace_slot& w = k.workspace[i];
    if (w.rank > TESSERA_MAX_RANK || (w.rank && !w.extents) || !w.elem_bytes)
      return bad("workspace slot ", i, " is malformed");
    for (uint32_t d = 0; d < w.rank; ++d) {
      const tessera_extent& e = w.extents[d];
      bool symOk = e.symbol >= 0 && static_cast<uint32_t>(e.symbol) < k.num_symbols;
      if (e.kind == TESSERA_EXTENT_ANY || e.kind > TESSERA_EXTENT_EXPR || (e.kind == TESSERA_EXTENT_SYMBOL && !symOk) ||
          (e.kind == TESSERA_EXTENT_EXPR && (!e.expr || !e.expr_len)))
        return bad("workspace slot ", i, ": dimension ", d, " has no usable extent");
      for (uint32_t j = 0; e.kind == TESSERA_EXTENT_EXPR && j < e.expr_len; ++j)
        if (e.expr[j].op == TESSERA_EXPR_SYMBOL &&
            (e.expr[j].symbol < 0 || static_cast<uint32_t>(e.expr[j].symbol) >= k.num_symbols))
          return bad("workspace slot ", i, ": dimension ", d, " names symbol ", e.expr[j].symbol, " of ",
                     k.num_symbols);
    }
  }
  return validateAutotune(m, k);
}

// The candidate table: every candidate a valid kernel of the same signature, without a table
// of its own.
static tessera_status validateAutotune(const tessera_module_desc* m, const tessera_kernel_desc& k) {
  const tessera_autotune_desc* t = tessera_kernel_autotune(&k);
  if (!t) return TESSERA_SUCCESS;
  auto bad = [&](auto... parts) {
    return fail(TESSERA_ERROR_INVALID_ARGUMENT, "module '", m->name, "': kernel '", k.name,
                "': autotune table: ", parts...);
  };
  if (!t->num_candidates || t->num_candidates > TESSERA_AUTOTUNE_MAX_CANDIDATES || !t->candidates ||
      (t->num_params && (!t->param_names || !t->values)))
    return bad(t->num_candidates, " candidates, or a null list");
  for (uint32_t p = 0; p < t->num_params; ++p)
    if (!t->param_names[p] || !*t->param_names[p]) return bad("parameter ", p, " has no name");
  for (uint32_t i = 0; i < t->num_candidates; ++i) {
    const tessera_kernel_desc& c = *tessera_autotune_candidate(t, i);
    if (c.struct_size != k.struct_size || c.autotune)
      return bad("candidate ", i, " is not a plain ABI ", TESSERA_ABI_VERSION, " kernel descriptor");
    TESSERA_TRY(validateKernel(m, c));
    bool same = c.num_params == k.num_params && c.num_symbols == k.num_symbols;
    for (uint32_t p = 0; same && p < k.num_params; ++p)
      same = !std::strcmp(c.params[p].name, k.params[p].name) && c.params[p].kind == k.params[p].kind &&
             c.params[p].dtype == k.params[p].dtype && c.params[p].rank == k.params[p].rank &&
             c.params[p].flags == k.params[p].flags;
    if (!same) return bad("candidate ", i, " does not take the kernel's parameters");
  }
  return TESSERA_SUCCESS;
}

tessera_status validateModule(const tessera_module_desc* m) {
  if (!m) return fail(TESSERA_ERROR_INVALID_ARGUMENT, "null module descriptor");
  if (m->abi_version < TESSERA_ABI_MIN_VERSION || m->abi_version > TESSERA_ABI_VERSION)
    return fail(TESSERA_ERROR_ABI_MISMATCH, "module '", m->name ? m->name : "<unnamed>", "' was built for Tessera ABI ",
                m->abi_version, ", this runtime implements ABI ", TESSERA_ABI_MIN_VERSION, " to ", TESSERA_ABI_VERSION,
                "; rebuild it with a matching tesserac");
  if (m->struct_size != sizeof(tessera_module_desc))
    return fail(TESSERA_ERROR_ABI_MISMATCH, "module '", m->name ? m->name : "<unnamed>", "': descriptor size ",
                m->struct_size, ", runtime expects ", sizeof(tessera_module_desc));
  if (!m->name || !*m->name) return fail(TESSERA_ERROR_INVALID_ARGUMENT, "module descriptor without a name");
  if (m->num_kernels && !m->kernels)
    return fail(TESSERA_ERROR_INVALID_ARGUMENT, "module '", m->name, "': num_kernels is ", m->num_kernels,
                " but kernels is null");
  if (m->fatbin && !m->fatbin_size)
    return fail(TESSERA_ERROR_INVALID_ARGUMENT, "module '", m->name, "': fatbin of size 0");
  for (uint32_t i = 0; i < m->num_kernels; ++i) {
    const tessera_kernel_desc& k = *tessera_module_kernel(m, i);
    TESSERA_TRY(validateKernel(m, k));
    for (uint32_t j = 0; j < i; ++j)
      if (!std::strcmp(k.name, tessera_module_kernel(m, j)->name))
        return fail(TESSERA_ERROR_INVALID_ARGUMENT, "module '", m->name, "': kernel '", k.name, "' is defined twice");
  }
  return TESSERA_SUCCESS;
}

tessera_status Registry::add(const tessera_module_desc* module) {
  tessera_status st = validateModule(module);
  std::lock_guard<std::mutex> lock(mutex_);
  if (st != TESSERA_SUCCESS) {
    if (module && module->kernels) {
      if (rejected_.size() == 64) rejected_.erase(rejected_.begin());
      rejected_.push_back({module->kernels, module->kernels + module->num_kernels, lastError()});
    }
    return st;
  }
  for (const tessera_module_desc* m : modules_) {
    if (m == module) return fail(TESSERA_ERROR_ALREADY_REGISTERED, "module '", module->name, "' is already registered");
    if (!std::strcmp(m->name, module->name))
      return fail(TESSERA_ERROR_ALREADY_REGISTERED, "another module named '", module->name,
                  "' is already registered (module names must be unique in a process)");
  }
  modules_.push_back(module);
  const tessera_kernel_desc *b = module->kernels, *e = b + module->num_kernels;
  std::erase_if(rejected_, [&](const Rejection& r) { return r.begin < e && b < r.end; });
  return TESSERA_SUCCESS;
}

tessera_status Registry::remove(const tessera_module_desc* module) {
  std::function<void(const tessera_module_desc*)> hook;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    auto it = std::find(modules_.begin(), modules_.end(), module);
    if (it == modules_.end())
      return fail(TESSERA_ERROR_NOT_FOUND, "module '", module && module->name ? module->name : "<null>",
                  "' is not registered");
    modules_.erase(it);
    hook = unloadHook_;
  }
  if (hook) hook(module);
  return TESSERA_SUCCESS;
}

tessera_status Registry::find(const char* module, const char* kernel, const tessera_kernel_desc** out) const {
  if (!module || !kernel || !out) return fail(TESSERA_ERROR_INVALID_ARGUMENT, "tessera_find_kernel: null argument");
  std::lock_guard<std::mutex> lock(mutex_);
  for (const tessera_module_desc* m : modules_) {
    if (std::strcmp(m->name, module)) continue;
    for (uint32_t i = 0; i < m->num_kernels; ++i)
      if (!std::strcmp(tessera_module_kernel(m, i)->name, kernel)) {
        *out = tessera_module_kernel(m, i);
        return TESSERA_SUCCESS;
      }
    return fail(TESSERA_ERROR_NOT_FOUND, "module '", module, "' has no kernel '", kernel, "'");
  }
  return fail(TESSERA_ERROR_NOT_FOUND, "no module '", module, "' is registered");
}

std::string Registry::rejectionOf(const tessera_kernel_desc* kernel) const {
  std::lock_guard<std::mutex> lock(mutex_);
  for (auto it = rejected_.rbegin(); it != rejected_.rend(); ++it)
    if (kernel >= it->begin && kernel < it->end) return it->why;
  return "";
}

const tessera_module_desc* Registry::moduleOf(const tessera_kernel_desc* kernel) const {
  std::lock_guard<std::mutex> lock(mutex_);
  for (const tessera_module_desc* m : modules_)
    if (m->num_kernels && kernel >= m->kernels && kernel < m->kernels + m->num_kernels) return m;
  return nullptr;
}

void Registry::setUnloadHook(std::function<void(const tessera_module_desc*)> hook) {
  std::lock_guard<std::mutex> lock(mutex_);
  unloadHook_ = std::move(hook);
}

}  // namespace tessera::rt

extern "C" {
tessera_status tessera_register_module(const tessera_module_desc* module) {
  return tessera::rt::Registry::instance().add(module);
}
tessera_status tessera_unregister_module(const tessera_module_desc* module) {
  return tessera::rt::Registry::instance().remove(module);
}
tessera_status tessera_find_kernel(const char* module, const char* kernel, const tessera_kernel_desc** out) {
  return tessera::rt::Registry::instance().find(module, kernel, out);
}
}
