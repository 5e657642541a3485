// kernels/bounds_check, compiled with --bounds-check: in-range launches compute every element;
// out-of-range ones fail with TESSERA_ERROR_KERNEL_FAULT and a message naming the kernel, the
// tensor or shared array, the dimension, the index and the extent, and nothing is written past
// an end (guard elements around the output keep their values).
#include "bounds_check.h"

#include <string>

#include "ExecTest.h"

namespace {
bool faulted(tessera_status s, const char* what, std::initializer_list<const char*> parts) {
  if (s == TESSERA_SUCCESS) s = tessera_synchronize();
  std::string msg = tessera_last_error_message();
  bool ok = s == TESSERA_ERROR_KERNEL_FAULT;
  for (const char* p : parts) ok = ok && msg.find(p) != std::string::npos;
  std::printf("%s: %s: %s -> %s\n", what, tessera_status_name(s), msg.c_str(), ok ? "reported" : "WRONG");
  return ok;
}
}  // namespace

int main() {
  exec::requireDevice();
  std::uniform_int_distribution<int64_t> size(40, 5000);
  int64_t n = size(exec::rng());
  std::printf("n=%lld\n", static_cast<long long>(n));
  // The output lies between guards: a write past either end would change them.
  std::vector<float> x = exec::randomFloats(n), y(n + 64, -7.0f);
  exec::DeviceArray<float> dx(x), dy(y);
  auto outView = [&](int64_t len) {
    tessera_tensor t = dy.view(TESSERA_F32, {len});
    t.data = static_cast<float*>(dy.data()) + 32;
    return t;
  };
  exec::check(bounds_check::shifted(dx.view(TESSERA_F32, {n}), outView(n), 0), "shifted by 0");
  exec::check(tessera_synchronize(), "synchronize");
  std::vector<float> want = y;
  for (int64_t i = 0; i < n; ++i) want[32 + i] = x[i];
  bool ok = exec::allEqual(dy.read(), want, "y");

  ok &= faulted(bounds_check::shifted(dx.view(TESSERA_F32, {n}), outView(n), 3), "x[i + 3]",
                {"kernel 'shifted'", "bounds check: tensor 'x', dimension 0: index ", "is outside [0, "});
  ok &= faulted(bounds_check::shifted(dx.view(TESSERA_F32, {n}), outView(n), -1), "x[i - 1]",
                {"kernel 'shifted'", "tensor 'x', dimension 0: index -1 is outside [0, ",
                 ("is outside [0, " + std::to_string(n) + ")").c_str(), "(tile 0)"});
  // Guards intact after the faulting launches (loads that fail give 0; stores stay inside).
  std::vector<float> after = dy.read();
  bool guards = true;
  for (int64_t i = 0; i < 32; ++i) guards &= after[i] == -7.0f && after[32 + n + i] == -7.0f;
  std::printf("guards around y: %s\n", guards ? "intact" : "OVERWRITTEN");
  ok &= guards;

  // rows: R rows, launched with R groups (fine) and R + 2 groups (group R writes row R).
  int64_t R = 7, C = 45;
  std::vector<float> a = exec::randomFloats(R * C), b((R + 2) * C, -7.0f);
  exec::DeviceArray<float> da(a), db(b);
  tessera_launch_options o{};
  o.grid[0] = static_cast<uint32_t>(R);
  exec::check(bounds_check::rows(da.view(TESSERA_F32, {R, C}), db.view(TESSERA_F32, {R, C}), &o), "rows");
  exec::check(tessera_synchronize(), "synchronize");
  std::vector<float> wantB = b;
  for (int64_t i = 0; i < R * C; ++i) wantB[i] = a[i] * 2.0f;
  ok &= exec::allEqual(db.read(), wantB, "rows");
  o.grid[0] = static_cast<uint32_t>(R + 2);
  ok &= faulted(bounds_check::rows(da.view(TESSERA_F32, {R, C}), db.view(TESSERA_F32, {R, C}), &o), "R + 2 groups",
                {"kernel 'rows'", "faulted", "tensor 'x', dimension 0: index ", "is outside [0, 7)"});
  ok &= exec::allEqual(db.read(), wantB, "rows after the faulting launch");

  // smem_oob: s[63] is fine, s[64] is past the end of the shared array.
  std::vector<float> sx = exec::randomFloats(64), sy(1, 0.0f);
  exec::DeviceArray<float> dsx(sx), dsy(sy);
  o.grid[0] = 1;
  exec::check(bounds_check::smem_oob(dsx.view(TESSERA_F32, {64}), dsy.view(TESSERA_F32, {1}), 0, &o), "smem");
  exec::check(tessera_synchronize(), "synchronize");
  ok &= exec::allEqual(dsy.read(), std::vector<float>{sx[63]}, "s[63]");
  ok &= faulted(bounds_check::smem_oob(dsx.view(TESSERA_F32, {64}), dsy.view(TESSERA_F32, {1}), 1, &o), "s[64]",
                {"kernel 'smem_oob'", "shared array 's', dimension 0: index 64 is outside [0, 64) (tile 0)"});

  // hist_oob: bins of x[t] in range count every element; a bin of b or -1 faults, the other
  // updates land and the guards around the bins keep their values.
  int64_t hn = 45, hb = 7;
  std::vector<int32_t> hx = exec::randomInts(hn, 0, static_cast<int32_t>(hb - 1));
  std::vector<int32_t> hbins(hb + 2, -3);
  exec::DeviceArray<int32_t> dhx(hx), dh(hbins);
  auto binsView = [&] {
    tessera_tensor t = dh.view(TESSERA_I32, {hb});
    t.data = static_cast<int32_t*>(dh.data()) + 1;
    return t;
  };
  std::vector<int32_t> wantH(hb + 2, -3);
  for (int32_t v : hx) ++wantH[1 + v];
  o.grid[0] = 2;
  exec::check(bounds_check::hist_oob(dhx.view(TESSERA_I32, {hn}), binsView(), &o), "hist_oob");
  exec::check(tessera_synchronize(), "synchronize");
  ok &= exec::allEqual(dh.read(), wantH, "atomic histogram");
  for (int32_t bad : {int32_t(hb), int32_t(-1)}) {
    std::vector<int32_t> bx = hx;
    bx[hn - 1] = bad;
    exec::DeviceArray<int32_t> dbx(bx);
    std::string index = "index " + std::to_string(bad) + " is outside [0, 7)";
    ok &= faulted(bounds_check::hist_oob(dbx.view(TESSERA_I32, {hn}), binsView(), &o), "bins[x[t]] out of range",
                  {"kernel 'hist_oob'", "tensor 'bins', dimension 0: ", index.c_str()});
    for (int64_t i = 0; i < hn - 1; ++i) ++wantH[1 + bx[i]];
    ok &= exec::allEqual(dh.read(), wantH, "atomic histogram after the fault (the faulting update skipped)");
  }
  return exec::finish(ok);
}
