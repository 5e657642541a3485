// GPU ranks give the bits CPU ranks give: the GPU reduction kernels (runtime/dist/kernels/
// Reduce.cu) against the CPU's (the same ReduceOps.h compiled for the host), on random bytes
// (NaNs, infinities, subnormals and all) of every reducible dtype, every operation and both
// orders, for 1 to 9 and 13, 64 and 256 ranks, with 16-byte-aligned inputs (the vector path) and
// misaligned ones (the scalar path). Needs a GPU (exit 77 without one).
#include <string>

#include "DistTest.h"
#include "runtime/Device.h"
#include "runtime/dist/DeviceOps.h"

using namespace disttest;
using namespace tessera;

int main() {
  rt::Backend* b = nullptr;
  if (rt::activeBackend(b) != TESSERA_SUCCESS || b->kind() != TESSERA_DEVICE_GPU) {
    std::printf("SKIP: no GPU (%s)\n", tessera_gpu_unavailable_reason());
    return 77;
  }
  require(b->enterDevice(), "device");
  std::string why;
  dist::DeviceOps* gpu = dist::gpuDeviceOps(why);
  if (!gpu) {
    std::printf("FAIL: %s\n", why.c_str());
    return 1;
  }
  std::printf("device: %s\n", tessera_device_name());
  const int32_t dtypes[] = {TESSERA_F64,     TESSERA_F32, TESSERA_F16, TESSERA_BF16, TESSERA_F8_E4M3,
                            TESSERA_F8_E5M2, TESSERA_I8,  TESSERA_I16, TESSERA_I32,  TESSERA_I64,
                            TESSERA_U8,      TESSERA_U16, TESSERA_U32, TESSERA_U64,  TESSERA_BOOL};
  const int rankCounts[] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 13, 64, 256};
  int cases = 0;
  for (int32_t dt : dtypes)
    for (int op = 0; op < 4; ++op) {
      if (!dist::reducible(dt, op, why)) continue;
      size_t es = tessera_dtype_bits(dt) / 8;
      for (int p : rankCounts)
        for (int order = 0; order < 2; ++order)
          for (int misalign = 0; misalign < 2; ++misalign) {
            size_t n = p <= 13 ? 4099 : 515;
            size_t off = misalign ? es : 0;  // one element past a 256-byte boundary
            std::vector<std::vector<uint8_t>> host(p);
            Buffer dev((n + 1) * es * p), out((n + 1) * es);
            dist::reduce::ReduceParams G{}, C{};
            std::vector<uint8_t> all((n + 1) * es * p);
            for (int r = 0; r < p; ++r)
              for (size_t i = 0; i < (n + 1) * es; ++i)
                all[r * (n + 1) * es + i] = uint8_t(rnd(uint64_t(dt) * 1000 + op * 10 + order, r, i) >> 7);
            dev.upload(all);
            for (int r = 0; r < p; ++r) {
              G.in[r] = static_cast<char*>(dev.data()) + r * (n + 1) * es + off;
              C.in[r] = all.data() + r * (n + 1) * es + off;
            }
            std::vector<uint8_t> want(n * es);
            G.out = static_cast<char*>(out.data()) + off;
            C.out = want.data();
            G.n = C.n = n;
            G.p = C.p = p;
            G.order = C.order = order;
            require(gpu->reduce(G, dt, op, nullptr), "GPU reduce");
            require(dist::cpuDeviceOps().reduce(C, dt, op, nullptr), "CPU reduce");
            require(tessera_synchronize(), "synchronize");
            std::vector<uint8_t> got = out.download();
            got.erase(got.begin(), got.begin() + off);
            got.resize(n * es);
            size_t bad = 0;
            while (bad < n * es && got[bad] == want[bad]) ++bad;
            expect(bad == n * es, "%s %s p=%d order=%d %s: element %zu differs between GPU and CPU",
                   tessera_dtype_name(dt), dist::reduceOpName(op).c_str(), p, order,
                   misalign ? "misaligned" : "aligned", bad / es);
            ++cases;
          }
    }
  std::printf("dist_reduce_parity: %d cases of 515 to 4099 elements, GPU and CPU %s\n", cases,
              failures() ? "DIFFER" : "agree bit for bit");
  return failures() ? 1 : 0;
}
