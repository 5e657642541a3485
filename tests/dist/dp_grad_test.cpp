// examples/dist/dp_grad.tessera on a mesh ("dp",) over every rank: the batch X: f32[B, D],
// y: f32[B] is partitioned by rows; index_launch(axis="dp") runs the residual and gradient
// kernels on each rank's rows, and a deterministic all_reduce (avg over dp) gives every rank the
// full-batch gradient. Every weight is checked against a double-precision gradient of the whole
// batch computed in one process; ten repeated steps give the same bits.
#include "dp_grad.h"

#include <cinttypes>
#include <cmath>
#include <tessera/dist.hpp>

#include "DistTest.h"

using namespace disttest;
namespace td = tessera::dist;

int main() {
  tessera_comm w = start();
  int32_t p = 1;
  tessera_comm_size(w, &p);
  uint64_t seed = agreeSeed(w);
  const int64_t Bl = 29, Bg = Bl * p, D = 33;
  td::Mesh mesh;
  require(td::Mesh::create({"dp"}, {p}, mesh).code(), "mesh");
  // The kernels' descriptors are found by name; naming a launch stub keeps the module's object
  // (and its registration) when it is linked from a static library.
  static void* volatile keep = reinterpret_cast<void*>(&dp_grad_residual);
  (void)keep;
  const tessera_kernel_desc *residual = nullptr, *grad = nullptr;
  require(tessera_find_kernel("dp_grad", "residual", &residual), "find residual");
  require(tessera_find_kernel("dp_grad", "grad", &grad), "find grad");

  auto uniform = [&](uint64_t stream, uint64_t i) {
    return float(int64_t(rnd(seed, stream, i) % 2001) - 1000) / 1000.f;
  };
  std::vector<float> x(Bg * D), y(Bg), wv(D);
  for (size_t i = 0; i < x.size(); ++i) x[i] = uniform(1, i);
  for (size_t i = 0; i < y.size(); ++i) y[i] = uniform(2, i);
  for (size_t i = 0; i < wv.size(); ++i) wv[i] = uniform(3, i);

  td::DTensor X, Y, Rr, G, Wt;
  require(td::DTensor::create(mesh, "X", TESSERA_F32, {Bg, D}, td::ShardSpec({"row"}, {"dp"}), X).code(), "X");
  require(td::DTensor::create(mesh, "y", TESSERA_F32, {Bg}, td::ShardSpec({"0"}, {"dp"}), Y).code(), "y");
  require(td::DTensor::create(mesh, "r", TESSERA_F32, {Bg}, td::ShardSpec({"0"}, {"dp"}), Rr).code(), "r");
  require(td::DTensor::create(mesh, "grads", TESSERA_F32, {D}, {}, G).code(), "grads");
  require(td::DTensor::create(mesh, "w", TESSERA_F32, {D}, {}, Wt).code(), "w");
  int64_t b0 = X.offset()[0];
  require(tessera_memcpy(X.local().data, x.data() + b0 * D, Bl * D * 4), "upload X");
  require(tessera_memcpy(Y.local().data, y.data() + b0, Bl * 4), "upload y");
  require(tessera_memcpy(Wt.local().data, wv.data(), D * 4), "upload w");

  tessera_tensor wl = Wt.local(), gl = G.local();
  uint64_t first = 0;
  std::vector<float> g(D);
  for (int step = 0; step < 10; ++step) {
    auto st = td::index_launch(mesh, "dp")(residual)(X.parts("dp"), wl, Y.parts("dp"), Rr.parts("dp"));
    require(st.code(), st.message().c_str());
    st = td::index_launch(mesh, "dp")(grad)(X.parts("dp"), Rr.parts("dp"), gl);
    require(st.code(), st.message().c_str());
    td::Options o;
    o.name = "grads";
    require(td::all_reduce(G, "dp", TESSERA_REDUCE_AVG, o).code(), "all_reduce of the gradients over dp");
    require(tessera_comm_synchronize(mesh.comm("dp").get(), nullptr), "synchronize");
    require(tessera_memcpy(g.data(), gl.data, D * 4), "download grads");
    uint64_t d =
        digest(std::vector<uint8_t>(reinterpret_cast<uint8_t*>(g.data()), reinterpret_cast<uint8_t*>(g.data() + D)));
    if (step == 0) first = d;
    expect(d == first, "step %d gave other gradient bits than step 0", step);
  }

  // The full-batch gradient in double: (2/Bg) sum_b (x_b . w - y_b) x_b.
  std::vector<double> ref(D), mag(D);
  for (int64_t b = 0; b < Bg; ++b) {
    double r = -y[b], rmag = std::fabs(y[b]);
    for (int64_t j = 0; j < D; ++j) {
      r += double(x[b * D + j]) * wv[j];
      rmag += std::fabs(double(x[b * D + j]) * wv[j]);
    }
    for (int64_t j = 0; j < D; ++j) {
      ref[j] += 2.0 * r * x[b * D + j] / double(Bg);
      mag[j] += 2.0 * rmag * std::fabs(x[b * D + j]) / double(Bg);
    }
  }
  int bad = 0;
  for (int64_t j = 0; j < D; ++j) {
    double bound = double(D + Bl + p + 4) * std::ldexp(1.0, -24) * mag[j] * 2 + 1e-30;
    if (!(std::fabs(g[j] - ref[j]) <= bound)) {
      if (bad < 5)
        std::printf("rank %d: grad[%lld] = %.9g, expected %.9g (bound %.3g)\n", myRank(), (long long)j, g[j], ref[j],
                    bound);
      ++bad;
    }
  }
  expect(bad == 0, "%d gradient elements outside the bound", bad);
  if (myRank() == 0)
    std::printf(
        "dp_grad B=%lld (%lld per rank) D=%lld over dp=%d: every weight checked, 10 steps with equal bits; "
        "digest %016" PRIx64 "\n",
        (long long)Bg, (long long)Bl, (long long)D, p, first);
  X.reset(), Y.reset(), Rr.reset(), G.reset(), Wt.reset(), mesh.reset();
  return finish("dp_grad");
}
