// The lowering's checks of what sema now refuses (issue 11: sema reports them, so that `--check`
// and the editor show them): each program's sema error is set aside and the typed module is
// lowered anyway, and the lowering must still refuse it with its own diagnostic rather than
// build invalid Tile IR. These checks have no lit test of their own, since no source reaches
// them past sema (tests/lit/irgen/diagnostic-coverage.test counts this file).
#include <algorithm>
#include <doctest/doctest.h>

#include "frontend/Parser.h"
#include "ir/IRDiagnostics.h"
#include "ir/Pass.h"
#include "irgen/IRGen.h"
#include "irgen/IRGenDiagnostics.h"
#include "sema/Sema.h"
#include "sema/SemaDiagnostics.h"

using namespace tessera;

namespace {

std::vector<DiagID> ids(const StoringDiagnosticConsumer& s) {
  std::vector<DiagID> out;
  for (const Diagnostic& d : s.diagnostics) out.push_back(d.id);
  return out;
}

// Sema's diagnostic ids for `text`, and the lowering's when it lowers the module all the same.
struct Backstop {
  std::vector<DiagID> sema, lowering;
  explicit Backstop(const std::string& text) {
    SourceManager sm;
    ASTContext ast;
    DiagnosticEngine semaDiags(sm);
    StoringDiagnosticConsumer semaStore;
    semaDiags.addConsumer(&semaStore);
    semaDiags.setErrorLimit(0);
    FileID f = sm.addBuffer("t.tessera", text);
    Module* module = parseBuffer(sm, f, ast, semaDiags);
    SemaContext sc(sm, ast);
    analyzeModule(*module, sc, semaDiags);
    sema = ids(semaStore);
    DiagnosticEngine lowerDiags(sm);
    StoringDiagnosticConsumer lowerStore;
    lowerDiags.addConsumer(&lowerStore);
    std::unique_ptr<ir::Module> m = lowerToTileIR(*module, sc, lowerDiags);
    // The pipeline's first pass splits the rows of whole-tensor programs (and checks them).
    if (m) ir::runRowPartition(*m, lowerDiags);
    lowering = ids(lowerStore);
  }
  static bool has(const std::vector<DiagID>& v, DiagID id) { return std::find(v.begin(), v.end(), id) != v.end(); }
};

}  // namespace

TEST_CASE("a whole tensor[T] parameter used as a tile value: sema and the lowering refuse it") {
  Backstop b(R"(@kernel
def whole(X: tensor[f32], Y: mut f32[n, m]):
    Y[:] = tile.relu(X) + X[0, 0]
)");
  CHECK(Backstop::has(b.sema, diag::err_dynamic_tile_shape));
  CHECK(Backstop::has(b.lowering, diag::err_lower_dynamic_tile_shape));
}

TEST_CASE("a shared buffer of another shape carried through an if: sema and the lowering refuse it") {
  Backstop b(R"(@kernel tile[(128,)]
def k(x: f32[n], y: mut f32[n]):
    a = tshared.alloc[f32](128)
    b = tshared.alloc[f32](64)
    i = tile.linear_id()
    buf = a
    if x[0] > 0.0:
        buf = b
    y[i] = buf[0]
)");
  CHECK(Backstop::has(b.sema, diag::err_carried_type_change));
  CHECK(Backstop::has(b.lowering, diag::err_lower_type_change));
}

TEST_CASE("an unsized shared buffer read before any copy: sema and the lowering refuse it") {
  Backstop b(R"(@kernel tile[(128,)]
def k(y: mut f32[n]):
    buf = tile.alloc_shared[f32]()
    i = tile.linear_id()
    y[i] = buf[i]
)");
  CHECK(Backstop::has(b.sema, diag::err_shared_shape_unknown));
  CHECK(Backstop::has(b.lowering, diag::err_lower_shared_shape_unknown));
}

TEST_CASE("the axis of a reduction given as a run-time value: sema and the lowering refuse it") {
  Backstop b(R"(@kernel tile[(128,)]
def k(x: f32[n, m], y: mut f32[n], a: i32):
    y[0:128] = tile.sum(x[0:128, 0:4], axis=a)
)");
  CHECK(Backstop::has(b.sema, diag::err_argument_not_constant));
  CHECK(Backstop::has(b.lowering, diag::err_lower_not_constant));
}

TEST_CASE("rows of different blocks meeting in a whole-tensor program: sema and the row-partition pass refuse it") {
  Backstop b(R"(@kernel
def gram(W: f32[M, M], X: f32[M, D], Out: mut f32[M, D]):
    Out[:] = tile.dot(W, X)
)");
  CHECK(Backstop::has(b.sema, diag::err_rows_not_independent));
  CHECK(Backstop::has(b.lowering, diag::err_ir_rows_not_independent));
}

TEST_CASE("a whole-rows value stored into a block of rows: sema and the row-partition pass refuse it") {
  Backstop b(R"(@kernel
def whole_rows(W: f32[K, M], X: f32[K, N], C: mut f32[M, N]):
    Z = W + W
    C[:] = tile.dot(Z.T, X)
)");
  CHECK(Backstop::has(b.sema, diag::err_rows_not_split));
  CHECK(Backstop::has(b.lowering, diag::err_ir_rows_not_split));
}

// Issue 33: constructs of helpers that the lowering refused after --check had accepted them.
TEST_CASE("'...' as a value in a helper a kernel calls: sema and the lowering refuse it") {
  Backstop b(R"(def helper(x: i32) -> i32:
    v = ...
    return x

@kernel tile[(128,)]
def k(z: mut i32[n]):
    i = tile.linear_id()
    z[i] = helper(i)
)");
  CHECK(Backstop::has(b.sema, diag::err_ellipsis_value_in_kernel));
  CHECK(Backstop::has(b.lowering, diag::err_lower_unsupported));
}

TEST_CASE("'break' in an unrolled loop of a helper a kernel calls: sema and the lowering refuse it") {
  Backstop b(R"(def first_big(x: f32[n], i: i32) -> f32:
    v = x[i]
    for off in [16, 8, 4]:
        if v > 100.0:
            break
        v += x[off]
    return v

@kernel tile[(32,)]
def k(x: f32[n], y: mut f32[n]):
    i = tile.linear_id()
    y[i] = first_big(x, i)
)");
  CHECK(std::count(b.sema.begin(), b.sema.end(), DiagID(diag::err_break_continue_unsupported)) == 1);
  CHECK(Backstop::has(b.lowering, diag::err_break_continue_unsupported));
}

TEST_CASE("a helper's '...' and 'break' are no errors while no kernel calls it") {
  Backstop b(R"(def host_only(x: i32) -> i32:
    v = ...
    for off in [1, 2]:
        break
    return x
)");
  CHECK(b.sema.empty());
}

TEST_CASE("tile.softmax along an axis a tile.cp_async block lacks: sema and the lowering refuse it") {
  Backstop b(R"(@kernel tile[(128,)]
def k(Q: bf16[S, D], K: bf16[S, D], O: mut f32[S, S]):
    for block in tile.range(Q, axis=0, step=128):
        q = tile.cp_async(Q, block)
        k = tile.cp_async(K, block)
        tile.barrier()
        s = tile.dot(q, k.T)
        O[block] = tile.softmax(s, axis=-3)
)");
  CHECK(Backstop::has(b.sema, diag::err_axis_out_of_range));
  CHECK(Backstop::has(b.lowering, diag::err_lower_unsupported));
}
