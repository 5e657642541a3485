// exec unit_rows: (1, C) tiles stored into [C] slots and [C] tiles into (1, C) slots (leading
// extents of 1 come and go, as NumPy assigns), for random C; every element checked. Before
// (issue 11), sema refused these (err_store_rank_mismatch).
#include "unit_rows.h"

#include "ExecTest.h"

int main() {
  exec::requireDevice();
  bool ok = true;
  std::uniform_int_distribution<int64_t> cD(16, 300);
  for (int64_t C : {int64_t(16), int64_t(64), cD(exec::rng()), cD(exec::rng())}) {
    std::vector<float> x = exec::randomFloats(4 * C, -4.0f, 4.0f);
    exec::DeviceArray<float> dx(x), y(std::vector<float>(C, -1.0f)), z(std::vector<float>(C, -1.0f)),
        w(std::vector<float>(4 * C, -1.0f)), v(std::vector<float>(32, -1.0f));
    tessera_launch_options opts{};
    opts.grid[0] = opts.grid[1] = opts.grid[2] = 1;
    exec::check(
        unit_rows::unit_rows(dx.view(TESSERA_F32, {4, C}), y.view(TESSERA_F32, {C}), z.view(TESSERA_F32, {1, C}),
                             w.view(TESSERA_F32, {4, C}), v.view(TESSERA_F32, {2, 16}), &opts),
        "unit_rows");
    exec::check(tessera_synchronize(), "synchronize");
    std::vector<float> wy(C), wz(C), ww(4 * C, -1.0f), wv(32, -1.0f);
    for (int64_t c = 0; c < C; ++c) {
      wy[c] = x[C + c] * 2.0f;
      wz[c] = x[2 * C + c] + 1.0f;
      // tile.sum along axis 0: each line in index order from 0 (codegen/lower/LowerTiles.cpp).
      ww[3 * C + c] = (((0.0f + x[c]) + x[C + c]) + x[2 * C + c]) + x[3 * C + c];
      ww[c] = x[c] - 3.0f;
    }
    for (int64_t c = 0; c < 16; ++c) wv[16 + c] = x[c] + x[3 * C + c];
    std::printf("C = %lld: ", static_cast<long long>(C));
    ok &= exec::allEqual(y.read(), wy, "y");
    ok &= exec::allEqual(z.read(), wz, "z");
    ok &= exec::allEqual(w.read(), ww, "w");
    ok &= exec::allEqual(v.read(), wv, "v");
  }
  return exec::finish(ok);
}
