// Semantic analysis end to end on small programs: types of expressions, symbols, kernel facts,
// constant folding, and the diagnostics (by id) of the kernel rules. The message texts and
// locations are checked by the lit tests in tests/lit/sema.
#include <algorithm>
#include <doctest/doctest.h>

#include "frontend/Parser.h"
#include "sema/Sema.h"
#include "sema/SemaDiagnostics.h"
#include "sema/Type.h"
#include "tests/unit/DiagnosticTableCheck.h"

using namespace tessera;

namespace {
struct Analysis {
  SourceManager sm;
  ASTContext ast;
  DiagnosticEngine diags{sm};
  StoringDiagnosticConsumer store;
  std::unique_ptr<SemaContext> sema;
  Module* module = nullptr;

  explicit Analysis(const std::string& text) {
    diags.addConsumer(&store);
    diags.setErrorLimit(0);
    FileID f = sm.addBuffer("t.tessera", text);
    module = parseBuffer(sm, f, ast, diags);
    sema = std::make_unique<SemaContext>(sm, ast);
    analyzeModule(*module, *sema, diags);
  }
  std::vector<std::string> ids() const {
    std::vector<std::string> out;
    for (const Diagnostic& d : store.diagnostics) out.push_back(diagInfo(d.id).name);
    return out;
  }
  bool has(const char* id) const {
    auto v = ids();
    return std::find(v.begin(), v.end(), id) != v.end();
  }
  const FunctionInfo* function(const std::string& name) const {
    for (auto& [def, info] : sema->functions)
      if (def->name == name) return info.get();
    return nullptr;
  }
};

// The type of the value of the first assignment to `name` in the body of the first function.
std::string typeOfLocal(const Analysis& a, const std::string& name) {
  for (Stmt* s : a.module->stmts)
    if (auto* f = dyn_cast<FunctionDefStmt>(s))
      for (Stmt* b : f->body.stmts)
        if (auto* as = dyn_cast<AssignStmt>(b))
          if (auto* n = dyn_cast<NameExpr>(as->targets[0]); n && n->name == name && as->value->type)
            return as->value->type->str();
  return "";
}
}  // namespace

TEST_CASE("every row of sema's diagnostics table has a name, a message and its severity") {
  checkDiagnosticTable(kSemaDiagnostics, diag::NumSemaDiagnostics);
}

TEST_CASE("the spec's kernels type-check") {
  Analysis a(R"(
@kernel tile[(128,)] shared(8_KiB)
def group_sum(x: f32[n], out: mut f32[grid_groups]):
    smem = tshared.alloc[f32](128)
    i = tile.linear_id()
    acc = 0.0
    for k in range(i, n, group_tile_count()):
        acc += x[k]
    smem[i] = acc
    tbarrier()
    if i == 0:
        out[group_linear_id()] = reduce_sum(smem)
)");
  CHECK(a.ids().empty());
  const FunctionInfo* f = a.function("group_sum");
  REQUIRE(f);
  CHECK(f->isKernel());
  CHECK(f->groupShape == std::vector<long long>{128});
  CHECK(f->sharedBudget == 8192);
  REQUIRE(f->sharedAllocations.size() == 1);
  CHECK(f->sharedAllocations[0].bytes == 512);
  CHECK(typeOfLocal(a, "smem") == "shared<f32,128>");
  CHECK(typeOfLocal(a, "i") == "i32");
  CHECK(f->type->str() == "kernel group_sum(f32[n], mut f32[grid_groups]) -> None");
}

TEST_CASE("shape symbols are bound by parameters") {
  Analysis a(R"(
@kernel
def tp_gemm(A: f16[M, K/tp], B: f16[K/tp, N], C: mut f32[M, N/tp]):
    pass
)");
  CHECK(a.ids().empty());
  const FunctionInfo* f = a.function("tp_gemm");
  REQUIRE(f);
  bool boundM = false;
  for (const ShapeBinding& b : f->shapeBindings)
    if (b.symbol == "M" && b.param == "A" && b.dim == 0) boundM = true;
  CHECK(boundM);
  CHECK(f->type->str() == "kernel tp_gemm(f16[M, K/tp], f16[K/tp, N], mut f32[M, N/tp]) -> None");
}

TEST_CASE("extent expressions are typed trees with one canonical spelling") {
  Analysis a(R"(
@kernel
def k(X: f32[K / 2], Y: f32[2 * (K + 1)], Z: f32[(M - 1) // 3], W: mut f32[K]):
    pass
)");
  CHECK(a.ids().empty());
  const FunctionInfo* f = a.function("k");
  REQUIRE(f);
  CHECK(f->type->str() == "kernel k(f32[K/2], f32[2*(K+1)], f32[(M-1)/3], mut f32[K]) -> None");
  const Extent& y = f->type->elems[1]->dims[0];
  REQUIRE(y.isExpr());
  CHECK(y.op() == Extent::Op::Mul);
  CHECK(y.lhs().isConst());
  CHECK(y.lhs().value() == 2);
  CHECK(y.rhs().isExpr());
  CHECK(y.rhs().op() == Extent::Op::Add);
  CHECK(y.rhs().lhs().kind() == Extent::Kind::Symbol);
  CHECK(y.rhs().lhs().str() == "K");
  // Right operands of equal precedence keep their parentheses: a-(b-c) is not a-b-c.
  CHECK(Extent::binary(Extent::Op::Sub, "a", Extent::binary(Extent::Op::Sub, "b", "c")).str() == "a-(b-c)");
  CHECK(Extent::binary(Extent::Op::Sub, Extent::binary(Extent::Op::Sub, "a", "b"), "c").str() == "a-b-c");
}

TEST_CASE("tile values, slices and tile ops") {
  Analysis a(R"(
@kernel tile[(128,)]
def k(X: f16[m], W: bf16[K, N], Y: mut f32[m]):
    t = X[0:128]
    u = W[0:64, 0:128]
    v = tile.dot(W[0:128, 0:64], u)
    r = tile.relu(v)
    f = tile.mma(u.T, u, accum=f32)
    c = f32(t)
)");
  CHECK(a.ids().empty());
  CHECK(typeOfLocal(a, "t") == "tile<f16,128>");
  CHECK(typeOfLocal(a, "u") == "tile<bf16,64x128>");
  CHECK(typeOfLocal(a, "v") == "tile<f32,128x128>");
  CHECK(typeOfLocal(a, "r") == "tile<f32,128x128>");
  CHECK(typeOfLocal(a, "f") == "fragment<f32,128x128>");
  CHECK(typeOfLocal(a, "c") == "tile<f32,128>");
}

TEST_CASE("literals adopt the other operand's dtype; mixed dtypes widen") {
  Analysis a(R"(
@kernel
def k(x: f16[n], y: bf16[n], z: mut f32[n], a: f16):
    i = tile.linear_id()
    p = a * 2
    q = x[i] + y[i]
    r = i / 2
    s = i < n
)");
  CHECK(a.ids().empty());
  CHECK(typeOfLocal(a, "p") == "f16");
  CHECK(typeOfLocal(a, "q") == "f32");
  CHECK(typeOfLocal(a, "r") == "f32");
  CHECK(typeOfLocal(a, "s") == "bool");
}

TEST_CASE("constant folding: module constants, size suffixes, autotune parameters") {
  Analysis a(R"(
BLOCK = 64 * 2
BUDGET = 8_KiB
@kernel.autotune(space=dict(BM=[64, 128])) tile[(BLOCK,)] shared(BUDGET)
def k(y: mut f16[n]):
    s = tshared.alloc[f16](BM, 16)
)");
  CHECK(a.ids().empty());
  const FunctionInfo* f = a.function("k");
  REQUIRE(f);
  CHECK(f->groupShape == std::vector<long long>{128});
  CHECK(f->sharedBudget == 8192);
  CHECK(f->autotuneSpace.at("BM") == std::vector<long long>{64, 128});
  // The module's analysis is the first candidate's (BM=64); each other one is analysed afresh
  // (sema/analyses/AutotuneCandidates.cpp).
  REQUIRE(f->sharedAllocations.size() == 1);
  CHECK(f->sharedAllocations[0].bytes == 64 * 16 * 2);
}

TEST_CASE("numeric policies are part of the type") {
  Analysis a(R"(
x: Tensor["B", "D", fp6 @accum(fp32)]
w: Tensor["D", "K", fp8 @accum(fp32) @saturate @round(stochastic)]
)");
  CHECK(a.ids().empty());
  auto* ann = cast<AnnAssignStmt>(a.module->stmts[0]);
  CHECK(ann->annotation->type->str() == "fp6_e3m2 @accum(f32)[B, D]");
  auto* ann2 = cast<AnnAssignStmt>(a.module->stmts[1]);
  CHECK(ann2->annotation->type->str() == "fp8_e4m3 @accum(f32) @round(stochastic) @saturate[D, K]");
}

TEST_CASE("uniformity: barriers in uniform loops are fine, under divergent control they are not") {
  Analysis ok(R"(
@kernel tile[(128,)]
def k(X: f16[m], Y: mut f16[m]):
    s = tshared.alloc[f16](128)
    i = tile.linear_id()
    for t in tile.range(m, step=128):
        cp_async.shared.global(s, X[t:t+128])
        tbarrier()
        if t > 0:
            Y[t + i] = s[i]
        tbarrier()
)");
  CHECK(ok.ids().empty());
  Analysis bad(R"(
@kernel tile[(128,)]
def k(X: f16[m], Y: mut f16[m]):
    i = tile.linear_id()
    j = i * 2
    k = j
    if k > 4:
        tbarrier()
)");
  CHECK(bad.has("err_barrier_divergent"));
  // Divergence flows through assignments made under divergent control.
  Analysis flow(R"(
@kernel tile[(128,)]
def k(Y: mut f16[m]):
    c = 0
    if tile.linear_id() < 3:
        c = 1
    if c == 1:
        tbarrier()
)");
  CHECK(flow.has("err_barrier_divergent"));
  // A break under a divergent condition makes the rest of the loop divergent.
  Analysis brk(R"(
@kernel tile[(128,)]
def k(Y: mut f16[m]):
    for t in range(8):
        if tile.linear_id() == t:
            break
        tbarrier()
)");
  CHECK(brk.has("err_barrier_divergent"));
  // warp_id is uniform inside a warp: warp collectives under it are fine, barriers are not.
  Analysis warp(R"(
@kernel tile[(128,)]
def k(X: f32[n], Y: mut f32[n]):
    v = X[launch.thread_id()]
    if tile.warp_id() == 0:
        v += tile.warp_shuffle_down(v, 1)
        tbarrier()
    Y[launch.thread_id()] = v
)");
  CHECK(warp.ids() == std::vector<std::string>{"err_barrier_divergent"});
}

TEST_CASE("races: uniform stores warn, guarded or tile-indexed stores do not") {
  Analysis race(R"(
@kernel tile[(128,)]
def k(Y: mut f32[m]):
    Y[0] = 1.0
)");
  CHECK(race.ids() == std::vector<std::string>{"warn_same_element_store"});
  Analysis fine(R"(
@kernel tile[(128,)]
def k(Y: mut f32[m], O: mut f32[m]):
    i = tile.linear_id()
    if i == 0:
        Y[0] = 1.0
    Y[i] = 2.0
    O[0:128] = Y[0:128]
)");
  CHECK(fine.ids().empty());
}

TEST_CASE("determinism opt-out") {
  Analysis strict(R"(
@kernel
def k(x: f32[n], t: mut f32[1]):
    atomic_add(t[0], x[tile.linear_id()])
)");
  CHECK(strict.has("err_float_atomic"));
  Analysis relaxed(R"(
@kernel(deterministic=False)
def k(x: f32[n], t: mut f32[1]):
    atomic_add(t[0], x[tile.linear_id()])
)");
  CHECK(relaxed.ids().empty());
  // Integer atomics are deterministic; their old value is not.
  Analysis ints(R"(
@kernel
def k(x: i32[n], t: mut i32[1]):
    atomic_add(t[0], x[tile.linear_id()])
)");
  CHECK(ints.ids().empty());
  Analysis used(R"(
@kernel
def k(x: i32[n], t: mut i32[1], y: mut i32[n]):
    y[tile.linear_id()] = atomic_add(t[0], x[tile.linear_id()])
)");
  CHECK(used.ids() == std::vector<std::string>{"err_atomic_result_used"});
}

TEST_CASE("fragments give precise diagnostics and no cascades") {
  Analysis a(R"(
def loss_fn(W):
    y = model(x, W)
    return mse(y, y_true)
gW = tessera.grad(loss_fn)(W)
)");
  CHECK(a.ids() == std::vector<std::string>{"err_undefined_name", "err_undefined_name", "err_undefined_name",
                                            "err_undefined_name", "err_undefined_name"});
  Analysis b(R"(
@kernel
def k(y: mut f32[n]):
    v = nosuch(1) + 2
    w = v * tile.dot(v, v)
    y[tile.linear_id()] = w.T
)");
  CHECK(b.ids() == std::vector<std::string>{"err_undefined_name"});
}

TEST_CASE("sema survives malformed trees") {
  const char* inputs[] = {
      "def (:\n",
      "@kernel tile[\ndef k(:\n    tbarrier(\n",
      "x: Tensor[\n",
      "for in :\n  pass\n",
      "@kernel\ndef k(x: mut mut f32[n]):\n    x[] = \n",
      "import\nfrom . import\n",
      "a, *b, c = 1\n",
      "@kernel tile[(,)] shared()\ndef k(): ...\n",
      "def f(x=): return x[::][1:2:3]\n",
      "class X:\n    pass\n",
      "@\ndef f(): pass\n",
      "lambda: 0\n",
      "x = [i for i in]\n",
      "@kernel\ndef k(y: mut f32[n]):\n    y[tile.linear_id()] = tile.mma(,)\n",
  };
  for (const char* in : inputs) {
    INFO(in);
    Analysis a(in);
    CHECK(a.module != nullptr);
  }
}
