// kernels/unannotated: kernels whose parameters are not annotated, typed by sema (issue 11:
// sema/ExtentInference.cpp), at odd sizes (the last block of rows partial), checked element by
// element against a CPU reference. tile.dot and tile.sum add in index order with a rounding per
// step (docs/tile-ir.md), as the reference does, so every result is exact.
#include "unannotated.h"

#include "ExecTest.h"

int main() {
  exec::requireDevice();
  std::uniform_int_distribution<int64_t> size(1, 70);
  int64_t M = size(exec::rng()), K = size(exec::rng()), N = size(exec::rng());
  std::printf("M=%lld K=%lld N=%lld\n", (long long)M, (long long)K, (long long)N);
  bool ok = true;

  {  // Out = relu(X @ W + b)
    std::vector<float> x = exec::randomFloats(M * K), w = exec::randomFloats(K * N), b = exec::randomFloats(N);
    std::vector<float> want(M * N);
    for (int64_t i = 0; i < M; ++i)
      for (int64_t j = 0; j < N; ++j) {
        float acc = 0.0f;
        for (int64_t k = 0; k < K; ++k) acc = acc + x[i * K + k] * w[k * N + j];
        float v = acc + b[j];
        want[i * N + j] = v > 0.0f ? v : 0.0f;
      }
    exec::DeviceArray<float> dx(x), dw(w), db(b), dout(std::vector<float>(M * N, -9.0f));
    exec::check(unannotated::dense_relu(dx.view(TESSERA_F32, {M, K}), dw.view(TESSERA_F32, {K, N}),
                                        db.view(TESSERA_F32, {N}), dout.view(TESSERA_F32, {M, N})),
                "dense_relu");
    exec::check(tessera_synchronize(), "synchronize");
    ok &= exec::allEqual(dout.read(), want, "relu(X @ W + b)");
  }
  {  // Out = where(X > 0, X, X + b), by explicit tiles of 16 rows
    std::vector<float> x = exec::randomFloats(M * N), b = exec::randomFloats(N), want(M * N);
    for (int64_t i = 0; i < M; ++i)
      for (int64_t j = 0; j < N; ++j) {
        float v = x[i * N + j];
        want[i * N + j] = v > 0.0f ? v : v + b[j];
      }
    exec::DeviceArray<float> dx(x), db(b), dout(std::vector<float>(M * N, -9.0f));
    exec::check(unannotated::where_bias(dx.view(TESSERA_F32, {M, N}), db.view(TESSERA_F32, {N}),
                                        dout.view(TESSERA_F32, {M, N})),
                "where_bias");
    exec::check(tessera_synchronize(), "synchronize");
    ok &= exec::allEqual(dout.read(), want, "where(X > 0, X, X + b)");
  }
  {  // out[i] = sum of row i of X
    std::vector<float> x = exec::randomFloats(M * N), want(M);
    for (int64_t i = 0; i < M; ++i) {
      float acc = 0.0f;
      for (int64_t j = 0; j < N; ++j) acc = acc + x[i * N + j];
      want[i] = acc;
    }
    exec::DeviceArray<float> dx(x), dout(std::vector<float>(M, -9.0f));
    exec::check(unannotated::row_sums(dx.view(TESSERA_F32, {M, N}), dout.view(TESSERA_F32, {M})), "row_sums");
    exec::check(tessera_synchronize(), "synchronize");
    ok &= exec::allEqual(dout.read(), want, "row sums");
  }
  {  // Out = X + Y with Y a bias of X's columns, named by X's annotation
    std::vector<float> x = exec::randomFloats(M * N), y = exec::randomFloats(N), want(M * N);
    for (int64_t i = 0; i < M; ++i)
      for (int64_t j = 0; j < N; ++j) want[i * N + j] = x[i * N + j] + y[j];
    exec::DeviceArray<float> dx(x), dy(y), dout(std::vector<float>(M * N, -9.0f));
    exec::check(
        unannotated::add_named(dx.view(TESSERA_F32, {M, N}), dy.view(TESSERA_F32, {N}), dout.view(TESSERA_F32, {M, N})),
        "add_named");
    exec::check(tessera_synchronize(), "synchronize");
    ok &= exec::allEqual(dout.read(), want, "X + Y");
    // The launch checks the extents sema named: a bias of the wrong length is refused.
    exec::DeviceArray<float> short_y(exec::randomFloats(N + 1));
    tessera_status s = unannotated::add_named(dx.view(TESSERA_F32, {M, N}), short_y.view(TESSERA_F32, {N + 1}),
                                              dout.view(TESSERA_F32, {M, N}));
    std::printf("bias of %lld elements for N=%lld: %s\n", (long long)(N + 1), (long long)N, tessera_status_name(s));
    ok &= s != TESSERA_SUCCESS;
  }
  return exec::finish(ok);
}
