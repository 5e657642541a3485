// kernels/activations: each elementwise tile op on fresh random inputs in [-10, 10] (and 0, -0,
// +-20, +-100) at odd sizes, every element against a double-precision reference.
// Bounds: f32 results may differ from the exact value by the device's exp/tanh (libm, libdevice:
// a few ulps) and the rounding of the few f32 operations around them; 8 ulps of the result plus
// 8 ulps of 0.5 |x| (gelu's 0.5 x (1 + tanh) cancels for negative x) covers both. f16 results
// add half an f16 ulp for the rounding on the store. relu is exact in both.
#include "activations.h"

#include <cmath>
#include <functional>
#include <iterator>
#include <string>

#include "ExecTest.h"

namespace {

using Kernel = tessera_status (*)(const tessera_tensor&, const tessera_tensor&, const tessera_launch_options*);

struct Activation {
  const char* name;
  double (*reference)(double);
  Kernel f32, f16;
  bool exact;
};

double relu(double x) { return x > 0 ? x : 0.0; }
double gelu(double x) { return 0.5 * x * (1 + std::tanh(0.7978845608028654 * (x + 0.044715 * x * x * x))); }
double sigmoid(double x) { return 1 / (1 + std::exp(-x)); }
double silu(double x) { return x / (1 + std::exp(-x)); }

const Activation kActivations[] = {
    {"relu", relu, activations::relu_f32, activations::relu_f16, true},
    {"gelu", gelu, activations::gelu_f32, activations::gelu_f16, false},
    {"sigmoid", sigmoid, activations::sigmoid_f32, activations::sigmoid_f16, false},
    {"silu", silu, activations::silu_f32, activations::silu_f16, false},
};

double f32Bound(double want, double x) { return std::ldexp(std::fabs(want) + 0.5 * std::fabs(x), -20); }

bool run(const Activation& a, int64_t N, int64_t K) {
  std::vector<float> x = exec::randomFloats(N * K, -10.0f, 10.0f);
  const float specials[] = {0.0f, -0.0f, 20.0f, -20.0f, 100.0f, -100.0f};
  for (size_t i = 0; i < std::size(specials) && i < x.size(); ++i) x[i] = specials[i];
  std::string what = std::string(a.name) + " f32";
  std::vector<float> want(x.size()), y(x.size(), 0.0f);
  std::vector<double> bound(x.size());
  for (size_t i = 0; i < x.size(); ++i) {
    want[i] = static_cast<float>(a.reference(x[i]));
    bound[i] = a.exact ? 0.0 : f32Bound(want[i], x[i]);
  }
  exec::DeviceArray<float> dx(x), dy(y);
  exec::check(a.f32(dx.view(TESSERA_F32, {N, K}), dy.view(TESSERA_F32, {N, K}), nullptr), what.c_str());
  exec::check(tessera_synchronize(), "synchronize");
  bool ok = exec::allWithin(dy.read(), want, bound, what.c_str());

  // f16: the input rounded to f16, the result computed in f32 and rounded once.
  std::vector<uint16_t> hx(x.size()), hy(x.size(), 0);
  std::vector<float> xr(x.size());
  for (size_t i = 0; i < x.size(); ++i) {
    hx[i] = exec::toHalf(x[i]);
    xr[i] = exec::fromHalf(hx[i]);
    double w = a.reference(xr[i]);
    want[i] = static_cast<float>(w);
    bound[i] = a.exact ? 0.0 : f32Bound(w, xr[i]) + std::ldexp(std::fabs(w), -11) + std::ldexp(1.0, -25);
  }
  what = std::string(a.name) + " f16";
  exec::DeviceArray<uint16_t> dhx(hx), dhy(hy);
  exec::check(a.f16(dhx.view(TESSERA_F16, {N, K}), dhy.view(TESSERA_F16, {N, K}), nullptr), what.c_str());
  exec::check(tessera_synchronize(), "synchronize");
  std::vector<uint16_t> got = dhy.read();
  std::vector<float> gotf(got.size());
  for (size_t i = 0; i < got.size(); ++i) gotf[i] = exec::fromHalf(got[i]);
  if (a.exact)
    for (size_t i = 0; i < want.size(); ++i) want[i] = exec::fromHalf(exec::toHalf(want[i]));
  ok &= exec::allWithin(gotf, want, bound, what.c_str());
  return ok;
}

}  // namespace

int main() {
  exec::requireDevice();
  std::uniform_int_distribution<int64_t> size(1, 70);
  int64_t N = size(exec::rng()), K = size(exec::rng());
  std::printf("N=%lld K=%lld\n", (long long)N, (long long)K);
  bool ok = true;
  for (const Activation& a : kActivations) ok &= run(a, N, K);
  return exec::finish(ok);
}
