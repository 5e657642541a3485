// Digests of deterministic reductions, to compare bits across runs, rank placements, devices
// and world sizes. Every rank's inputs are a pure function of (rank, element), so:
//   mpirun -n P dist_digest              the collectives of P ranks (CPU or GPU ranks)
//   dist_digest --virtual-ranks P        one process reducing the P ranks' inputs with the
//                                        same fixed-order reduction on its device (CPU or GPU)
// print the same lines when the bits agree. Output: "digest <collective> <dtype> <order>
// ranks=<P>: <hex>", rank 0 only.
#include <cinttypes>
#include <cmath>
#include <string>

#include "DistTest.h"
#include "runtime/Device.h"
#include "runtime/dist/DeviceOps.h"

using namespace disttest;

namespace {

constexpr size_t kElems = 65536 + 3;

std::vector<uint8_t> inputsOf(int32_t dt, int rank, size_t n) {
  std::vector<uint8_t> v(n * tessera_dtype_bits(dt) / 8);
  for (size_t i = 0; i < n; ++i) {
    uint64_t x = rnd(42, 7 + rank, i);
    float f = std::ldexp(1.0f + float(x & 0xffff) / 65536.0f, int((x >> 16) % 17) - 8) * ((x >> 63) ? -1.f : 1.f);
    if (dt == TESSERA_F32) {
      std::memcpy(v.data() + i * 4, &f, 4);
    } else {  // bf16 / f16 bit patterns near f
      uint32_t b;
      std::memcpy(&b, &f, 4);
      uint16_t h = dt == TESSERA_BF16 ? uint16_t(b >> 16) : uint16_t(0x3c00 ^ (x & 0x83ff));
      std::memcpy(v.data() + i * 2, &h, 2);
    }
  }
  return v;
}

const int32_t kDtypes[] = {TESSERA_F32, TESSERA_BF16, TESSERA_F16};
const char* orderName(int o) { return o == TESSERA_ORDER_TREE ? "tree" : "sequential"; }

void print(const char* what, int32_t dt, int order, int p, uint64_t d) {
  std::printf("digest %s %s %s ranks=%d: %016" PRIx64 "\n", what, tessera_dtype_name(dt), orderName(order), p, d);
}

int distributed() {
  tessera_comm w = start();
  int32_t p = 1, r = 0;
  tessera_comm_size(w, &p);
  tessera_comm_rank(w, &r);
  for (int32_t dt : kDtypes)
    for (int order : {TESSERA_ORDER_TREE, TESSERA_ORDER_SEQUENTIAL}) {
      size_t es = tessera_dtype_bits(dt) / 8;
      Buffer in(kElems * es), out(kElems * es), part(kElems * es), all(kElems * es * p);
      std::vector<uint8_t> mine = inputsOf(dt, r, kElems);
      in.upload(mine);
      tessera_tensor ti = in.view(dt, {int64_t(kElems)}), to = out.view(dt, {int64_t(kElems)});
      tessera_collective_options o{nullptr, 0, order, "digest"};
      require(tessera_all_reduce(w, &ti, &to, TESSERA_REDUCE_SUM, &o), "all_reduce");
      // reduce_scatter of p blocks of kElems / p ... here: each rank sends kElems * p elements
      // made of its inputs repeated with an offset, receives kElems.
      Buffer big(kElems * es * p);
      std::vector<uint8_t> bigHost;
      for (int k = 0; k < p; ++k) {
        auto v = inputsOf(dt, r + 100 * k, kElems);
        bigHost.insert(bigHost.end(), v.begin(), v.end());
      }
      big.upload(bigHost);
      tessera_tensor tb = big.view(dt, {int64_t(kElems) * p}), tp = part.view(dt, {int64_t(kElems)});
      require(tessera_reduce_scatter(w, &tb, &tp, TESSERA_REDUCE_SUM, &o), "reduce_scatter");
      tessera_tensor ta = all.view(dt, {int64_t(kElems) * p});
      require(tessera_all_gather(w, &tp, &ta, &o), "all_gather");
      require(tessera_comm_synchronize(w, nullptr), "synchronize");
      if (r == 0) {
        print("all_reduce", dt, order, p, digest(out.download()));
        print("reduce_scatter", dt, order, p, digest(all.download()));
      }
    }
  return finish("dist_digest");
}

// One device reduces every rank's inputs, as the collective's ranks do block by block.
int virtualRanks(int p) {
  using namespace tessera;
  rt::Backend* b = nullptr;
  require(rt::activeBackend(b), "device");
  require(b->enterDevice(), "device");
  std::string why;
  dist::DeviceOps* ops = b->kind() == TESSERA_DEVICE_GPU ? dist::gpuDeviceOps(why) : &dist::cpuDeviceOps();
  if (!ops) {
    std::printf("FAIL: %s\n", why.c_str());
    return 1;
  }
  std::printf("virtual ranks on %s\n", tessera_device_name());
  auto reduceOf = [&](int32_t dt, int order, const std::vector<std::vector<uint8_t>>& ins) {
    size_t bytes = ins[0].size();
    std::vector<Buffer*> bufs;
    dist::reduce::ReduceParams P{};
    for (int k = 0; k < p; ++k) {
      bufs.push_back(new Buffer(bytes));
      bufs.back()->upload(ins[k]);
      P.in[k] = bufs.back()->data();
    }
    Buffer out(bytes);
    P.out = out.data();
    P.n = bytes / (tessera_dtype_bits(dt) / 8);
    P.p = p;
    P.order = p <= 3 ? dist::reduce::kSequential : order;
    require(ops->reduce(P, dt, TESSERA_REDUCE_SUM, b->nativeStream(nullptr)), "reduce");
    require(tessera_synchronize(), "synchronize");
    uint64_t d = digest(out.download());
    for (Buffer* x : bufs) delete x;
    return d;
  };
  for (int32_t dt : kDtypes)
    for (int order : {TESSERA_ORDER_TREE, TESSERA_ORDER_SEQUENTIAL}) {
      std::vector<std::vector<uint8_t>> ins, bigs;
      for (int r = 0; r < p; ++r) {
        ins.push_back(inputsOf(dt, r, kElems));
        std::vector<uint8_t> big;
        for (int k = 0; k < p; ++k) {
          auto v = inputsOf(dt, r + 100 * k, kElems);
          big.insert(big.end(), v.begin(), v.end());
        }
        bigs.push_back(big);
      }
      print("all_reduce", dt, order, p, reduceOf(dt, order, ins));
      print("reduce_scatter", dt, order, p, reduceOf(dt, order, bigs));
    }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc == 3 && std::string(argv[1]) == "--virtual-ranks") return virtualRanks(std::atoi(argv[2]));
  return distributed();
}
