// Which kernels get the sm_90a GEMM schedule (codegen/hopper/HopperGemm.cpp), with which entries:
//   - a kernel that is one canonical tile.mma loop (`mma_form`, ir/passes/MmaForm.cpp): one entry
//     `<kernel>__sm90a` (and a cluster-of-2 entry for fp8), tried before the portable entry;
//   - a whole-tensor program whose products have steps (`product_steps`, ir/passes/ProductPlan.h):
//     one entry per step, `<kernel>__sm90a` alone, or `<kernel>__sm90a_s<i>` run in order as a
//     variant chain with the scratch matrices between them (docs/abi.md 4.4).
// The planning step adds the variants and remarks to each kernel's interface; the emitting step
// builds the planned entries into the sm_90a module.
#include <algorithm>
#include <memory>
#include <optional>

#include "codegen/hopper/HopperForms.h"
#include "codegen/hopper/HopperGemmForm.h"
#include "codegen/hopper/HopperKernel.h"
#include "codegen/lower/LowerToLLVM.h"
#include "codegen/lower/Lowering.h"
#include "ir/IR.h"
#include "ir/Pass.h"

namespace tessera::codegen {

namespace {

using namespace gemm;

std::optional<GemmForm> mmaFormOf(ir::Operation* f) {
  const ir::Attribute* at = f->attr(ir::AttrId::MmaForm);
  if (!at || at->kind != ir::AttrKind::Array || at->array.size() != 7 || f->regions.empty()) return std::nullopt;
  GemmForm form;
  int a = static_cast<int>(at->array[0].i), b = static_cast<int>(at->array[1].i);
  form.c = static_cast<int>(at->array[2].i);
  form.a = {a, true};
  form.b = {{b, at->array[6].i != 0}};
  ir::Block& body = f->body();
  for (int i : {a, b, form.c}) {
    if (i < 0 || i >= static_cast<int>(body.numArgs())) return std::nullopt;
    ir::Type t = body.arg(i)->type;
    if (t->kind != ir::TypeKind::Tensor || t->shape.size() != 2 || !t->elem) return std::nullopt;
  }
  form.in = ir::baseScalar(body.arg(a)->type->elem);
  ir::ScalarKind out = ir::baseScalar(body.arg(form.c)->type->elem);
  form.outElem = body.arg(form.c)->type->elem;
  form.m = {form.c, 0};
  form.n = {form.c, 1};
  form.k = {a, 1};
  form.entry = f->funcName() + "__sm90a";
  bool in16 = form.in == ir::ScalarKind::BF16 || form.in == ir::ScalarKind::F16;
  bool outOk = out == ir::ScalarKind::F32 || out == ir::ScalarKind::BF16 || out == ir::ScalarKind::F16;
  if (!(in16 || (form.fp8() && form.b[0].kMajor)) || !outOk || ir::baseScalar(body.arg(b)->type->elem) != form.in)
    return std::nullopt;
  for (int i : {a, b}) {
    ir::Type e = body.arg(i)->type->elem;
    if (e->kind == ir::TypeKind::Num && e->scale != 0) form.scale *= e->scale;
  }
  ir::Type ce = body.arg(form.c)->type->elem;
  if (ce->kind == ir::TypeKind::Num) {
    // mma-form refuses other store policies; kept as a guard.
    if ((ce->round != ir::Rounding::Default && ce->round != ir::Rounding::NearestEven) || ce->saturate)
      return std::nullopt;
    if (ce->scale != 0) form.scale /= ce->scale;
  }
  return form;
}

ir::Type scalarType(ir::Module& m, ir::ScalarKind k) { return m.ctx().scalar(k); }

// The steps of a whole-tensor program's products, as forms (in `plan`'s step order).
std::vector<GemmForm> stepForms(ir::Module& m, ir::Operation* f, const ir::ProductPlan& plan) {
  std::vector<GemmForm> forms;
  const int params = static_cast<int>(f->body().numArgs());
  auto mapParam = [&](const ir::StepMatrix& x) { return x.scratch >= 0 ? params + x.scratch : x.param; };
  for (size_t i = 0; i < plan.steps.size(); ++i) {
    const ir::ProductStep& s = plan.steps[i];
    GemmForm form;
    form.a = {mapParam(s.a), true};
    for (const ir::StepProduct& p : s.products) form.b.push_back({p.b, p.kMajor});
    form.in = ir::baseScalar(f->body().arg(static_cast<unsigned>(s.products[0].b))->type->elem);
    if (s.out.scratch >= 0) {
      form.cScratch = s.out.scratch;
      form.outElem = scalarType(m, plan.scratch[static_cast<size_t>(s.out.scratch)].elem);
    } else {
      form.c = s.out.param;
      form.outElem = f->body().arg(static_cast<unsigned>(s.out.param))->type->elem;
    }
    form.m = s.m, form.n = s.n, form.k = s.k;
    form.step = &s;
    form.entry = f->funcName() + "__sm90a" + (plan.steps.size() > 1 ? "_s" + std::to_string(i) : "");
    forms.push_back(form);
  }
  return forms;
}

std::string paramName(ir::Operation* f, int p) {
  const int params = static_cast<int>(f->body().numArgs());
  if (p >= params) return "scratch " + std::to_string(p - params);
  std::string n = f->body().arg(static_cast<unsigned>(p))->nameHint;
  return n.empty() ? "parameter " + std::to_string(p) : n;
}

// "X @ W1 and X @ W3 (2 x 128 x 128 tiles), 3 epilogue ops -> scratch 0 (bf16)" per step.
std::string describeSteps(ir::Operation* f, const std::vector<GemmForm>& forms) {
  std::string text;
  for (size_t i = 0; i < forms.size(); ++i) {
    const GemmForm& s = forms[i];
    if (i) text += "; ";
    if (forms.size() > 1) text += "step " + std::to_string(i) + ": ";
    for (size_t p = 0; p < s.b.size(); ++p)
      text += (p ? " and " : "") + paramName(f, s.a.param) + " @ " + paramName(f, s.b[p].param) +
              (s.b[p].kMajor ? ".T" : "");
    text += " (" + std::string(s.b.size() > 1 ? "2 x " : "") + std::to_string(kBM) + " x " + std::to_string(s.bn()) +
            " tiles, k steps of " + std::to_string(s.bk()) + "), ";
    size_t ops = s.step ? s.step->epilogue.size() : 0;
    text += std::to_string(ops) + " epilogue op" + (ops == 1 ? "" : "s") + " -> ";
    text += s.cScratch >= 0 ? "scratch " + std::to_string(s.cScratch) + " (" + ir::printType(s.outElem) + ")"
                            : paramName(f, s.c);
  }
  return text;
}

// A whole-tensor program with steps: its variants (one entry, or a chain), its remarks.
bool planSteps(ir::Module& m, ir::Operation* f, KernelInterface& k) {
  if (!f->hasAttr(ir::AttrId::ProductSteps)) {
    if (f->hasAttr(ir::AttrId::ProductStepsMissed))
      k.remarks.push_back(
          {diag::remark_no_product_steps, f->loc, {k.name, f->strAttr(ir::AttrId::ProductStepsMissed)}});
    return false;
  }
  std::string why;
  auto plan = ir::planProducts(*f, why);
  if (!plan) {
    k.remarks.push_back({diag::remark_no_product_steps, f->loc, {k.name, why}});
    return false;
  }
  std::vector<GemmForm> forms = stepForms(m, f, *plan);
  for (const GemmForm& s : forms) k.gpuVariants.push_back(gemmVariant(s, 1));
  if (forms.size() > 1) {
    k.chain.steps = static_cast<uint32_t>(forms.size());
    for (const ir::ScratchMatrix& s : plan->scratch) {
      KernelInterface::ChainScratch c;
      c.dtype = dtypeOf(s.elem);
      c.rowsParam = s.rows.param, c.rowsAxis = static_cast<int32_t>(s.rows.axis);
      c.colsParam = s.cols.param, c.colsAxis = static_cast<int32_t>(s.cols.axis);
      c.step = s.writtenBy;
      k.chain.scratch.push_back(c);
    }
  }
  std::string steps = forms.size() == 1 ? "one step" : std::to_string(forms.size()) + " steps";
  k.remarks.push_back({diag::remark_product_steps, f->loc, {k.name, steps, describeSteps(f, forms)}});
  std::string read;
  std::vector<int> seen;
  for (const GemmForm& s : forms)
    for (int p : {s.a.param, s.b[0].param, s.b.size() > 1 ? s.b[1].param : -1})
      if (p >= 0 && p < static_cast<int>(f->body().numArgs()) && std::find(seen.begin(), seen.end(), p) == seen.end()) {
        seen.push_back(p);
        read += (read.empty() ? "" : ", ") + paramName(f, p);
      }
  k.remarks.push_back({diag::remark_product_launch_test, f->loc, {k.name, read}});
  return true;
}

}  // namespace

void planHopperVariants(ir::Module& m, std::vector<KernelInterface>& kernels) {
  forEachKernel(m, kernels.size(), [&](ir::Operation* f, size_t i) {
    KernelInterface& k = kernels[i];
    k.gpuVariants.clear();
    k.chain = {};
    if (planSteps(m, f, k)) return true;
    auto form = mmaFormOf(f);
    if (!form) {
      // -Rpass-missed=tensor-cores: a tile.mma kernel that keeps its mma.sync form on sm_90a.
      bool hasMma = false;
      f->walk([&](ir::Operation* op) { hasMma |= op->id == ir::OpId::TileMma; });
      if (hasMma) k.remarks.push_back({diag::remark_no_wgmma, f->loc, {k.name, ir::mmaFormMismatch(*f)}});
      return true;
    }
    // Autotune candidates differ in the mma.sync form's tile sizes only; the Hopper form picks
    // its own, so they share their kernel's Hopper entries (one copy of the code, same bits).
    if (!k.autotuneOf.empty()) {
      auto base = std::find_if(kernels.begin(), kernels.begin() + i,
                               [&](const KernelInterface& b) { return b.name == k.autotuneOf; });
      if (base != kernels.begin() + i && !base->gpuVariants.empty()) {
        k.gpuVariants = base->gpuVariants;
        return true;
      }
    }
    k.remarks.push_back({diag::remark_tensor_cores_wgmma,
                         f->loc,
                         {k.name, std::to_string(kBM), std::to_string(kBN), std::to_string(form->bk())}});
    k.remarks.push_back({diag::remark_pipelined_tma,
                         f->loc,
                         {k.name, std::to_string(kStages), std::to_string((kThreads - 128) / 128)}});
    // The emitter also builds clusters of 2 with B multicast ({2, 1}: the pair first, single CTAs
    // where no pair fits); measured on an H100 they ran level with single CTAs for 16-bit operands
    // (docs/performance.md), so only single CTAs are emitted there, which halves the compile
    // time. fp8 moves twice the FLOPs per byte of the same k blocks, so L2-to-SM traffic weighs
    // twice as much: it gets the pair too.
    std::vector<unsigned> clusters = form->fp8() ? std::vector<unsigned>{2, 1} : std::vector<unsigned>{1};
    for (unsigned cluster : clusters) k.gpuVariants.push_back(gemmVariant(*form, cluster));
    return true;
  });
}

void remarkProductsWithoutHopper(ir::Module& m, std::vector<KernelInterface>& kernels) {
  forEachKernel(m, kernels.size(), [&](ir::Operation* f, size_t i) {
    if (f->hasAttr(ir::AttrId::ProductSteps))
      kernels[i].remarks.push_back(
          {diag::remark_no_product_steps, f->loc, {kernels[i].name, "no sm_90a among the GPU targets (--gpu)"}});
    else if (f->hasAttr(ir::AttrId::ProductStepsMissed))
      kernels[i].remarks.push_back(
          {diag::remark_no_product_steps, f->loc, {kernels[i].name, f->strAttr(ir::AttrId::ProductStepsMissed)}});
    return true;
  });
}

bool emitHopperVariants(ir::Module& m, const std::vector<KernelInterface>& kernels, llvm::Module& out,
                        std::string& error) {
  // One lowering for every epilogue of the module (its hooks and the math functions it declares).
  std::string lowerError;
  auto lowering = std::make_unique<detail::Lowering>(m, DeviceTarget::Gpu, out, lowerError);
  return forEachKernel(m, kernels.size(), [&](ir::Operation* f, size_t i) {
    const KernelInterface& k = kernels[i];
    if (k.gpuVariants.empty()) return true;
    std::vector<GemmForm> forms;
    std::optional<ir::ProductPlan> plan;
    if (f->hasAttr(ir::AttrId::ProductSteps)) {
      std::string why;
      plan = ir::planProducts(*f, why);
      if (plan) forms = stepForms(m, f, *plan);
    } else if (auto form = mmaFormOf(f)) {
      forms.push_back(*form);
    }
    for (const GemmForm& form : forms)
      for (const GpuVariant& v : k.gpuVariants) {
        // Autotune candidates share their kernel's entries (emitted with it).
        if (v.entry != gemmVariant(form, v.cluster).entry) continue;
        if (!emitGemmForm(out, *f, k, form, v.cluster, lowering.get(), error)) {
          if (!lowerError.empty()) error += " (" + lowerError + ")";
          error = "kernel '" + k.name + "' (sm_90a form): " + error;
          return false;
        }
      }
    return true;
  });
}

}  // namespace tessera::codegen
