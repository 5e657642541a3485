// Module registration: validation of descriptors, lookup, duplicates, unregistration.
#include <cstring>
#include <doctest/doctest.h>

#include "RuntimeTestUtil.h"
#include "runtime/Registry.h"

using namespace rttest;

namespace {
KernelSpec simple(const char* name) {
  KernelSpec k;
  k.name = name;
  k.params = {tensorParam("y", TESSERA_F32, {sym(0)}, true)};
  k.symbols = {"n"};
  return k;
}
std::string msg() { return tessera_last_error_message(); }
}  // namespace

TEST_CASE("registry: register, find, unregister") {
  const tessera_kernel_desc* k = nullptr;
  {
    TestModule m("reg_a", {simple("k1"), simple("k2")});
    REQUIRE(m.status == TESSERA_SUCCESS);
    CHECK(tessera_find_kernel("reg_a", "k2", &k) == TESSERA_SUCCESS);
    CHECK(k == m.kernel(1));
    CHECK(tessera_find_kernel("reg_a", "k3", &k) == TESSERA_ERROR_NOT_FOUND);
    CHECK(msg() == "module 'reg_a' has no kernel 'k3'");
  }
  CHECK(tessera_find_kernel("reg_a", "k1", &k) == TESSERA_ERROR_NOT_FOUND);
  CHECK(msg() == "no module 'reg_a' is registered");
}

TEST_CASE("registry: duplicates are rejected") {
  TestModule m("reg_dup", {simple("k")});
  REQUIRE(m.status == TESSERA_SUCCESS);
  CHECK(tessera_register_module(m.desc()) == TESSERA_ERROR_ALREADY_REGISTERED);
  CHECK(msg() == "module 'reg_dup' is already registered");
  TestModule other("reg_dup", {simple("k")}, nullptr, 0, false);
  CHECK(tessera_register_module(other.desc()) == TESSERA_ERROR_ALREADY_REGISTERED);
  CHECK(msg() ==
        "another module named 'reg_dup' is already registered (module names must be "
        "unique in a process)");
  TestModule twice("reg_twice", {simple("k"), simple("k")}, nullptr, 0, false);
  CHECK(tessera_register_module(twice.desc()) == TESSERA_ERROR_INVALID_ARGUMENT);
  CHECK(msg() == "module 'reg_twice': kernel 'k' is defined twice");
}

TEST_CASE("registry: unregistering an unknown module") {
  TestModule m("reg_never", {simple("k")}, nullptr, 0, false);
  CHECK(tessera_unregister_module(m.desc()) == TESSERA_ERROR_NOT_FOUND);
  CHECK(msg() == "module 'reg_never' is not registered");
}

TEST_CASE("registry: ABI version and struct sizes are checked") {
  TestModule m("reg_abi", {simple("k")}, nullptr, 0, false);
  m.desc()->abi_version = TESSERA_ABI_VERSION + 1;
  CHECK(tessera_register_module(m.desc()) == TESSERA_ERROR_ABI_MISMATCH);
  CHECK(msg().find("module 'reg_abi' was built for Tessera ABI 8, this runtime implements ABI 2 to 7") == 0);
  m.desc()->abi_version = TESSERA_ABI_VERSION;
  m.mutableKernel()->struct_size = 8;
  CHECK(tessera_register_module(m.desc()) == TESSERA_ERROR_ABI_MISMATCH);
  CHECK(msg().find("module 'reg_abi': kernel 'k': descriptor size 8, runtime expects ") == 0);
  // Launches of a rejected module's kernels say why it was rejected.
  m.mutableKernel()->struct_size = sizeof(tessera_kernel_desc);
  std::vector<float> y(4);
  tessera_tensor yt = tessera::tensor(y.data(), {4});
  CHECK(cpuLaunch(m.kernel(), nullptr, {tessera::arg(yt)}) == TESSERA_ERROR_NOT_FOUND);
  CHECK(msg().find("kernel 'k' is not registered: its module was rejected at registration: "
                   "module 'reg_abi': kernel 'k': descriptor size 8, runtime expects ") == 0);
}

TEST_CASE("registry: malformed metadata is rejected with the kernel and parameter named") {
  SUBCASE("symbol out of range") {
    KernelSpec k = simple("k");
    k.params[0].extents = {sym(3)};
    TestModule m("reg_bad", {k}, nullptr, 0, false);
    CHECK(tessera_register_module(m.desc()) == TESSERA_ERROR_INVALID_ARGUMENT);
    CHECK(msg() == "module 'reg_bad': kernel 'k': parameter 'y': dimension 0 names symbol 3 of 1");
  }
  SUBCASE("grid symbol out of range") {
    KernelSpec k = simple("k");
    k.gridSymbol = 1;
    TestModule m("reg_bad", {k}, nullptr, 0, false);
    CHECK(tessera_register_module(m.desc()) == TESSERA_ERROR_INVALID_ARGUMENT);
    CHECK(msg() == "module 'reg_bad': kernel 'k': grid_symbol 1 is out of range");
  }
  SUBCASE("invalid dtype") {
    KernelSpec k = simple("k");
    k.params[0].dtype = 77;
    TestModule m("reg_bad", {k}, nullptr, 0, false);
    CHECK(tessera_register_module(m.desc()) == TESSERA_ERROR_INVALID_ARGUMENT);
    CHECK(msg() == "module 'reg_bad': kernel 'k': parameter 'y': invalid dtype 77");
  }
  SUBCASE("grouped kernel with a zero group dimension") {
    KernelSpec k = simple("k");
    k.flags |= TESSERA_KERNEL_GROUPED;
    k.group[1] = 0;
    TestModule m("reg_bad", {k}, nullptr, 0, false);
    CHECK(tessera_register_module(m.desc()) == TESSERA_ERROR_INVALID_ARGUMENT);
    CHECK(msg() == "module 'reg_bad': kernel 'k': grouped kernel with a zero group dimension");
  }
  SUBCASE("grouped kernel running several tiles per GPU thread") {
    KernelSpec k = simple("k");
    k.flags |= TESSERA_KERNEL_GROUPED | (2u << TESSERA_KERNEL_GPU_TILES_SHIFT);
    k.group[0] = 64;
    TestModule m("reg_bad", {k}, nullptr, 0, false);
    CHECK(tessera_register_module(m.desc()) == TESSERA_ERROR_INVALID_ARGUMENT);
    CHECK(msg() ==
          "module 'reg_bad': kernel 'k': a grouped kernel cannot run 4 tiles per GPU thread "
          "(TESSERA_KERNEL_GPU_TILES_* is for kernels without a group shape)");
  }
  SUBCASE("null descriptor") {
    CHECK(tessera_register_module(nullptr) == TESSERA_ERROR_INVALID_ARGUMENT);
    CHECK(msg() == "null module descriptor");
  }
}

TEST_CASE("status names and dtype facts") {
  CHECK(std::string(tessera_status_name(TESSERA_ERROR_ALIASED_MUT)) == "TESSERA_ERROR_ALIASED_MUT");
  CHECK(std::string(tessera_dtype_name(TESSERA_BF16)) == "bf16");
  // The short names of basic/DTypes.def, as sema prints them (not "int8").
  CHECK(std::string(tessera_dtype_name(TESSERA_I8)) == "i8");
  CHECK(std::string(tessera_dtype_name(TESSERA_U64)) == "u64");
  CHECK(std::string(tessera_dtype_name(TESSERA_F8_E4M3)) == "fp8_e4m3");
  CHECK(std::string(tessera_dtype_name(TESSERA_DTYPE_INVALID)) == "invalid");
  CHECK(std::string(tessera_dtype_name(99)) == "invalid");
  CHECK(tessera_dtype_bits(TESSERA_BOOL) == 8);
  CHECK(tessera_dtype_bits(TESSERA_F6_E3M2) == 6);
  CHECK(tessera_dtype_bits(TESSERA_F4_E2M1) == 4);
  CHECK(tessera_dtype_bits(TESSERA_F64) == 64);
  int64_t shape[3] = {2, 3, 4};
  tessera_tensor t;
  tessera_tensor_init(&t, nullptr, TESSERA_F32, 3, shape, TESSERA_HOST);
  CHECK(t.strides[0] == 12);
  CHECK(t.strides[1] == 4);
  CHECK(t.strides[2] == 1);
  CHECK(tessera_tensor_numel(&t) == 24);
  tessera::Status s = tessera::Status::from(tessera_find_kernel("nope", "k", nullptr));
  CHECK(s.code() == TESSERA_ERROR_INVALID_ARGUMENT);
  CHECK(s.toString() == "TESSERA_ERROR_INVALID_ARGUMENT: tessera_find_kernel: null argument");
}

TEST_CASE("registry: modules built for ABI 2 (shorter kernel descriptors) still register") {
  // Two kernels packed at the ABI 2 stride, as an older tesserac lays them out.
  TestModule built("reg_v3_source", {simple("k1"), simple("k2")}, nullptr, 0, false);
  size_t stride = TESSERA_KERNEL_DESC_V2_SIZE;
  std::vector<unsigned char> packed(2 * stride);
  for (uint32_t i = 0; i < 2; ++i) {
    tessera_kernel_desc d = *built.kernel(i);
    d.struct_size = static_cast<uint32_t>(stride);
    std::memcpy(packed.data() + i * stride, &d, stride);
  }
  tessera_module_desc v2 = *built.desc();
  v2.name = "reg_v2";
  v2.abi_version = 2;
  v2.kernels = reinterpret_cast<const tessera_kernel_desc*>(packed.data());
  REQUIRE(tessera_register_module(&v2) == TESSERA_SUCCESS);
  const tessera_kernel_desc* k = nullptr;
  REQUIRE(tessera_find_kernel("reg_v2", "k2", &k) == TESSERA_SUCCESS);
  CHECK(reinterpret_cast<const unsigned char*>(k) == packed.data() + stride);
  CHECK_FALSE(tessera_kernel_has_v3(k));
  CHECK(tessera_unregister_module(&v2) == TESSERA_SUCCESS);
  // An ABI 3 module must carry the ABI 3 descriptor; ABI 1 is refused.
  v2.abi_version = 3;
  CHECK(tessera_register_module(&v2) == TESSERA_ERROR_ABI_MISMATCH);
  CHECK(msg().find("descriptor size") != std::string::npos);
  v2.abi_version = 1;
  CHECK(tessera_register_module(&v2) == TESSERA_ERROR_ABI_MISMATCH);
  CHECK(msg().find("implements ABI 2 to 7") != std::string::npos);
}

TEST_CASE("registry: modules built for ABI 3 (no GPU variants) still register") {
  TestModule built("reg_v4_source", {simple("k1"), simple("k2")}, nullptr, 0, false);
  size_t stride = TESSERA_KERNEL_DESC_V3_SIZE;
  std::vector<unsigned char> packed(2 * stride);
  for (uint32_t i = 0; i < 2; ++i) {
    tessera_kernel_desc d = *built.kernel(i);
    d.struct_size = static_cast<uint32_t>(stride);
    std::memcpy(packed.data() + i * stride, &d, stride);
  }
  tessera_module_desc v3 = *built.desc();
  v3.name = "reg_v3";
  v3.abi_version = 3;
  v3.kernels = reinterpret_cast<const tessera_kernel_desc*>(packed.data());
  REQUIRE(tessera_register_module(&v3) == TESSERA_SUCCESS);
  const tessera_kernel_desc* k = nullptr;
  REQUIRE(tessera_find_kernel("reg_v3", "k2", &k) == TESSERA_SUCCESS);
  CHECK(reinterpret_cast<const unsigned char*>(k) == packed.data() + stride);
  CHECK(tessera_kernel_has_v3(k));
  CHECK_FALSE(tessera_kernel_has_v4(k));
  CHECK(tessera_unregister_module(&v3) == TESSERA_SUCCESS);
}

TEST_CASE("registry: modules built for ABI 4 (no autotune tables) still register") {
  TestModule built("reg_v5_source", {simple("k1"), simple("k2")}, nullptr, 0, false);
  size_t stride = TESSERA_KERNEL_DESC_V4_SIZE;
  std::vector<unsigned char> packed(2 * stride);
  for (uint32_t i = 0; i < 2; ++i) {
    tessera_kernel_desc d = *built.kernel(i);
    d.struct_size = static_cast<uint32_t>(stride);
    std::memcpy(packed.data() + i * stride, &d, stride);
  }
  tessera_module_desc v4 = *built.desc();
  v4.name = "reg_v4";
  v4.abi_version = 4;
  v4.kernels = reinterpret_cast<const tessera_kernel_desc*>(packed.data());
  REQUIRE(tessera_register_module(&v4) == TESSERA_SUCCESS);
  const tessera_kernel_desc* k = nullptr;
  REQUIRE(tessera_find_kernel("reg_v4", "k2", &k) == TESSERA_SUCCESS);
  CHECK(reinterpret_cast<const unsigned char*>(k) == packed.data() + stride);
  CHECK(tessera_kernel_has_v4(k));
  CHECK_FALSE(tessera_kernel_has_v5(k));
  CHECK(tessera_kernel_autotune(k) == nullptr);
  CHECK(tessera_autotune_num_candidates(k) == 1);
  CHECK(tessera_unregister_module(&v4) == TESSERA_SUCCESS);
}

TEST_CASE("registry: GPU variants must name an entry and tensor parameters") {
  TestModule m("reg_variants", {simple("k")}, nullptr, 0, false);
  tessera_tensor_map_desc map{5, {64, 64}, 128};  // parameter 5 does not exist
  tessera_gpu_variant v{"k__sm90a", 90, 384, 1024, &map, 1, 1};
  m.mutableKernel()->gpu_variants = &v;
  m.mutableKernel()->num_gpu_variants = 1;
  CHECK(tessera_register_module(m.desc()) == TESSERA_ERROR_INVALID_ARGUMENT);
  CHECK(msg().find("tensor map 0 names parameter 5") != std::string::npos);
  v.gpu_entry = nullptr;
  CHECK(tessera_register_module(m.desc()) == TESSERA_ERROR_INVALID_ARGUMENT);
  CHECK(msg().find("GPU variant 0 has no entry name") != std::string::npos);
}

TEST_CASE("registry: a variant chain names its steps, its scratch extents and maps of the scratch matrix") {
  TestModule m("reg_chain", {simple("k")}, nullptr, 0, false);
  tessera_tensor_map_desc maps[2] = {{0, {64, 64}, 128}, {1, {64, 128}, 128}};  // 1 == num_params: the scratch
  tessera_gpu_variant steps[2] = {{"k__sm90a_s0", 90, 384, 1024, &maps[0], 1, 1},
                                  {"k__sm90a_s1", 90, 384, 1024, &maps[1], 1, 1}};
  m.mutableKernel()->gpu_variants = steps;
  m.mutableKernel()->num_gpu_variants = 2;
  // Without a chain, a map of parameter num_params is malformed.
  CHECK(tessera_register_module(m.desc()) == TESSERA_ERROR_INVALID_ARGUMENT);
  CHECK(msg().find("tensor map 0 names parameter 1") != std::string::npos);
  tessera_variant_chain chain{2, TESSERA_BF16, 0, 0, 0, 0};
  m.mutableKernel()->chain = &chain;
  REQUIRE(tessera_register_module(m.desc()) == TESSERA_SUCCESS);
  const tessera_kernel_desc* k = nullptr;
  REQUIRE(tessera_find_kernel("reg_chain", "k", &k) == TESSERA_SUCCESS);
  CHECK(tessera_kernel_has_v6(k));
  CHECK(tessera_kernel_chain(k) == &chain);
  CHECK(tessera_unregister_module(m.desc()) == TESSERA_SUCCESS);
  chain.num_steps = 3;  // more steps than variants
  CHECK(tessera_register_module(m.desc()) == TESSERA_ERROR_INVALID_ARGUMENT);
  CHECK(msg().find("the variant chain names steps or scratch extents the kernel does not have") != std::string::npos);
  chain.num_steps = 2;
  chain.cols_axis = 1;  // y has rank 1
  CHECK(tessera_register_module(m.desc()) == TESSERA_ERROR_INVALID_ARGUMENT);
}

TEST_CASE("registry: an ABI 7 chain lists its scratch matrices, each written by one step") {
  TestModule m("reg_chain7", {simple("k")}, nullptr, 0, false);
  // num_params is 1 (y): maps of parameters 1 and 2 read scratch matrices 0 and 1.
  tessera_tensor_map_desc maps[3] = {{0, {64, 64}, 128}, {1, {64, 128}, 128}, {2, {64, 128}, 128}};
  tessera_gpu_variant steps[3] = {{"k__sm90a_s0", 90, 384, 1024, &maps[0], 1, 1},
                                  {"k__sm90a_s1", 90, 384, 1024, &maps[1], 1, 1},
                                  {"k__sm90a_s2", 90, 384, 1024, &maps[2], 1, 1}};
  m.mutableKernel()->gpu_variants = steps;
  m.mutableKernel()->num_gpu_variants = 3;
  tessera_chain_scratch scratch[2] = {{TESSERA_BF16, 0, 0, 0, 0, 0}, {TESSERA_F16, 0, 0, 0, 0, 1}};
  tessera_variant_chain chain{3, TESSERA_BF16, 0, 0, 0, 0, 2, 0, scratch};
  m.mutableKernel()->chain = &chain;
  REQUIRE(tessera_register_module(m.desc()) == TESSERA_SUCCESS);
  const tessera_kernel_desc* k = nullptr;
  REQUIRE(tessera_find_kernel("reg_chain7", "k", &k) == TESSERA_SUCCESS);
  std::vector<tessera_chain_scratch> got = tessera::rt::chainScratch(m.desc(), *tessera_kernel_chain(k));
  REQUIRE(got.size() == 2);
  CHECK(got[1].dtype == TESSERA_F16);
  CHECK(got[1].step == 1);
  CHECK(tessera_unregister_module(m.desc()) == TESSERA_SUCCESS);
  scratch[1].step = 3;  // no such step
  CHECK(tessera_register_module(m.desc()) == TESSERA_ERROR_INVALID_ARGUMENT);
  CHECK(msg().find("the variant chain names steps or scratch extents the kernel does not have") != std::string::npos);
  scratch[1].step = 1;
  chain.num_scratch = 1;  // the map of parameter 2 reads no scratch matrix
  CHECK(tessera_register_module(m.desc()) == TESSERA_ERROR_INVALID_ARGUMENT);
  CHECK(msg().find("tensor map 0 names parameter 2") != std::string::npos);
  // An ABI 6 module's chain has one scratch matrix, every step's (step -1); its list is not read.
  chain.num_scratch = 2;
  std::vector<tessera_chain_scratch> v6 = tessera::rt::chainScratch(nullptr, chain);
  REQUIRE(v6.size() == 1);
  CHECK(v6[0].step == -1);
}

TEST_CASE("registry: modules built for ABI 5 (no variant chain) still register") {
  TestModule built("reg_v6_source", {simple("k1"), simple("k2")}, nullptr, 0, false);
  size_t stride = TESSERA_KERNEL_DESC_V5_SIZE;
  std::vector<unsigned char> packed(2 * stride);
  for (uint32_t i = 0; i < 2; ++i) {
    tessera_kernel_desc d = *built.kernel(i);
    d.struct_size = static_cast<uint32_t>(stride);
    std::memcpy(packed.data() + i * stride, &d, stride);
  }
  tessera_module_desc v5 = *built.desc();
  v5.name = "reg_v5";
  v5.abi_version = 5;
  v5.kernels = reinterpret_cast<const tessera_kernel_desc*>(packed.data());
  REQUIRE(tessera_register_module(&v5) == TESSERA_SUCCESS);
  const tessera_kernel_desc* k = nullptr;
  REQUIRE(tessera_find_kernel("reg_v5", "k2", &k) == TESSERA_SUCCESS);
  CHECK(tessera_kernel_has_v5(k));
  CHECK_FALSE(tessera_kernel_has_v6(k));
  CHECK(tessera_kernel_chain(k) == nullptr);
  CHECK(tessera_unregister_module(&v5) == TESSERA_SUCCESS);
}
