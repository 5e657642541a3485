// kernels/half_convert: every one of the 65536 f16 codes converted to bf16 and every bf16 code
// to f16, against the reference decode to f32 + round to nearest even (ExecTest.h). NaN inputs
// must give a NaN (any payload; the digest canonicalises them so both devices compare equal).
#include "half_convert.h"

#include <cmath>

#include "ExecTest.h"

namespace {
bool isNanHalf(uint16_t h) { return (h & 0x7c00u) == 0x7c00u && (h & 0x3ffu); }
bool isNanBF16(uint16_t h) { return (h & 0x7f80u) == 0x7f80u && (h & 0x7fu); }

bool compare(std::vector<uint16_t> got, const std::vector<uint16_t>& want, bool (*isNan)(uint16_t), uint16_t qnan,
             const char* what) {
  size_t bad = 0;
  for (size_t i = 0; i < want.size(); ++i) {
    bool ok = isNan(want[i]) ? isNan(got[i]) : got[i] == want[i];
    if (!ok && bad++ < 5) std::printf("  %s[%zu] = 0x%04x, expected 0x%04x\n", what, i, got[i], want[i]);
    if (isNan(got[i])) got[i] = qnan;
  }
  std::printf("%s: %zu codes, %zu differ\n", what, want.size(), bad);
  std::printf("digest %s %016llx (exact)\n", what, static_cast<unsigned long long>(exec::digest(got)));
  return bad == 0;
}
}  // namespace

int main() {
  exec::requireDevice();
  int64_t n = 65536;
  std::vector<uint16_t> codes(n), zeros(n, 0), wantB(n), wantH(n), wantH2(n), wantB2(n);
  for (int64_t c = 0; c < n; ++c) {
    codes[c] = static_cast<uint16_t>(c);
    wantB[c] = exec::toBF16(exec::fromHalf(codes[c]));
    wantH[c] = exec::toHalf(exec::fromBF16(codes[c]));
    wantH2[c] = exec::toHalf(exec::fromBF16(codes[c]) * 2.0f);  // exact in f32
    wantB2[c] = exec::toBF16(exec::fromHalf(codes[c]) * 2.0f);
  }
  exec::DeviceArray<uint16_t> x(codes), y(zeros);
  exec::check(half_convert::h2b(x.view(TESSERA_F16, {n}), y.view(TESSERA_BF16, {n})), "h2b");
  exec::check(tessera_synchronize(), "synchronize");
  bool ok = compare(y.read(), wantB, isNanBF16, 0x7fc0, "f16->bf16");
  exec::check(half_convert::b2h(x.view(TESSERA_BF16, {n}), y.view(TESSERA_F16, {n})), "b2h");
  exec::check(tessera_synchronize(), "synchronize");
  ok &= compare(y.read(), wantH, isNanHalf, 0x7e00, "bf16->f16");
  exec::check(half_convert::b2h_doubled(x.view(TESSERA_BF16, {n}), y.view(TESSERA_F16, {n})), "b2h_doubled");
  exec::check(tessera_synchronize(), "synchronize");
  ok &= compare(y.read(), wantH2, isNanHalf, 0x7e00, "f16(bf16 * 2)");
  exec::check(half_convert::h2b_doubled(x.view(TESSERA_F16, {n}), y.view(TESSERA_BF16, {n})), "h2b_doubled");
  exec::check(tessera_synchronize(), "synchronize");
  ok &= compare(y.read(), wantB2, isNanBF16, 0x7fc0, "bf16(f16 * 2)");
  return exec::finish(ok);
}
