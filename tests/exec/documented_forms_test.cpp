// exec documented_forms: forms the documentation promises that compilation refused although
// `--check` accepted them (issue 33), each run on fresh random inputs and checked element by
// element: a device function called through its package (`stdlib.nn.gelu(v)` after
// `import stdlib.nn`), `lens[:, None]` of a block `lens = L[rb]`, a constant tile
// (`tile.full((M, N), 1.0)`) added to a row-split product, and reshapes whose element counts
// are one product written in two orders (`[P, R]` to `(R, P)` and to `(R * P,)`). Then the
// error message of a host entry point given a null tensor or result pointer: it names the
// entry point and the argument, not the previous call's problem (issue 33).
#include "documented_forms.h"

#include <cmath>
#include <string>

#include "ExecTest.h"

namespace {

bool gelu() {
  int64_t n = std::uniform_int_distribution<int64_t>(1, 5000)(exec::rng());
  std::vector<float> x = exec::randomFloats(n, -6.0f, 6.0f);
  exec::DeviceArray<float> dx(x), dy(std::vector<float>(n, -7.0f));
  exec::check(documented_forms::gelu_dotted(dx.view(TESSERA_F32, {n}), dy.view(TESSERA_F32, {n})), "gelu_dotted");
  exec::check(tessera_synchronize(), "synchronize");
  std::vector<float> y = dy.read();
  size_t bad = 0;
  for (int64_t i = 0; i < n; ++i) {
    double v = x[i], want = 0.5 * v * (1 + std::erf(v / std::sqrt(2.0)));
    // stdlib.nn.gelu's bound (docs/stdlib.md): a few ulps of the result and |x| 2^-24 for erf.
    double bound = 4e-7 * std::fabs(want) + 1e-7 + std::fabs(v) * 0x1p-24;
    if (!(std::fabs(y[i] - want) <= bound) && bad++ < 5)
      std::printf("  gelu[%lld] = %.9g, expected %.9g\n", static_cast<long long>(i), y[i], want);
  }
  std::printf("gelu_dotted: %lld elements, %zu outside the bound\n", static_cast<long long>(n), bad);
  return bad == 0;
}

bool keepPrefix() {
  int64_t R = std::uniform_int_distribution<int64_t>(1, 70)(exec::rng());
  std::vector<float> x = exec::randomFloats(R * 64);
  std::vector<int32_t> len(R);
  for (int32_t& l : len) l = std::uniform_int_distribution<int32_t>(-3, 70)(exec::rng());
  exec::DeviceArray<float> dx(x), dy(std::vector<float>(R * 64, -7.0f));
  exec::DeviceArray<int32_t> dl(len);
  exec::check(documented_forms::keep_prefix(dx.view(TESSERA_F32, {R, 64}), dl.view(TESSERA_I32, {R}),
                                            dy.view(TESSERA_F32, {R, 64})),
              "keep_prefix");
  exec::check(tessera_synchronize(), "synchronize");
  std::vector<float> want(R * 64);
  for (int64_t r = 0; r < R; ++r)
    for (int64_t c = 0; c < 64; ++c) want[r * 64 + c] = c < len[r] ? x[r * 64 + c] : 0.0f;
  return exec::allEqual(dy.read(), want, "keep_prefix");
}

bool productPlusOne() {
  std::uniform_int_distribution<int64_t> d(1, 90);
  int64_t K = d(exec::rng()), M = d(exec::rng()), N = d(exec::rng());
  std::vector<float> a = exec::randomFloats(K * M), b = exec::randomFloats(K * N);
  exec::DeviceArray<float> da(a), db(b), dc(std::vector<float>(M * N, -7.0f));
  exec::check(documented_forms::scaled_product_plus_one(da.view(TESSERA_F32, {K, M}), db.view(TESSERA_F32, {K, N}),
                                                        dc.view(TESSERA_F32, {M, N})),
              "scaled_product_plus_one");
  exec::check(tessera_synchronize(), "synchronize");
  std::vector<float> c = dc.read();
  size_t bad = 0;
  for (int64_t i = 0; i < M; ++i)
    for (int64_t j = 0; j < N; ++j) {
      double s = 0, mag = 0;
      for (int64_t k = 0; k < K; ++k)
        s += double(a[k * M + i]) * b[k * N + j], mag += std::fabs(a[k * M + i] * b[k * N + j]);
      double want = s * 0.5 + 1.0, bound = (K + 4) * 0x1p-24 * (0.5 * mag + 1.0);
      if (!(std::fabs(c[i * N + j] - want) <= bound) && bad++ < 5)
        std::printf("  C[%lld, %lld] = %.9g, expected %.9g\n", static_cast<long long>(i), static_cast<long long>(j),
                    c[i * N + j], want);
    }
  std::printf("scaled_product_plus_one %lldx%lldx%lld: %zu outside the bound\n", static_cast<long long>(M),
              static_cast<long long>(N), static_cast<long long>(K), bad);
  return bad == 0;
}

bool reshapes() {
  std::uniform_int_distribution<int64_t> d(1, 40);
  int64_t P = d(exec::rng()), R = d(exec::rng());
  std::vector<float> y = exec::randomFloats(P * R);
  exec::DeviceArray<float> dy(y);
  tessera_tensor Y = dy.view(TESSERA_F32, {P, R}), A, B;
  exec::check(documented_forms_reshapes(nullptr, &Y, &A, &B), "reshapes");
  exec::check(tessera_synchronize(), "synchronize");
  bool ok = A.rank == 2 && A.shape[0] == R && A.shape[1] == P && B.rank == 1 && B.shape[0] == R * P;
  if (!ok) std::printf("FAIL: reshapes gave results of the wrong shapes\n");
  std::vector<float> a(R * P), b(R * P), wa(R * P);
  exec::check(tessera_memcpy(a.data(), A.data, a.size() * 4), "copy out");
  exec::check(tessera_memcpy(b.data(), B.data, b.size() * 4), "copy out");
  for (size_t i = 0; i < wa.size(); ++i) wa[i] = y[i] * 2.0f;  // a reshape keeps the row-major order
  ok &= exec::allEqual(a, wa, "reshape to (R, P), times 2");
  ok &= exec::allEqual(b, y, "reshape to (R * P,)");
  tessera_free(A.data);
  tessera_free(B.data);
  return ok;
}

// After a call that failed with another message, a null tensor pointer and a null result
// pointer each give NULL_POINTER with a message that names them.
bool nullPointers() {
  exec::DeviceArray<float> da(exec::randomFloats(8)), db(exec::randomFloats(9));
  tessera_tensor a = da.view(TESSERA_F32, {8}), b = db.view(TESSERA_F32, {9}), out;
  bool ok = true;
  auto expect = [&](tessera_status s, tessera_status want, const char* needle, const char* what) {
    std::string msg = tessera_last_error_message();
    bool good = s == want && msg.find(needle) != std::string::npos;
    std::printf("%s: %s: %s\n", what, tessera_status_name(s), msg.c_str());
    if (!good) std::printf("FAIL: %s: expected %s naming %s\n", what, tessera_status_name(want), needle);
    ok &= good;
  };
  expect(documented_forms_add(nullptr, &a, &b, &out), TESSERA_ERROR_SHAPE_MISMATCH, "9", "extents 8 and 9");
  expect(documented_forms_add(nullptr, &a, nullptr, &out), TESSERA_ERROR_NULL_POINTER, "parameter 'b'", "null b");
  expect(documented_forms_add(nullptr, &a, &b, &out), TESSERA_ERROR_SHAPE_MISMATCH, "9", "extents 8 and 9 again");
  expect(documented_forms_add(nullptr, &a, &a, nullptr), TESSERA_ERROR_NULL_POINTER, "result", "null result pointer");
  return ok;
}

}  // namespace

int main() {
  exec::requireDevice();
  bool ok = gelu();
  ok &= keepPrefix();
  ok &= productPlusOne();
  ok &= reshapes();
  ok &= nullPointers();
  return exec::finish(ok);
}
