// @autodiff host functions (kernels/host_autodiff.tessera): the backward entry point's gradients
// against central finite differences of the forward entry point, in f64 on the CPU executor.
// For a random cotangent D of the result, the backward function returns the gradient of
// <D, f(x)> for every input element; the finite difference of that element is
//   (<D, f(x + h e_i)> - <D, f(x - h e_i)>) / 2h,   h = 2^-20 max(1, |x_i|).
// Its error is the truncation h^2/6 |f'''| plus the rounding of the two sums, about
// 2^-52 sum |D f| / h; the bound below, 1e-6 (1 + |gradient|) + 2^-52 sum|D f| / h, is two to
// three orders above both on these inputs and far below the error of any wrong adjoint rule (a
// dropped or doubled term is of the size of the gradient itself). Fresh random inputs at odd
// sizes; a second backward call gives the same bits. tessera.grad(loss_fn) is checked the same
// way against central differences of the loss (checkGrad).
#include "host_autodiff.h"

#include <cmath>
#include <functional>
#include <memory>

#include "ExecTest.h"

extern "C" unsigned long tessera_test_capture_count();  // LaunchCounter.cpp

namespace {

int failures = 0;

struct Input {
  std::vector<int64_t> shape;
  std::vector<double> values;
};

std::vector<double> randomDoubles(size_t n, double lo, double hi) {
  std::uniform_real_distribution<double> d(lo, hi);
  std::vector<double> v(n);
  for (double& x : v) x = d(exec::rng());
  return v;
}

size_t numel(const std::vector<int64_t>& s) {
  size_t n = 1;
  for (int64_t e : s) n *= static_cast<size_t>(e);
  return n;
}

// Calls an entry point with host copies of the inputs; returns its results' elements.
using Entry = std::function<tessera_status(const std::vector<tessera_tensor>&, std::vector<tessera_tensor>&)>;

std::vector<std::vector<double>> call(const Entry& entry, const std::vector<Input>& inputs, size_t results) {
  std::vector<std::unique_ptr<exec::DeviceArray<double>>> arrays;
  std::vector<tessera_tensor> views;
  for (const Input& in : inputs) {
    arrays.push_back(std::make_unique<exec::DeviceArray<double>>(in.values));
    views.push_back(arrays.back()->view(TESSERA_F64, in.shape));
  }
  std::vector<tessera_tensor> outs(results);
  exec::check(entry(views, outs), "entry point");
  std::vector<std::vector<double>> values;
  for (tessera_tensor& t : outs) {
    std::vector<double> v(tessera_tensor_numel(&t));
    exec::check(tessera_memcpy(v.data(), t.data, v.size() * sizeof(double)), "read result");
    exec::check(tessera_free(t.data), "free result");
    values.push_back(std::move(v));
  }
  return values;
}

// Checks every gradient element of every input by central differences.
void check(const char* name, const Entry& forward, const Entry& backward, std::vector<Input> inputs,
           const std::vector<int64_t>& outShape) {
  std::printf("%s\n", name);
  std::vector<double> dy = randomDoubles(numel(outShape), -1, 1);
  std::vector<Input> withCotangent = inputs;
  withCotangent.push_back({outShape, dy});
  std::vector<std::vector<double>> grads = call(backward, withCotangent, inputs.size());
  std::vector<std::vector<double>> again = call(backward, withCotangent, inputs.size());
  for (size_t p = 0; p < grads.size(); ++p)
    for (size_t i = 0; i < grads[p].size(); ++i)
      if (!exec::sameResultBits(grads[p][i], again[p][i]) && ++failures <= 10)
        std::printf("FAIL: %s: gradient %zu[%zu] differs between two calls\n", name, p, i);
  auto objective = [&](const std::vector<Input>& x, double& magnitude) {
    std::vector<double> f = call(forward, x, 1)[0];
    double s = 0;
    magnitude = 0;
    for (size_t i = 0; i < f.size(); ++i) s += dy[i] * f[i], magnitude += std::fabs(dy[i] * f[i]);
    return s;
  };
  double worst = 0, worstRatio = 0;
  for (size_t p = 0; p < inputs.size(); ++p) {
    if (grads[p].size() != inputs[p].values.size()) {
      std::printf("FAIL: %s: gradient %zu has %zu elements, its input %zu\n", name, p, grads[p].size(),
                  inputs[p].values.size());
      ++failures;
      continue;
    }
    for (size_t i = 0; i < inputs[p].values.size(); ++i) {
      double x = inputs[p].values[i], h = std::ldexp(std::max(1.0, std::fabs(x)), -20), mp, mm;
      std::vector<Input> plus = inputs, minus = inputs;
      plus[p].values[i] = x + h;
      minus[p].values[i] = x - h;
      double fd = (objective(plus, mp) - objective(minus, mm)) / (2 * h);
      double bound = 1e-6 * (1 + std::fabs(grads[p][i])) + std::ldexp(mp + mm, -52) / h;
      worst = std::max(worst, std::fabs(fd - grads[p][i]));
      worstRatio = std::max(worstRatio, std::fabs(fd - grads[p][i]) / bound);
      if (std::fabs(fd - grads[p][i]) > bound && ++failures <= 20)
        std::printf("FAIL: %s: d/d input %zu [%zu] = %.12g, finite difference %.12g, bound %.3g\n", name, p, i,
                    grads[p][i], fd, bound);
    }
  }
  std::printf("  largest |finite difference - gradient| %.3g (%.3g of its bound)\n", worst, worstRatio);
}

// tessera.grad: the gradient entry point's result against central differences of the loss entry
// point (a rank-0 loss, returned as one element) for every element of the first input, with the
// bound of check() (the loss's magnitude in place of sum |D f|).
void checkGrad(const char* name, const Entry& loss, const Entry& grad, std::vector<Input> inputs) {
  std::printf("%s\n", name);
  std::vector<double> g = call(grad, inputs, 1)[0], again = call(grad, inputs, 1)[0];
  for (size_t i = 0; i < g.size(); ++i)
    if (!exec::sameResultBits(g[i], again[i]) && ++failures <= 10)
      std::printf("FAIL: %s: gradient [%zu] differs between two calls\n", name, i);
  if (g.size() != inputs[0].values.size()) {
    std::printf("FAIL: %s: the gradient has %zu elements, the input %zu\n", name, g.size(), inputs[0].values.size());
    ++failures;
    return;
  }
  double worst = 0, worstRatio = 0;
  for (size_t i = 0; i < g.size(); ++i) {
    double x = inputs[0].values[i], h = std::ldexp(std::max(1.0, std::fabs(x)), -20);
    std::vector<Input> plus = inputs, minus = inputs;
    plus[0].values[i] = x + h;
    minus[0].values[i] = x - h;
    double lp = call(loss, plus, 1)[0].at(0), lm = call(loss, minus, 1)[0].at(0);
    double fd = (lp - lm) / (2 * h);
    double bound = 1e-6 * (1 + std::fabs(g[i])) + std::ldexp(std::fabs(lp) + std::fabs(lm), -52) / h;
    worst = std::max(worst, std::fabs(fd - g[i]));
    worstRatio = std::max(worstRatio, std::fabs(fd - g[i]) / bound);
    if (std::fabs(fd - g[i]) > bound && ++failures <= 20)
      std::printf("FAIL: %s: d/d W[%zu] = %.12g, finite difference %.12g, bound %.3g\n", name, i, g[i], fd, bound);
  }
  std::printf("  largest |finite difference - gradient| %.3g (%.3g of its bound)\n", worst, worstRatio);
}

Input input(std::vector<int64_t> shape, double lo = -1, double hi = 1) {
  return {shape, randomDoubles(numel(shape), lo, hi)};
}

}  // namespace

int main() {
  exec::requireDevice();
  {
    int64_t S = 5, D = 3, T = 7, E = 4;
    check(
        "attention",
        [](auto& in, auto& out) { return host_autodiff_attention(nullptr, &in[0], &in[1], &in[2], &out[0]); },
        [](auto& in, auto& out) {
          return host_autodiff_attention_backward(nullptr, &in[0], &in[1], &in[2], &in[3], &out[0], &out[1], &out[2]);
        },
        {input({S, D}, -2, 2), input({T, D}, -2, 2), input({T, E})}, {S, E});
  }
  {
    int64_t M = 37, K = 5, N = 6;  // rows in two blocks of the weight gradient's partial sums (32 and 5)
    check(
        "norm_layer",
        [](auto& in, auto& out) { return host_autodiff_norm_layer(nullptr, &in[0], &in[1], &in[2], &in[3], &out[0]); },
        [](auto& in, auto& out) {
          return host_autodiff_norm_layer_backward(nullptr, &in[0], &in[1], &in[2], &in[3], &in[4], &out[0], &out[1],
                                                   &out[2], &out[3]);
        },
        {input({M, K}), input({K, N}), input({N}), input({N}, 0.5, 1.5)}, {M, N});
  }
  {
    int64_t R = 3, C = 7;
    check(
        "logits", [](auto& in, auto& out) { return host_autodiff_logits(nullptr, &in[0], &in[1], &out[0]); },
        [](auto& in, auto& out) {
          return host_autodiff_logits_backward(nullptr, &in[0], &in[1], &in[2], &out[0], &out[1]);
        },
        {input({R, C}), input({C, C})}, {R, C});
  }
  {
    int64_t B = 5, D = 4, E = 3;
    checkGrad(
        "grad(loss_fn)",
        [](auto& in, auto& out) { return host_autodiff_step_loss(nullptr, &in[0], &in[1], &in[2], &out[0]); },
        [](auto& in, auto& out) { return host_autodiff_grad_step(nullptr, &in[0], &in[1], &in[2], &out[0]); },
        {input({D, E}), input({B, D}), input({B, E})});
    checkGrad(
        "grad(loss_rows)",
        [](auto& in, auto& out) { return host_autodiff_rows_loss(nullptr, &in[0], &in[1], &out[0]); },
        [](auto& in, auto& out) { return host_autodiff_grad_rows(nullptr, &in[0], &in[1], &out[0]); },
        {input({D, E}), input({B, D})});
  }
  {
    // train_step (capture_graph=True): W -= 0.125 tessera.grad(loss_fn)(W, ...) in place. The
    // product by a power of two is exact, so W's new elements are W - 0.125 g rounded once: the
    // same bits as computed here from grad_step's g.
    std::printf("train_step\n");
    int64_t B = 6, D = 5, E = 3;
    Input w = input({D, E}), x = input({B, D}), t = input({B, E});
    std::vector<double> g =
        call([](auto& in, auto& out) { return host_autodiff_grad_step(nullptr, &in[0], &in[1], &in[2], &out[0]); },
             {w, x, t}, 1)[0];
    exec::DeviceArray<double> dw(w.values), dx(x.values), dt(t.values);
    tessera_tensor W = dw.view(TESSERA_F64, w.shape), X = dx.view(TESSERA_F64, x.shape),
                   T = dt.view(TESSERA_F64, t.shape);
    exec::check(host_autodiff_train_step(nullptr, &W, &X, &T), "train_step");
    std::vector<double> w1 = dw.read();
    for (size_t i = 0; i < w1.size(); ++i)
      if (!exec::sameResultBits(w1[i], w.values[i] - 0.125 * g[i]) && ++failures <= 10)
        std::printf("FAIL: train_step W[%zu] = %.17g, want %.17g\n", i, w1[i], w.values[i] - 0.125 * g[i]);
    // On a stream the entry point captures its launches and replays them as a graph: the first
    // call makes it, later calls update it with their arguments (another W each call, then the
    // same W again) and replay it. Each call's W checked as above.
    tessera_stream stream = nullptr;
    exec::check(tessera_stream_create(&stream), "stream");
    tessera_launch_options opts{};
    opts.stream = stream;
    std::vector<std::unique_ptr<exec::DeviceArray<double>>> buffers;
    Input wc = w;
    for (int c = 0; c < 4; ++c) {
      if (c < 3) {
        wc = input({D, E});
        buffers.push_back(std::make_unique<exec::DeviceArray<double>>(wc.values));
      }  // else the third call's tensor again, holding its result: a second step in place
      std::vector<double> gc =
          call([](auto& in, auto& out) { return host_autodiff_grad_step(nullptr, &in[0], &in[1], &in[2], &out[0]); },
               {wc, x, t}, 1)[0];
      tessera_tensor Wc = buffers.back()->view(TESSERA_F64, w.shape);
      exec::check(host_autodiff_train_step(&opts, &Wc, &X, &T), "train_step (captured)");
      exec::check(tessera_stream_synchronize(stream), "synchronize");
      std::vector<double> got = buffers.back()->read();
      for (size_t i = 0; i < got.size(); ++i)
        if (!exec::sameResultBits(got[i], wc.values[i] - 0.125 * gc[i]) && ++failures <= 10)
          std::printf("FAIL: captured train_step call %d W[%zu] = %.17g, want %.17g\n", c, i, got[i],
                      wc.values[i] - 0.125 * gc[i]);
      wc.values = got;
    }
    exec::check(tessera_stream_destroy(stream), "destroy stream");
  }
  {
    // accumulate (capture_graph=True; with the rewrites it allocates nothing: Y is computed in
    // place): Y += 2 X, five calls on a stream, on Y1, Y1, Y1, Y2, Y1. A call with the arguments
    // of the cached graph launches it without capturing: the second and third calls capture
    // nothing; Y2's call captures (other arguments), and so does Y1's after it (the cache holds
    // Y2's graph now). Each Y checked after every call: 2 X is exact, so Y + 2 X rounds once.
    std::printf("accumulate (capture_graph)\n");
    const int64_t N = 1001;
    Input y1 = input({N}), y2 = input({N}), x = input({N});
    exec::DeviceArray<double> d1(y1.values), d2(y2.values), dx(x.values);
    tessera_tensor Y1 = d1.view(TESSERA_F64, {N}), Y2 = d2.view(TESSERA_F64, {N}), X = dx.view(TESSERA_F64, {N});
    tessera_stream stream = nullptr;
    exec::check(tessera_stream_create(&stream), "stream");
    tessera_launch_options opts{};
    opts.stream = stream;
    const int order[5] = {1, 1, 1, 2, 1};
    std::vector<unsigned long> captured;
    for (int c = 0; c < 5; ++c) {
      Input& want = order[c] == 1 ? y1 : y2;
      unsigned long before = tessera_test_capture_count();
      exec::check(host_autodiff_accumulate(&opts, order[c] == 1 ? &Y1 : &Y2, &X), "accumulate");
      exec::check(tessera_stream_synchronize(stream), "synchronize");
      captured.push_back(tessera_test_capture_count() - before);
      for (size_t i = 0; i < want.values.size(); ++i) want.values[i] = want.values[i] + 2.0 * x.values[i];
      std::vector<double> got = (order[c] == 1 ? d1 : d2).read();
      for (size_t i = 0; i < got.size(); ++i)
        if (!exec::sameResultBits(got[i], want.values[i]) && ++failures <= 10)
          std::printf("FAIL: accumulate call %d Y[%zu] = %.17g, want %.17g\n", c, i, got[i], want.values[i]);
    }
    std::printf("  captures per call: %lu %lu %lu %lu %lu\n", captured[0], captured[1], captured[2], captured[3],
                captured[4]);
#ifndef HOST_GRAPH_PASSES_OFF  // without plan-memory the call allocates temporaries, whose addresses may differ
    const unsigned long want[5] = {1, 0, 0, 1, 1};
    for (int c = 0; c < 5; ++c)
      if (captured[c] != want[c] && ++failures <= 10)
        std::printf("FAIL: accumulate call %d captured %lu time(s), want %lu\n", c, captured[c], want[c]);
#endif
    exec::check(tessera_stream_destroy(stream), "destroy stream");
  }
  if (failures) {
    std::printf("%d failure(s)\n", failures);
    return 1;
  }
  std::printf("PASS\n");
  return 0;
}
