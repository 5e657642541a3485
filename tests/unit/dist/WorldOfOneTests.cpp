// The distributed API in a world of one CPU rank (no launcher variables): every collective, its
// argument checks, graph capture, meshes, distributed tensors and index launches with extent
// expressions (K/tp) bound from the mesh. The mpirun tests (tests/dist) cover 2 to 4 ranks.
#include <cstring>
#include <doctest/doctest.h>
#include <string>
#include <vector>

#include "runtime/dist/DeviceOps.h"
#include "tessera/dist.hpp"
#include "tests/unit/runtime/RuntimeTestUtil.h"

using namespace rttest;

namespace {

struct World {
  World() {
    tessera_dist_options o{sizeof o, 0, 5.0};
    REQUIRE(tessera_dist_init(&o) == TESSERA_SUCCESS);
    REQUIRE(tessera_dist_world(&comm) == TESSERA_SUCCESS);
  }
  ~World() { CHECK(tessera_dist_finalize() == TESSERA_SUCCESS); }
  tessera_comm comm = nullptr;
};

std::string lastError() { return tessera_last_error_message(); }
bool contains(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

}  // namespace

TEST_CASE("world of one: init, info, describe, finalize") {
  CHECK(tessera_dist_world(nullptr) == TESSERA_ERROR_INVALID_ARGUMENT);
  tessera_comm c = nullptr;
  CHECK(tessera_dist_world(&c) == TESSERA_ERROR_INVALID_ARGUMENT);
  CHECK(lastError() == "tessera_dist_world: call tessera_dist_init first");
  {
    World w;
    tessera_dist_info info;
    REQUIRE(tessera_dist_get_info(&info) == TESSERA_SUCCESS);
    CHECK(info.rank == 0);
    CHECK(info.world_size == 1);
    CHECK(info.launcher == TESSERA_LAUNCHER_SINGLE);
    CHECK(info.transport == TESSERA_TRANSPORT_SELF);
    CHECK(info.device_kind == TESSERA_DEVICE_CPU);
    CHECK(std::string(tessera_dist_describe()) ==
          "rank 0 of 1 (local 0 of 1), started as a single process, CPU ranks locally");
    CHECK(tessera_dist_init(nullptr) == TESSERA_ERROR_INVALID_ARGUMENT);
    CHECK(contains(lastError(), "already initialised"));
    int32_t r = -1, n = -1;
    CHECK(tessera_comm_rank(w.comm, &r) == TESSERA_SUCCESS);
    CHECK(tessera_comm_size(w.comm, &n) == TESSERA_SUCCESS);
    CHECK(r == 0);
    CHECK(n == 1);
    CHECK(tessera_comm_destroy(w.comm) == TESSERA_ERROR_INVALID_ARGUMENT);
    CHECK(tessera_comm_set_timeout(w.comm, -1) == TESSERA_ERROR_INVALID_ARGUMENT);
    CHECK(tessera_comm_rank(reinterpret_cast<tessera_comm>(&r), &r) == TESSERA_ERROR_INVALID_HANDLE);
  }
  CHECK(tessera_dist_finalize() == TESSERA_ERROR_INVALID_ARGUMENT);
}

TEST_CASE("world of one: every collective moves the data of every dtype") {
  World w;
  for (int32_t dt = TESSERA_F64; dt < TESSERA_DTYPE_COUNT; ++dt) {
    CAPTURE(tessera_dtype_name(dt));
    uint32_t bits = tessera_dtype_bits(dt);
    int64_t n = 48;  // whole bytes for every dtype (fp6 packs 4 values in 3 bytes)
    size_t bytes = static_cast<size_t>(n * bits / 8);
    std::vector<uint8_t> a(bytes), b(bytes, 0xee);
    for (size_t i = 0; i < bytes; ++i) a[i] = static_cast<uint8_t>(i * 7 + 1);
    tessera_tensor ta, tb;
    tessera_tensor_init(&ta, a.data(), dt, 1, &n, TESSERA_HOST);
    tessera_tensor_init(&tb, b.data(), dt, 1, &n, TESSERA_HOST);
    CHECK(tessera_all_gather(w.comm, &ta, &tb, nullptr) == TESSERA_SUCCESS);
    CHECK(a == b);
    std::fill(b.begin(), b.end(), 0xee);
    CHECK(tessera_broadcast(w.comm, &ta, &tb, 0, nullptr) == TESSERA_SUCCESS);
    CHECK(a == b);
    std::fill(b.begin(), b.end(), 0xee);
    CHECK(tessera_all_to_all(w.comm, &ta, &tb, nullptr) == TESSERA_SUCCESS);
    CHECK(a == b);
    std::string why;
    if (tessera::dist::reducible(dt, TESSERA_REDUCE_MAX, why)) {
      // One rank's max is its own value; the bytes here are arbitrary, so only integers keep
      // them all (bool comes out as 0/1, float NaN patterns as the reduction writes them).
      bool exact = dt >= TESSERA_I8 && dt <= TESSERA_U64;
      std::fill(b.begin(), b.end(), 0xee);
      CHECK(tessera_all_reduce(w.comm, &ta, &tb, TESSERA_REDUCE_MAX, nullptr) == TESSERA_SUCCESS);
      CHECK((!exact || a == b));
      std::fill(b.begin(), b.end(), 0xee);
      CHECK(tessera_reduce_scatter(w.comm, &ta, &tb, TESSERA_REDUCE_MAX, nullptr) == TESSERA_SUCCESS);
      CHECK((!exact || a == b));
      if (dt == TESSERA_BOOL)
        for (uint8_t v : b) CHECK(v == (v ? 1 : 0));
    } else {
      CHECK(tessera_all_reduce(w.comm, &ta, &tb, TESSERA_REDUCE_MAX, nullptr) == TESSERA_ERROR_NOT_SUPPORTED);
      CHECK(contains(lastError(), "cannot be reduced"));
    }
  }
  CHECK(tessera_barrier(w.comm, nullptr) == TESSERA_SUCCESS);
}

TEST_CASE("world of one: argument checks name the collective, the tensor and the problem") {
  World w;
  std::vector<float> a(64), b(64);
  tessera_tensor ta = tessera::tensor(a.data(), {8, 8}, TESSERA_HOST),
                 tb = tessera::tensor(b.data(), {64}, TESSERA_HOST);
  tessera_collective_options o{};
  o.name = "grads";
  CHECK(tessera_all_reduce(w.comm, nullptr, &tb, 0, &o) == TESSERA_ERROR_NULL_POINTER);
  CHECK(lastError() == "tessera_all_reduce: all_reduce of 'grads': send is a null tensor view");
  tessera_tensor strided = ta;
  strided.strides[0] = 16;
  strided.shape[0] = 4;
  CHECK(tessera_all_reduce(w.comm, &strided, &tb, 0, &o) == TESSERA_ERROR_INVALID_ARGUMENT);
  CHECK(contains(lastError(), "send is not dense row-major (shape [4, 8], stride 16 in dimension 0 where 8"));
  tessera_tensor half = tessera::tensor(b.data(), {32}, TESSERA_HOST);
  CHECK(tessera_all_reduce(w.comm, &ta, &half, 0, &o) == TESSERA_ERROR_SHAPE_MISMATCH);
  CHECK(lastError() ==
        "tessera_all_reduce: all_reduce of 'grads': send and recv must have as many elements (send "
        "f32[8, 8], recv f32[32], 1 ranks)");
  tessera_tensor ints = tessera::tensor(reinterpret_cast<int32_t*>(b.data()), {64}, TESSERA_HOST);
  CHECK(tessera_all_reduce(w.comm, &ta, &ints, 0, &o) == TESSERA_ERROR_DTYPE_MISMATCH);
  CHECK(contains(lastError(), std::string("send is f32 but recv is ") + tessera_dtype_name(TESSERA_I32)));
  CHECK(tessera_all_reduce(w.comm, &ints, &ints, TESSERA_REDUCE_AVG, &o) == TESSERA_ERROR_NOT_SUPPORTED);
  CHECK(contains(lastError(), std::string("avg of the integer dtype ") + tessera_dtype_name(TESSERA_I32)));
  CHECK(tessera_all_reduce(w.comm, &ta, &tb, 9, &o) == TESSERA_ERROR_INVALID_ARGUMENT);
  tessera_tensor overlap = tessera::tensor(a.data() + 4, {64}, TESSERA_HOST);
  a.resize(128);
  ta = tessera::tensor(a.data(), {64}, TESSERA_HOST);
  overlap = tessera::tensor(a.data() + 4, {64}, TESSERA_HOST);
  CHECK(tessera_all_reduce(w.comm, &ta, &overlap, 0, &o) == TESSERA_ERROR_ALIASED_MUT);
  CHECK(tessera_all_reduce(w.comm, &ta, &ta, 0, &o) == TESSERA_SUCCESS);  // in place
  CHECK(tessera_broadcast(w.comm, &ta, &tb, 1, &o) == TESSERA_ERROR_INVALID_ARGUMENT);
  CHECK(contains(lastError(), "root 1 is not a rank of communicator 'world' (rank 0 of 1)"));
  CHECK(tessera_send(w.comm, &ta, 0, &o) == TESSERA_ERROR_INVALID_ARGUMENT);
  CHECK(contains(lastError(), "peer 0 is not another rank"));
  o.order = 5;
  CHECK(tessera_all_reduce(w.comm, &ta, &ta, 0, &o) == TESSERA_ERROR_INVALID_ARGUMENT);
  CHECK(contains(lastError(), "unknown reduction order 5"));
  std::vector<uint8_t> nib(8);
  int64_t seven = 7;
  tessera_tensor odd;
  tessera_tensor_init(&odd, nib.data(), TESSERA_I4, 1, &seven, TESSERA_HOST);
  CHECK(tessera_all_gather(w.comm, &odd, &odd, nullptr) == TESSERA_ERROR_SHAPE_MISMATCH);
  CHECK(contains(lastError(),
                 std::string("holds 7 ") + tessera_dtype_name(TESSERA_I4) + " values, which do not fill whole bytes"));
}

TEST_CASE("world of one: a collective on a capturing stream runs when the graph is launched") {
  World w;
  std::vector<float> a(16, 3.f), b(16, 0.f);
  tessera_tensor ta = tessera::tensor(a.data(), {16}, TESSERA_HOST), tb = tessera::tensor(b.data(), {16}, TESSERA_HOST);
  tessera_stream s = nullptr;
  REQUIRE(tessera_stream_create(&s) == TESSERA_SUCCESS);
  REQUIRE(tessera_stream_begin_capture(s) == TESSERA_SUCCESS);
  tessera_collective_options o{};
  o.stream = s;
  CHECK(tessera_all_reduce(w.comm, &ta, &tb, TESSERA_REDUCE_SUM, &o) == TESSERA_SUCCESS);
  tessera_graph g = nullptr;
  REQUIRE(tessera_stream_end_capture(s, &g) == TESSERA_SUCCESS);
  CHECK(b[0] == 0.f);  // recorded, not run
  CHECK(tessera_graph_launch(g, s) == TESSERA_SUCCESS);
  CHECK(b[0] == 3.f);
  CHECK(tessera_comm_synchronize(w.comm, s) == TESSERA_SUCCESS);
  tessera_graph_destroy(g);
  tessera_stream_destroy(s);
}

TEST_CASE("world of one: an aborted communicator refuses every later collective") {
  World w;
  tessera_comm sub = nullptr;
  REQUIRE(tessera_comm_split(w.comm, 0, 0, "sub", &sub) == TESSERA_SUCCESS);
  REQUIRE(sub);
  tessera_comm none = reinterpret_cast<tessera_comm>(1);
  CHECK(tessera_comm_split(w.comm, -1, 0, "none", &none) == TESSERA_SUCCESS);
  CHECK(none == nullptr);
  CHECK(tessera_comm_abort(sub) == TESSERA_SUCCESS);
  std::vector<float> a(4);
  tessera_tensor t = tessera::tensor(a.data(), {4}, TESSERA_HOST);
  CHECK(tessera_all_reduce(sub, &t, &t, 0, nullptr) == TESSERA_ERROR_COMM_ABORTED);
  CHECK(lastError() == "communicator 'sub' was aborted earlier: tessera_comm_abort was called");
  CHECK(tessera_comm_synchronize(sub, nullptr) == TESSERA_ERROR_COMM_ABORTED);
  CHECK(tessera_comm_destroy(sub) == TESSERA_SUCCESS);
  CHECK(tessera_comm_destroy(sub) == TESSERA_ERROR_INVALID_HANDLE);
  // The world still works.
  CHECK(tessera_all_reduce(w.comm, &t, &t, 0, nullptr) == TESSERA_SUCCESS);
}

TEST_CASE("world of one: meshes") {
  World w;
  const char* axes[] = {"dp", "tp"};
  int64_t shape[] = {1, 1}, bad[] = {2, 1};
  tessera_mesh m = nullptr;
  CHECK(tessera_mesh_create(axes, bad, 2, &m) == TESSERA_ERROR_SHAPE_MISMATCH);
  CHECK(lastError() ==
        "tessera_mesh_create: mesh (dp=2, tp=1) has 2 positions but the world has 1 rank (the axis "
        "sizes must multiply to the world size)");
  int64_t huge[] = {int64_t(1) << 62, 4};  // the positions overflow int64: still just "too many"
  CHECK(tessera_mesh_create(axes, huge, 2, &m) == TESSERA_ERROR_SHAPE_MISMATCH);
  CHECK(contains(lastError(), "positions but the world has 1 rank"));
  const char* dup[] = {"tp", "tp"};
  CHECK(tessera_mesh_create(dup, shape, 2, &m) == TESSERA_ERROR_INVALID_ARGUMENT);
  CHECK(contains(lastError(), "axis 'tp' is named twice"));
  REQUIRE(tessera_mesh_create(axes, shape, 2, &m) == TESSERA_SUCCESS);
  int64_t vast[] = {int64_t(1) << 40, int64_t(1) << 40};
  tessera_dtensor big = nullptr;
  CHECK(tessera_dtensor_create(m, "vast", TESSERA_F32, 2, vast, nullptr, &big) == TESSERA_ERROR_SHAPE_MISMATCH);
  CHECK(contains(lastError(), "the local shard of 'vast' (f32[1099511627776, 1099511627776]) has more bytes"));
  int64_t v = -1;
  CHECK(tessera_mesh_axis_size(m, "tp", &v) == TESSERA_SUCCESS);
  CHECK(v == 1);
  CHECK(tessera_mesh_coord(m, "dp", &v) == TESSERA_SUCCESS);
  CHECK(v == 0);
  CHECK(tessera_mesh_axis_size(m, "pp", &v) == TESSERA_ERROR_INVALID_ARGUMENT);
  CHECK(lastError() == "tessera_mesh_axis_size: mesh (dp=1, tp=1) has no axis 'pp' (its axes: 'dp', 'tp')");
  tessera_comm tp = nullptr, both = nullptr;
  CHECK(tessera_mesh_comm(m, "tp", &tp) == TESSERA_SUCCESS);
  CHECK(tessera_comm_destroy(tp) == TESSERA_ERROR_INVALID_ARGUMENT);
  CHECK(tessera_mesh_group_comm(m, axes, 2, &both) == TESSERA_SUCCESS);
  int32_t n = 0;
  CHECK(tessera_comm_size(both, &n) == TESSERA_SUCCESS);
  CHECK(n == 1);
  CHECK(tessera_mesh_destroy(m) == TESSERA_SUCCESS);
  CHECK(tessera_comm_size(tp, &n) == TESSERA_ERROR_INVALID_HANDLE);
}

TEST_CASE("world of one: distributed tensors and their layouts") {
  World w;
  tessera::dist::Mesh mesh;
  REQUIRE(tessera::dist::Mesh::create({"tp"}, {1}, mesh).ok());
  tessera::dist::DTensor t;
  auto s =
      tessera::dist::DTensor::create(mesh, "W", TESSERA_BF16, {6, 4}, tessera::dist::ShardSpec({"col"}, {"tp"}), t);
  REQUIRE(s.ok());
  tessera_tensor local = t.local();
  CHECK(local.shape[0] == 6);
  CHECK(local.shape[1] == 4);
  tessera_tensor parts;
  CHECK(tessera_dtensor_parts(t.get(), "tp", &parts) == TESSERA_SUCCESS);
  tessera::dist::DTensor r;
  REQUIRE(tessera::dist::DTensor::create(mesh, "R", TESSERA_BF16, {6, 4}, {}, r).ok());
  CHECK(tessera_dtensor_parts(r.get(), "tp", &parts) == TESSERA_ERROR_INVALID_ARGUMENT);
  CHECK(lastError() ==
        "tessera_dtensor_parts: 'R' is not partitioned over mesh axis 'tp' (it is replicated); pass "
        "its local view (tessera_dtensor_local) instead");
  tessera::dist::DTensor bad;
  s = tessera::dist::DTensor::create(mesh, "B", TESSERA_F32, {6}, tessera::dist::ShardSpec({"col"}, {"dp"}), bad);
  CHECK(s.code() == TESSERA_ERROR_INVALID_ARGUMENT);
  CHECK(contains(s.message(), "mesh (tp=1) has no axis 'dp'"));
  s = tessera::dist::DTensor::create(mesh, "B", TESSERA_F32, {6}, tessera::dist::ShardSpec({"row"}, {"tp"}), bad);
  CHECK(s.message() ==
        "DTensor::create of 'B': ShardSpec: 'row' is not a dimension of a rank-1 tensor (use \"row\", "
        "\"col\" or an index)");
  // Redistribution: all_gather needs a partitioned source; reduce_scatter a partitioned target.
  CHECK(tessera_dtensor_all_gather(r.get(), t.get(), nullptr) == TESSERA_ERROR_INVALID_ARGUMENT);
  CHECK(contains(lastError(), "must differ in exactly one dimension, partitioned over a mesh axis in the source"));
  CHECK(tessera_dtensor_all_gather(t.get(), r.get(), nullptr) == TESSERA_SUCCESS);
  CHECK(tessera_dtensor_reduce_scatter(r.get(), t.get(), TESSERA_REDUCE_SUM, nullptr) == TESSERA_SUCCESS);
  CHECK(tessera_dtensor_all_reduce(t.get(), "tp", TESSERA_REDUCE_SUM, nullptr) == TESSERA_ERROR_INVALID_ARGUMENT);
  CHECK(contains(lastError(), "'W' is partitioned over 'tp' along dimension 1"));
  CHECK(tessera_dtensor_all_reduce(r.get(), "tp", TESSERA_REDUCE_SUM, nullptr) == TESSERA_SUCCESS);
  CHECK(tessera_mesh_destroy(mesh.get()) == TESSERA_ERROR_INVALID_ARGUMENT);
  CHECK(contains(lastError(), "still lives on mesh (tp=1)"));
}

namespace {

// B = 2 * A, one tile per element (the CPU entry of `scale2(A: f32[M, K/tp], B: mut f32[M, K/tp])`).
void scale2(void** args, const tessera_cpu_ctx* ctx) {
  auto* A = static_cast<tessera_kernel_tensor*>(args[0]);
  auto* B = static_cast<tessera_kernel_tensor*>(args[1]);
  uint64_t i = ctx->global_linear;
  static_cast<float*>(B->data)[i] = 2 * static_cast<const float*>(A->data)[i];
}

const std::vector<tessera_expr_op> kKOverTp = {
    {TESSERA_EXPR_SYMBOL, 1, 0}, {TESSERA_EXPR_SYMBOL, 2, 0}, {TESSERA_EXPR_DIV, 0, 0}};

}  // namespace

TEST_CASE("world of one: index_launch binds K/tp from the mesh and the global shapes") {
  World w;
  KernelSpec spec;
  spec.name = "scale2";
  spec.params = {tensorParam("A", TESSERA_F32, {sym(0), expr(kKOverTp)}),
                 tensorParam("B", TESSERA_F32, {sym(0), expr(kKOverTp)}, true)};
  spec.symbols = {"M", "K", "tp"};
  spec.cpu = scale2;
  TestModule mod{"dist_index_launch", {spec}};
  REQUIRE(mod.status == TESSERA_SUCCESS);
  tessera::dist::Mesh mesh;
  REQUIRE(tessera::dist::Mesh::create({"dp", "tp"}, {1, 1}, mesh).ok());
  tessera::dist::DTensor A, B, R;
  REQUIRE(tessera::dist::DTensor::create(mesh, "A", TESSERA_F32, {3, 5}, tessera::dist::ShardSpec({"col"}, {"tp"}), A)
              .ok());
  REQUIRE(tessera::dist::DTensor::create(mesh, "B", TESSERA_F32, {3, 5}, tessera::dist::ShardSpec({"col"}, {"tp"}), B)
              .ok());
  REQUIRE(tessera::dist::DTensor::create(mesh, "R", TESSERA_F32, {3, 5}, {}, R).ok());
  std::vector<float> host(15);
  for (int i = 0; i < 15; ++i) host[i] = float(i);
  REQUIRE(tessera_memcpy(A.local().data, host.data(), 60) == TESSERA_SUCCESS);
  auto st = tessera::dist::index_launch(mesh, "tp")(mod.kernel())(A.parts("tp"), B.parts("tp"));
  REQUIRE_MESSAGE(st.ok(), st.toString());
  std::vector<float> out(15);
  REQUIRE(tessera_memcpy(out.data(), B.local().data, 60) == TESSERA_SUCCESS);
  for (int i = 0; i < 15; ++i) CHECK(out[i] == 2.f * i);

  // K/tp on a dimension that tp does not partition.
  tessera_tensor rl = R.local();
  st = tessera::dist::index_launch(mesh, "tp")(mod.kernel())(A.parts("tp"), rl);
  CHECK(st.ok());  // a plain local view: checked as a plain launch, K bound from A
  tessera::dist::DTensor Arow;
  REQUIRE(
      tessera::dist::DTensor::create(mesh, "Arow", TESSERA_F32, {3, 5}, tessera::dist::ShardSpec({"row"}, {"tp"}), Arow)
          .ok());
  st = tessera::dist::index_launch(mesh, "tp")(mod.kernel())(Arow.parts("tp"), B.parts("tp"));
  CHECK(st.code() == TESSERA_ERROR_SHAPE_MISMATCH);
  CHECK(st.message() ==
        "tessera_index_launch: kernel 'scale2': parameter 'A' dimension 1 is K/tp, a part along mesh "
        "axis 'tp', but distributed tensor 'Arow' is partitioned along dimension 0 over 'tp'");
  // Two tensors that disagree on K.
  tessera::dist::DTensor Bwide;
  REQUIRE(tessera::dist::DTensor::create(mesh, "Bwide", TESSERA_F32, {3, 6}, tessera::dist::ShardSpec({"col"}, {"tp"}),
                                         Bwide)
              .ok());
  st = tessera::dist::index_launch(mesh, "tp")(mod.kernel())(A.parts("tp"), Bwide.parts("tp"));
  CHECK(st.code() == TESSERA_ERROR_SHAPE_MISMATCH);
  CHECK(st.message() ==
        "tessera_index_launch: kernel 'scale2': symbol 'K' is 5 from the global shape of 'A' dimension "
        "1 but 6 from the global shape of 'Bwide' dimension 1");
  // Parts along another axis than the launch's, and a tensor not partitioned over it.
  st = tessera::dist::index_launch(mesh, "tp")(mod.kernel())(A.parts("dp"), B.parts("tp"));
  CHECK(st.code() == TESSERA_ERROR_INVALID_ARGUMENT);
  CHECK(contains(st.message(), "an argument is parts('dp')"));
  st = tessera::dist::index_launch(mesh, "tp")(mod.kernel())(R.parts("tp"), B.parts("tp"));
  CHECK(st.code() == TESSERA_ERROR_INVALID_ARGUMENT);
  CHECK(contains(st.message(), "'R' is not partitioned over mesh axis 'tp'"));
  st = tessera::dist::index_launch(mesh, "pp")(mod.kernel())(A.parts("pp"), B.parts("pp"));
  CHECK(contains(st.message(), "has no axis 'pp'"));
}

TEST_CASE("world of one: index_launch of a kernel whose extents are plain symbols") {
  // What tesserac emits today for `K/tp` (the identifier K_tp): bound from the local shape.
  World w;
  KernelSpec spec;
  spec.name = "scale2";
  spec.params = {tensorParam("A", TESSERA_F32, {sym(0), sym(1)}),
                 tensorParam("B", TESSERA_F32, {sym(0), sym(1)}, true)};
  spec.symbols = {"M", "K_tp"};
  spec.cpu = scale2;
  TestModule mod{"dist_index_launch_plain", {spec}};
  REQUIRE(mod.status == TESSERA_SUCCESS);
  tessera::dist::Mesh mesh;
  REQUIRE(tessera::dist::Mesh::create({"tp"}, {1}, mesh).ok());
  tessera::dist::DTensor A, B;
  REQUIRE(tessera::dist::DTensor::create(mesh, "A", TESSERA_F32, {2, 3}, tessera::dist::ShardSpec({"col"}, {"tp"}), A)
              .ok());
  REQUIRE(tessera::dist::DTensor::create(mesh, "B", TESSERA_F32, {2, 4}, tessera::dist::ShardSpec({"col"}, {"tp"}), B)
              .ok());
  auto st = tessera::dist::index_launch(mesh, "tp")(mod.kernel())(A.parts("tp"), B.parts("tp"));
  CHECK(st.code() == TESSERA_ERROR_SHAPE_MISMATCH);
  CHECK(contains(st.message(), "dimension 1 has size 4 but symbol 'K_tp' is 3"));
}
