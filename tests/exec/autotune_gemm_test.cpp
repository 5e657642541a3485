// kernels/autotune_gemm: an autotuned GEMM carries every configuration of its space as a
// compiled candidate (8), and every candidate gives the same bits as candidate 0, which matches
// an f32 reference within the bound of any f32 summation order (2 K 2^-23 sum |a_k b_k|), on
// shapes that divide no tile (M=1000, N=1030, K=999 on a GPU; random small ones everywhere).
// tessera_autotune_search times them without changing any argument; a launch runs the recorded
// winner (the CPU executor: candidate 0) and gives the same bits again. block_sums, whose
// candidates could change its bits, has only its first candidate.
#include "autotune_gemm.h"

#include <cmath>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <set>
#include <tuple>

#include "ExecTest.h"

namespace {

bool sameBits(const std::vector<float>& a, const std::vector<float>& b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0;
}

bool runShape(const tessera_kernel_desc* kernel, int64_t M, int64_t N, int64_t K, bool gpu) {
  std::printf("M=%lld N=%lld K=%lld\n", (long long)M, (long long)N, (long long)K);
  std::vector<uint16_t> a = exec::randomBF16(M * K), b = exec::randomBF16(K * N);
  std::vector<float> want(M * N);
  std::vector<double> bound(M * N);
  std::vector<float> bt(K * N), af(M * K);
  for (int64_t k = 0; k < K; ++k)
    for (int64_t n = 0; n < N; ++n) bt[n * K + k] = exec::fromBF16(b[k * N + n]);
  for (int64_t i = 0; i < M * K; ++i) af[i] = exec::fromBF16(a[i]);
  for (int64_t m = 0; m < M; ++m)
    for (int64_t n = 0; n < N; ++n) {
      float acc = 0.0f;
      double mag = 0;
      for (int64_t k = 0; k < K; ++k) {
        float p = af[m * K + k] * bt[n * K + k];  // exact: bf16 x bf16 fits in f32
        acc += p;
        mag += std::fabs(static_cast<double>(p));
      }
      want[m * N + n] = acc;
      bound[m * N + n] = 2.0 * K * std::ldexp(mag, -23);
    }
  exec::DeviceArray<uint16_t> da(a), db(b);
  const std::vector<float> nans(M * N, std::nanf(""));
  exec::DeviceArray<float> dc(nans);
  tessera_tensor A = da.view(TESSERA_BF16, {M, K}), B = db.view(TESSERA_BF16, {K, N}), C = dc.view(TESSERA_F32, {M, N});
  tessera_arg args[3] = {tessera_arg_tensor(&A), tessera_arg_tensor(&B), tessera_arg_tensor(&C)};
  auto reset = [&] { exec::check(tessera_memcpy(dc.data(), nans.data(), dc.bytes()), "reset C"); };

  bool ok = true;
  uint32_t count = tessera_autotune_num_candidates(kernel);
  std::vector<float> first;
  for (uint32_t i = 0; i < count; ++i) {
    reset();
    exec::check(tessera_launch_candidate(kernel, i, nullptr, args, 3), "tessera_launch_candidate");
    exec::check(tessera_synchronize(), "synchronize");
    std::vector<float> got = dc.read();
    if (i == 0) {
      ok &= exec::allWithin(got, want, bound, "C (candidate 0)");
      first = got;
    } else if (!sameBits(got, first)) {
      std::printf("candidate %u: DIFFERENT bits from candidate 0\n", i);
      ok &= exec::allEqual(got, first, "C");
    }
  }
  std::printf("%u candidates: %s\n", count, ok ? "same bits as candidate 0" : "FAILED");

  // The search leaves C as it was (NaN) and times every candidate; none is excluded.
  reset();
  tessera_autotune_result r{};
  exec::check(tessera_autotune_search(kernel, nullptr, args, 3, &r), "tessera_autotune_search");
  bool untouched = true;
  for (float v : dc.read()) untouched &= std::isnan(v);
  std::printf("search: C %s\n", untouched ? "unchanged" : "CHANGED");
  ok &= untouched && r.num_candidates == count && r.best < count;
  for (uint32_t i = 0; i < r.num_candidates && i < TESSERA_AUTOTUNE_MAX_CANDIDATES; ++i) {
    int64_t bm = 0, bn = 0, bk = 0;
    exec::check(tessera_autotune_value(kernel, i, "BM", &bm), "BM");
    exec::check(tessera_autotune_value(kernel, i, "BN", &bn), "BN");
    exec::check(tessera_autotune_value(kernel, i, "BK", &bk), "BK");
    std::printf("  candidate %u BM=%lld BN=%lld BK=%lld: %s%.3f ms\n", i, (long long)bm, (long long)bn, (long long)bk,
                i == r.best ? "best " : "", r.ms[i]);
    ok &= r.ms[i] >= 0;
  }
  if (!gpu) ok &= r.best == 0;  // the CPU executor's choice is deterministic

  // Launches through the generated function run the recorded winner: the same bits, twice.
  for (int rep = 0; rep < 2; ++rep) {
    reset();
    exec::check(autotune_gemm::gemm_tuned(A, B, C), "gemm_tuned");
    exec::check(tessera_synchronize(), "synchronize");
    bool same = sameBits(dc.read(), first);
    std::printf("launch %d: %s\n", rep + 1, same ? "same bits" : "DIFFERENT bits");
    ok &= same;
  }
  return ok;
}

bool runBlockSums() {
  const tessera_kernel_desc* k = nullptr;
  exec::check(tessera_find_kernel("autotune_gemm", "block_sums", &k), "find block_sums");
  uint32_t count = tessera_autotune_num_candidates(k);
  std::printf("block_sums: %u candidate(s), group shape %u\n", count, k->group_shape[0]);
  std::uniform_int_distribution<int64_t> len(1, 20000);
  int64_t n = len(exec::rng()), groups = 7;
  std::vector<float> x = exec::randomFloats(n);
  std::vector<float> want(groups, 0.0f);
  std::vector<double> bound(groups, 0.0);
  const int64_t T = 64, stride = groups * T;
  for (int64_t g = 0; g < groups; ++g) {
    double mag = 0, sum = 0;
    for (int64_t i = 0; i < T; ++i)
      for (int64_t j = g * T + i; j < n; j += stride) {
        sum += x[j];
        mag += std::fabs(x[j]);
      }
    want[g] = static_cast<float>(sum);
    bound[g] = 2.0 * (n / groups + T + 2) * std::ldexp(mag, -23) + std::ldexp(std::fabs(sum), -24);
  }
  exec::DeviceArray<float> dx(x), ds(std::vector<float>(groups, std::nanf("")));
  exec::check(autotune_gemm::block_sums(dx.view(TESSERA_F32, {n}), ds.view(TESSERA_F32, {groups})), "block_sums");
  exec::check(tessera_synchronize(), "synchronize");
  return count == 1 && k->group_shape[0] == 64 && exec::allWithin(ds.read(), want, bound, "block sums");
}

}  // namespace

int main() {
  exec::requireDevice();
  // Tuning winners go to a private cache directory, not the user's.
  char dir[] = "/tmp/tessera-autotune-test-XXXXXX";
  if (mkdtemp(dir)) setenv("XDG_CACHE_HOME", dir, 1);
  tessera_device_kind kind = TESSERA_DEVICE_CPU;
  exec::check(tessera_get_device_kind(&kind), "device kind");
  bool gpu = kind == TESSERA_DEVICE_GPU;
  const tessera_kernel_desc* k = nullptr;
  exec::check(tessera_find_kernel("autotune_gemm", "gemm_tuned", &k), "find gemm_tuned");
  // Every configuration is a candidate, candidate 0 the first value of every list.
  uint32_t count = tessera_autotune_num_candidates(k);
  std::set<std::tuple<int64_t, int64_t, int64_t>> configs;
  for (uint32_t i = 0; i < count; ++i) {
    int64_t bm = 0, bn = 0, bk = 0;
    exec::check(tessera_autotune_value(k, i, "BM", &bm), "BM");
    exec::check(tessera_autotune_value(k, i, "BN", &bn), "BN");
    exec::check(tessera_autotune_value(k, i, "BK", &bk), "BK");
    if (i == 0 && std::make_tuple(bm, bn, bk) != std::make_tuple(int64_t(128), int64_t(128), int64_t(32)))
      std::printf("candidate 0 is not BM=128 BN=128 BK=32\n"), count = 0;
    configs.insert({bm, bn, bk});
  }
  bool ok = count == 8 && configs.size() == 8;
  std::printf("gemm_tuned: %u candidates, %zu distinct configurations\n", count, configs.size());
  std::uniform_int_distribution<int64_t> mn(1, 200), kd(1, 150);
  for (int i = 0; i < 2; ++i) ok &= runShape(k, mn(exec::rng()), mn(exec::rng()), kd(exec::rng()), gpu);
  // TESSERA_TEST_SMALL=1 (compute-sanitizer runs) keeps to the small shapes.
  if (gpu && !std::getenv("TESSERA_TEST_SMALL")) ok &= runShape(k, 1000, 1030, 999, gpu);
  ok &= runBlockSums();
  std::error_code ec;
  std::filesystem::remove_all(dir, ec);
  return exec::finish(ok);
}
