// Every launch-check error: the status, the message (kernel, parameter, problem), and that
// nothing ran, both on a recording backend and on the real CPU executor.
#include <atomic>
#include <cstdint>
#include <doctest/doctest.h>

#include "RuntimeTestUtil.h"
#include "runtime/TensorView.h"

using namespace rttest;

namespace {

std::atomic<int> tilesRun{0};
void countTiles(void**, const tessera_cpu_ctx*) { tilesRun.fetch_add(1); }

const std::vector<tessera_expr_op> kOverTp = {
    {TESSERA_EXPR_SYMBOL, 1, 0}, {TESSERA_EXPR_SYMBOL, 2, 0}, {TESSERA_EXPR_DIV, 0, 0}};

KernelSpec saxpySpec() {
  KernelSpec k;
  k.name = "saxpy";
  k.params = {scalarParam("alpha", TESSERA_F32), tensorParam("x", TESSERA_F32, {sym(0)}),
              tensorParam("y", TESSERA_F32, {sym(0)}, true)};
  k.symbols = {"n"};
  k.cpu = countTiles;
  return k;
}
KernelSpec groupSumSpec() {
  KernelSpec k;
  k.name = "group_sum";
  k.params = {tensorParam("x", TESSERA_F32, {sym(0)}), tensorParam("out", TESSERA_F32, {sym(1)}, true)};
  k.symbols = {"n", "grid_groups"};
  k.gridSymbol = 1;
  k.flags |= TESSERA_KERNEL_GROUPED;
  k.group[0] = 128;
  k.shared = 512;
  k.cpu = countTiles;
  return k;
}
KernelSpec noGridSpec() {
  KernelSpec k;
  k.name = "tiled";
  k.params = {tensorParam("y", TESSERA_F32, {sym(0)}, true)};
  k.symbols = {"n"};
  k.flags |= TESSERA_KERNEL_GROUPED;
  k.group[0] = 64;
  k.cpu = countTiles;
  return k;
}
KernelSpec noMutSpec() {
  KernelSpec k;
  k.name = "reader";
  k.params = {tensorParam("x", TESSERA_F32, {sym(0)})};
  k.symbols = {"n"};
  k.cpu = countTiles;
  return k;
}
KernelSpec twoMutSpec() {
  KernelSpec k;
  k.name = "two_out";
  k.params = {tensorParam("a", TESSERA_F32, {any()}, true), tensorParam("b", TESSERA_F32, {any()}, true),
              tensorParam("c", TESSERA_F32, {any()})};
  k.cpu = countTiles;
  return k;
}
KernelSpec shapesSpec() {
  KernelSpec k;
  k.name = "shard";
  k.params = {tensorParam("w", TESSERA_F16, {sym(0), expr(kOverTp)}, true), tensorParam("k", TESSERA_I8, {sym(1)}),
              tensorParam("t", TESSERA_I8, {sym(2)}), tensorParam("c", TESSERA_F32, {cst(4), any()})};
  k.symbols = {"M", "K", "tp"};
  k.cpu = countTiles;
  return k;
}
KernelSpec bigSharedSpec() {
  KernelSpec k = groupSumSpec();
  k.name = "big_shared";
  k.shared = 300 * 1024;
  return k;
}
KernelSpec unboundGridSpec() {
  KernelSpec k = groupSumSpec();
  k.name = "unbound_grid";
  k.params = {tensorParam("x", TESSERA_F32, {sym(0)}, true)};
  return k;
}

struct Fixture {
  TestModule m{"launch_checks",
               {saxpySpec(), groupSumSpec(), noGridSpec(), noMutSpec(), twoMutSpec(), shapesSpec(), bigSharedSpec(),
                unboundGridSpec()}};
  const tessera_kernel_desc *saxpy = m.kernel(0), *groupSum = m.kernel(1), *noGrid = m.kernel(2), *noMut = m.kernel(3),
                            *twoMut = m.kernel(4), *shapes = m.kernel(5), *bigShared = m.kernel(6),
                            *unboundGrid = m.kernel(7);
  std::vector<float> xs = std::vector<float>(64, 1.f), ys = std::vector<float>(64, 2.f);
  tessera_tensor x = tessera::tensor(xs.data(), {10}), y = tessera::tensor(ys.data(), {10});
  Fixture() { REQUIRE(m.status == TESSERA_SUCCESS); }
};

// Runs the launch on a recording backend and on the CPU executor: both must fail with `status`
// and a message containing every part of `expected`, and nothing may run.
void expectRejected(const tessera_kernel_desc* k, const tessera_launch_options* opts,
                    std::initializer_list<tessera_arg> args, tessera_status status,
                    std::initializer_list<const char*> expected) {
  RecordingBackend rec;
  tessera_status s = rec.run(k, opts, args);
  CHECK(tessera_status_name(s) == std::string(tessera_status_name(status)));
  std::string msg = tessera_last_error_message();
  for (const char* part : expected)
    CHECK_MESSAGE(msg.find(part) != std::string::npos, "message: ", msg, "\nmissing: ", part);
  CHECK(rec.launches == 0);

  tilesRun = 0;
  tessera_clear_error();
  CHECK(cpuLaunch(k, opts, args) == status);
  CHECK(std::string(tessera_last_error_message()) == msg);
  CHECK(tilesRun == 0);
}

}  // namespace

TEST_CASE("launch: a valid launch runs one tile per element of the first mut tensor") {
  Fixture f;
  RecordingBackend rec;
  CHECK(rec.run(f.saxpy, nullptr, {tessera::scalar(2.f), tessera::arg(f.x), tessera::arg(f.y)}) == TESSERA_SUCCESS);
  CHECK(rec.launches == 1);
  CHECK(rec.last.launchTiles == 10);
  tilesRun = 0;
  CHECK_MESSAGE(
      cpuLaunch(f.saxpy, nullptr, {tessera::scalar(2.f), tessera::arg(f.x), tessera::arg(f.y)}) == TESSERA_SUCCESS,
      std::string(tessera_last_error_message()));
  CHECK(tilesRun == 10);
}

TEST_CASE("launch: wrong rank names kernel, parameter and both ranks") {
  Fixture f;
  tessera_tensor x2 = tessera::tensor(f.xs.data(), {2, 5});
  expectRejected(f.saxpy, nullptr, {tessera::scalar(2.f), tessera::arg(x2), tessera::arg(f.y)},
                 TESSERA_ERROR_RANK_MISMATCH,
                 {"kernel 'saxpy': parameter 'x': expected rank 1, got rank 2 (shape [2, 5])"});
}

TEST_CASE("launch: equal symbols must bind equal sizes") {
  Fixture f;
  tessera_tensor y12 = tessera::tensor(f.ys.data(), {12});
  expectRejected(f.saxpy, nullptr, {tessera::scalar(2.f), tessera::arg(f.x), tessera::arg(y12)},
                 TESSERA_ERROR_SHAPE_MISMATCH,
                 {"kernel 'saxpy': parameter 'y': dimension 0 has size 12 but symbol 'n' is 10 "
                  "(bound by parameter 'x' dimension 0)"});
}

TEST_CASE("launch: wrong tensor dtype and wrong scalar dtype") {
  Fixture f;
  tessera_tensor xh = f.x;
  xh.dtype = TESSERA_F16;
  expectRejected(f.saxpy, nullptr, {tessera::scalar(2.f), tessera::arg(xh), tessera::arg(f.y)},
                 TESSERA_ERROR_DTYPE_MISMATCH, {"kernel 'saxpy': parameter 'x': expected dtype f32, got f16"});
  expectRejected(f.saxpy, nullptr, {tessera::scalar(2.0), tessera::arg(f.x), tessera::arg(f.y)},
                 TESSERA_ERROR_DTYPE_MISMATCH,
                 {"kernel 'saxpy': parameter 'alpha': expected a scalar of dtype f32, got f64"});
}

TEST_CASE("launch: argument count and kinds") {
  Fixture f;
  expectRejected(f.saxpy, nullptr, {tessera::scalar(2.f), tessera::arg(f.x)}, TESSERA_ERROR_INVALID_ARGUMENT,
                 {"kernel 'saxpy': expected 3 arguments, got 2"});
  expectRejected(f.saxpy, nullptr, {tessera::arg(f.x), tessera::arg(f.x), tessera::arg(f.y)},
                 TESSERA_ERROR_INVALID_ARGUMENT,
                 {"kernel 'saxpy': parameter 'alpha': expected a scalar f32, got a tensor"});
  expectRejected(f.saxpy, nullptr, {tessera::scalar(2.f), tessera::scalar(1.f), tessera::arg(f.y)},
                 TESSERA_ERROR_INVALID_ARGUMENT,
                 {"kernel 'saxpy': parameter 'x': expected a tensor f32[...], got a scalar"});
}

TEST_CASE("launch: null data pointer of a non-empty tensor") {
  Fixture f;
  tessera_tensor xn = f.x;
  xn.data = nullptr;
  expectRejected(f.saxpy, nullptr, {tessera::scalar(2.f), tessera::arg(xn), tessera::arg(f.y)},
                 TESSERA_ERROR_NULL_POINTER,
                 {"kernel 'saxpy': parameter 'x': null data pointer for a tensor of shape [10]"});
  tessera_arg nullView{};
  nullView.kind = TESSERA_PARAM_TENSOR;
  expectRejected(f.saxpy, nullptr, {tessera::scalar(2.f), nullView, tessera::arg(f.y)}, TESSERA_ERROR_NULL_POINTER,
                 {"kernel 'saxpy': parameter 'x': null tensor view"});
}

TEST_CASE("launch: a view naming a device that does not exist") {
  Fixture f;
  tessera_tensor x3 = f.x;
  x3.device = 3;
  expectRejected(f.saxpy, nullptr, {tessera::scalar(2.f), tessera::arg(x3), tessera::arg(f.y)},
                 TESSERA_ERROR_INVALID_ARGUMENT,
                 {"kernel 'saxpy': parameter 'x': view names device 3; only TESSERA_HOST (-1) and "
                  "the active device (0) exist"});
}

TEST_CASE("launch: empty tensors may have null data and launch nothing") {
  Fixture f;
  tessera_tensor x0 = tessera::tensor(static_cast<float*>(nullptr), {0});
  tessera_tensor y0 = tessera::tensor(static_cast<float*>(nullptr), {0});
  tilesRun = 0;
  CHECK(cpuLaunch(f.saxpy, nullptr, {tessera::scalar(2.f), tessera::arg(x0), tessera::arg(y0)}) == TESSERA_SUCCESS);
  CHECK(tilesRun == 0);
}

TEST_CASE("launch: host pointers passed to a GPU launch") {
  Fixture f;
  RecordingBackend gpu;
  gpu.deviceKind = TESSERA_DEVICE_GPU;
  tessera_tensor xh = f.x;
  xh.device = TESSERA_HOST;
  CHECK(gpu.run(f.saxpy, nullptr, {tessera::scalar(2.f), tessera::arg(xh), tessera::arg(f.y)}) ==
        TESSERA_ERROR_HOST_POINTER);
  CHECK(std::string(tessera_last_error_message()) ==
        "kernel 'saxpy': parameter 'x': host memory (view device is TESSERA_HOST) passed to a GPU "
        "launch; copy it to memory from tessera_malloc");
  gpu.pointersUsable = false;  // what cuPointerGetAttribute says of pageable memory
  CHECK(gpu.run(f.saxpy, nullptr, {tessera::scalar(2.f), tessera::arg(f.x), tessera::arg(f.y)}) ==
        TESSERA_ERROR_HOST_POINTER);
  std::string msg = tessera_last_error_message();
  CHECK(msg.find("kernel 'saxpy': parameter 'x': pointer ") == 0);
  CHECK(msg.find("is not device memory (test says so); allocate it with tessera_malloc") != std::string::npos);
  CHECK(gpu.launches == 0);
  // The CPU executor reads host memory directly: the same views are fine there.
  CHECK(cpuLaunch(f.saxpy, nullptr, {tessera::scalar(2.f), tessera::arg(xh), tessera::arg(f.y)}) == TESSERA_SUCCESS);
}

TEST_CASE("launch: two aliased mut tensors") {
  Fixture f;
  tessera_tensor a = tessera::tensor(f.ys.data(), {8});
  tessera_tensor b = tessera::tensor(f.ys.data() + 7, {8});  // shares element 7
  tessera_tensor c = tessera::tensor(f.xs.data(), {16});     // read-only, elsewhere
  expectRejected(f.twoMut, nullptr, {tessera::arg(a), tessera::arg(b), tessera::arg(c)}, TESSERA_ERROR_ALIASED_MUT,
                 {"kernel 'two_out': mut parameters 'a' and 'b' overlap in memory (32 bytes at ",
                  "two mut tensors may not alias"});
  // A strided view reaching over the other one overlaps too.
  tessera_tensor s = tessera::tensor(f.ys.data() + 20, {3});
  s.strides[0] = -10;  // elements 20, 10, 0
  tessera_tensor mid = tessera::tensor(f.ys.data() + 9, {1});
  expectRejected(f.twoMut, nullptr, {tessera::arg(s), tessera::arg(mid), tessera::arg(c)}, TESSERA_ERROR_ALIASED_MUT,
                 {"mut parameters 'a' and 'b' overlap"});
  // Adjacent, non-overlapping ranges are fine.
  tessera_tensor b2 = tessera::tensor(f.ys.data() + 8, {8});
  RecordingBackend rec;
  CHECK(rec.run(f.twoMut, nullptr, {tessera::arg(a), tessera::arg(b2), tessera::arg(c)}) == TESSERA_SUCCESS);
  CHECK(rec.launches == 1);
}

// Views whose byte spans interleave but whose rows are disjoint (column ranges of one matrix,
// as the heads of dk and dv written into split_qkv's gradient [S, 3E]) do not alias.
TEST_CASE("launch: interleaved column ranges of one matrix are disjoint") {
  std::vector<uint16_t> m(7 * 48);  // [S = 7, 3E = 48], E = 16, two heads of 8
  auto heads = [&](int64_t firstColumn, int64_t rowLength = 48) {
    tessera_tensor t = tessera::tensor(m.data() + firstColumn, TESSERA_BF16, {1, 2, 7, 8});
    t.strides[0] = 7 * rowLength, t.strides[1] = 8, t.strides[2] = rowLength, t.strides[3] = 1;
    return t;
  };
  tessera_tensor dq = heads(0), dk = heads(16), dv = heads(32);
  CHECK(tessera::rt::byteSpan(dk).overlaps(tessera::rt::byteSpan(dv)));
  CHECK(tessera::rt::provablyDisjoint(dk, dv));
  CHECK(tessera::rt::provablyDisjoint(dv, dq));
  CHECK(tessera::rt::provablyDisjoint(dq, dk));
  // Columns 8..23 share 8..15 with dq's: not disjoint; nor a view with itself.
  CHECK_FALSE(tessera::rt::provablyDisjoint(dq, heads(8)));
  CHECK_FALSE(tessera::rt::provablyDisjoint(dk, dk));
  // Another row length (period 40: columns drift across rows), a broadcast axis (stride 0) and
  // a reversed one: no claim.
  CHECK_FALSE(tessera::rt::provablyDisjoint(dq, heads(16, 40)));
  tessera_tensor b = dk;
  b.strides[1] = 0;
  CHECK_FALSE(tessera::rt::provablyDisjoint(b, dv));
  b = dk;
  b.strides[2] = -48;
  CHECK_FALSE(tessera::rt::provablyDisjoint(b, dv));
  // One element wider than the gap: dk's columns 16..32 meet dv's 32.
  tessera_tensor wide = tessera::tensor(m.data() + 16, TESSERA_BF16, {7, 17});
  wide.strides[0] = 48;
  tessera_tensor dv2 = tessera::tensor(m.data() + 32, TESSERA_BF16, {7, 16});
  dv2.strides[0] = 48;
  CHECK_FALSE(tessera::rt::provablyDisjoint(wide, dv2));
  wide.shape[1] = 16;
  CHECK(tessera::rt::provablyDisjoint(wide, dv2));
}

// Compiled code assumes tensor parameters do not alias (codegen marks their accesses noalias),
// so a mut tensor may not overlap a read-only one either; two read-only views may share memory.
TEST_CASE("launch: a mut tensor overlapping a read-only tensor") {
  Fixture f;
  tessera_tensor y = tessera::tensor(f.ys.data(), {10});
  tessera_tensor yShifted = tessera::tensor(f.ys.data() + 9, {10});  // shares element 9
  expectRejected(f.saxpy, nullptr, {tessera::scalar(2.f), tessera::arg(y), tessera::arg(y)}, TESSERA_ERROR_ALIASED_MUT,
                 {"kernel 'saxpy': mut parameter 'y' overlaps parameter 'x' in memory (40 bytes at ",
                  "a mut tensor may not alias another tensor parameter"});
  expectRejected(f.saxpy, nullptr, {tessera::scalar(2.f), tessera::arg(yShifted), tessera::arg(y)},
                 TESSERA_ERROR_ALIASED_MUT, {"mut parameter 'y' overlaps parameter 'x'"});
  // The read-only parameter after the mut ones: the mut one is named first.
  tessera_tensor a = tessera::tensor(f.ys.data(), {8});
  tessera_tensor b = tessera::tensor(f.ys.data() + 8, {8});
  tessera_tensor c = tessera::tensor(f.ys.data() + 12, {4});
  expectRejected(f.twoMut, nullptr, {tessera::arg(a), tessera::arg(b), tessera::arg(c)}, TESSERA_ERROR_ALIASED_MUT,
                 {"kernel 'two_out': mut parameter 'b' overlaps parameter 'c' in memory (32 bytes at "});
  // Adjacent views and empty views are fine.
  RecordingBackend rec;
  tessera_tensor next = tessera::tensor(f.ys.data() + 10, {10});
  CHECK(rec.run(f.saxpy, nullptr, {tessera::scalar(2.f), tessera::arg(next), tessera::arg(y)}) == TESSERA_SUCCESS);
  tessera_tensor a0 = tessera::tensor(f.ys.data(), {0}), c0 = tessera::tensor(f.ys.data() + 8, {0});
  CHECK(rec.run(f.twoMut, nullptr, {tessera::arg(a0), tessera::arg(b), tessera::arg(c0)}) == TESSERA_SUCCESS);
  CHECK(rec.launches == 2);
}

TEST_CASE("launch: constant and expression extents") {
  Fixture f;
  std::vector<uint16_t> w(64 * 16);
  std::vector<int8_t> kbuf(64), tbuf(4);
  std::vector<float> cbuf(4 * 3);
  tessera_tensor wt = tessera::tensor(w.data(), TESSERA_F16, {2, 16});
  tessera_tensor kt = tessera::tensor(kbuf.data(), {64});
  tessera_tensor tt = tessera::tensor(tbuf.data(), {4});
  tessera_tensor ct = tessera::tensor(cbuf.data(), {4, 3});
  RecordingBackend rec;
  CHECK(rec.run(f.shapes, nullptr, {tessera::arg(wt), tessera::arg(kt), tessera::arg(tt), tessera::arg(ct)}) ==
        TESSERA_SUCCESS);

  tessera_tensor wbad = tessera::tensor(w.data(), TESSERA_F16, {2, 15});
  expectRejected(f.shapes, nullptr, {tessera::arg(wbad), tessera::arg(kt), tessera::arg(tt), tessera::arg(ct)},
                 TESSERA_ERROR_SHAPE_MISMATCH,
                 {"kernel 'shard': parameter 'w': dimension 1 has size 15, expected K/tp = 16"});
  tessera_tensor t3 = tessera::tensor(tbuf.data(), {3});
  expectRejected(f.shapes, nullptr, {tessera::arg(wt), tessera::arg(kt), tessera::arg(t3), tessera::arg(ct)},
                 TESSERA_ERROR_SHAPE_MISMATCH,
                 {"kernel 'shard': parameter 'w': dimension 1 extent K/tp: 64 is not divisible by 3"});
  tessera_tensor c5 = tessera::tensor(cbuf.data(), {5, 2});
  expectRejected(f.shapes, nullptr, {tessera::arg(wt), tessera::arg(kt), tessera::arg(tt), tessera::arg(c5)},
                 TESSERA_ERROR_SHAPE_MISMATCH,
                 {"kernel 'shard': parameter 'c': dimension 0 has size 5, expected 4 (shape [5, 2])"});
}

TEST_CASE("launch: symbols bound before the checks (tessera_launch_bound)") {
  // K and tp bound by the caller (index_launch: K from a global shape, tp from a mesh axis):
  // the expression K/tp is checked against them, and tensors must agree with bound symbols.
  KernelSpec spec;
  spec.name = "part";
  spec.params = {tensorParam("w", TESSERA_F16, {sym(0), expr(kOverTp)}, true)};
  spec.symbols = {"M", "K", "tp"};
  spec.cpu = countTiles;
  TestModule m{"launch_bound", {spec}};
  REQUIRE(m.status == TESSERA_SUCCESS);
  std::vector<uint16_t> w(64);
  tessera_tensor wt = tessera::tensor(w.data(), TESSERA_F16, {2, 16}, TESSERA_HOST);
  tessera_arg args[] = {tessera::arg(wt)};
  tessera_symbol_binding ok[] = {
      {"K", 64, "the global shape of 'W' dimension 1"}, {"tp", 4, "mesh axis 'tp'"}, {"dp", 2, "mesh axis 'dp'"}};
  tilesRun = 0;
  CHECK(tessera_launch_bound(m.kernel(), nullptr, args, 1, ok, 3) == TESSERA_SUCCESS);
  CHECK(tilesRun == 32);
  // Without the bindings K is used only in an expression: unbound.
  CHECK(tessera_launch(m.kernel(), nullptr, args, 1) == TESSERA_ERROR_SHAPE_MISMATCH);
  CHECK(std::string(tessera_last_error_message()).find("symbol 'K' is not bound") != std::string::npos);

  tessera_symbol_binding wrongK[] = {{"K", 60, "the global shape of 'W' dimension 1"}, {"tp", 4, "mesh axis 'tp'"}};
  CHECK(tessera_launch_bound(m.kernel(), nullptr, args, 1, wrongK, 2) == TESSERA_ERROR_SHAPE_MISMATCH);
  CHECK(std::string(tessera_last_error_message()) ==
        "kernel 'part': parameter 'w': dimension 1 has size 16, expected K/tp = 15 (K = 60 from the global shape "
        "of 'W' dimension 1, tp = 4 from mesh axis 'tp')");
  wrongK[0].value = 62;
  CHECK(tessera_launch_bound(m.kernel(), nullptr, args, 1, wrongK, 2) == TESSERA_ERROR_SHAPE_MISMATCH);
  CHECK(std::string(tessera_last_error_message()) ==
        "kernel 'part': parameter 'w': dimension 1 extent K/tp: 62 is not divisible by 4");
  tessera_symbol_binding wrongM[] = {{"M", 3, "mesh axis 'M'"}, {"K", 64, nullptr}, {"tp", 4, nullptr}};
  CHECK(tessera_launch_bound(m.kernel(), nullptr, args, 1, wrongM, 3) == TESSERA_ERROR_SHAPE_MISMATCH);
  CHECK(std::string(tessera_last_error_message()) ==
        "kernel 'part': parameter 'w': dimension 0 has size 2 but symbol 'M' is 3 (bound by mesh axis 'M')");
  tessera_symbol_binding twice[] = {{"tp", 4, "mesh axis 'tp'"}, {"tp", 2, "the caller's second binding"}};
  CHECK(tessera_launch_bound(m.kernel(), nullptr, args, 1, twice, 2) == TESSERA_ERROR_SHAPE_MISMATCH);
  CHECK(std::string(tessera_last_error_message()) ==
        "kernel 'part': symbol 'tp' is bound to 4 by mesh axis 'tp' and to 2 by the caller's second binding");
  CHECK(tessera_launch_bound(m.kernel(), nullptr, args, 1, nullptr, 1) == TESSERA_ERROR_INVALID_ARGUMENT);
}

TEST_CASE("launch: grouped kernels take grid_groups from the parameter that names it") {
  Fixture f;
  tessera_tensor out = tessera::tensor(f.ys.data(), {5});
  RecordingBackend rec;
  CHECK(rec.run(f.groupSum, nullptr, {tessera::arg(f.x), tessera::arg(out)}) == TESSERA_SUCCESS);
  CHECK(rec.last.groups == 5);
  CHECK(rec.last.groupTiles == 128);
  CHECK(rec.last.launchTiles == 5 * 128);
  CHECK(rec.last.sharedBytes == 512);
}

TEST_CASE("launch: no launch size derivable") {
  Fixture f;
  expectRejected(f.noGrid, nullptr, {tessera::arg(f.y)}, TESSERA_ERROR_NO_LAUNCH_SIZE,
                 {"kernel 'tiled': no launch size: the kernel has a group shape but no parameter "
                  "names grid_groups; pass a grid in the launch options"});
  expectRejected(f.noMut, nullptr, {tessera::arg(f.x)}, TESSERA_ERROR_NO_LAUNCH_SIZE,
                 {"kernel 'reader': no launch size: the kernel has no group shape and no mut tensor "
                  "parameter to size the launch by; pass a grid and group in the launch options"});
  expectRejected(f.unboundGrid, nullptr, {tessera::arg(f.y)}, TESSERA_ERROR_NO_LAUNCH_SIZE,
                 {"kernel 'unbound_grid': no launch size: symbol 'grid_groups' is not bound by any "
                  "parameter's shape"});
  // An explicit grid makes both launchable.
  tessera_launch_options o = gridOptions(3);
  tilesRun = 0;
  CHECK(cpuLaunch(f.noGrid, &o, {tessera::arg(f.y)}) == TESSERA_SUCCESS);
  CHECK(tilesRun == 3 * 64);
  o = gridOptions(2, 32);
  tilesRun = 0;
  CHECK(cpuLaunch(f.noMut, &o, {tessera::arg(f.x)}) == TESSERA_SUCCESS);
  CHECK(tilesRun == 64);
}

TEST_CASE("launch: grids the kernel or device cannot take") {
  Fixture f;
  tessera_launch_options o = gridOptions(4294967295u);
  expectRejected(f.noGrid, &o, {tessera::arg(f.y)}, TESSERA_ERROR_INVALID_GRID,
                 {"kernel 'tiled': grid (4294967295, 1, 1) exceeds the device limit of 2147483647 groups in x"});
  o = gridOptions(2, 32);
  expectRejected(f.noGrid, &o, {tessera::arg(f.y)}, TESSERA_ERROR_INVALID_GRID,
                 {"kernel 'tiled': the kernel declares group shape (64, 1, 1) but the launch asks for (32, 1, 1)"});
  o = gridOptions(2, 2048);
  expectRejected(f.noMut, &o, {tessera::arg(f.x)}, TESSERA_ERROR_INVALID_GRID,
                 {"kernel 'reader': group (2048, 1, 1) exceeds the device limit of 1024 tiles in x"});
  o = tessera_launch_options{};
  o.grid[0] = 1;
  o.group[0] = 64;
  o.group[1] = 32;
  expectRejected(f.noMut, &o, {tessera::arg(f.x)}, TESSERA_ERROR_INVALID_GRID,
                 {"kernel 'reader': group (64, 32, 1) has 2048 tiles, above the device limit of 1024"});
  o = gridOptions(2);
  expectRejected(f.noMut, &o, {tessera::arg(f.x)}, TESSERA_ERROR_INVALID_GRID,
                 {"kernel 'reader': an explicit grid (2, 1, 1) for a kernel without a group shape "
                  "needs a group size (tiles per group) too"});
  o = tessera_launch_options{};
  o.grid[1] = 3;
  expectRejected(f.noGrid, &o, {tessera::arg(f.y)}, TESSERA_ERROR_INVALID_GRID,
                 {"kernel 'tiled': grid (0, 3, 0) has a zero x dimension"});
  tessera_tensor out = tessera::tensor(f.ys.data(), {5});
  expectRejected(f.bigShared, nullptr, {tessera::arg(f.x), tessera::arg(out)}, TESSERA_ERROR_INVALID_GRID,
                 {"kernel 'big_shared': needs 307200 bytes of shared memory per group (307200 "
                  "declared + 0 dynamic), above the device limit of 232448"});
  o = tessera_launch_options{};
  o.dynamic_shared_bytes = 232448;
  expectRejected(f.groupSum, &o, {tessera::arg(f.x), tessera::arg(out)}, TESSERA_ERROR_INVALID_GRID,
                 {"(512 declared + 232448 dynamic)"});
}

TEST_CASE("launch: grid_groups above the device limit") {
  Fixture f;
  RecordingBackend rec;
  rec.lim.maxGrid[0] = 4;
  tessera_tensor out = tessera::tensor(f.ys.data(), {5});
  CHECK(rec.run(f.groupSum, nullptr, {tessera::arg(f.x), tessera::arg(out)}) == TESSERA_ERROR_INVALID_GRID);
  CHECK(std::string(tessera_last_error_message()) ==
        "kernel 'group_sum': grid of 5 groups (from symbol 'grid_groups') exceeds the device limit of 4");
  CHECK(rec.launches == 0);
}

TEST_CASE("launch: a kernel that is not registered") {
  Fixture f;
  tessera_kernel_desc copy = *f.saxpy;  // same metadata, but not inside a registered module
  expectRejected(&copy, nullptr, {tessera::scalar(2.f), tessera::arg(f.x), tessera::arg(f.y)}, TESSERA_ERROR_NOT_FOUND,
                 {"kernel 'saxpy' is not registered (its module must call tessera_register_module first)"});
}

TEST_CASE("launch: a kernel without CPU code on the CPU executor") {
  KernelSpec k = saxpySpec();
  k.cpu = nullptr;
  TestModule m("gpu_only", {k});
  REQUIRE(m.status == TESSERA_SUCCESS);
  std::vector<float> xs(4), ys(4);
  tessera_tensor x = tessera::tensor(xs.data(), {4}), y = tessera::tensor(ys.data(), {4});
  CHECK(cpuLaunch(m.kernel(), nullptr, {tessera::scalar(1.f), tessera::arg(x), tessera::arg(y)}) ==
        TESSERA_ERROR_NOT_SUPPORTED);
  CHECK(std::string(tessera_last_error_message()) ==
        "kernel 'saxpy' has no CPU code (module 'gpu_only' was built without it)");
}

// Kernels without a group shape whose GPU entry runs several tiles per thread
// (TESSERA_KERNEL_GPU_TILES_*): the GPU starts ceil(launch_tiles / V) threads; the checks, the
// plan and the CPU executor still count one tile per element.
TEST_CASE("launch: GPU threads of kernels that run several tiles per thread") {
  KernelSpec s4 = saxpySpec();
  s4.name = "saxpy4";
  s4.flags |= 2u << TESSERA_KERNEL_GPU_TILES_SHIFT;
  KernelSpec grouped = groupSumSpec();
  TestModule m{"gpu_tiles", {s4, grouped}};
  REQUIRE(m.status == TESSERA_SUCCESS);
  const tessera_kernel_desc* k = m.kernel(0);
  CHECK(tessera_kernel_gpu_tiles(k) == 4);
  CHECK(tessera_kernel_gpu_tiles(m.kernel(1)) == 1);
  std::vector<float> xs(5000), ys(5000);
  auto plan = [&](int64_t n, const tessera_launch_options* o) {
    tessera_tensor x = tessera::tensor(xs.data(), {n}), y = tessera::tensor(ys.data(), {n});
    RecordingBackend rec;
    REQUIRE(rec.run(k, o, {tessera::scalar(2.f), tessera::arg(x), tessera::arg(y)}) == TESSERA_SUCCESS);
    return rec.last;
  };
  // Default launch of 5000 tiles: 20 plan groups of 256; 1250 threads in 5 groups of 256.
  tessera::rt::LaunchPlan p = plan(5000, nullptr);
  CHECK(p.groups == 20);
  tessera::rt::GpuLaunchDims d = tessera::rt::gpuLaunchDims(p);
  CHECK(d.block[0] == 256);
  CHECK(d.grid[0] == 5);
  CHECK((d.block[1] == 1 && d.block[2] == 1 && d.grid[1] == 1 && d.grid[2] == 1));
  CHECK(p.launchTiles == 5000);
  // Fewer threads than a group: 300 tiles (2 plan groups of 256) need 75 threads, one group of
  // 96 (whole warps), as does an explicit group of 300; a group of 10 tiles stays 10 threads.
  d = tessera::rt::gpuLaunchDims(plan(300, nullptr));
  CHECK(d.block[0] == 96);
  CHECK(d.grid[0] == 1);
  tessera_launch_options big{};
  big.grid[0] = 1;
  big.group[0] = 300;
  d = tessera::rt::gpuLaunchDims(plan(300, &big));
  CHECK(d.block[0] == 96);
  CHECK(d.grid[0] == 1);
  d = tessera::rt::gpuLaunchDims(plan(10, nullptr));
  CHECK(d.block[0] == 10);
  CHECK(d.grid[0] == 1);
  // An explicit grid of 4 x (8, 2, 1) tiles = 64 tiles: 16 threads, flattened to 1-d.
  tessera_launch_options o{};
  o.grid[0] = 4;
  o.group[0] = 8;
  o.group[1] = 2;
  p = plan(60, &o);
  CHECK(p.launchTiles == 64);
  d = tessera::rt::gpuLaunchDims(p);
  CHECK(d.block[0] == 16);
  CHECK(d.block[1] == 1);
  CHECK(d.grid[0] == 1);
  // Grouped kernels keep their grid and group.
  std::vector<float> outs(6);
  tessera_tensor x = tessera::tensor(xs.data(), {1000}), out = tessera::tensor(outs.data(), {6});
  RecordingBackend rec;
  REQUIRE(rec.run(m.kernel(1), nullptr, {tessera::arg(x), tessera::arg(out)}) == TESSERA_SUCCESS);
  d = tessera::rt::gpuLaunchDims(rec.last);
  CHECK(d.grid[0] == 6);
  CHECK(d.block[0] == 128);
}

TEST_CASE("launch: an explicit grid must match what the code addresses by group") {
  Fixture f;
  // grid_groups bound by out (5 entries): a grid of 8 groups would write out[5..7].
  tessera_tensor out = tessera::tensor(f.ys.data(), {5});
  tessera_launch_options o = gridOptions(8);
  expectRejected(
      f.groupSum, &o, {tessera::arg(f.x), tessera::arg(out)}, TESSERA_ERROR_INVALID_GRID,
      {"kernel 'group_sum': the launch asks for a grid (8, 1, 1) of 8 groups, but grid_groups is 5 "
       "(bound by parameter 'out' dimension 0); the kernel indexes by group, so the grid must have 5 groups"});
  o = gridOptions(5);
  RecordingBackend rec;
  CHECK(rec.run(f.groupSum, &o, {tessera::arg(f.x), tessera::arg(out)}) == TESSERA_SUCCESS);
  CHECK(rec.last.groups == 5);

  // An EXACT_GRID kernel (a tile.mma loop: group g computes output tile g) over a 10 x 20 output
  // in 4 x 8 tiles needs 3 * 3 = 9 groups.
  KernelSpec mma;
  mma.name = "mma_tiles";
  mma.params = {tensorParam("c", TESSERA_F32, {sym(0), sym(1)}, true)};
  mma.symbols = {"M", "N"};
  mma.flags |= TESSERA_KERNEL_GROUPED | TESSERA_KERNEL_EXACT_GRID;
  mma.group[0] = 128;
  mma.cpu = countTiles;
  mma.gridBlocks = {{0, 0, 4}, {0, 1, 8}};
  TestModule m("exact_grid", {mma});
  REQUIRE(m.status == TESSERA_SUCCESS);
  std::vector<float> cbuf(200);
  tessera_tensor c = tessera::tensor(cbuf.data(), {10, 20});
  for (uint32_t g : {4u, 12u}) {
    o = gridOptions(g);
    expectRejected(m.kernel(0), &o, {tessera::arg(c)}, TESSERA_ERROR_INVALID_GRID,
                   {"kernel 'mma_tiles': the launch asks for a grid (",
                    "but the kernel gives group g block g of its "
                    "output (blocks of 4 along dimension 0 of 'c', blocks of 8 along dimension 1 of 'c'), so it "
                    "needs exactly 9 groups (or no grid: the default)"});
  }
  o = gridOptions(9);
  CHECK(rec.run(m.kernel(0), &o, {tessera::arg(c)}) == TESSERA_SUCCESS);
  CHECK(rec.run(m.kernel(0), nullptr, {tessera::arg(c)}) == TESSERA_SUCCESS);
  CHECK(rec.last.groups == 9);
}

// A view whose byte size overflows 64 bits is refused as what it is (it used to wrap around and
// be reported as overlapping another parameter).
TEST_CASE("launch: a view whose byte span overflows") {
  Fixture f;
  tessera_tensor huge = tessera::tensor(f.ys.data(), {int64_t(1) << 62});
  tessera_tensor b = tessera::tensor(f.ys.data() + 16, {8});
  tessera_tensor c = tessera::tensor(f.xs.data(), {16});
  expectRejected(f.twoMut, nullptr, {tessera::arg(huge), tessera::arg(b), tessera::arg(c)},
                 TESSERA_ERROR_INVALID_ARGUMENT,
                 {"kernel 'two_out': parameter 'a': view of shape [4611686018427387904] spans more bytes than "
                  "an address holds"});
  // Strides that overflow on their own, and a negative stride reaching below address 0.
  tessera_tensor strided = tessera::tensor(f.ys.data(), {3});
  strided.strides[0] = INT64_MAX / 2;
  expectRejected(f.twoMut, nullptr, {tessera::arg(strided), tessera::arg(b), tessera::arg(c)},
                 TESSERA_ERROR_INVALID_ARGUMENT, {"parameter 'a': view of shape [3] spans more bytes"});
  tessera_tensor below = tessera::tensor(f.ys.data(), {2});
  below.strides[0] = -(int64_t(1) << 60);
  expectRejected(f.twoMut, nullptr, {tessera::arg(below), tessera::arg(b), tessera::arg(c)},
                 TESSERA_ERROR_INVALID_ARGUMENT, {"parameter 'a': view of shape [2] spans more bytes"});
}
