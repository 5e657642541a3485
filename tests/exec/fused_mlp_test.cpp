// examples/fused_mlp: Out = relu(X @ W1 + b1) @ W2 + b2 as one whole-tensor tile program; the
// compiler splits the rows of Out across groups. bf16 storage, f32 arithmetic. On the portable
// form every product is rounded and then added in k order and Hid stays f32, so the reference
// (the same steps in f32, one final round to bf16) matches bit for bit; on an sm_90 GPU with
// 16-byte rows the chain form runs (Hid rounded to bf16) and is checked within the bound of
// MlpReference.h (tests/exec/mlp_hopper_test.cpp covers it at more shapes).
#include "fused_mlp.h"

#include "ExecTest.h"
#include "MlpReference.h"

int main() {
  exec::requireDevice();
  std::uniform_int_distribution<int64_t> rows(1, 300), dims(1, 96);
  mlp::Shape s{rows(exec::rng()), dims(exec::rng()), dims(exec::rng()), dims(exec::rng())};
  const int64_t M = s.M, D = s.D, H = s.H, E = s.E;
  std::printf("M=%lld D=%lld H=%lld E=%lld\n", (long long)M, (long long)D, (long long)H, (long long)E);
  std::vector<uint16_t> x = mlp::gridBF16(M * D), w1 = mlp::gridBF16(D * H), b1 = mlp::gridBF16(H, true),
                        w2 = mlp::gridBF16(H * E), b2 = mlp::gridBF16(E, true);
  exec::DeviceArray<uint16_t> dx(x), dw1(w1), db1(b1), dw2(w2), db2(b2), dout(std::vector<uint16_t>(M * E, 0xFFFF));
  exec::check(fused_mlp::fused_mlp(dx.view(TESSERA_BF16, {M, D}), dw1.view(TESSERA_BF16, {D, H}),
                                   db1.view(TESSERA_BF16, {H}), dw2.view(TESSERA_BF16, {H, E}),
                                   db2.view(TESSERA_BF16, {E}), dout.view(TESSERA_BF16, {M, E})),
              "fused_mlp");
  exec::check(tessera_synchronize(), "synchronize");
  return exec::finish(
      mlp::checkEither(mlp::reference(s, x, w1, &b1, w2, &b2, true, true), mlp::widen(dout.read()), "Out"));
}
