// Collectives overlapped with compute (the "collective matmul", runtime/dist/Overlap.h) under
// mpirun with 2, 3 and 4 CPU ranks and as one process, on a mesh ("tp",) of every rank, with
// examples/dist/collective_matmul.tessera's gemm_rows:
//  - column-parallel: X: bf16[M, K] partitioned by rows over tp, each rank's W: bf16[K, N/tp];
//    tessera_index_launch_gathered launches gemm_rows on each block of X as it arrives. Y must
//    equal, bit for bit, tessera_dtensor_all_gather of X followed by one launch on the whole X,
//    and a double-precision product of the same inputs within fp32's bound;
//  - the C callback API: blocks come this rank's first, then around the ring, and the gathered
//    buffer equals tessera_all_gather's;
//  - row-parallel: A: bf16[M, K/tp] and B: bf16[K/tp, N] per rank; tessera_reduce_scatter_overlap
//    produces each row block's partial product and sends it at once. C must equal, bit for bit,
//    the whole partial product followed by tessera_reduce_scatter;
//  - errors: a GATHER tensor not partitioned by rows, ROWS of the wrong extent, and a failing
//    callback (a status naming the collective; the communicator aborted on every rank).
#include "collective_matmul.h"

#include <cmath>
#include <tessera/dist.hpp>

#include "DistTest.h"
#include "ExecTest.h"

using namespace disttest;
namespace td = tessera::dist;

namespace {

int P = 1, R = 0;
uint64_t seed = 0;
const tessera_kernel_desc* gemm = nullptr;

std::vector<uint16_t> randomBF16(uint64_t stream, size_t n) {
  std::vector<uint16_t> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = exec::toBF16(float(int64_t(rnd(seed, stream, i) % 4001) - 2000) / 997.f);
  return v;
}

std::vector<float> download(const tessera_tensor& t) {
  std::vector<float> v(size_t(tessera_tensor_numel(&t)));
  require(tessera_memcpy(v.data(), t.data, v.size() * 4), "download");
  return v;
}

size_t differing(const std::vector<float>& a, const std::vector<float>& b) {
  size_t n = 0;
  for (size_t i = 0; i < a.size(); ++i) n += std::memcmp(&a[i], &b[i], 4) != 0;
  return n;
}

void launch(const tessera_tensor& x, const tessera_tensor& w, const tessera_tensor& y, tessera_stream s = nullptr) {
  tessera_arg a[] = {tessera_arg_tensor(&x), tessera_arg_tensor(&w), tessera_arg_tensor(&y)};
  tessera_launch_options o{};
  o.stream = s;
  require(tessera_launch(gemm, &o, a, 3), "gemm_rows");
}

void columnParallel(td::Mesh& mesh) {
  const int64_t m = 7, M = m * P, K = 19, Nl = 5;  // odd blocks: 7 rows of X per rank
  std::vector<uint16_t> x = randomBF16(1, M * K), w = randomBF16(100 + R, K * Nl);
  td::DTensor X, Xfull;
  require(td::DTensor::create(mesh, "X", TESSERA_BF16, {M, K}, td::ShardSpec({"row"}, {"tp"}), X).code(), "X");
  require(td::DTensor::create(mesh, "Xfull", TESSERA_BF16, {M, K}, {}, Xfull).code(), "Xfull");
  require(tessera_memcpy(X.local().data, x.data() + R * m * K, m * K * 2), "upload X");
  Buffer wb(K * Nl * 2), y(M * Nl * 4), y2(M * Nl * 4);
  wb.upload(
      std::vector<uint8_t>(reinterpret_cast<uint8_t*>(w.data()), reinterpret_cast<uint8_t*>(w.data() + w.size())));
  tessera_tensor tw = wb.view(TESSERA_BF16, {K, Nl}), ty = y.view(TESSERA_F32, {M, Nl}),
                 ty2 = y2.view(TESSERA_F32, {M, Nl});

  tessera_dist_arg args[3] = {};
  args[0].kind = TESSERA_DIST_ARG_GATHER;
  args[0].dtensor = X.get();
  args[1].kind = TESSERA_DIST_ARG_PLAIN;
  args[1].arg = tessera_arg_tensor(&tw);
  args[2].kind = TESSERA_DIST_ARG_ROWS;
  args[2].arg = tessera_arg_tensor(&ty);
  require(tessera_index_launch_gathered(mesh.get(), "tp", gemm, nullptr, args, 3), "index_launch_gathered");
  require(td::all_gather(X, Xfull).code(), "all_gather X");
  launch(Xfull.local(), tw, ty2);
  require(tessera_comm_synchronize(mesh.comm("tp").get(), nullptr), "synchronize");
  std::vector<float> got = download(ty), plain = download(ty2);
  expect(differing(got, plain) == 0, "column-parallel: overlapped and plain Y differ in %zu of %zu elements",
         differing(got, plain), got.size());
  int bad = 0;
  for (int64_t i = 0; i < M; ++i)
    for (int64_t j = 0; j < Nl; ++j) {
      double ref = 0, mag = 0;
      for (int64_t k = 0; k < K; ++k) {
        double t = double(exec::fromBF16(x[i * K + k])) * exec::fromBF16(w[k * Nl + j]);
        ref += t, mag += std::fabs(t);
      }
      bad += !(std::fabs(got[i * Nl + j] - ref) <= (K + 2) * std::ldexp(1.0, -24) * mag + 1e-30);
    }
  expect(bad == 0, "column-parallel Y: %d elements outside the bound", bad);

  // Errors, on every rank alike: Xfull is replicated, and a ROWS tensor one block short.
  args[0].dtensor = Xfull.get();
  tessera_status s = tessera_index_launch_gathered(mesh.get(), "tp", gemm, nullptr, args, 3);
  expect(s == TESSERA_ERROR_INVALID_ARGUMENT && std::string(tessera_last_error_message())
                                                        .find("GATHER argument 'Xfull' must be partitioned along "
                                                              "dimension 0 over mesh axis 'tp'") != std::string::npos,
         "a replicated GATHER argument: %s: %s", tessera_status_name(s), tessera_last_error_message());
  args[0].dtensor = X.get();
  tessera_tensor shortY = y.view(TESSERA_F32, {M - m, Nl});
  args[2].arg = tessera_arg_tensor(&shortY);
  s = tessera_index_launch_gathered(mesh.get(), "tp", gemm, nullptr, args, 3);
  expect(s == TESSERA_ERROR_SHAPE_MISMATCH && std::string(tessera_last_error_message())
                                                      .find("ROWS argument 'Y' must be a whole-byte tensor whose "
                                                            "dimension 0 spans the " +
                                                            std::to_string(M)) != std::string::npos,
         "ROWS one block short: %s: %s", tessera_status_name(s), tessera_last_error_message());
}

struct Seen {
  std::vector<int> blocks;
  std::vector<std::vector<uint8_t>> data;
};

tessera_status record(void* user, int32_t block, const tessera_tensor* view, tessera_stream) {
  auto* s = static_cast<Seen*>(user);
  s->blocks.push_back(block);
  std::vector<uint8_t> bytes(size_t(tessera_tensor_numel(view)) * 4);
  tessera_status st = tessera_memcpy(bytes.data(), view->data, bytes.size());
  s->data.push_back(bytes);
  return st;
}

void callbackOrder(tessera_comm tp) {
  const int64_t n = 11;
  Buffer send(n * 4), recv(n * 4 * P), plain(n * 4 * P);
  std::vector<uint8_t> mine(n * 4);
  for (size_t i = 0; i < mine.size(); ++i) mine[i] = uint8_t(rnd(seed, 50 + R, i));
  send.upload(mine);
  tessera_tensor ts = send.view(TESSERA_F32, {n}), tr = recv.view(TESSERA_F32, {P, n}),
                 tp2 = plain.view(TESSERA_F32, {P * n});
  Seen seen;
  tessera_collective_options o{nullptr, 0, 0, "acts"};
  require(tessera_all_gather_overlap(tp, &ts, &tr, record, &seen, &o), "all_gather_overlap");
  require(tessera_all_gather(tp, &ts, &tp2, &o), "all_gather");
  std::vector<int> want;
  for (int s = 0; s < P; ++s) want.push_back((R - s + P) % P);
  expect(seen.blocks == want, "blocks came in another order than own, then around the ring");
  std::vector<uint8_t> all = plain.download();
  expect(recv.download() == all, "the overlapped all_gather's buffer differs from tessera_all_gather's");
  for (size_t i = 0; i < seen.blocks.size(); ++i)
    expect(std::memcmp(seen.data[i].data(), all.data() + seen.blocks[i] * n * 4, n * 4) == 0,
           "block %d was not complete when its callback ran", seen.blocks[i]);
}

struct RowParallel {
  tessera_tensor a, b;
  int64_t m;
};

tessera_status produce(void* user, int32_t block, const tessera_tensor* slot, tessera_stream stream) {
  auto* rp = static_cast<RowParallel*>(user);
  tessera_tensor rows = rp->a;  // rows [block * m, (block + 1) * m) of A
  rows.data = static_cast<char*>(rows.data) + size_t(block * rp->m * rows.strides[0]) * 2;
  rows.shape[0] = rp->m;
  tessera_arg args[] = {tessera_arg_tensor(&rows), tessera_arg_tensor(&rp->b), tessera_arg_tensor(slot)};
  tessera_launch_options o{};
  o.stream = stream;
  return tessera_launch(gemm, &o, args, 3);
}

void rowParallel(tessera_comm tp) {
  const int64_t m = 5, M = m * P, Kl = 13, N = 9;
  std::vector<uint16_t> a = randomBF16(200 + R, M * Kl), b = randomBF16(300 + R, Kl * N);
  Buffer ab(a.size() * 2), bb(b.size() * 2), c(m * N * 4), c2(m * N * 4), part(M * N * 4);
  ab.upload(
      std::vector<uint8_t>(reinterpret_cast<uint8_t*>(a.data()), reinterpret_cast<uint8_t*>(a.data() + a.size())));
  bb.upload(
      std::vector<uint8_t>(reinterpret_cast<uint8_t*>(b.data()), reinterpret_cast<uint8_t*>(b.data() + b.size())));
  RowParallel rp{ab.view(TESSERA_BF16, {M, Kl}), bb.view(TESSERA_BF16, {Kl, N}), m};
  tessera_tensor tc = c.view(TESSERA_F32, {m, N}), tc2 = c2.view(TESSERA_F32, {m, N}),
                 tpart = part.view(TESSERA_F32, {M, N});
  tessera_collective_options o{nullptr, 0, 0, "partials"};
  require(tessera_reduce_scatter_overlap(tp, &tc, TESSERA_REDUCE_SUM, produce, &rp, &o), "reduce_scatter_overlap");
  launch(rp.a, rp.b, tpart);
  require(tessera_reduce_scatter(tp, &tpart, &tc2, TESSERA_REDUCE_SUM, &o), "reduce_scatter");
  std::vector<float> got = download(tc), plain = download(tc2);
  expect(differing(got, plain) == 0, "row-parallel: overlapped and plain C differ in %zu of %zu elements",
         differing(got, plain), got.size());
}

tessera_status failing(void*, int32_t, const tessera_tensor*, tessera_stream) { return TESSERA_ERROR_OUT_OF_MEMORY; }

// Every rank's callback fails on its own block, before any transfer: each rank reports it and
// its communicator is aborted.
void failingCallback(tessera_comm world) {
  tessera_comm c = nullptr;
  require(tessera_comm_split(world, 0, R, "doomed", &c), "split");
  Buffer send(16), recv(16 * P);
  tessera_tensor ts = send.view(TESSERA_F32, {4}), tr = recv.view(TESSERA_F32, {4 * P});
  tessera_collective_options o{nullptr, 0, 0, "acts"};
  tessera_status s = tessera_all_gather_overlap(c, &ts, &tr, failing, nullptr, &o);
  std::string msg = tessera_last_error_message();
  expect(s == TESSERA_ERROR_OUT_OF_MEMORY &&
             msg.find("all_gather (overlapped) of 'acts' on communicator 'doomed'") != std::string::npos &&
             msg.find("the callback for block " + std::to_string(R) + " failed") != std::string::npos &&
             msg.find("TESSERA_ERROR_OUT_OF_MEMORY") != std::string::npos,
         "failing callback: %s: %s", tessera_status_name(s), msg.c_str());
  s = tessera_all_gather(c, &ts, &tr, &o);
  expect(s == TESSERA_ERROR_COMM_ABORTED, "after the failing callback: %s", tessera_status_name(s));
  require(tessera_comm_destroy(c), "destroy");
}

}  // namespace

int main() {
  tessera_comm w = start();
  tessera_comm_size(w, &P);
  tessera_comm_rank(w, &R);
  seed = agreeSeed(w);
  static void* volatile keep = reinterpret_cast<void*>(&collective_matmul_gemm_rows);
  (void)keep;
  require(tessera_find_kernel("collective_matmul", "gemm_rows", &gemm), "tessera_find_kernel");
  td::Mesh mesh;
  require(td::Mesh::create({"tp"}, {P}, mesh).code(), "mesh");
  columnParallel(mesh);
  callbackOrder(mesh.comm("tp").get());
  rowParallel(mesh.comm("tp").get());
  failingCallback(w);
  mesh.reset();
  return finish("overlap");
}
