// The host half of a compiled module: registration data laid out exactly as runtime.h, launch
// stubs, the object file, and the generated header.
#include <cstddef>
#include <cstring>
#include <doctest/doctest.h>

#include "codegen/host/HostModule.h"
#include "llvm/IR/Constants.h"
#include "llvm/IR/DataLayout.h"
#include "llvm/IR/GlobalVariable.h"
#include "llvm/IR/LLVMContext.h"
#include "llvm/IR/Module.h"
#include "llvm/Target/TargetMachine.h"
#include "runtime/include/tessera/runtime.h"

using namespace tessera::codegen;

namespace {
HostModuleInput saxpyModule() {
  HostModuleInput in;
  in.moduleName = "saxpy";
  in.sourceName = "saxpy.tessera";
  KernelInterface k;
  k.name = "saxpy";
  k.symbols = {"n"};
  Extent n;
  n.kind = Extent::Symbol;
  n.symbol = 0;
  k.params.push_back({"x", true, TESSERA_F32, false, {n}});
  k.params.push_back({"y", true, TESSERA_F32, true, {n}});
  k.params.push_back({"alpha", false, TESSERA_F32, false, {}});
  k.gpuEntry = "saxpy";
  in.kernels.push_back(k);

  KernelInterface g;
  g.name = "tp_gemm";
  g.symbols = {"M", "K", "tp", "N"};
  Extent M{Extent::Symbol, 0, 0, {}}, N{Extent::Symbol, 3, 0, {}};
  Extent Kdiv{Extent::Expr, 0, 0, {{ExtentOp::Symbol, 1, 0}, {ExtentOp::Symbol, 2, 0}, {ExtentOp::Div, 0, 0}}};
  Extent Ndiv{Extent::Expr, 0, 0, {{ExtentOp::Symbol, 3, 0}, {ExtentOp::Symbol, 2, 0}, {ExtentOp::Div, 0, 0}}};
  g.params.push_back({"A", true, TESSERA_F16, false, {M, Kdiv}});
  g.params.push_back({"C", true, TESSERA_F32, true, {M, Ndiv}});
  g.params.push_back({"scale", false, TESSERA_BF16, false, {}});
  g.grouped = true;
  g.groupShape[0] = 128;
  in.kernels.push_back(g);
  return in;
}
}  // namespace

TEST_CASE("registration structs have the layout of runtime.h") {
  std::string error;
  auto tm = createHostTargetMachine(2, error);
  REQUIRE_MESSAGE(tm, error);
  llvm::LLVMContext ctx;
  llvm::Module m("layout", ctx);
  m.setDataLayout(tm->createDataLayout());
  REQUIRE(buildHostModule(m, saxpyModule(), error));
  const llvm::DataLayout& dl = m.getDataLayout();
  auto layout = [&](const char* name) {
    auto* st = llvm::StructType::getTypeByName(ctx, name);
    REQUIRE(st);
    return dl.getStructLayout(st);
  };
  auto* kd = layout("tessera_kernel_desc");
  CHECK(kd->getSizeInBytes() == sizeof(tessera_kernel_desc));
  CHECK(kd->getElementOffset(2) == offsetof(tessera_kernel_desc, name));
  CHECK(kd->getElementOffset(7) == offsetof(tessera_kernel_desc, grid_symbol));
  CHECK(kd->getElementOffset(8) == offsetof(tessera_kernel_desc, group_shape));
  CHECK(kd->getElementOffset(9) == offsetof(tessera_kernel_desc, shared_bytes));
  CHECK(kd->getElementOffset(11) == offsetof(tessera_kernel_desc, cpu_entry));
  CHECK(kd->getElementOffset(12) == offsetof(tessera_kernel_desc, cpu_stack_bytes));
  CHECK(kd->getElementOffset(13) == offsetof(tessera_kernel_desc, workspace));
  CHECK(kd->getElementOffset(14) == offsetof(tessera_kernel_desc, num_workspace));
  CHECK(kd->getElementOffset(15) == offsetof(tessera_kernel_desc, grid_blocks));
  CHECK(kd->getElementOffset(16) == offsetof(tessera_kernel_desc, num_grid_blocks));
  CHECK(kd->getElementOffset(18) == offsetof(tessera_kernel_desc, resources));
  CHECK(kd->getElementOffset(18) == TESSERA_KERNEL_DESC_V2_SIZE);
  CHECK(kd->getElementOffset(19) == offsetof(tessera_kernel_desc, num_resources));
  CHECK(kd->getElementOffset(20) == offsetof(tessera_kernel_desc, flops_len));
  CHECK(kd->getElementOffset(21) == offsetof(tessera_kernel_desc, flops));
  auto* rs = layout("tessera_kernel_resources");
  CHECK(rs->getSizeInBytes() == sizeof(tessera_kernel_resources));
  CHECK(rs->getElementOffset(6) == offsetof(tessera_kernel_resources, static_shared_bytes));
  CHECK(rs->getElementOffset(8) == offsetof(tessera_kernel_resources, threads_per_group));
  CHECK(rs->getElementOffset(16) == offsetof(tessera_kernel_resources, ldmatrix_count));
  CHECK(kd->getElementOffset(22) == offsetof(tessera_kernel_desc, gpu_variants));
  CHECK(kd->getElementOffset(22) == TESSERA_KERNEL_DESC_V3_SIZE);
  CHECK(kd->getElementOffset(23) == offsetof(tessera_kernel_desc, num_gpu_variants));
  CHECK(kd->getElementOffset(25) == offsetof(tessera_kernel_desc, variant_resources));
  CHECK(kd->getElementOffset(25) == TESSERA_KERNEL_DESC_V4_SIZE);
  CHECK(kd->getElementOffset(26) == offsetof(tessera_kernel_desc, autotune));
  auto* at = layout("tessera_autotune_desc");
  CHECK(at->getSizeInBytes() == sizeof(tessera_autotune_desc));
  CHECK(at->getElementOffset(2) == offsetof(tessera_autotune_desc, param_names));
  CHECK(at->getElementOffset(4) == offsetof(tessera_autotune_desc, candidates));
  CHECK(at->getElementOffset(5) == offsetof(tessera_autotune_desc, code_hash));
  CHECK(at->getElementOffset(6) == offsetof(tessera_autotune_desc, flags));
  auto* gv = layout("tessera_gpu_variant");
  CHECK(gv->getSizeInBytes() == sizeof(tessera_gpu_variant));
  CHECK(gv->getElementOffset(3) == offsetof(tessera_gpu_variant, shared_bytes));
  CHECK(gv->getElementOffset(4) == offsetof(tessera_gpu_variant, tensor_maps));
  CHECK(gv->getElementOffset(5) == offsetof(tessera_gpu_variant, num_tensor_maps));
  CHECK(gv->getElementOffset(6) == offsetof(tessera_gpu_variant, cluster_dim));
  auto* chain = layout("tessera_variant_chain");
  CHECK(chain->getSizeInBytes() == sizeof(tessera_variant_chain));
  CHECK(chain->getElementOffset(6) == offsetof(tessera_variant_chain, num_scratch));
  CHECK(chain->getElementOffset(8) == offsetof(tessera_variant_chain, scratch));
  auto* scratch = layout("tessera_chain_scratch");
  CHECK(scratch->getSizeInBytes() == sizeof(tessera_chain_scratch));
  CHECK(scratch->getElementOffset(5) == offsetof(tessera_chain_scratch, step));
  auto* tmap = layout("tessera_tensor_map_desc");
  CHECK(tmap->getSizeInBytes() == sizeof(tessera_tensor_map_desc));
  CHECK(tmap->getElementOffset(2) == offsetof(tessera_tensor_map_desc, swizzle));
  auto* gb = layout("tessera_grid_block");
  CHECK(gb->getSizeInBytes() == sizeof(tessera_grid_block));
  auto* ws = layout("tessera_workspace_slot");
  CHECK(ws->getSizeInBytes() == sizeof(tessera_workspace_slot));
  CHECK(ws->getElementOffset(2) == offsetof(tessera_workspace_slot, extents));
  auto* md = layout("tessera_module_desc");
  CHECK(md->getSizeInBytes() == sizeof(tessera_module_desc));
  CHECK(md->getElementOffset(4) == offsetof(tessera_module_desc, fatbin_size));
  CHECK(md->getElementOffset(6) == offsetof(tessera_module_desc, num_kernels));
  auto* pd = layout("tessera_param_desc");
  CHECK(pd->getSizeInBytes() == sizeof(tessera_param_desc));
  CHECK(pd->getElementOffset(5) == offsetof(tessera_param_desc, extents));
  auto* ex = layout("tessera_extent");
  CHECK(ex->getSizeInBytes() == sizeof(tessera_extent));
  CHECK(ex->getElementOffset(3) == offsetof(tessera_extent, expr));
  CHECK(ex->getElementOffset(4) == offsetof(tessera_extent, expr_len));
  CHECK(layout("tessera_expr_op")->getSizeInBytes() == sizeof(tessera_expr_op));
  auto* arg = layout("tessera_arg");
  CHECK(arg->getSizeInBytes() == sizeof(tessera_arg));
  CHECK(arg->getElementOffset(2) == offsetof(tessera_arg, value));
}

TEST_CASE("host object: ELF with the launch stubs and the registration constructor") {
  llvm::LLVMContext ctx;
  llvm::Module m("saxpy", ctx);
  std::string error;
  HostModuleInput in = saxpyModule();
  in.fatbin = std::string("\x50\xed\x55\xba", 4) + std::string(60, '\0');
  REQUIRE_MESSAGE(buildHostModule(m, in, error), error);
  CHECK(m.getFunction("saxpy_saxpy"));
  CHECK(m.getFunction("saxpy_tp_gemm"));
  CHECK(m.getNamedGlobal("llvm.global_ctors"));
  CHECK(m.getNamedGlobal("llvm.global_dtors"));
  std::string object;
  REQUIRE_MESSAGE(emitHostObject(m, 2, object, error), error);
  REQUIRE(object.size() > 64);
  CHECK(std::memcmp(object.data(),
                    "\x7f"
                    "ELF",
                    4) == 0);
  CHECK(object[4] == 2);  // 64-bit
  CHECK(object.find("saxpy_saxpy") != std::string::npos);
  CHECK(object.find("tessera_register_module") != std::string::npos);
  CHECK(object.find("tessera_launch") != std::string::npos);
}

TEST_CASE("a CPU entry named by a kernel must exist in the host module") {
  llvm::LLVMContext ctx;
  llvm::Module m("bad", ctx);
  HostModuleInput in = saxpyModule();
  in.kernels[0].cpuEntry = "saxpy_cpu";
  std::string error;
  CHECK_FALSE(buildHostModule(m, in, error));
  CHECK(error.find("CPU entry 'saxpy_cpu' of kernel 'saxpy'") != std::string::npos);
}

TEST_CASE("two kernels may not share a launch function name") {
  llvm::LLVMContext ctx;
  llvm::Module m("dup", ctx);
  HostModuleInput in = saxpyModule();
  in.kernels[1].name = "saxpy";
  std::string error;
  CHECK_FALSE(buildHostModule(m, in, error));
  CHECK(error.find("'saxpy_saxpy'") != std::string::npos);
}

TEST_CASE("header: C declarations with the Tessera signature and a C++ wrapper") {
  std::string h = writeHeader(saxpyModule());
  CHECK(h.find("#ifndef TESSERA_GENERATED_SAXPY_H") != std::string::npos);
  CHECK(h.find("#include <tessera/runtime.h>") != std::string::npos);
  CHECK(h.find("/* saxpy(x: f32[n], y: mut f32[n], alpha: f32).") != std::string::npos);
  CHECK(h.find("tessera_status saxpy_saxpy(const tessera_launch_options *opts, const tessera_tensor *x, "
               "const tessera_tensor *y, float alpha);") != std::string::npos);
  CHECK(h.find("/* tp_gemm(A: f16[M, K/tp], C: mut f32[M, N/tp], scale: bf16), groups of 128 tiles.") !=
        std::string::npos);
  CHECK(h.find("uint16_t scale") != std::string::npos);
  CHECK(h.find("namespace saxpy {") != std::string::npos);
  CHECK(h.find("inline tessera_status saxpy(const tessera_tensor &x, const tessera_tensor &y, float alpha, "
               "const tessera_launch_options *opts = nullptr) {\n  return saxpy_saxpy(opts, &x, &y, alpha);") !=
        std::string::npos);
}

namespace {
// saxpy tuned over T = 1, 2, 4 (candidates 1 and 2 as irgen names them).
HostModuleInput tunedModule() {
  HostModuleInput in = saxpyModule();
  in.kernels.resize(1);
  KernelInterface& k = in.kernels[0];
  k.autotuneIndex = 0;
  k.autotuneConfig = {{"T", 1}};
  for (int i : {2, 1}) {  // out of order: the table sorts them
    KernelInterface c = k;
    c.name = "saxpy__at" + std::to_string(i);
    c.gpuEntry = c.name;
    c.autotuneOf = "saxpy";
    c.autotuneIndex = i;
    c.autotuneConfig = {{"T", int64_t(1) << i}};
    in.kernels.push_back(c);
  }
  return in;
}
}  // namespace

TEST_CASE("autotune: candidates go into their kernel's table, without launch functions") {
  llvm::LLVMContext ctx;
  llvm::Module m("tuned", ctx);
  std::string error;
  REQUIRE_MESSAGE(buildHostModule(m, tunedModule(), error), error);
  CHECK(m.getFunction("saxpy_saxpy"));
  CHECK_FALSE(m.getFunction("saxpy_saxpy__at1"));
  llvm::GlobalVariable* kernels = m.getNamedGlobal("__tessera_kernels");
  REQUIRE(kernels);
  CHECK(llvm::cast<llvm::ArrayType>(kernels->getValueType())->getNumElements() == 1);
  llvm::GlobalVariable* table = m.getNamedGlobal("__tessera_autotune");
  REQUIRE(table);
  auto* init = llvm::cast<llvm::ConstantStruct>(table->getInitializer());
  CHECK(llvm::cast<llvm::ConstantInt>(init->getOperand(0))->getZExtValue() == 1);  // num_params
  CHECK(llvm::cast<llvm::ConstantInt>(init->getOperand(1))->getZExtValue() == 3);  // num_candidates
  CHECK(llvm::cast<llvm::ConstantInt>(init->getOperand(6))->getZExtValue() == TESSERA_AUTOTUNE_SAME_BITS);
  auto* values = llvm::cast<llvm::GlobalVariable>(init->getOperand(3));
  llvm::Constant* rows = values->getInitializer();
  REQUIRE(llvm::cast<llvm::ArrayType>(rows->getType())->getNumElements() == 3);
  for (unsigned i = 0; i < 3; ++i)
    CHECK(llvm::cast<llvm::ConstantInt>(rows->getAggregateElement(i))->getZExtValue() == (1u << i));
  // The candidates' descriptors, candidate 0 first: the kernel's own.
  auto* cands = llvm::cast<llvm::GlobalVariable>(init->getOperand(4));
  llvm::Constant* descs = cands->getInitializer();
  REQUIRE(llvm::cast<llvm::ArrayType>(descs->getType())->getNumElements() == 3);
  std::string h = writeHeader(tunedModule());
  CHECK(h.find("saxpy__at") == std::string::npos);

  HostModuleInput bad = tunedModule();
  bad.kernels[2].autotuneConfig.push_back({"U", 3});
  llvm::Module m2("bad", ctx);
  CHECK_FALSE(buildHostModule(m2, bad, error));
  CHECK(error.find("sets other parameters than the kernel") != std::string::npos);
}

TEST_CASE("C identifiers from module names") {
  CHECK(cIdentifier("my-kernels.v2") == "my_kernels_v2");
  CHECK(cIdentifier("2d") == "_2d");
  CHECK(cIdentifier("") == "_");
}
