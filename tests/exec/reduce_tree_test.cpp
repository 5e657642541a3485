// reduce_sum/max/min in their streaming form (tests/exec/kernels/reduce_tree.tessera): arrays of
// run-time size and a shared array past the register limit. The reference replays the pairwise
// tree of docs/codegen.md ("Reductions"), so sums are checked bit for bit at odd sizes, with
// NaNs, infinities and signed zeros among the inputs of some runs.
#include "reduce_tree.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "ExecTest.h"

namespace {

template <class T, class F>
T tree(std::vector<T> a, F op) {
  if (a.empty()) return T(0);
  for (size_t s = 1; s < a.size(); s *= 2)
    for (size_t i = 0; i + s < a.size(); i += 2 * s) a[i] = op(a[i], a[i + s]);
  return a[0];
}

float add(float a, float b) { return a + b; }
float fmax2(float a, float b) { return std::fmax(a, b); }
float fmin2(float a, float b) { return std::fmin(a, b); }
// i32 sums wrap (docs/language.md, "Integer semantics").
int32_t iadd(int32_t a, int32_t b) { return static_cast<int32_t>(static_cast<uint32_t>(a) + static_cast<uint32_t>(b)); }

bool whole(int64_t n, bool specials) {
  std::vector<float> x = exec::randomFloats(n, -1000.0f, 1000.0f);
  std::vector<int32_t> v =
      exec::randomInts(n, std::numeric_limits<int32_t>::min(), std::numeric_limits<int32_t>::max());
  if (specials && n > 3) {
    const float s[] = {std::numeric_limits<float>::infinity(), -0.0f, std::numeric_limits<float>::quiet_NaN(), 1e-40f};
    for (int k = 0; k < 4; ++k) x[exec::rng()() % n] = s[k];
  }
  exec::DeviceArray<float> dx(x), dout(std::vector<float>(3, -7.0f));
  exec::DeviceArray<int32_t> dv(v), diout(std::vector<int32_t>(3, -7));
  exec::check(reduce_tree::whole(dx.view(TESSERA_F32, {n}), dv.view(TESSERA_I32, {n}), dout.view(TESSERA_F32, {3}),
                                 diout.view(TESSERA_I32, {3})),
              "whole");
  exec::check(tessera_synchronize(), "synchronize");
  std::vector<float> want = {tree(x, add), tree(x, fmax2), tree(x, fmin2)};
  std::vector<int32_t> iwant = {tree(v, iadd), tree(v, [](int32_t a, int32_t b) { return std::max(a, b); }),
                                tree(v, [](int32_t a, int32_t b) { return std::min(a, b); })};
  std::string what = "whole n=" + std::to_string(n);
  bool ok = exec::allEqual(dout.read(), want, (what + " f32").c_str());
  return exec::allEqual(diout.read(), iwant, (what + " i32").c_str()) && ok;
}

}  // namespace

int main() {
  exec::requireDevice();
  bool ok = true;
  // 1 element, powers of two and their neighbours, odd sizes up to past 2^16.
  std::vector<int64_t> sizes = {1, 2, 3, 7, 8, 9, 255, 256, 257, 4097, 65537};
  std::uniform_int_distribution<int64_t> odd(1, 100000);
  for (int k = 0; k < 4; ++k) sizes.push_back(odd(exec::rng()) | 1);
  for (size_t k = 0; k < sizes.size(); ++k) ok &= whole(sizes[k], k % 2 == 1);

  // Rows of a matrix: a slice of run-time length per tile.
  std::uniform_int_distribution<int64_t> dim(1, 700);
  int64_t r = dim(exec::rng()), c = dim(exec::rng());
  std::printf("rows: %lld x %lld\n", static_cast<long long>(r), static_cast<long long>(c));
  std::vector<float> m = exec::randomFloats(r * c);
  exec::DeviceArray<float> dm(m), drow(std::vector<float>(r, -7.0f));
  exec::check(reduce_tree::rows(dm.view(TESSERA_F32, {r, c}), drow.view(TESSERA_F32, {r})), "rows");
  exec::check(tessera_synchronize(), "synchronize");
  std::vector<float> wantRows(r);
  for (int64_t i = 0; i < r; ++i)
    wantRows[i] = tree(std::vector<float>(m.begin() + i * c, m.begin() + (i + 1) * c), add);
  ok &= exec::allEqual(drow.read(), wantRows, "rows");

  // A 64 x 80 shared array per group.
  int64_t n = odd(exec::rng()), groups = (n + 5119) / 5120;
  std::vector<float> x = exec::randomFloats(n);
  exec::DeviceArray<float> dx(x), dout(std::vector<float>(groups, -7.0f));
  exec::check(reduce_tree::large(dx.view(TESSERA_F32, {n}), dout.view(TESSERA_F32, {groups})), "large");
  exec::check(tessera_synchronize(), "synchronize");
  std::vector<float> wantLarge(groups);
  for (int64_t g = 0; g < groups; ++g) {
    std::vector<float> block(5120, 0.0f);
    for (int64_t e = 0; e < 5120 && g * 5120 + e < n; ++e) block[e] = x[g * 5120 + e];
    wantLarge[g] = tree(block, add);
  }
  ok &= exec::allEqual(dout.read(), wantLarge, "large");
  return exec::finish(ok);
}
