// examples/saxpy: y = alpha*x + y, one tile per element; checks every element bit for bit
// (no implicit fused multiply-add on either target), and that bad launches are refused with a
// message naming kernel, parameter and problem while leaving y untouched.
#include "saxpy.h"

#include "ExecTest.h"

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
    std::printf("host pointer: %s: %s -> %s\n", tessera_status_name(s), msg.c_str(),
                refused ? "refused" : "NOT REFUSED");
    ok &= refused;
  }
  ok &= exec::allEqual(dy.read(), want, "y after refused launches");

  // In place (x is y): refused, since compiled code assumes a mut tensor aliases no other
  // tensor parameter.
  {
    tessera_status s = saxpy::saxpy(ty, ty, alpha);
    std::string msg = tessera_last_error_message();
    bool refused =
        s == TESSERA_ERROR_ALIASED_MUT && msg.find("mut parameter 'y' overlaps parameter 'x'") != std::string::npos;
    std::printf("x aliases y: %s: %s -> %s\n", tessera_status_name(s), msg.c_str(),
                refused ? "refused" : "NOT REFUSED");
    ok &= refused;
    ok &= exec::allEqual(dy.read(), want, "y after the refused in-place launch");
  }

  // Views the GPU's 16-byte vector form cannot take (it runs the scalar form): one element past
  // alignment, and every second element.
  if (n >= 4) {
    std::vector<float> x2 = exec::randomFloats(n), y2 = exec::randomFloats(n);
    exec::DeviceArray<float> dx2(x2), dy2(y2);
    std::vector<float> want2 = y2;
    int64_t m = n - 1, h = n / 2;
    for (int64_t i = 0; i < m; ++i) want2[i + 1] = alpha * x2[i + 1] + y2[i + 1];
    tessera_tensor ox = dx2.view(TESSERA_F32, {m}), oy = dy2.view(TESSERA_F32, {m});
    ox.data = static_cast<float*>(ox.data) + 1;
    oy.data = static_cast<float*>(oy.data) + 1;
    exec::check(saxpy::saxpy(ox, oy, alpha), "saxpy on offset views");
    exec::check(tessera_synchronize(), "synchronize");
    ok &= exec::allEqual(dy2.read(), want2, "y (views offset by one element)");
    for (int64_t i = 0; i < h; ++i) want2[2 * i] = alpha * x2[2 * i] + want2[2 * i];
    tessera_tensor sx = dx2.view(TESSERA_F32, {h}), sy = dy2.view(TESSERA_F32, {h});
    sx.strides[0] = sy.strides[0] = 2;
    exec::check(saxpy::saxpy(sx, sy, alpha), "saxpy on strided views");
    exec::check(tessera_synchronize(), "synchronize");
    ok &= exec::allEqual(dy2.read(), want2, "y (every second element)");
  }
  return exec::finish(ok);
}
