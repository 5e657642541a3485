// The profile's figures for a launch (compulsory bytes, flops from the kernel's expression) and
// its reports (the Chrome trace and the summary table), on hand-built plans and records.
#include <cstdio>
#include <doctest/doctest.h>
#include <fstream>
#include <sstream>

#include "RuntimeTestUtil.h"
#include "runtime/ProfileReport.h"

using namespace tessera::rt;

namespace {

tessera_param_desc tensor(const char* name, int32_t dtype, int32_t rank, uint32_t flags) {
  tessera_param_desc p{};
  p.name = name;
  p.kind = TESSERA_PARAM_TENSOR;
  p.dtype = dtype;
  p.rank = rank;
  p.flags = flags;
  return p;
}

LaunchPlan planFor(const tessera_kernel_desc& k, std::vector<std::vector<int64_t>> shapes) {
  LaunchPlan plan;
  plan.kernel = &k;
  plan.tensors.resize(shapes.size());
  for (size_t i = 0; i < shapes.size(); ++i)
    for (size_t d = 0; d < shapes[i].size(); ++d) plan.tensors[i].shape[d] = shapes[i][d];
  return plan;
}

}  // namespace

TEST_CASE("profile: a launch's bytes are its compulsory traffic") {
  // x read once; y (mut, read) read and written; out (mut, write-only) written once; fp4 packs
  // two elements per byte.
  tessera_param_desc params[] = {tensor("x", TESSERA_F32, 1, 0), tensor("y", TESSERA_F32, 1, TESSERA_PARAM_MUT),
                                 tensor("out", TESSERA_BF16, 2, TESSERA_PARAM_MUT | TESSERA_PARAM_WRITE_ONLY),
                                 tensor("q", TESSERA_F4_E2M1, 1, 0)};
  tessera_kernel_desc k{};
  k.struct_size = sizeof(k);
  k.name = "k";
  k.params = params;
  k.num_params = 4;
  LaunchPlan plan = planFor(k, {{1000}, {1000}, {3, 5}, {7}});
  CHECK(profile::launchBytes(plan) == 4000 + 2 * 4000 + 30 + 4);
}

TEST_CASE("profile: flops come from the kernel's expression over its symbols") {
  // 2*M*N*K + N with M=3, N=5, K=7.
  tessera_expr_op flops[] = {{TESSERA_EXPR_CONST, 0, 2},  {TESSERA_EXPR_SYMBOL, 0, 0}, {TESSERA_EXPR_MUL, 0, 0},
                             {TESSERA_EXPR_SYMBOL, 1, 0}, {TESSERA_EXPR_MUL, 0, 0},    {TESSERA_EXPR_SYMBOL, 2, 0},
                             {TESSERA_EXPR_MUL, 0, 0},    {TESSERA_EXPR_SYMBOL, 1, 0}, {TESSERA_EXPR_ADD, 0, 0}};
  tessera_kernel_desc k{};
  k.struct_size = sizeof(k);
  k.name = "gemm";
  k.flops = flops;
  k.flops_len = 9;
  LaunchPlan plan = planFor(k, {});
  plan.symbols = {3, 5, 7};
  CHECK(profile::launchFlops(plan) == doctest::Approx(2 * 3 * 5 * 7 + 5));
  // Without an expression, or in an ABI 2 descriptor, the work is unknown.
  k.flops_len = 0;
  CHECK(profile::launchFlops(plan) == 0);
  k.flops_len = 9;
  k.struct_size = TESSERA_KERNEL_DESC_V2_SIZE;
  CHECK(profile::launchFlops(plan) == 0);
}

TEST_CASE("profile: the trace is Chrome trace JSON and the summary adds up") {
  std::vector<profile::Record> records = {
      {profile::Kind::Launch, "gemm", 0, 10.0, 100.0, 1000000, 2e9, "m"},
      {profile::Kind::Launch, "gemm", 1, 200.0, 300.0, 1000000, 2e9, "m"},
      {profile::Kind::Copy, "memcpy", 0, 0.0, 100.0, 4000000, 0, ""},
  };
  profile::TraceInfo info{"profile_test_trace.json", "test \"device\"", {{0, "default stream"}, {1, "stream 1"}}};
  std::string error;
  REQUIRE(profile::writeTrace(records, info, error));
  std::ifstream f(info.path);
  std::stringstream text;
  text << f.rdbuf();
  std::string json = text.str();
  CHECK(json.find("\"traceEvents\": [") != std::string::npos);
  CHECK(json.find("{\"ph\": \"X\", \"pid\": 1, \"tid\": 1, \"cat\": \"launch\", \"name\": \"gemm\", \"ts\": 200.000, "
                  "\"dur\": 300.000, \"args\": {\"bytes\": 1000000, \"flops\": 2000000000.000, \"GB/s\": 3.333, "
                  "\"TFLOP/s\": 6.667, \"detail\": \"m\"}}") != std::string::npos);
  CHECK(json.find("test \\\"device\\\"") != std::string::npos);  // escaped
  std::remove(info.path.c_str());
  std::string summary = profile::summaryText(records, info);
  // gemm: 2 calls, 400 us of 500 (80%), 2e6 bytes / 400 us = 5 GB/s, 4e9 flops / 400 us = 10 TFLOP/s.
  CHECK(summary.find("3 operations, 0.500 ms") != std::string::npos);
  CHECK(summary.find("launch     gemm                           2       0.400     200.00   80.0%     5.000   10.000") !=
        std::string::npos);
  CHECK(summary.find("copy       memcpy                         1       0.100     100.00   20.0%    40.000        -") !=
        std::string::npos);
}
