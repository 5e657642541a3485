// Writes the gradients of grad_programs.tessera's host functions on fixed random inputs to files,
// for torch_grad_check.py to compare with PyTorch autograd in float64 on the same inputs
// (docs/performance.md, "Gradients against PyTorch autograd"). Usage: grad_dump DIR [--quick]
// (--quick: the wide block at S = 37 instead of 2048, for the CPU executor). DIR gets one raw
// little-endian file per tensor (bf16 as its 16 bits, f32 as floats) and manifest.json naming
// each case's program, inputs, cotangents and gradients. Every gradient is computed twice; the
// manifest records whether the two calls gave the same bits.
#include <cstdio>
#include <cstring>
#include <functional>
#include <random>
#include <string>
#include <vector>

#include "BenchUtil.h"
#include "grad_programs.h"

namespace {

uint16_t toBF16(float f) {
  uint32_t x;
  std::memcpy(&x, &f, 4);
  x += 0x7fffu + ((x >> 16) & 1u);
  return static_cast<uint16_t>(x >> 16);
}

// A tensor on the device with its name in the manifest.
struct Tensor {
  std::string name;
  tessera_dtype dtype = TESSERA_F32;
  std::vector<int64_t> shape;
  void* data = nullptr;
  tessera_tensor view() const {
    tessera_tensor t;
    tessera_tensor_init(&t, data, dtype, static_cast<int32_t>(shape.size()), shape.data(), 0);
    return t;
  }
  size_t bytes() const {
    size_t n = 1;
    for (int64_t e : shape) n *= static_cast<size_t>(e);
    return n * (dtype == TESSERA_BF16 ? 2 : 4);
  }
};

Tensor randomTensor(const std::string& name, tessera_dtype dtype, std::vector<int64_t> shape, float lo, float hi,
                    unsigned seed) {
  Tensor t{name, dtype, std::move(shape)};
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> d(lo, hi);
  std::vector<char> host(t.bytes());
  for (size_t i = 0; i < host.size() / (dtype == TESSERA_BF16 ? 2 : 4); ++i) {
    float v = d(rng);
    if (dtype == TESSERA_BF16) {
      uint16_t b = toBF16(v);
      std::memcpy(host.data() + 2 * i, &b, 2);
    } else {
      std::memcpy(host.data() + 4 * i, &v, 4);
    }
  }
  bench::check(tessera_malloc(&t.data, host.size()), "malloc");
  bench::check(tessera_memcpy(t.data, host.data(), host.size()), "copy in");
  return t;
}

std::vector<char> readBack(const Tensor& t) {
  std::vector<char> host(t.bytes());
  bench::check(tessera_synchronize(), "synchronize");
  bench::check(tessera_memcpy(host.data(), t.data, host.size()), "copy out");
  return host;
}

// A result of an entry point as a Tensor (the entry point allocated it; we free it).
Tensor fromResult(const std::string& name, const tessera_tensor& r) {
  Tensor t{name, static_cast<tessera_dtype>(r.dtype), {}, r.data};
  for (int32_t i = 0; i < r.rank; ++i) t.shape.push_back(r.shape[i]);
  return t;
}

class Dump {
 public:
  explicit Dump(std::string dir) : dir_(std::move(dir)) {}

  // One case: `run` computes the gradients into `out` (its results); it is called twice.
  void add(const std::string& name, const std::string& program, const std::vector<Tensor>& inputs,
           const std::vector<std::string>& gradNames, const std::function<void(std::vector<tessera_tensor>&)>& run) {
    std::vector<tessera_tensor> first(gradNames.size()), second(gradNames.size());
    run(first);
    run(second);
    bool same = true;
    std::string entry = "  {\"case\": \"" + name + "\", \"program\": \"" + program + "\", \"inputs\": [";
    for (size_t i = 0; i < inputs.size(); ++i) entry += (i ? ", " : "") + write(name, inputs[i]);
    entry += "], \"gradients\": [";
    for (size_t i = 0; i < gradNames.size(); ++i) {
      Tensor a = fromResult(gradNames[i], first[i]), b = fromResult(gradNames[i], second[i]);
      same = same && readBack(a) == readBack(b);
      entry += (i ? ", " : "") + write(name, a);
      tessera_free(a.data);
      tessera_free(b.data);
    }
    entry += std::string("], \"same_bits\": ") + (same ? "true" : "false") + "}";
    entries_.push_back(entry);
    std::printf("%-28s %zu gradients written, second call %s\n", name.c_str(), gradNames.size(),
                same ? "the same bits" : "DIFFERENT BITS");
  }

  void finish() {
    FILE* f = std::fopen((dir_ + "/manifest.json").c_str(), "w");
    if (!f) {
      std::printf("FAIL: cannot write %s/manifest.json\n", dir_.c_str());
      std::exit(1);
    }
    std::fprintf(f, "[\n");
    for (size_t i = 0; i < entries_.size(); ++i)
      std::fprintf(f, "%s%s\n", entries_[i].c_str(), i + 1 < entries_.size() ? "," : "");
    std::fprintf(f, "]\n");
    std::fclose(f);
  }

 private:
  // Writes t's elements to DIR/<case>.<name>.bin; returns its manifest entry.
  std::string write(const std::string& c, const Tensor& t) {
    std::string file = c + "." + t.name + ".bin";
    std::vector<char> host = readBack(t);
    FILE* f = std::fopen((dir_ + "/" + file).c_str(), "wb");
    if (!f || std::fwrite(host.data(), 1, host.size(), f) != host.size()) {
      std::printf("FAIL: cannot write %s\n", file.c_str());
      std::exit(1);
    }
    std::fclose(f);
    std::string shape;
    for (size_t i = 0; i < t.shape.size(); ++i) shape += (i ? ", " : "") + std::to_string(t.shape[i]);
    return "{\"name\": \"" + t.name + "\", \"dtype\": \"" + (t.dtype == TESSERA_BF16 ? "bf16" : "f32") +
           "\", \"shape\": [" + shape + "], \"file\": \"" + file + "\"}";
  }

  std::string dir_;
  std::vector<std::string> entries_;
};

using BlockBackward = tessera_status (*)(const tessera_launch_options*, const tessera_tensor*, const tessera_tensor*,
                                         const tessera_tensor*, const tessera_tensor*, tessera_tensor*, tessera_tensor*,
                                         tessera_tensor*);

// The transformer block's backward entry point at width E: x in [-2, 2], weights in
// [-w, w] (about 1.7 / sqrt(E): unit-scale products), the cotangent in [-1, 1].
void block(Dump& dump, const std::string& name, BlockBackward entry, tessera_dtype dt, int64_t S, int64_t E, float w,
           unsigned seed) {
  std::vector<Tensor> in = {
      randomTensor("x", dt, {S, E}, -2, 2, seed), randomTensor("Wqkv", dt, {E, 3 * E}, -w, w, seed + 1),
      randomTensor("Wo", dt, {E, E}, -w, w, seed + 2), randomTensor("dY", dt, {S, E}, -1, 1, seed + 3)};
  dump.add(name, "block", in, {"dx", "dWqkv", "dWo"}, [&](std::vector<tessera_tensor>& out) {
    tessera_tensor a = in[0].view(), b = in[1].view(), c = in[2].view(), d = in[3].view();
    bench::check(entry(nullptr, &a, &b, &c, &d, &out[0], &out[1], &out[2]), name.c_str());
  });
  for (Tensor& t : in) tessera_free(t.data);
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::printf("usage: grad_dump DIR [--quick]\n");
    return 2;
  }
  bool quick = argc > 2 && std::strcmp(argv[2], "--quick") == 0;
  Dump dump(argv[1]);
  block(dump, quick ? "block_wide_s37" : "block_wide_s2048", grad_programs_block_wide_backward, TESSERA_BF16,
        quick ? 37 : 2048, 1024, 0.03f, 11);
  block(dump, "block_bf16_s130", grad_programs_block_bf16_backward, TESSERA_BF16, 130, 256, 0.1f, 21);
  block(dump, "block_bf16_s37", grad_programs_block_bf16_backward, TESSERA_BF16, 37, 256, 0.1f, 31);
  block(dump, "block_f32_s130", grad_programs_block_f32_backward, TESSERA_F32, 130, 256, 0.1f, 41);
  {
    const int64_t M = 67, K = 45, N = 33;
    std::vector<Tensor> in = {
        randomTensor("X", TESSERA_F32, {M, K}, -1, 1, 51), randomTensor("W", TESSERA_F32, {K, N}, -0.3f, 0.3f, 52),
        randomTensor("b", TESSERA_F32, {N}, -0.5f, 0.5f, 53), randomTensor("g", TESSERA_F32, {N}, 0.5f, 1.5f, 54),
        randomTensor("dY", TESSERA_F32, {M, N}, -1, 1, 55)};
    dump.add("norm_layer", "norm_layer", in, {"dX", "dW", "db", "dg"}, [&](std::vector<tessera_tensor>& out) {
      std::vector<tessera_tensor> v;
      for (const Tensor& t : in) v.push_back(t.view());
      bench::check(grad_programs_norm_layer_backward(nullptr, &v[0], &v[1], &v[2], &v[3], &v[4], &out[0], &out[1],
                                                     &out[2], &out[3]),
                   "norm_layer_backward");
    });
    for (Tensor& t : in) tessera_free(t.data);
  }
  {
    const int64_t D = 45, E = 29, B = 67;
    std::vector<Tensor> in = {randomTensor("W", TESSERA_F32, {D, E}, -0.3f, 0.3f, 61),
                              randomTensor("x", TESSERA_F32, {B, D}, -1, 1, 62),
                              randomTensor("y_true", TESSERA_F32, {B, E}, -1, 1, 63)};
    dump.add("grad_step", "grad_step", in, {"gW"}, [&](std::vector<tessera_tensor>& out) {
      tessera_tensor a = in[0].view(), b = in[1].view(), c = in[2].view();
      bench::check(grad_programs_grad_step(nullptr, &a, &b, &c, &out[0]), "grad_step");
    });
    for (Tensor& t : in) tessera_free(t.data);
  }
  dump.finish();
  return 0;
}
