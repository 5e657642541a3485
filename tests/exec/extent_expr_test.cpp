// Extent expressions carried to the launch (issue 11): `Y: f32[K/2]` is checked against the K
// that X binds, so a short Y is refused with a message naming the kernel, the parameter, the
// expression and the sizes instead of being read past its end; an odd K is refused (exact
// division); a correct launch computes every element.
#include "extent_expr.h"

#include <string>

#include "ExecTest.h"

namespace {
bool refused(tessera_status s, const char* what, std::initializer_list<const char*> parts) {
  std::string msg = tessera_last_error_message();
  bool ok = s == TESSERA_ERROR_SHAPE_MISMATCH;
  for (const char* p : parts) ok = ok && msg.find(p) != std::string::npos;
  std::printf("%s: %s: %s -> %s\n", what, tessera_status_name(s), msg.c_str(), ok ? "refused as expected" : "WRONG");
  return ok;
}
}  // namespace

int main() {
  exec::requireDevice();
  std::uniform_int_distribution<int64_t> size(1, 5000);
  int64_t h = size(exec::rng()), k = 2 * h;
  std::printf("K=%lld\n", static_cast<long long>(k));
  std::vector<float> y = exec::randomFloats(h), x = exec::randomFloats(k);
  exec::DeviceArray<float> dy(y), dx(x);
  exec::check(extent_expr::widen(dy.view(TESSERA_F32, {h}), dx.view(TESSERA_F32, {k})), "widen");
  exec::check(tessera_synchronize(), "synchronize");
  std::vector<float> want(k);
  for (int64_t i = 0; i < k; ++i) want[i] = y[i / 2];
  bool ok = exec::allEqual(dx.read(), want, "X");

  // Y shorter than K/2: refused before anything runs.
  std::vector<float> shortY = exec::randomFloats(4);
  exec::DeviceArray<float> ds(shortY), big(exec::randomFloats(100));
  ok &= refused(extent_expr::widen(ds.view(TESSERA_F32, {4}), big.view(TESSERA_F32, {100})), "short Y",
                {"kernel 'widen'", "parameter 'Y'", "K/2", "has size 4", "= 50"});
  // K odd: K/2 is not exact.
  exec::DeviceArray<float> odd(exec::randomFloats(101));
  ok &= refused(extent_expr::widen(dx.view(TESSERA_F32, {50}), odd.view(TESSERA_F32, {101})), "odd K",
                {"kernel 'widen'", "K/2", "101 is not divisible by 2"});

  // Z: 2*(K+1).
  std::vector<float> z(2 * (k + 1), 7.0f);
  exec::DeviceArray<float> dz(z);
  exec::check(extent_expr::pad(dx.view(TESSERA_F32, {k}), dz.view(TESSERA_F32, {2 * (k + 1)})), "pad");
  exec::check(tessera_synchronize(), "synchronize");
  std::vector<float> wantZ(2 * (k + 1), -1.0f), xr = dx.read();
  for (int64_t i = 0; i < k; ++i) wantZ[i] = xr[i];
  ok &= exec::allEqual(dz.read(), wantZ, "Z");
  ok &= refused(extent_expr::pad(dx.view(TESSERA_F32, {k}), dz.view(TESSERA_F32, {2 * k + 1})), "short Z",
                {"kernel 'pad'", "parameter 'Z'", "2*(K+1)"});
  return exec::finish(ok);
}
