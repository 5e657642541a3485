// Unit tests of the Tile IR core: types, attributes, use lists, builder, printer/parser round
// trip, verifier (including what only builder-made IR can get wrong), passes' API.
#include <charconv>
#include <cmath>
#include <cstring>
#include <doctest/doctest.h>
#include <random>

#include "ir/AsmFormat.h"
#include "ir/IR.h"
#include "ir/IRDiagnostics.h"
#include "ir/Pass.h"
#include "ir/Uniformity.h"
#include "ir/Verifier.h"
#include "tests/unit/DiagnosticTableCheck.h"

using namespace tessera;
using namespace tessera::ir;

namespace {

struct Env {
  SourceManager sm;
  DiagnosticEngine diags{sm};
  StoringDiagnosticConsumer store;
  Env() {
    diags.addConsumer(&store);
    diags.setErrorLimit(0);
  }
  std::unique_ptr<Module> parse(const std::string& text) {
    FileID f = sm.addBuffer("t.tir", text);
    return parseModule(sm, f, diags);
  }
  bool has(DiagID id) const {
    for (auto& d : store.diagnostics)
      if (d.id == id) return true;
    return false;
  }
};

// Builds the scale kernel of the spec (y[i] = alpha * x[i] when i < n) through the Builder.
std::unique_ptr<Module> buildScale() {
  auto m = std::make_unique<Module>();
  IRContext& ctx = m->ctx();
  Builder b(ctx);
  b.setInsertionPointToEnd(m->body());
  Type f32 = ctx.scalar(ScalarKind::F32);
  Type xT = ctx.tensor(f32, {Dim{-1, "n"}}, MemSpace::Global, Access::Read);
  Type yT = ctx.tensor(f32, {Dim{-1, "n"}}, MemSpace::Global, Access::ReadWrite);
  Operation* f = b.func("scale", {xT, yT, f32}, {}, {{ir::AttrId::Kernel, Attribute::unit()}});
  Block& body = f->body();
  body.arg(0)->nameHint = std::string("x");
  body.arg(1)->nameHint = std::string("y");
  body.arg(2)->nameHint = std::string("alpha");
  b.setInsertionPointToEnd(body);
  Value* i = b.create(OpId::TileLinearId, {}, {ctx.index()})->result();
  i->nameHint = std::string("i");
  Value* n =
      b.create(OpId::MemDim, {body.arg(0)}, {ctx.index()}, {{ir::AttrId::Axis, Attribute::integer(0)}})->result();
  Value* c = b.cmpi("slt", i, n);
  Operation* iff = b.create(OpId::ScfIf, {c}, {});
  b.create(OpId::FuncReturn, {}, {});
  b.setInsertionPointToEnd(iff->body(0));
  Value* xi = b.create(OpId::MemLoad, {body.arg(0), i}, {f32})->result();
  Value* r = b.binary(OpId::ArithMulF, body.arg(2), xi);
  b.create(OpId::MemStore, {r, body.arg(1), i}, {});
  b.create(OpId::ScfYield, {}, {});
  b.setInsertionPointToEnd(iff->body(1));
  b.create(OpId::ScfYield, {}, {});
  return m;
}

}  // namespace

TEST_CASE("every row of Tile IR's diagnostics table has a name, a message and its severity") {
  checkDiagnosticTable(kIRDiagnostics, diag::NumIRDiagnostics);
}

TEST_CASE("types are interned and print in their textual form") {
  IRContext ctx;
  Type f16 = ctx.scalar(ScalarKind::F16);
  CHECK(f16 == ctx.scalar(ScalarKind::F16));
  Type t = ctx.tensor(f16, {Dim{128, {}}, Dim{-1, "k"}}, MemSpace::Global, Access::Read);
  CHECK(t == ctx.tensor(f16, {Dim{128, {}}, Dim{-1, "k"}}, MemSpace::Global, Access::Read));
  CHECK(printType(t) == "!tensor<f16, [128, k], global, read>");
  Type s = ctx.smem(f16, {Dim{64, {}}, Dim{64, {}}}, Layout::Row, Swizzle::Auto);
  CHECK(printType(s) == "!smem<f16, [64, 64], swizzle = xor>");
  CHECK(staticElementCount(s) == 4096);
  CHECK(staticElementCount(t) == -1);
  CHECK(elementBytes(s) == 2);
  Type num = ctx.num(ctx.scalar(ScalarKind::F8E4M3), ctx.scalar(ScalarKind::F32), Rounding::Stochastic, true);
  CHECK(printType(num) == "!num<f8e4m3, accum = f32, round = stochastic, saturate>");
  CHECK(isFloatLike(num));
  CHECK(printType(ctx.frag(ctx.scalar(ScalarKind::F32), {Dim{16, {}}, Dim{8, {}}}, FragRole::Acc)) ==
        "!frag<f32, [16, 8], acc>");
  CHECK(printType(ctx.cgroup(64)) == "!cgroup<64>");
  CHECK(ctx.withShape(s, {Dim{32, {}}})->swizzle == Swizzle::Auto);
}

TEST_CASE("the op table drives lookups and traits") {
  OpId id;
  REQUIRE(lookupOp("tile.barrier", id));
  CHECK(id == OpId::TileBarrier);
  CHECK(opInfo(id).has(T_Barrier));
  CHECK(opInfo(id).has(T_GroupCollective));
  CHECK_FALSE(lookupOp("tile.nonsense", id));
  REQUIRE(lookupOp("arith.addf", id));
  CHECK(opInfo(id).has(T_Commutative));
  CHECK(opInfo(id).minOperands == 2);
  REQUIRE(lookupOp("scf.for", id));
  CHECK(opInfo(id).maxOperands == -1);
  CHECK(opInfo(id).numRegions == 1);
}

TEST_CASE("printFloat gives the shortest text that reads back exactly") {
  std::mt19937_64 rng(42);
  for (int k = 0; k < 5000; ++k) {
    uint64_t bits = rng();
    double v;
    std::memcpy(&v, &bits, sizeof v);
    if (std::isnan(v) || std::isinf(v)) continue;
    std::string s = printFloat(v);
    CHECK(s.find_first_of(".e") != std::string::npos);
    double back = 0;
    std::from_chars(s.data(), s.data() + s.size(), back);
    CHECK(std::memcmp(&back, &v, sizeof v) == 0);
  }
  CHECK(printFloat(1.0) == "1.0");
  CHECK(printFloat(-0.0) == "-0.0");
  CHECK(printFloat(INFINITY) == "inf");
}

TEST_CASE("built IR verifies, prints, and round-trips through the parser") {
  auto m = buildScale();
  Env env;
  CHECK(verifyModule(*m, env.diags));
  std::string text = printModule(*m);
  CHECK(text.find("tile.func @scale(%x: !tensor<f32, [n], global, read>") == 0);
  CHECK(text.find("%1 = arith.cmpi %i, %0 {pred = \"slt\"} : i1") != std::string::npos);
  auto m2 = env.parse(text);
  REQUIRE(m2);
  CHECK(verifyModule(*m2, env.diags));
  CHECK(printModule(*m2) == text);
}

TEST_CASE("use lists follow operand edits, RAUW and erasure") {
  Module m;
  Builder b(m.ctx());
  b.setInsertionPointToEnd(m.body());
  Type f32 = m.ctx().scalar(ScalarKind::F32);
  Operation* f = b.func("f", {f32}, {f32});
  b.setInsertionPointToEnd(f->body());
  Value* x = f->body().arg(0);
  Value* a = b.binary(OpId::ArithAddF, x, x);
  CHECK(x->uses.size() == 2);
  Value* c = b.constFloat(2.0, f32);
  Operation* mul = b.create(OpId::ArithMulF, {a, c}, {f32});
  b.create(OpId::FuncReturn, {mul->result()}, {});
  a->replaceAllUsesWith(x);
  CHECK(a->uses.empty());
  CHECK(x->uses.size() == 3);
  f->body().erase(a->defOp);
  CHECK(x->uses.size() == 1);
  Env env;
  CHECK(verifyModule(m, env.diags));
}

TEST_CASE("clone copies regions with fresh values") {
  auto m = buildScale();
  Operation* f = m->funcs()[0];
  IRMapping map;
  auto copy = f->clone(map);
  CHECK(copy->body().numArgs() == 3);
  CHECK(copy->body().arg(0) != f->body().arg(0));
  int ops = 0, copied = 0;
  f->walk([&](Operation*) { ++ops; });
  copy->walk([&](Operation*) { ++copied; });
  CHECK(ops == copied);
}

TEST_CASE("the verifier catches what only builder-made IR can get wrong") {
  SUBCASE("ops other than tile.func at the top level") {
    Module m;
    Builder b(m.ctx());
    b.setInsertionPointToEnd(m.body());
    b.create(OpId::TileBarrier, {}, {});
    Env env;
    CHECK_FALSE(verifyModule(m, env.diags));
    CHECK(env.has(diag::err_ir_top_level_op));
  }
  SUBCASE("a use before its definition") {
    Module m;
    Builder b(m.ctx());
    b.setInsertionPointToEnd(m.body());
    Type f32 = m.ctx().scalar(ScalarKind::F32);
    Operation* f = b.func("f", {f32}, {});
    b.setInsertionPointToEnd(f->body());
    Operation* ret = b.create(OpId::FuncReturn, {}, {});
    b.setInsertionPoint(ret);
    Value* late = b.constFloat(1.0, f32);
    b.setInsertionPoint(late->defOp);
    b.create(OpId::ArithAddF, {late, late}, {f32});
    Env env;
    CHECK_FALSE(verifyModule(m, env.diags));
    CHECK(env.has(diag::err_ir_not_dominated));
  }
  SUBCASE("wrong operand counts") {
    Module m;
    Builder b(m.ctx());
    b.setInsertionPointToEnd(m.body());
    Operation* f = b.func("f", {}, {});
    b.setInsertionPointToEnd(f->body());
    b.create(OpId::TileLinearId, {}, {});
    b.create(OpId::FuncReturn, {}, {});
    Env env;
    CHECK_FALSE(verifyModule(m, env.diags));
    CHECK(env.has(diag::err_ir_result_count));
  }
}

TEST_CASE("the parser reports the first error with its location and returns null") {
  Env env;
  auto m = env.parse("tile.func @f() {\n  %x = arith.bogus : f32\n}\n");
  CHECK_FALSE(m);
  REQUIRE(env.store.diagnostics.size() == 1);
  CHECK(env.store.diagnostics[0].id == diag::err_ir_unknown_op);
  LineColumn lc = env.sm.lineColumn(env.store.diagnostics[0].range.begin);
  CHECK(lc.line == 2);
  CHECK(lc.column == 8);
}

TEST_CASE("the parser survives mutated input") {
  const std::string seed =
      "tile.func @k(%x: !tensor<f32, [n], global, read>, %y: !tensor<f32, [n], global, readwrite>) "
      "attributes {kernel, group = [128], shared = 512} {\n"
      "  %b = smem.alloc : !smem<f32, [128], swizzle = xor>\n"
      "  %i = tile.linear_id : index\n"
      "  %n = mem.dim %x {axis = 0} : index\n"
      "  %c = arith.cmpi %i, %n {pred = \"slt\"} : i1\n"
      "  scf.if %c {\n    %v = mem.load %x, %i : f32\n    mem.store %v, %y, %i\n    scf.yield\n  } {\n"
      "    scf.yield\n  }\n  tile.barrier\n  func.return\n}\n";
  std::mt19937 rng(7);
  const char alphabet[] = "%@^!{}()[]<>,:=-.0123456789abcxyz \n\"\\#";
  for (int k = 0; k < 3000; ++k) {
    std::string s = seed;
    int edits = 1 + static_cast<int>(rng() % 4);
    for (int e = 0; e < edits; ++e) {
      size_t pos = rng() % (s.size() + 1);
      switch (rng() % 3) {
        case 0: s.insert(pos, 1, alphabet[rng() % (sizeof alphabet - 1)]); break;
        case 1:
          if (pos < s.size()) s.erase(pos, 1 + rng() % 8);
          break;
        default:
          if (pos < s.size()) s[pos] = static_cast<char>(rng() % 256);
          break;
      }
    }
    Env env;
    auto m = env.parse(s);
    if (m) {
      bool ok = verifyModule(*m, env.diags);
      if (ok) {
        std::string once = printModule(*m);
        Env env2;
        auto m2 = env2.parse(once);
        REQUIRE(m2);
        CHECK(printModule(*m2) == once);
      }
    } else {
      CHECK(env.diags.hasErrors());
    }
  }
}

TEST_CASE("pass registry and pass manager") {
  CHECK(lookupPass("cse") != nullptr);
  CHECK(lookupPass("pipeline") != nullptr);
  CHECK(lookupPass("nope") == nullptr);
  Env env;
  PassManager pm;
  CHECK_FALSE(pm.parsePipeline("cse,nope", env.diags));
  CHECK(env.has(diag::err_ir_unknown_pass));
  PassManagerOptions opts;
  opts.verifyEach = true;
  PassManager pm2(opts);
  CHECK(pm2.parsePipeline("canonicalize,cse,licm,dce,uniformity,smem-plan,pipeline,inline", env.diags));
  auto m = buildScale();
  CHECK(pm2.run(*m, env.diags));
}

TEST_CASE("uniformity analysis marks tile ids and what they reach") {
  auto m = buildScale();
  Operation* f = m->funcs()[0];
  UniformityResult u = analyzeUniformity(*m, f);
  Value* i = nullptr;
  Value* n = nullptr;
  f->walk([&](Operation* op) {
    if (op->id == OpId::TileLinearId) i = op->result();
    if (op->id == OpId::MemDim) n = op->result();
  });
  REQUIRE(i);
  REQUIRE(n);
  CHECK(u.isDivergent(i));
  CHECK_FALSE(u.isDivergent(n));
  CHECK(u.violations.empty());
}

TEST_CASE("the attribute table: every row is found by its name, and nothing else is") {
  for (unsigned i = 0; i < static_cast<unsigned>(AttrId::NumAttrs); ++i) {
    auto id = static_cast<AttrId>(i);
    const AttrId* back = attrIdOf(attrName(id));
    REQUIRE(back);
    CHECK(*back == id);
  }
  CHECK(attrIdOf("axes") == nullptr);
  CHECK(attrInfo(AttrId::Axis).kindOk(AttrKind::Int));
  CHECK_FALSE(attrInfo(AttrId::Axis).kindOk(AttrKind::String));
  CHECK(attrInfo(AttrId::Value).kindOk(AttrKind::Float));
  CHECK(std::string(attrInfo(AttrId::Pred).values).find("slt") != std::string::npos);
}
