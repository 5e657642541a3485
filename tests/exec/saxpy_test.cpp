// examples/saxpy: y = alpha*x + y, one tile per element; checks every element bit for bit
// (no implicit fused multiply-add on either target), and that bad launches are refused with a
// message naming kernel, parameter and problem while leaving y untouched.
#include "ExecTest.h"
#include "saxpy.h"

int main() {
  exec::requireDevice();
  std::uniform_int_distribution<int64_t> size(1, 300000);
  int64_t n = size(exec::rng());
  std::vector<float> x = exec::randomFloats(n), y = exec::randomFloats(n);
  float alpha = exec::randomFloats(1, -4, 4)[0];
  std::vector<float> want(n);
  for (int64_t i = 0; i < n; ++i) want[i] = alpha * x[i] + y[i];
  exec::DeviceArray<float> dx(x), dy(y);
  tessera_tensor tx = dx.view(TESSERA_F32, {n}), ty = dy.view(TESSERA_F32, {n});
  exec::check(saxpy::saxpy(tx, ty, alpha), "saxpy");
  exec::check(tessera_synchronize(), "synchronize");
  bool ok = exec::allEqual(dy.read(), want, "y");

  // Refused launches: nothing runs, y keeps its values.
  struct Bad {
    const char* what;
    tessera_tensor x, y;
    const char* expect;
  };
  tessera_tensor shortY = dy.view(TESSERA_F32, {n > 1 ? n - 1 : 2});
  tessera_tensor halfY = dy.view(TESSERA_F16, {n});
  tessera_tensor nullX = tx;
  nullX.data = nullptr;
  tessera_tensor rank2 = dy.view(TESSERA_F32, {1, n});
  Bad bad[] = {
      {"symbol mismatch", tx, shortY, "parameter 'y'"},
      {"wrong dtype", tx, halfY, "parameter 'y'"},
      {"null pointer", nullX, ty, "parameter 'x'"},
      {"wrong rank", tx, rank2, "parameter 'y'"},
  };
  for (const Bad& b : bad) {
    tessera_status s = saxpy::saxpy(b.x, b.y, alpha);
    std::string msg = tessera_last_error_message();
    bool refused = s != TESSERA_SUCCESS && msg.find("kernel 'saxpy'") != std::string::npos &&
                   msg.find(b.expect) != std::string::npos;
    std::printf("%s: %s: %s -> %s\n", b.what, tessera_status_name(s), msg.c_str(), refused ? "refused" : "NOT REFUSED");
    ok &= refused;
  }
  // On the GPU a host pointer is refused before anything runs.
  tessera_device_kind kind;
  exec::check(tessera_get_device_kind(&kind), "device kind");
  if (kind == TESSERA_DEVICE_GPU) {
    tessera_tensor hostX;
    tessera_tensor_init(&hostX, x.data(), TESSERA_F32, 1, &n, 0);
    tessera_status s = saxpy::saxpy(hostX, ty, alpha);
    std::string msg = tessera_last_error_message();
    bool refused = s == TESSERA_ERROR_HOST_POINTER && msg.find("parameter 'x'") != std::string::npos;
    std::printf("host pointer: %s: %s -> %s\n", tessera_status_name(s), msg.c_str(), refused ? "refused" : "NOT REFUSED");
    ok &= refused;
  }
  ok &= exec::allEqual(dy.read(), want, "y after refused launches");
  return exec::finish(ok);
}
