// tests/exec/kernels/mlp_hopper: chains of two products, Out = relu(X W1 + b1) W2 + b2 (bf16 out)
// and Out = (X W1) W2 (no bias or relu, f32 out). On an sm_90 GPU, views whose rows are 16-byte
// multiples run two steps of the sm_90a schedule (ir/passes/ProductPlan.h, codegen/hopper/HopperGemm.cpp): Hid rounded
// to bf16 in a scratch matrix, then the second product. Elsewhere (the CPU executor, other GPUs, rows of odd length)
// the whole-tensor program runs with Hid in f32, bit for bit the sequential f32 reference. Every element is checked
// against both references: the f32 one exactly, or the bf16-Hid one within the bound of any f32 summation order (2 K
// 2^-24 sum |terms| per product), the rounding of Hid (exact rounding from a double reference; where Hid's f32 error
// interval straddles a bf16 rounding boundary, one bf16 ulp of that Hid element times |W2|) and the rounding of the
// output (half a bf16 ulp). A second launch must give the same bits. `mlp_hopper_test bar` also runs issue 15's shapes
// (M=8192, D=H=E=1024; M=8192, D=4096, H=16384, E=4096) on the GPU against the portable dense kernels of the same
// module.
#include "mlp_hopper.h"

#include <cmath>
#include <cstring>

#include "ExecTest.h"
#include "MlpReference.h"

namespace {

using exec::fromBF16;
using mlp::checkEither;
using mlp::reference;
using mlp::Shape;
using mlp::widen;

bool runShape(const Shape& s) {
  const int64_t M = s.M, D = s.D, H = s.H, E = s.E;
  std::printf("M=%lld D=%lld H=%lld E=%lld\n", (long long)M, (long long)D, (long long)H, (long long)E);
  std::vector<uint16_t> x = mlp::gridBF16(M * D), w1 = mlp::gridBF16(D * H), b1 = mlp::gridBF16(H, true),
                        w2 = mlp::gridBF16(H * E), b2 = mlp::gridBF16(E, true);
  exec::DeviceArray<uint16_t> dx(x), dw1(w1), db1(b1), dw2(w2), db2(b2), dout(std::vector<uint16_t>(M * E, 0x7FC1));
  exec::DeviceArray<float> df(std::vector<float>(M * E, std::nanf("")));
  auto X = dx.view(TESSERA_BF16, {M, D}), W1 = dw1.view(TESSERA_BF16, {D, H}), W2 = dw2.view(TESSERA_BF16, {H, E});
  auto launch = [&] {
    exec::check(mlp_hopper::fused_mlp(X, W1, db1.view(TESSERA_BF16, {H}), W2, db2.view(TESSERA_BF16, {E}),
                                      dout.view(TESSERA_BF16, {M, E})),
                "fused_mlp");
    exec::check(mlp_hopper::chain_f32(X, W1, W2, df.view(TESSERA_F32, {M, E})), "chain_f32");
    exec::check(tessera_synchronize(), "synchronize");
  };
  launch();
  std::vector<uint16_t> got16 = dout.read();
  std::vector<float> got32 = df.read();
  bool ok = checkEither(reference(s, x, w1, &b1, w2, &b2, true, true), widen(got16), "fused_mlp");
  ok &= checkEither(reference(s, x, w1, nullptr, w2, nullptr, false, false), got32, "chain_f32");
  launch();
  ok &= exec::allEqual(dout.read(), got16, "fused_mlp (second launch)");
  ok &= exec::allEqual(df.read(), got32, "chain_f32 (second launch)");
  return ok;
}

// Issue 15's shapes on the GPU: the reference is the portable dense kernels (Hid rounded to bf16
// as the chain form does, f32 out). The first product is exact (MlpReference.h), so both have the
// same Hid; bound: two f32 summation orders of the second product (2 x 2 H 2^-24 S, S = sum_h
// |Hid_h W2_he| + |b2_e| from the dense kernel on |W2|, |b2|, itself within 1% of it) and the
// output's rounding (half a bf16 ulp).
bool runBar(const Shape& s) {
  const int64_t M = s.M, D = s.D, H = s.H, E = s.E;
  std::printf("bar M=%lld D=%lld H=%lld E=%lld\n", (long long)M, (long long)D, (long long)H, (long long)E);
  std::vector<uint16_t> x = mlp::gridBF16(M * D), w1 = mlp::gridBF16(D * H), b1 = mlp::gridBF16(H, true),
                        w2 = mlp::gridBF16(H * E), b2 = mlp::gridBF16(E, true);
  std::vector<uint16_t> w2abs(w2), b2abs(b2);
  for (auto& v : w2abs) v &= 0x7FFF;  // |W2|
  for (auto& v : b2abs) v &= 0x7FFF;
  exec::DeviceArray<uint16_t> dx(x), dw1(w1), db1(b1), dw2(w2), db2(b2), dw2a(w2abs), db2a(b2abs);
  exec::DeviceArray<uint16_t> dout(std::vector<uint16_t>(M * E, 0x7FC1)), dhid(std::vector<uint16_t>(M * H, 0x7FC1));
  exec::DeviceArray<float> dref(std::vector<float>(M * E, 0)), dmag(std::vector<float>(M * E, 0));
  auto X = dx.view(TESSERA_BF16, {M, D}), W1 = dw1.view(TESSERA_BF16, {D, H}), B1 = db1.view(TESSERA_BF16, {H});
  auto Hid = dhid.view(TESSERA_BF16, {M, H});
  exec::check(mlp_hopper::dense_relu(X, W1, B1, Hid), "dense_relu");
  exec::check(mlp_hopper::dense(Hid, dw2.view(TESSERA_BF16, {H, E}), db2.view(TESSERA_BF16, {E}),
                                dref.view(TESSERA_F32, {M, E})),
              "dense");
  exec::check(mlp_hopper::dense(Hid, dw2a.view(TESSERA_BF16, {H, E}), db2a.view(TESSERA_BF16, {E}),
                                dmag.view(TESSERA_F32, {M, E})),
              "dense |W2|");
  auto launch = [&] {
    exec::check(mlp_hopper::fused_mlp(X, W1, B1, dw2.view(TESSERA_BF16, {H, E}), db2.view(TESSERA_BF16, {E}),
                                      dout.view(TESSERA_BF16, {M, E})),
                "fused_mlp");
    exec::check(tessera_synchronize(), "synchronize");
    return dout.read();
  };
  std::vector<uint16_t> got = launch();
  std::vector<float> ref = dref.read(), mag = dmag.read();
  std::vector<double> bound(M * E);
  for (int64_t i = 0; i < M * E; ++i) {
    double order = 4.0 * H * std::ldexp(mag[i], -24) * 1.01;
    bound[i] = order + 0.5 * mlp::ulpBF16(std::fabs(ref[i]) + order) * 1.01;
  }
  bool ok = exec::allWithin(widen(got), ref, bound, "fused_mlp (bar)");
  ok &= exec::allEqual(launch(), got, "fused_mlp (bar, second launch)");
  return ok;
}

}  // namespace

int main(int argc, char** argv) {
  exec::requireDevice();
  bool ok = true;
  // Sizes that take the chain form on an sm_90 GPU (rows of 16-byte multiples, partial tiles at
  // every edge), then odd ones that cannot (the portable path), then random ones.
  std::vector<Shape> shapes = {{200, 72, 264, 40}, {130, 136, 8, 264}, {1, 8, 16, 8}, {77, 33, 45, 19}};
  std::uniform_int_distribution<int64_t> rows(1, 300), dims(1, 96);
  shapes.push_back({rows(exec::rng()), dims(exec::rng()), dims(exec::rng()), dims(exec::rng())});
  shapes.push_back({rows(exec::rng()), 8 * dims(exec::rng()), 8 * dims(exec::rng()), 8 * dims(exec::rng())});
  for (const Shape& s : shapes) ok &= runShape(s);
  if (argc > 1 && std::strcmp(argv[1], "bar") == 0)
    for (const Shape& s : {Shape{8192, 1024, 1024, 1024}, Shape{8192, 4096, 16384, 4096}}) ok &= runBar(s);
  return exec::finish(ok);
}
