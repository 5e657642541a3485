// The tables sema is driven by: the builtins table (every signature parses, every builtin the spec
// and DESIGN.md use is there, aliases and tessera./ts. spellings resolve), the dtype and policy
// tables, and the did-you-mean matcher.
#include <algorithm>
#include <doctest/doctest.h>

#include "sema/Builtins.h"
#include "sema/DType.h"

using namespace tessera;

TEST_CASE("every builtin signature parses") {
  for (const BuiltinInfo& b : allBuiltins()) {
    BuiltinSignature sig;
    std::string error;
    INFO(b.name << ": " << b.signatureText);
    CHECK(parseBuiltinSignature(b.signatureText, sig, error));
    CHECK(error.empty());
    CHECK(b.doc[0] != '\0');
  }
}

TEST_CASE("signature notation") {
  BuiltinSignature s;
  std::string e;
  REQUIRE(parseBuiltinSignature("[T: dtype](*dims: int, *, swizzle: str = ?) -> shared", s, e));
  CHECK(s.hasTypeParam);
  REQUIRE(s.params.size() == 2);
  CHECK(s.params[0].variadic);
  CHECK(s.params[1].keywordOnly);
  CHECK(s.params[1].optional);
  CHECK(s.minPositional() == 0);
  CHECK(s.maxPositional() == UINT32_MAX);
  CHECK(s.result == "shared");
  REQUIRE(parseBuiltinSignature("(a: tile, b: tile, c: tile = ?, *, accum: dtype = ?) -> fragment", s, e));
  CHECK(s.minPositional() == 2);
  CHECK(s.maxPositional() == 3);
  REQUIRE(parseBuiltinSignature("= i64", s, e));
  CHECK(s.isValue);
  CHECK_FALSE(parseBuiltinSignature("(a: int -> none", s, e));
  CHECK_FALSE(parseBuiltinSignature("(a) -> none", s, e));
  CHECK_FALSE(parseBuiltinSignature("(a: int)", s, e));
}

TEST_CASE("every builtin the spec and DESIGN.md use is in the table") {
  const char* names[] = {
      "tile.linear_id",
      "tile.lane_id",
      "tile.warp_id",
      "launch.thread_id",
      "group_linear_id",
      "group_tile_count",
      "grid_groups",
      "tbarrier",
      "tile.barrier",
      "reduce_sum",
      "tshared.alloc",
      "tile.alloc_shared",
      "cp_async.shared.global",
      "tile.cp_async",
      "tile.range",
      "tile.load",
      "tile.store",
      "tile.zeros",
      "tile.full",
      "tile.dot",
      "tile.mma",
      "tile.mma_sync",
      "tile.softmax",
      "tile.relu",
      "tile.warp_shuffle_down",
      "tile.warp_shuffle_up",
      "tile.warp_shuffle_xor",
      "tile.warp_shuffle_idx",
      "tile.vote_any",
      "tile.vote_all",
      "tile.cooperative_group",
      "atomic_add",
      "abs",
      "min",
      "max",
      "exp",
      "exp2",
      "log",
      "log2",
      "sqrt",
      "rsqrt",
      "tanh",
      "erf",
      "sin",
      "cos",
      "floor",
      "ceil",
      "fma",
      "pow",
      "ceil_div",
      "range",
      "len",
      "print",
      "op.matmul",
      "op.softmax",
      "op.all_reduce",
      "gemm",
      "flash_attention",
      "rmsnorm_safe",
      "layernorm_safe",
      "dist.Mesh",
      "dist.mesh",
      "dist.tensor",
      "dist.ShardSpec",
      "dist.Block",
      "index_launch",
      "all_gather",
      "reduce_scatter",
      "autotune.search",
      "graph.capture",
      "graph.launch",
      "graph.module",
      "stream.new",
      "stream.memcpy_async",
      "stream.synchronize",
      "launch.grid",
      "jit",
      "kernel",
      "kernel.autotune",
      "autodiff",
      "grad",
      "domain.Rect",
      "array.from_domain",
      "dict",
      "tensor",
      "Tensor",
      "Region",
  };
  for (const char* n : names) {
    INFO(n);
    CHECK(lookupBuiltin(n) != nullptr);
  }
  CHECK(lookupMethod("Group", "sync") != nullptr);
  CHECK(lookupMethod("Group", "thread_rank") != nullptr);
  CHECK(lookupMethod("KernelFn", "inspect_ir") != nullptr);
  CHECK(lookupBuiltin("no_such_builtin") == nullptr);
}

TEST_CASE("aliases name the same builtin; namespaces and the prelude") {
  CHECK(lookupBuiltin("tile.barrier") == lookupBuiltin("tbarrier"));
  CHECK(lookupBuiltin("tile.atomic_add") == lookupBuiltin("atomic_add"));
  CHECK(isBuiltinNamespace("tile"));
  CHECK(isBuiltinNamespace("cp_async"));
  CHECK(isBuiltinNamespace("cp_async.shared"));
  CHECK(isBuiltinNamespace("kernel"));
  CHECK_FALSE(isBuiltinNamespace("tbarrier"));
  auto members = builtinMembers("cp_async");
  CHECK(std::find(members.begin(), members.end(), "shared") != members.end());
  const auto& prelude = preludeNames();
  for (const char* n : {"tile", "tshared", "tbarrier", "tessera", "dist", "op", "gemm"})
    CHECK(std::find(prelude.begin(), prelude.end(), n) != prelude.end());
}

TEST_CASE("effects drive the kernel rules") {
  CHECK(lookupBuiltin("tbarrier")->has(eff::Barrier));
  CHECK(lookupBuiltin("tbarrier")->has(eff::GroupFeature));
  CHECK(lookupBuiltin("cp_async.shared.global")->has(eff::GroupCollective));
  CHECK_FALSE(lookupBuiltin("reduce_sum")->has(eff::GroupCollective));
  CHECK(lookupBuiltin("tile.linear_id")->has(eff::Divergent));
  CHECK(lookupBuiltin("tile.warp_shuffle_down")->has(eff::WarpCollective));
  CHECK(lookupBuiltin("atomic_exch")->has(eff::NonDeterministic));
  CHECK(lookupBuiltin("tile.linear_id")->context == BuiltinContext::Kernel);
  CHECK(lookupBuiltin("gemm")->context == BuiltinContext::Host);
  CHECK(lookupBuiltin("exp")->context == BuiltinContext::Both);
  CHECK(effectNames(eff::Barrier | eff::GroupFeature) == "GroupFeature|Barrier");
}

TEST_CASE("dtypes and aliases") {
  CHECK(lookupDType("f32") == DType::FP32);
  CHECK(lookupDType("float") == DType::FP32);
  CHECK(lookupDType("half") == DType::FP16);
  CHECK(lookupDType("bfloat16") == DType::BF16);
  CHECK(lookupDType("fp8") == DType::FP8_E4M3);
  CHECK(lookupDType("fp6") == DType::FP6_E3M2);
  CHECK(lookupDType("fp4") == DType::FP4_E2M1);
  CHECK(lookupDType("i32") == DType::INT32);
  CHECK(lookupDType("uint64") == DType::UINT64);
  CHECK_FALSE(lookupDType("tf32"));
  CHECK(dtypeMathMode("tf32") != nullptr);
  CHECK(dtypeInfo(DType::FP6_E2M3).bits == 6);
  CHECK(dtypeInfo(DType::BF16).exponentBits == 8);
  CHECK(dtypeInfo(DType::BF16).mantissaBits == 7);
}

TEST_CASE("widening and promotion") {
  CHECK(widensTo(DType::FP16, DType::FP32));
  CHECK(widensTo(DType::BF16, DType::FP32));
  CHECK_FALSE(widensTo(DType::FP16, DType::BF16));
  CHECK_FALSE(widensTo(DType::BF16, DType::FP16));
  CHECK_FALSE(widensTo(DType::FP32, DType::FP16));
  CHECK(widensTo(DType::FP8_E4M3, DType::FP16));
  CHECK(widensTo(DType::INT8, DType::INT32));
  CHECK(widensTo(DType::INT8, DType::FP16));
  CHECK_FALSE(widensTo(DType::INT32, DType::FP32));
  CHECK_FALSE(widensTo(DType::INT8, DType::UINT32));
  CHECK(widensTo(DType::UINT8, DType::INT16));
  CHECK(promote(DType::FP16, DType::BF16) == DType::FP32);
  CHECK(promote(DType::FP16, DType::FP32) == DType::FP32);
  CHECK(promote(DType::INT32, DType::FP16) == DType::FP32);
  CHECK(promote(DType::INT64, DType::UINT64) == DType::INT64);
}

TEST_CASE("policies and rounding modes") {
  CHECK(lookupPolicy("accum") == Policy::Accum);
  CHECK(lookupPolicy("stochastic_round") == Policy::StochasticRound);
  CHECK_FALSE(lookupPolicy("acum"));
  CHECK(lookupRoundMode("nearest_even") == RoundMode::NearestEven);
  CHECK_FALSE(lookupRoundMode("nearest"));
  CHECK(lookupSwizzle("xor") == Swizzle::Xor);
  NumericPolicy p;
  p.accum = DType::FP32;
  p.saturate = true;
  CHECK(p.str() == " @accum(f32) @saturate");
}

TEST_CASE("did-you-mean suggestions") {
  CHECK(closestMatch("idy", {"idx", "i", "x"}) == "idx");
  CHECK(closestMatch("bf61", {"bf16", "f16"}) == "bf16");  // a transposition is one edit
  CHECK(closestMatch("Block", {"block"}) == "block");      // case only
  CHECK(closestMatch("ab", {"ac"}) == "");                 // two letters: no guessing
  CHECK(closestMatch("linear_idx", {"linear_id", "lane_id"}) == "linear_id");
  CHECK(closestMatch("zzz", {"tile", "gemm"}) == "");
}

TEST_CASE("generated reference section has its markers and every builtin") {
  std::string md = builtinsMarkdown();
  CHECK(md.find("<!-- BEGIN GENERATED BUILTINS") == 0);
  CHECK(md.find("<!-- END GENERATED BUILTINS -->") != std::string::npos);
  for (const BuiltinInfo& b : allBuiltins()) {
    INFO(b.name);
    CHECK(md.find(std::string("`") + b.name + "`") != std::string::npos);
  }
}
