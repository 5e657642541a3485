// Unit tests of the graph IR's building blocks: extents (folding to canonical spellings,
// evaluation), the unifier of flexible extents, shape rules, the attribute table and the
// diagnostics table.
#include <doctest/doctest.h>
#include <set>

#include "../DiagnosticTableCheck.h"
#include "graph/GraphDiagnostics.h"
#include "graph/Printer.h"
#include "graph/ShapeRules.h"

using namespace tessera;
using namespace tessera::graph;

TEST_CASE("every row of the graph level's diagnostics table has a name, a message and its severity") {
  checkDiagnosticTable(kGraphDiagnostics, diag::NumGraphDiagnostics);
}

TEST_CASE("extents fold to one canonical spelling") {
  Dim E = Dim::symbol("E"), N = Dim::symbol("N");
  CHECK((E * Dim::constant(3)).str() == "3*E");
  CHECK(((Dim::constant(3) * E) / Dim::constant(3)).str() == "E");
  CHECK((E + Dim::constant(0)).str() == "E");
  CHECK((Dim::constant(2) * (Dim::constant(3) * E)).str() == "6*E");
  CHECK((E - E).isConst());
  CHECK((Dim::constant(6) / Dim::constant(4)).str() == "6/4");  // inexact division stays symbolic
  CHECK(Dim::binary(Dim::Op::CeilDiv, N, Dim::constant(128)).str() == "ceil_div(N,128)");
  CHECK(((E + N) * Dim::constant(2)).str() == "2*(E+N)");
  CHECK((E - (N - E)).str() == "E-(N-E)");
  bool ok = false;
  CHECK(parseDimSpelling("2*(E+N)", ok) == (E + N) * Dim::constant(2));
  CHECK(ok);
  parseDimSpelling("2*(", ok);
  CHECK_FALSE(ok);
}

TEST_CASE("extents evaluate with bound symbols; inexact division and unbound symbols do not") {
  Dim E = Dim::symbol("E"), N = Dim::symbol("N");
  std::map<std::string, int64_t> s = {{"E", 12}, {"N", 1000}};
  CHECK(((E * Dim::constant(3)) / Dim::constant(3)).evaluate(s) == 12);
  CHECK(Dim::binary(Dim::Op::CeilDiv, N, Dim::constant(128)).evaluate(s) == 8);
  CHECK_FALSE((N / Dim::constant(3)).evaluate(s).has_value());
  CHECK_FALSE((N / (E - E + Dim::symbol("Z"))).evaluate(s).has_value());
  CHECK(numElements({E, N, Dim::constant(2)}).evaluate(s) == 24000);
}

TEST_CASE("the unifier binds flexible symbols, preferring the rigid side, and never rigid ones") {
  Unifier u;
  u.flexible = {"X_0", "X_1"};
  Dim M = Dim::symbol("M"), K = Dim::symbol("K");
  CHECK(u.unify(Dim::symbol("X_1"), K));
  CHECK(u.resolve(Dim::symbol("X_1")) == K);
  CHECK(u.unify(M, Dim::symbol("X_0")));
  CHECK(u.resolve(Dim::symbol("X_0") * Dim::constant(2)).str() == "2*M");
  CHECK_FALSE(u.unify(M, K));
  CHECK_FALSE(u.unify(Dim::symbol("X_0"), K));  // bound to M already
}

TEST_CASE("shape rules: matrix products, broadcasting and reductions") {
  Dim M = Dim::symbol("M"), K = Dim::symbol("K"), N = Dim::symbol("N");
  Unifier u;
  std::vector<Type> out;
  std::string error;
  Attrs none;
  REQUIRE(inferResultTypes(OpId::MatMul, {Type::tensor(DType::FP16, {M, K}), Type::tensor(DType::FP16, {K, N})}, none,
                           out, u, error));
  CHECK(out[0] == Type::tensor(DType::FP16, {M, N}));
  Attrs tb;
  tb.set(AttrId::TransposeB, Attr::b(true));
  CHECK_FALSE(inferResultTypes(OpId::MatMul, {Type::tensor(DType::FP16, {M, K}), Type::tensor(DType::FP16, {K, N})}, tb,
                               out, u, error));
  CHECK(error.find("inner extents") != std::string::npos);
  REQUIRE(inferResultTypes(OpId::Add, {Type::tensor(DType::FP32, {M, N}), Type::tensor(DType::FP32, {N})}, none, out, u,
                           error));
  CHECK(out[0] == Type::tensor(DType::FP32, {M, N}));
  REQUIRE(inferResultTypes(OpId::Add,
                           {Type::tensor(DType::FP32, {M, Dim::constant(1)}), Type::tensor(DType::FP32, {N})}, none,
                           out, u, error));
  CHECK(out[0] == Type::tensor(DType::FP32, {M, N}));
  Attrs axes;
  axes.set(AttrId::Axes, Attr::ints({-1}));
  axes.set(AttrId::Keepdims, Attr::b(true));
  REQUIRE(inferResultTypes(OpId::ReduceSum, {Type::tensor(DType::FP32, {M, N})}, axes, out, u, error));
  CHECK(out[0] == Type::tensor(DType::FP32, {M, Dim::constant(1)}));
  CHECK_FALSE(inferResultTypes(OpId::Exp, {}, none, out, u, error));
  CHECK(error == "takes 1 operand, not 0");
}

TEST_CASE("the attribute table: names look up, every op names an attribute once, kinds are checked") {
  for (size_t i = 0; i < static_cast<size_t>(AttrId::NumAttrs); ++i) {
    AttrId id;
    REQUIRE(lookupAttr(attrName(static_cast<AttrId>(i)), id));
    CHECK(id == static_cast<AttrId>(i));
  }
  for (size_t op = 0; op < static_cast<size_t>(OpId::NumOps); ++op) {
    std::set<AttrId> seen;
    for (const AttrSpec& s : opAttrs(static_cast<OpId>(op))) CHECK(seen.insert(s.id).second);
  }
  const std::vector<AttrSpec>& flash = opAttrs(OpId::FlashAttention);
  Attrs a;
  std::string error;
  CHECK_FALSE(checkAttrs(a, flash, anyOpAttrs(), error));  // heads is required
  CHECK(error == "needs the attribute 'heads' (an integer)");
  a.set(AttrId::Heads, Attr::i(4));
  a.set(AttrId::Scale, Attr::i(1));  // a Number: an integer or a float
  a.set(AttrId::Buffers, Attr::ints({0, -1}));
  CHECK(checkAttrs(a, flash, anyOpAttrs(), error));
  CHECK(a.getInt(AttrId::Heads, 1) == 4);
  CHECK(a.getFloat(AttrId::Scale, 0) == 1.0);
  CHECK(a.getInts(AttrId::Buffers) == std::vector<int64_t>{0, -1});
  CHECK_FALSE(a.getBool(AttrId::Causal));
  a.set(AttrId::Causal, Attr::s("yes"));
  CHECK_FALSE(checkAttrs(a, flash, anyOpAttrs(), error));
  CHECK(error == "attribute 'causal' must be a bool");
  a.erase(AttrId::Causal);
  a.set(AttrId::Perm, Attr::ints({1, 0}));
  CHECK_FALSE(checkAttrs(a, flash, anyOpAttrs(), error));
  CHECK(error == "has no attribute 'perm'");
  CHECK(Attr::s("f32").is(AttrKind::DType, AttrId::DType));
  CHECK_FALSE(Attr::s("f33").is(AttrKind::DType, AttrId::DType));
  CHECK(Attr::s("sum").is(AttrKind::Enum, AttrId::Op));
  CHECK_FALSE(Attr::s("su").is(AttrKind::Enum, AttrId::Op));
  CHECK(Attr::s("M*N").is(AttrKind::Extent, AttrId::Value));
  CHECK_FALSE(Attr::s("M*").is(AttrKind::Extent, AttrId::Value));
  CHECK(Attr::dims({Dim::symbol("M"), Dim::constant(3)}).is(AttrKind::Dims, AttrId::Shape));
  CHECK(Attr::symbolRef("k").is(AttrKind::Symbol, AttrId::Kernel));
  CHECK_FALSE(Attr::s("k").is(AttrKind::Symbol, AttrId::Kernel));
}
