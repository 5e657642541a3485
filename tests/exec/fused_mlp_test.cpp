// examples/fused_mlp: Out = relu(X @ W1 + b1) @ W2 + b2 as one whole-tensor tile program; the
// compiler splits the rows of Out across groups. bf16 storage, f32 arithmetic: every product is
// rounded and then added in k order and Hid stays f32, so the reference (the same steps in f32,
// one final round to bf16) matches bit for bit.
#include "ExecTest.h"
#include "fused_mlp.h"

int main() {
  exec::requireDevice();
  std::uniform_int_distribution<int64_t> rows(1, 300), dims(1, 96);
  int64_t M = rows(exec::rng()), D = dims(exec::rng()), H = dims(exec::rng()), E = dims(exec::rng());
  std::printf("M=%lld D=%lld H=%lld E=%lld\n", (long long)M, (long long)D, (long long)H, (long long)E);
  std::vector<uint16_t> x = exec::randomBF16(M * D), w1 = exec::randomBF16(D * H), b1 = exec::randomBF16(H), w2 = exec::randomBF16(H * E), b2 = exec::randomBF16(E);
  auto f = exec::fromBF16;
  std::vector<uint16_t> want(M * E);
  std::vector<float> hid(H);
  for (int64_t m = 0; m < M; ++m) {
    for (int64_t h = 0; h < H; ++h) {
      float acc = 0.0f;
      for (int64_t k = 0; k < D; ++k) {
        volatile float p = f(x[m * D + k]) * f(w1[k * H + h]);
        acc = acc + p;
      }
      float v = acc + f(b1[h]);
      hid[h] = v > 0.0f ? v : 0.0f;
    }
    for (int64_t e = 0; e < E; ++e) {
      float acc = 0.0f;
      for (int64_t h = 0; h < H; ++h) {
        volatile float p = hid[h] * f(w2[h * E + e]);
        acc = acc + p;
      }
      want[m * E + e] = exec::toBF16(acc + f(b2[e]));
    }
  }
  exec::DeviceArray<uint16_t> dx(x), dw1(w1), db1(b1), dw2(w2), db2(b2), dout(std::vector<uint16_t>(M * E, 0xFFFF));
  exec::check(fused_mlp::fused_mlp(dx.view(TESSERA_BF16, {M, D}), dw1.view(TESSERA_BF16, {D, H}),
                                   db1.view(TESSERA_BF16, {H}), dw2.view(TESSERA_BF16, {H, E}),
                                   db2.view(TESSERA_BF16, {E}), dout.view(TESSERA_BF16, {M, E})),
              "fused_mlp");
  exec::check(tessera_synchronize(), "synchronize");
  return exec::finish(exec::allEqual(dout.read(), want, "Out"));
}
