// Warp shuffles with width= 1..32 in every mode (i32 and f64) and warp votes, in groups of 48
// tiles (warp 1 of each group has 16 live lanes), for several offsets and thresholds. The
// reference is PTX shfl.sync with the segment mask (32 - width) / vote.sync over the live lanes:
// a source outside the caller's segment (idx, up, down) or after it (xor), or a lane that is not
// live, gives the caller its own value. Every element is checked.
#include "warp_segments.h"

#include "ExecTest.h"

namespace {

constexpr int64_t kGroup = 48;

// The lane whose value tile `t` receives (its own lane when the source is invalid).
int64_t source(int64_t t, int mode, int64_t x, int64_t width) {
  int64_t local = t % kGroup, warp = local / 32, lane = local % 32;
  int64_t lanes = std::min<int64_t>(32, kGroup - warp * 32);
  int64_t seg = lane & ~(width - 1), src = lane;
  switch (mode) {
    case 0: src = lane + x; break;                 // down
    case 1: src = lane - x; break;                 // up
    case 2: src = lane ^ x; break;                 // xor
    case 3: src = seg + (x & (width - 1)); break;  // idx
  }
  int64_t lo = mode == 2 ? 0 : seg;
  if (src < lo || src >= seg + width || src >= lanes) src = lane;
  return t - lane + src;
}

}  // namespace

int main() {
  exec::requireDevice();
  std::uniform_int_distribution<int64_t> groupsD(1, 40);
  int64_t groups = groupsD(exec::rng()), n = groups * kGroup;
  tessera_launch_options opts{};
  opts.grid[0] = static_cast<uint32_t>(groups);
  opts.grid[1] = opts.grid[2] = 1;
  std::vector<int32_t> x = exec::randomInts(n, -1000000, 1000000);
  std::vector<double> xf(n);
  for (int64_t i = 0; i < n; ++i) xf[i] = static_cast<double>(x[i]) / 7.0;
  exec::DeviceArray<int32_t> dx(x);
  exec::DeviceArray<double> dxf(xf);
  bool ok = true;
  const int64_t widths[] = {1, 2, 4, 8, 16, 32};
  for (int32_t d : {0, 1, 3, 5, 8, 13, 16, 31}) {
    exec::DeviceArray<int32_t> out(std::vector<int32_t>(n * 24, -7));
    exec::DeviceArray<double> outf(std::vector<double>(n * 2, -7.0));
    exec::check(warp_segments::shuffles(dx.view(TESSERA_I32, {n}), dxf.view(TESSERA_F64, {n}),
                                        out.view(TESSERA_I32, {n, 24}), outf.view(TESSERA_F64, {n, 2}), d, &opts),
                "shuffles");
    exec::check(tessera_synchronize(), "synchronize");
    std::vector<int32_t> want(n * 24);
    std::vector<double> wantf(n * 2);
    for (int64_t t = 0; t < n; ++t) {
      int64_t lane = (int64_t(d) * 3 + t) & 31;
      for (int w = 0; w < 6; ++w)
        for (int m = 0; m < 4; ++m) want[t * 24 + w * 4 + m] = x[source(t, m, m == 3 ? lane : d, widths[w])];
      wantf[t * 2] = xf[source(t, 2, d, 8)];
      wantf[t * 2 + 1] = xf[source(t, 0, d, 32)];
    }
    std::printf("shuffles, offset %d: ", d);
    ok &= exec::allEqual(out.read(), want, "out");
    std::printf("shuffles of f64, offset %d: ", d);
    ok &= exec::allEqual(outf.read(), wantf, "outf");
  }
  std::vector<int32_t> small = exec::randomInts(n, 0, 3);
  exec::DeviceArray<int32_t> ds(small);
  for (int32_t threshold : {-1, 0, 2, 3}) {
    exec::DeviceArray<int32_t> out(std::vector<int32_t>(n * 2, -7));
    exec::DeviceArray<uint32_t> ballots(std::vector<uint32_t>(n, 0xdeadbeefu));
    exec::check(warp_segments::votes(ds.view(TESSERA_I32, {n}), out.view(TESSERA_I32, {n, 2}),
                                     ballots.view(TESSERA_U32, {n}), threshold, &opts),
                "votes");
    exec::check(tessera_synchronize(), "synchronize");
    std::vector<int32_t> want(n * 2);
    std::vector<uint32_t> wantB(n);
    for (int64_t t = 0; t < n; ++t) {
      int64_t local = t % kGroup, lane = local % 32, first = t - lane;
      int64_t lanes = std::min<int64_t>(32, kGroup - (local / 32) * 32);
      uint32_t ballot = 0;
      for (int64_t l = 0; l < lanes; ++l)
        if (small[first + l] > threshold) ballot |= 1u << l;
      uint32_t live = lanes == 32 ? 0xffffffffu : (1u << lanes) - 1;
      want[t * 2] = ballot != 0;
      want[t * 2 + 1] = ballot == live;
      wantB[t] = ballot;
    }
    std::printf("votes, threshold %d: ", threshold);
    ok &= exec::allEqual(out.read(), want, "votes");
    std::printf("ballots, threshold %d: ", threshold);
    ok &= exec::allEqual(ballots.read(), wantB, "ballots");
  }
  return exec::finish(ok);
}
