// Every collective under mpirun with 2, 3 and 4 CPU ranks (or one process), for every dtype it
// takes, at odd sizes, against a reference computed on every rank from every rank's inputs:
// deterministic reductions bit for bit (RefNumerics.h), data movement byte for byte, the
// library's own reductions (deterministic=False) within a bound, ten repetitions with equal
// bits, disagreements between ranks reported on every rank, meshes and distributed tensors.
#include <cinttypes>
#include <cmath>
#include <string>
#include <tessera/dist.h>

#include "DistTest.h"
#include "RefNumerics.h"

using namespace disttest;

namespace {

int P = 1, R = 0;
uint64_t seed = 0;
const size_t kSizes[] = {0, 1, 3, 17, 130, 1031};

// Rank r's n stored values of dtype dt for case `stream`.
std::vector<uint8_t> inputs(int32_t dt, uint64_t stream, int r, size_t n) {
  size_t es = elemBytes(dt);
  std::vector<uint8_t> v(n * es);
  for (size_t i = 0; i < n; ++i) {
    uint64_t x = rnd(seed, stream * 64 + r, i);
    uint8_t* out = v.data() + i * es;
    if (isFloat(dt)) {
      int span = dt == TESSERA_F16 ? 6 : (dt == TESSERA_F8_E4M3 || dt == TESSERA_F8_E5M2) ? 4 : 10;
      double mag = std::ldexp(1.0 + double(x & 0xffff) / 65536.0, int((x >> 16) % (2 * span + 1)) - span);
      double value = (x >> 40) % 20 == 0 ? 0.0 : mag;
      encodeFloat(dt, (x >> 63) ? -value : value, out);
    } else if (dt == TESSERA_BOOL) {
      out[0] = (x & 3) == 0 ? 0 : uint8_t((x >> 8) % 3 == 0 ? 1 + (x >> 16) % 200 : 1);
    } else {
      std::memcpy(out, &x, es);
    }
  }
  return v;
}

std::vector<int32_t> reducibleDtypes() {
  return {TESSERA_F64,     TESSERA_F32, TESSERA_F16, TESSERA_BF16, TESSERA_F8_E4M3,
          TESSERA_F8_E5M2, TESSERA_I8,  TESSERA_I16, TESSERA_I32,  TESSERA_I64,
          TESSERA_U8,      TESSERA_U16, TESSERA_U32, TESSERA_U64,  TESSERA_BOOL};
}
std::vector<int> opsFor(int32_t dt) {
  if (dt == TESSERA_BOOL) return {1, 2};
  return isFloat(dt) ? std::vector<int>{0, 1, 2, 3} : std::vector<int>{0, 1, 2};
}

// The expected all_reduce result of case `stream`: op over every rank's inputs, per element.
std::vector<uint8_t> expected(int32_t dt, int op, bool tree, uint64_t stream, size_t n, size_t first = 0,
                              size_t count = SIZE_MAX) {
  size_t es = elemBytes(dt);
  std::vector<std::vector<uint8_t>> all;
  for (int r = 0; r < P; ++r) all.push_back(inputs(dt, stream, r, n));
  count = std::min(count, n - first);
  std::vector<uint8_t> want(count * es);
  std::vector<const uint8_t*> in(P);
  for (size_t i = 0; i < count; ++i) {
    for (int r = 0; r < P; ++r) in[r] = all[r].data() + (first + i) * es;
    referenceElement(dt, op, tree, in, want.data() + i * es);
  }
  return want;
}

// First differing element, for messages.
size_t firstDiff(const std::vector<uint8_t>& a, const std::vector<uint8_t>& b, size_t es) {
  for (size_t i = 0; i < a.size(); ++i)
    if (a[i] != b[i]) return i / es;
  return SIZE_MAX;
}

void testAllReduce(tessera_comm w) {
  uint64_t stream = 0;
  for (int32_t dt : reducibleDtypes())
    for (int op : opsFor(dt))
      for (size_t n : kSizes)
        for (int order = 0; order < 2; ++order) {
          ++stream;
          bool inPlace = stream % 3 == 0;
          std::vector<uint8_t> mine = inputs(dt, stream, R, n);
          Buffer in(mine.size()), out(mine.size());
          in.upload(mine);
          tessera_tensor tin = in.view(dt, {int64_t(n)}), tout = (inPlace ? in : out).view(dt, {int64_t(n)});
          tessera_collective_options o{nullptr, 0, order, "x"};
          require(tessera_all_reduce(w, &tin, &tout, op, &o), "tessera_all_reduce");
          require(tessera_comm_synchronize(w, nullptr), "synchronize");
          std::vector<uint8_t> got = (inPlace ? in : out).download(), want = expected(dt, op, order == 0, stream, n);
          size_t bad = firstDiff(got, want, elemBytes(dt));
          expect(bad == SIZE_MAX, "all_reduce %s %s n=%zu order=%d%s: element %zu differs from the reference",
                 tessera_dtype_name(dt),
                 op == 0   ? "sum"
                 : op == 1 ? "max"
                 : op == 2 ? "min"
                           : "avg",
                 n, order, inPlace ? " in place" : "", bad);
        }
}

// Around the size where all_reduce switches from one all-gather to two phases (8 MiB received
// per rank), both forms against the same reference.
void testAllReduceForms(tessera_comm w) {
  if (P == 1) return;
  uint64_t stream = 5000;
  size_t edge = (size_t(8) << 20) / size_t(P - 1) / 48 * 48;  // whole values of every dtype below
  for (int32_t dt : {TESSERA_F32, TESSERA_BF16, TESSERA_F64})
    for (size_t bytes : {edge, edge + 16 * 1024 + 48})
      for (int order : {TESSERA_ORDER_TREE}) {
        ++stream;
        size_t n = bytes / elemBytes(dt);
        std::vector<uint8_t> mine = inputs(dt, stream, R, n);
        Buffer in(mine.size()), out(mine.size());
        in.upload(mine);
        tessera_tensor tin = in.view(dt, {int64_t(n)}), tout = out.view(dt, {int64_t(n)});
        tessera_collective_options o{nullptr, 0, order, "big"};
        require(tessera_all_reduce(w, &tin, &tout, TESSERA_REDUCE_SUM, &o), "tessera_all_reduce");
        size_t bad = firstDiff(out.download(), expected(dt, 0, order == 0, stream, n), elemBytes(dt));
        expect(bad == SIZE_MAX, "all_reduce %s of %zu bytes order=%d: element %zu differs from the reference",
               tessera_dtype_name(dt), bytes, order, bad);
      }
}

void testReduceScatter(tessera_comm w) {
  uint64_t stream = 10000;
  for (int32_t dt : reducibleDtypes())
    for (int op : opsFor(dt))
      for (size_t m : {size_t(0), size_t(1), size_t(5), size_t(33)}) {
        ++stream;
        size_t n = m * P, es = elemBytes(dt);
        Buffer in(n * es), out(m * es);
        in.upload(inputs(dt, stream, R, n));
        tessera_tensor tin = in.view(dt, {int64_t(P), int64_t(m)}), tout = out.view(dt, {int64_t(m)});
        tessera_collective_options o{nullptr, 0, TESSERA_ORDER_TREE, "parts"};
        require(tessera_reduce_scatter(w, &tin, &tout, op, &o), "tessera_reduce_scatter");
        std::vector<uint8_t> want = expected(dt, op, true, stream, n, size_t(R) * m, m);
        size_t bad = firstDiff(out.download(), want, es);
        expect(bad == SIZE_MAX, "reduce_scatter %s op %d m=%zu: element %zu differs", tessera_dtype_name(dt), op, m,
               bad);
      }
}

// all_gather, broadcast from every root, all_to_all and a ring of send/recv, for every dtype.
void testMovement(tessera_comm w) {
  uint64_t stream = 20000;
  for (int32_t dt = TESSERA_F64; dt < TESSERA_DTYPE_COUNT; ++dt) {
    uint32_t bits = tessera_dtype_bits(dt);
    for (size_t bytesPerRank : {size_t(0), size_t(3), size_t(24), size_t(1001)}) {
      ++stream;
      size_t n = bytesPerRank * 8 / bits, total = n * bits / 8;
      if (total != bytesPerRank) continue;  // not whole values
      auto mine = [&](int r) {
        std::vector<uint8_t> v(total);
        for (size_t i = 0; i < total; ++i) v[i] = uint8_t(rnd(seed, stream * 64 + r, i));
        return v;
      };
      Buffer a(total), g(total * P);
      a.upload(mine(R));
      tessera_tensor ta = a.view(dt, {int64_t(n)}), tg = g.view(dt, {int64_t(n) * P});
      require(tessera_all_gather(w, &ta, &tg, nullptr), "tessera_all_gather");
      std::vector<uint8_t> want;
      for (int r = 0; r < P; ++r) {
        auto v = mine(r);
        want.insert(want.end(), v.begin(), v.end());
      }
      expect(g.download() == want, "all_gather %s of %zu bytes per rank", tessera_dtype_name(dt), total);
      for (int root = 0; root < P; ++root) {
        Buffer b(total);
        tessera_tensor tb = b.view(dt, {int64_t(n)});
        require(tessera_broadcast(w, &ta, &tb, root, nullptr), "tessera_broadcast");
        expect(b.download() == mine(root), "broadcast %s from root %d", tessera_dtype_name(dt), root);
      }
      // all_to_all: block j of rank i's send is block i of rank j's recv.
      size_t block = total;  // per rank pair; send holds P blocks
      Buffer s(block * P), rcv(block * P);
      std::vector<uint8_t> sendAll;
      for (int j = 0; j < P; ++j) {
        auto v = mine(R * 16 + j);
        sendAll.insert(sendAll.end(), v.begin(), v.end());
      }
      s.upload(sendAll);
      tessera_tensor ts = s.view(dt, {int64_t(n) * P}), tr = rcv.view(dt, {int64_t(n) * P});
      require(tessera_all_to_all(w, &ts, &tr, nullptr), "tessera_all_to_all");
      std::vector<uint8_t> wantA;
      for (int i = 0; i < P; ++i) {
        auto v = mine(i * 16 + R);
        wantA.insert(wantA.end(), v.begin(), v.end());
      }
      expect(rcv.download() == wantA, "all_to_all %s of %zu-byte blocks", tessera_dtype_name(dt), block);
      if (P > 1) {  // a ring: even ranks send first, odd ranks receive first
        int next = (R + 1) % P, prev = (R + P - 1) % P;
        Buffer in(total);
        tessera_tensor ti = in.view(dt, {int64_t(n)});
        for (int phase = 0; phase < 2; ++phase) {
          bool sending = (phase == 0) == (R % 2 == 0);
          if (sending)
            require(tessera_send(w, &ta, next, nullptr), "tessera_send");
          else
            require(tessera_recv(w, &ti, prev, nullptr), "tessera_recv");
        }
        expect(in.download() == mine(prev), "send/recv %s from rank %d", tessera_dtype_name(dt), prev);
      }
    }
  }
  require(tessera_barrier(w, nullptr), "tessera_barrier");
}

// deterministic=False: the library's own all_reduce (MPI here) within a bound, or ours.
void testNondeterministic(tessera_comm w) {
  size_t n = 1031;
  uint64_t stream = 30000;
  std::vector<uint8_t> mine = inputs(TESSERA_F32, stream, R, n);
  Buffer in(n * 4), out(n * 4);
  in.upload(mine);
  tessera_tensor ti = in.view(TESSERA_F32, {int64_t(n)}), to = out.view(TESSERA_F32, {int64_t(n)});
  tessera_collective_options o{nullptr, TESSERA_COLLECTIVE_NONDETERMINISTIC, 0, "fast"};
  require(tessera_all_reduce(w, &ti, &to, TESSERA_REDUCE_SUM, &o), "nondeterministic all_reduce");
  std::vector<uint8_t> got = out.download();
  int bad = 0;
  for (size_t i = 0; i < n; ++i) {
    double exact = 0, mag = 0;
    for (int r = 0; r < P; ++r) {
      double v = decodeFloat(TESSERA_F32, inputs(TESSERA_F32, stream, r, n).data() + i * 4);
      exact += v;
      mag += std::fabs(v);
    }
    double g = decodeFloat(TESSERA_F32, got.data() + i * 4);
    if (std::fabs(g - exact) > P * 6e-8 * mag + 1e-30) ++bad;
  }
  expect(bad == 0, "nondeterministic f32 all_reduce: %d elements outside P*eps*sum|x|", bad);
}

// Ten repetitions give the same bits; the digest is printed for comparisons across placements.
void testRepeatable(tessera_comm w) {
  for (int32_t dt : {TESSERA_F32, TESSERA_BF16, TESSERA_F16}) {
    size_t n = 4099;
    Buffer in(n * elemBytes(dt)), out(n * elemBytes(dt));
    in.upload(inputs(dt, 40000 + dt, R, n));
    tessera_tensor ti = in.view(dt, {int64_t(n)}), to = out.view(dt, {int64_t(n)});
    uint64_t first = 0;
    for (int run = 0; run < 10; ++run) {
      require(tessera_all_reduce(w, &ti, &to, TESSERA_REDUCE_SUM, nullptr), "repeated all_reduce");
      uint64_t d = digest(out.download());
      if (run == 0) first = d;
      expect(d == first, "all_reduce %s run %d gave other bits than run 0", tessera_dtype_name(dt), run);
    }
    if (R == 0)
      std::printf("digest all_reduce %s n=%zu ranks=%d: %016" PRIx64 "\n", tessera_dtype_name(dt), n, P, first);
  }
}

// Ranks that pass different shapes, dtypes or collectives fail together, naming who passed what;
// the communicator stays usable.
void testDisagreements(tessera_comm w) {
  if (P == 1) return;
  Buffer b(64 * 8);
  b.upload(std::vector<uint8_t>(64 * 8, 0));  // defined values (valgrind reads what is reduced)
  tessera_tensor t = b.view(TESSERA_F32, {R == 0 ? 17 : 16});
  tessera_collective_options o{nullptr, 0, 0, "grads"};
  tessera_status s = tessera_all_reduce(w, &t, &t, TESSERA_REDUCE_SUM, &o);
  std::string msg = tessera_last_error_message();
  expect(s == TESSERA_ERROR_SHAPE_MISMATCH, "shape disagreement gave %s", tessera_status_name(s));
  std::string want = P == 2 ? "rank 0 passes f32[17]; rank 1 passes f32[16]" : "rank 0 passes f32[17]; ranks 1";
  expect(msg.find("all_reduce of 'grads' on communicator 'world'") != std::string::npos &&
             msg.find(want) != std::string::npos,
         "shape disagreement message: %s", msg.c_str());
  tessera_tensor u = b.view(R == P - 1 ? TESSERA_I32 : TESSERA_F32, {16});
  s = tessera_all_reduce(w, &u, &u, TESSERA_REDUCE_MAX, &o);
  msg = tessera_last_error_message();
  expect(
      s == TESSERA_ERROR_DTYPE_MISMATCH && msg.find("the ranks disagree on the dtype") != std::string::npos &&
          msg.find(std::to_string(P - 1) + " passes " + tessera_dtype_name(TESSERA_I32) + "[16]") != std::string::npos,
      "dtype disagreement: %s: %s", tessera_status_name(s), msg.c_str());
  tessera_tensor v = b.view(TESSERA_F32, {16}), g = b.view(TESSERA_F32, {16 * int64_t(P)});
  s = R == 0 ? tessera_all_gather(w, &v, &g, &o) : tessera_all_reduce(w, &v, &v, TESSERA_REDUCE_SUM, &o);
  msg = tessera_last_error_message();
  expect(s == TESSERA_ERROR_INVALID_ARGUMENT && msg.find("rank 0 calls all_gather of 'grads'") != std::string::npos,
         "collective disagreement: %s: %s", tessera_status_name(s), msg.c_str());
  require(tessera_all_reduce(w, &v, &v, TESSERA_REDUCE_SUM, &o), "all_reduce after disagreements");

  // Distributed tensors: every rank must create the same one.
  const char* axes[] = {"all"};
  int64_t mshape[] = {P};
  tessera_mesh mesh = nullptr;
  require(tessera_mesh_create(axes, mshape, 1, &mesh), "mesh");
  int64_t wshape[] = {4, R == 0 ? 8 * P : 6 * P};
  tessera_shard_spec repl{}, cols{};
  cols.axis[1] = "all";
  tessera_dtensor dt = nullptr;
  s = tessera_dtensor_create(mesh, "W", TESSERA_F32, 2, wshape, &repl, &dt);
  msg = tessera_last_error_message();
  expect(s == TESSERA_ERROR_SHAPE_MISMATCH && dt == nullptr &&
             msg.find("tessera_dtensor_create of 'W'") != std::string::npos &&
             msg.find("rank 0 passes f32[4, " + std::to_string(8 * P) + "]") != std::string::npos,
         "dtensor shape disagreement: %s: %s", tessera_status_name(s), msg.c_str());
  wshape[1] = 8 * P;
  s = tessera_dtensor_create(mesh, "W", TESSERA_F32, 2, wshape, R == 0 ? &cols : &repl, &dt);
  msg = tessera_last_error_message();
  expect(s == TESSERA_ERROR_SHAPE_MISMATCH && msg.find("the ranks disagree on the layout: rank 0 passes partitioned "
                                                       "along dimension 1 over 'all'") != std::string::npos,
         "dtensor layout disagreement: %s: %s", tessera_status_name(s), msg.c_str());
  require(tessera_mesh_destroy(mesh), "mesh destroy");
}

// A mesh (dp x tp) and distributed tensors: axis communicators, gathers and scatters along a
// row or column partition, the data-parallel all_reduce.
void testMeshes() {
  int64_t tp = P % 2 == 0 ? 2 : P, dp = P / tp;
  const char* axes[] = {"dp", "tp"};
  int64_t shape[] = {dp, tp};
  tessera_mesh mesh = nullptr;
  require(tessera_mesh_create(axes, shape, 2, &mesh), "tessera_mesh_create");
  int64_t cdp = -1, ctp = -1;
  tessera_mesh_coord(mesh, "dp", &cdp);
  tessera_mesh_coord(mesh, "tp", &ctp);
  expect(cdp == R / tp && ctp == R % tp, "mesh coordinates of rank %d: (%lld, %lld)", R, (long long)cdp,
         (long long)ctp);
  tessera_comm tpc = nullptr, dpc = nullptr;
  tessera_mesh_comm(mesh, "tp", &tpc);
  tessera_mesh_comm(mesh, "dp", &dpc);
  int32_t n = 0, r = 0;
  tessera_comm_size(tpc, &n);
  tessera_comm_rank(tpc, &r);
  expect(n == tp && r == ctp, "tp communicator: size %d rank %d", n, r);
  tessera_comm_size(dpc, &n);
  expect(n == dp, "dp communicator: size %d", n);
  tessera_comm all = nullptr;
  require(tessera_mesh_group_comm(mesh, axes, 2, &all), "tessera_mesh_group_comm");
  tessera_comm_size(all, &n);
  tessera_comm_rank(all, &r);
  expect(n == P && r == R, "dp+tp communicator: size %d rank %d", n, r);

  // W[5, 3*tp] partitioned by columns over tp: every element is its global index.
  int64_t rows = 5, cols = 3 * tp;
  int64_t gshape[] = {rows, cols};
  tessera_shard_spec colSpec{}, rowSpec{}, repl{};
  colSpec.axis[1] = "tp";
  rowSpec.axis[0] = "tp";
  tessera_dtensor W = nullptr, Wfull = nullptr, Wrow = nullptr;
  require(tessera_dtensor_create(mesh, "W", TESSERA_F32, 2, gshape, &colSpec, &W), "dtensor W");
  require(tessera_dtensor_create(mesh, "Wfull", TESSERA_F32, 2, gshape, &repl, &Wfull), "dtensor Wfull");
  int64_t rshape[] = {2 * tp, 3};
  require(tessera_dtensor_create(mesh, "Wrow", TESSERA_F32, 2, rshape, &rowSpec, &Wrow), "dtensor Wrow");
  tessera_tensor lw;
  int64_t off[2];
  tessera_dtensor_local(W, &lw);
  tessera_dtensor_offset(W, off);
  std::vector<float> h(size_t(lw.shape[0] * lw.shape[1]));
  for (int64_t i = 0; i < lw.shape[0]; ++i)
    for (int64_t j = 0; j < lw.shape[1]; ++j) h[size_t(i * lw.shape[1] + j)] = float((i + off[0]) * cols + j + off[1]);
  require(tessera_memcpy(lw.data, h.data(), h.size() * 4), "upload W");
  require(tessera_dtensor_all_gather(W, Wfull, nullptr), "tessera_dtensor_all_gather");
  tessera_tensor lf;
  tessera_dtensor_local(Wfull, &lf);
  std::vector<float> full(size_t(rows * cols));
  require(tessera_memcpy(full.data(), lf.data, full.size() * 4), "download Wfull");
  int bad = 0;
  for (size_t i = 0; i < full.size(); ++i) bad += full[i] != float(i);
  expect(bad == 0, "all_gather of a column partition: %d wrong elements", bad);

  // reduce_scatter: rank (dp, t) holds Wfull * (t + 1); the tp sum scattered by columns is
  // W * tp(tp+1)/2.
  for (float& v : full) v *= float(ctp + 1);
  require(tessera_memcpy(lf.data, full.data(), full.size() * 4), "upload partial");
  require(tessera_dtensor_reduce_scatter(Wfull, W, TESSERA_REDUCE_SUM, nullptr), "tessera_dtensor_reduce_scatter");
  std::vector<float> part(h.size());
  require(tessera_memcpy(part.data(), lw.data, part.size() * 4), "download W");
  bad = 0;
  float factor = float(tp * (tp + 1) / 2);
  for (size_t i = 0; i < part.size(); ++i) bad += part[i] != h[i] * factor;
  expect(bad == 0, "reduce_scatter into a column partition: %d wrong elements", bad);

  // Rows: the contiguous case.
  tessera_dtensor Rfull = nullptr;
  require(tessera_dtensor_create(mesh, "Rfull", TESSERA_F32, 2, rshape, &repl, &Rfull), "dtensor Rfull");
  tessera_tensor lr;
  tessera_dtensor_local(Wrow, &lr);
  std::vector<float> rh(6, float(ctp));
  require(tessera_memcpy(lr.data, rh.data(), 24), "upload Wrow");
  require(tessera_dtensor_all_gather(Wrow, Rfull, nullptr), "all_gather of rows");
  tessera_tensor lrf;
  tessera_dtensor_local(Rfull, &lrf);
  std::vector<float> rf(size_t(6 * tp));
  require(tessera_memcpy(rf.data(), lrf.data, rf.size() * 4), "download Rfull");
  bad = 0;
  for (size_t i = 0; i < rf.size(); ++i) bad += rf[i] != float(i / 6);
  expect(bad == 0, "all_gather of a row partition: %d wrong elements", bad);

  // Data parallel: the replicated Rfull averaged over dp.
  for (float& v : rf) v = float(cdp);
  require(tessera_memcpy(lrf.data, rf.data(), rf.size() * 4), "upload grads");
  require(tessera_dtensor_all_reduce(Rfull, "dp", TESSERA_REDUCE_AVG, nullptr), "all_reduce over dp");
  require(tessera_memcpy(rf.data(), lrf.data, rf.size() * 4), "download grads");
  bad = 0;
  for (float v : rf) bad += v != float(dp - 1) / 2.f;
  expect(bad == 0, "avg over dp: %d wrong elements", bad);
  for (tessera_dtensor t : {W, Wfull, Wrow, Rfull}) require(tessera_dtensor_destroy(t), "tessera_dtensor_destroy");
  require(tessera_mesh_destroy(mesh), "tessera_mesh_destroy");
}

// Threads of this process (Linux: the entries of /proc/self/task), or -1.
int threadCount() {
  FILE* f = std::fopen("/proc/self/status", "r");
  if (!f) return -1;
  char line[256];
  int n = -1;
  while (std::fgets(line, sizeof line, f))
    if (std::sscanf(line, "Threads: %d", &n) == 1) break;
  std::fclose(f);
  return n;
}

// Hundreds of collectives leave the thread count as it was: GPU ranks follow their work with
// one watchdog thread for the process (it used to start one per collective, thousands in a
// benchmark, until threads or memory maps ran out and a rank died).
void testThreadsStayFew(tessera_comm w) {
  Buffer b(64 * 4);
  b.upload(std::vector<uint8_t>(64 * 4, 0));
  tessera_tensor t = b.view(TESSERA_F32, {64});
  require(tessera_all_reduce(w, &t, &t, TESSERA_REDUCE_MAX, nullptr), "warm-up all_reduce");
  require(tessera_comm_synchronize(w, nullptr), "synchronize");
  int before = threadCount();
  for (int i = 0; i < 300; ++i) require(tessera_all_reduce(w, &t, &t, TESSERA_REDUCE_MAX, nullptr), "all_reduce");
  require(tessera_comm_synchronize(w, nullptr), "synchronize");
  int after = threadCount();
  expect(before > 0 && after <= before + 2, "300 all_reduces took the process from %d to %d threads", before, after);
}

}  // namespace

int main() {
  tessera_comm w = start();
  tessera_comm_size(w, &P);
  tessera_comm_rank(w, &R);
  seed = agreeSeed(w);
  testAllReduce(w);
  testAllReduceForms(w);
  testReduceScatter(w);
  testMovement(w);
  testNondeterministic(w);
  testRepeatable(w);
  testDisagreements(w);
  testMeshes();
  testThreadsStayFew(w);
  return finish("dist_collectives");
}
