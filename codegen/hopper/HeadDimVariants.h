// What the sm_90a attention forms (codegen/hopper/HopperAttention.cpp, codegen/hopper/HopperAttentionBwd.cpp)
// share when they plan and emit their variants: one variant per head dimension D (64 or 128) that
// the kernel admits, entry `<kernel>__sm90a_d<D>`, TMA boxes of a fixed number of columns with the
// 128-byte swizzle and exactly D inner elements, the remark of each kernel planned and of each
// kernel whose form's pass said why it keeps its portable form.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "codegen/hopper/HopperKernel.h"
#include "codegen/lower/KernelInterface.h"
#include "ir/IR.h"

namespace tessera::codegen {

// Head dimensions a kernel whose head dimension is `d` admits: its static D, or both when D is
// symbolic.
inline std::vector<unsigned> headDims(const ir::Dim& d) {
  if (d.isStatic())
    return d.size == 64 || d.size == 128 ? std::vector<unsigned>{unsigned(d.size)} : std::vector<unsigned>{};
  return {64, 128};
}

// The entry of the variant of `kernel` for head dimension d.
inline std::string headDimEntry(const std::string& kernel, unsigned d) {
  return kernel + "__sm90a_d" + std::to_string(d);
}

// A form with one variant per head dimension. `Form` is what its pass recorded, decoded; its
// parameter `q` is a tensor whose dimension 3 is the head dimension.
template <class Form>
struct HeadDimForm {
  const char* name;                               // "attention form", for the internal error
  std::optional<Form> (*formOf)(ir::Operation*);  // the kernel's form, if it has one
  ir::AttrId missed;                              // the pass's reason where a kernel keeps its portable form,
  DiagID missedRemark;                            // reported as this remark (kernel name, reason)
  DiagID plannedRemark;                           // a planned kernel's remark: its name, remarkArgs, the dims
  std::function<std::vector<std::string>(const Form&)> remarkArgs;
  unsigned threads, boxColumns;
  std::function<uint64_t(const Form&, unsigned d)> sharedBytes;
  // The variant's tensor maps, in the entry's order: (parameter, rows of its box).
  std::function<std::vector<std::pair<int, unsigned>>(const Form&, unsigned d)> maps;
  // Emits the variant for head dimension d into `out`; false on an internal error.
  std::function<bool(llvm::Module& out, ir::Operation& f, const Form&, unsigned d)> emit;

  std::vector<unsigned> dimsOf(ir::Operation* f, const Form& form) const {
    return headDims(f->body().arg(form.q)->type->shape[3]);
  }
};

// Adds the variants of `form` (one per head dimension the kernel admits) of every kernel of `m`
// that has one to kernels[i].gpuVariants (`kernels` in module order), with its remarks.
template <class Form>
void planHeadDimVariants(ir::Module& m, std::vector<KernelInterface>& kernels, const HeadDimForm<Form>& hf) {
  forEachKernel(m, kernels.size(), [&](ir::Operation* f, size_t i) {
    KernelInterface& k = kernels[i];
    std::optional<Form> form = hf.formOf(f);
    if (!form) {
      // -Rpass-missed=tensor-cores: a kernel like the form's that keeps its portable form.
      if (f->hasAttr(hf.missed)) k.remarks.push_back({hf.missedRemark, f->loc, {k.name, f->strAttr(hf.missed)}});
      return true;
    }
    std::string dims;
    for (unsigned d : hf.dimsOf(f, *form)) {
      GpuVariant v;
      v.entry = headDimEntry(f->funcName(), d);
      v.minSm = 90;
      v.threads = hf.threads;
      v.sharedBytes = hf.sharedBytes(*form, d);
      for (auto [param, rows] : hf.maps(*form, d)) {
        TensorMapRequest r;
        r.param = param;
        r.box[0] = hf.boxColumns;
        r.box[1] = rows;
        r.swizzle = 128;
        r.innerExtent = d;
        v.tensorMaps.push_back(r);
      }
      k.gpuVariants.push_back(v);
      dims += (dims.empty() ? "" : " or ") + std::to_string(d);
    }
    if (!dims.empty()) {
      std::vector<std::string> args{k.name};
      for (std::string& a : hf.remarkArgs(*form)) args.push_back(std::move(a));
      args.push_back(dims);
      k.remarks.push_back({hf.plannedRemark, f->loc, std::move(args)});
    }
    return true;
  });
}

// Emits the variants planned by planHeadDimVariants into `out`, an sm_90a module.
template <class Form>
bool emitHeadDimVariants(ir::Module& m, const std::vector<KernelInterface>& kernels, llvm::Module& out,
                         std::string& error, const HeadDimForm<Form>& hf) {
  return forEachKernel(m, kernels.size(), [&](ir::Operation* f, size_t i) {
    const KernelInterface& k = kernels[i];
    std::optional<Form> form = hf.formOf(f);
    if (!form) return true;
    for (const GpuVariant& v : k.gpuVariants)
      for (unsigned d : hf.dimsOf(f, *form))
        if (v.entry == headDimEntry(f->funcName(), d) && !hf.emit(out, *f, *form, d)) {
          error = "kernel '" + k.name + "' (sm_90a " + hf.name + "): internal error";
          return false;
        }
    return true;
  });
}

}  // namespace tessera::codegen
