// examples/dist/tp_gemm.tessera on a (dp, tp) mesh: A: f16[M, K] partitioned by columns and
// B: f16[K, N] by rows over tp; index_launch(axis="tp")(tp_gemm)(A.parts("tp"), B.parts("tp"), P)
// gives each rank a partial product, which a deterministic reduce_scatter sums into
// C: f32[M, N/tp] and an all_reduce into a replicated copy. Every element of both is checked
// against a double-precision product of the same inputs, and the gathered C must equal the
// all_reduce bit for bit (both reduce each element over tp in the same fixed order).
#include "tp_gemm.h"

#include <cinttypes>
#include <cmath>
#include <tessera/dist.hpp>

#include "DistTest.h"
#include "ExecTest.h"

using namespace disttest;
namespace td = tessera::dist;

int main() {
  tessera_comm w = start();
  int32_t p = 1;
  tessera_comm_size(w, &p);
  uint64_t seed = agreeSeed(w);
  int64_t tp = p % 2 == 0 ? 2 : p, dp = p / tp;
  const int64_t M = 37, K = 13 * tp, N = 9 * tp;  // odd local extents: K/tp = 13, N/tp = 9
  td::Mesh mesh;
  require(td::Mesh::create({"dp", "tp"}, {dp, tp}, mesh).code(), "mesh");
  // index_launch takes the kernel's descriptor, found by name; naming the launch stub makes the
  // linker keep the module's object (and its registration) when it comes from a static library.
  static void* volatile keep = reinterpret_cast<void*>(&tp_gemm_tp_gemm);
  (void)keep;
  const tessera_kernel_desc* kernel = nullptr;
  require(tessera_find_kernel("tp_gemm", "tp_gemm", &kernel), "tessera_find_kernel");

  // The global operands, the same on every rank.
  std::vector<uint16_t> a(M * K), b(K * N);
  for (size_t i = 0; i < a.size(); ++i) a[i] = exec::toHalf(float(int64_t(rnd(seed, 1, i) % 2001) - 1000) / 500.f);
  for (size_t i = 0; i < b.size(); ++i) b[i] = exec::toHalf(float(int64_t(rnd(seed, 2, i) % 2001) - 1000) / 500.f);

  td::DTensor A, B, Pt, C, Cfull;
  require(td::DTensor::create(mesh, "A", TESSERA_F16, {M, K}, td::ShardSpec({"col"}, {"tp"}), A).code(), "A");
  require(td::DTensor::create(mesh, "B", TESSERA_F16, {K, N}, td::ShardSpec({"row"}, {"tp"}), B).code(), "B");
  require(td::DTensor::create(mesh, "P", TESSERA_F32, {M, N}, {}, Pt).code(), "P");
  require(td::DTensor::create(mesh, "C", TESSERA_F32, {M, N}, td::ShardSpec({"col"}, {"tp"}), C).code(), "C");
  require(td::DTensor::create(mesh, "Cfull", TESSERA_F32, {M, N}, {}, Cfull).code(), "Cfull");

  // Local shards: A[:, k0:k0+K/tp], B[k0:k0+K/tp, :].
  int64_t k0 = A.offset()[1], kl = K / tp;
  std::vector<uint16_t> al(M * kl), bl(kl * N);
  for (int64_t i = 0; i < M; ++i)
    for (int64_t k = 0; k < kl; ++k) al[i * kl + k] = a[i * K + k0 + k];
  for (int64_t k = 0; k < kl; ++k)
    for (int64_t j = 0; j < N; ++j) bl[k * N + j] = b[(k0 + k) * N + j];
  require(tessera_memcpy(A.local().data, al.data(), al.size() * 2), "upload A");
  require(tessera_memcpy(B.local().data, bl.data(), bl.size() * 2), "upload B");

  tessera_tensor pl = Pt.local();
  // The kernel's extents are the expressions K/tp: a plain launch has no K to check them with,
  // index_launch binds K from A's global shape and tp from the mesh.
  tessera_tensor alv = A.local(), blv = B.local();
  tessera_arg plainArgs[] = {tessera_arg_tensor(&alv), tessera_arg_tensor(&blv), tessera_arg_tensor(&pl)};
  tessera_status plain = tessera_launch(kernel, nullptr, plainArgs, 3);
  expect(plain == TESSERA_ERROR_SHAPE_MISMATCH &&
             std::string(tessera_last_error_message()).find("symbol 'K' is not bound") != std::string::npos,
         "a plain launch of tp_gemm: %s: %s", tessera_status_name(plain), tessera_last_error_message());
  if (tp > 1) {  // a whole B where the kernel expects its part along tp
    td::DTensor Bwhole;
    require(td::DTensor::create(mesh, "Bwhole", TESSERA_F16, {K, N}, {}, Bwhole).code(), "Bwhole");
    tessera_tensor bw = Bwhole.local();
    auto bad = td::index_launch(mesh, "tp")(kernel)(A.parts("tp"), bw, pl);
    std::string want = "parameter 'B': dimension 0 has size " + std::to_string(K) +
                       ", expected K/tp = " + std::to_string(K / tp) + " (K = " + std::to_string(K) +
                       " from the global shape of 'A' dimension 1, tp = " + std::to_string(tp) +
                       " from mesh axis 'tp')";
    expect(bad.code() == TESSERA_ERROR_SHAPE_MISMATCH && bad.message().find(want) != std::string::npos,
           "index_launch with a whole B: %s", bad.toString().c_str());
  }
  auto st = td::index_launch(mesh, "tp")(kernel)(A.parts("tp"), B.parts("tp"), pl);
  require(st.code(), st.message().c_str());
  require(td::reduce_scatter(Pt, C, TESSERA_REDUCE_SUM).code(), "reduce_scatter P -> C");
  require(td::all_gather(C, Cfull).code(), "all_gather C -> Cfull");
  require(td::all_reduce(Pt, "tp", TESSERA_REDUCE_SUM).code(), "all_reduce P over tp");
  require(tessera_comm_synchronize(mesh.comm("tp").get(), nullptr), "synchronize");

  // Reference in double; bound: fp32 accumulation over K/tp products then over tp partials.
  std::vector<double> ref(M * N), mag(M * N);
  for (int64_t i = 0; i < M; ++i)
    for (int64_t j = 0; j < N; ++j)
      for (int64_t k = 0; k < K; ++k) {
        double x = double(exec::fromHalf(a[i * K + k])) * exec::fromHalf(b[k * N + j]);
        ref[i * N + j] += x;
        mag[i * N + j] += std::fabs(x);
      }
  auto bound = [&](size_t e) { return double(K + tp) * std::ldexp(1.0, -24) * mag[e] * 2 + 1e-30; };

  tessera_tensor cl = C.local();
  int64_t n0 = C.offset()[1], nl = cl.shape[1];
  std::vector<float> c(M * nl), full(M * N), summed(M * N);
  require(tessera_memcpy(c.data(), cl.data, c.size() * 4), "download C");
  require(tessera_memcpy(full.data(), Cfull.local().data, full.size() * 4), "download Cfull");
  require(tessera_memcpy(summed.data(), pl.data, summed.size() * 4), "download P");
  int bad = 0, badFull = 0, notEqual = 0;
  for (int64_t i = 0; i < M; ++i)
    for (int64_t j = 0; j < nl; ++j) {
      size_t e = size_t(i * N + n0 + j);
      bad += !(std::fabs(c[i * nl + j] - ref[e]) <= bound(e));
    }
  for (size_t e = 0; e < full.size(); ++e) {
    badFull += !(std::fabs(summed[e] - ref[e]) <= bound(e));
    notEqual += std::memcmp(&full[e], &summed[e], 4) != 0;
  }
  expect(bad == 0, "C[%lld x %lld part at column %lld]: %d elements outside the bound", (long long)M, (long long)nl,
         (long long)n0, bad);
  expect(badFull == 0, "all_reduce of P: %d elements outside the bound", badFull);
  expect(notEqual == 0, "all_gather(reduce_scatter(P)) and all_reduce(P) differ in %d elements", notEqual);
  if (myRank() == 0)
    std::printf(
        "tp_gemm M=%lld K=%lld N=%lld on a (dp=%lld, tp=%lld) mesh: C part %lldx%lld and the replicated "
        "product checked element by element; digest %016" PRIx64 "\n",
        (long long)M, (long long)K, (long long)N, (long long)dp, (long long)tp, (long long)M, (long long)nl,
        digest(std::vector<uint8_t>(reinterpret_cast<uint8_t*>(summed.data()),
                                    reinterpret_cast<uint8_t*>(summed.data() + summed.size()))));
  A.reset(), B.reset(), Pt.reset(), C.reset(), Cfull.reset(), mesh.reset();
  return finish("tp_gemm");
}
