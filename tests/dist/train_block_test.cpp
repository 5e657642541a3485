// A data-parallel x tensor-parallel training step of the transformer block of
// tests/exec/kernels/host_bf16.tessera (width 256, 4 heads of 64), under mpirun with 4 CPU ranks
// as a mesh (dp=2, tp=2), or 2 ranks as (dp=1, tp=2): examples/dist/train_block.tessera's block_tp
// holds two heads per tp rank (Wqkv's columns of their q, k and v, Wo's rows of their outputs).
// One step, for every dp rank's sequence x and target t:
//   y_t = block_tp(x, Wqkv_t, Wo_t);  y = all_reduce over tp of y_t (sum, deterministic)
//   loss = mean((y - t)^2) over the global batch (host, float64; all_reduce over dp)
//   dY = 2 (y - t) / (S * 256);  (dx, dWqkv_t, dWo_t) = block_tp_backward(x, Wqkv_t, Wo_t, dY)
//   g = all_reduce over dp of the gradients (avg, deterministic);  W -= lr * g (host, bf16)
// Three steps, twice from the same start: the losses and every weight must have the same bits.
// Rank 0 also runs the whole job in one process (every shard's block, the reductions by the
// collectives' arithmetic in the same fixed order) and every rank's final weights and the losses
// must equal it bit for bit. (The unsplit block is not bit-equal to this: its output product
// rounds once to bf16, where the tensor-parallel form rounds each partial before the tp sum.)
#include "train_block.h"

#include <cinttypes>
#include <cmath>
#include <tessera/dist.hpp>

#include "DistTest.h"
#include "ExecTest.h"
#include "RefNumerics.h"

using namespace disttest;
namespace td = tessera::dist;

namespace {

const int64_t S = 16, C = 256, kSteps = 3;
const float kLr = 0.05f;
uint64_t seed = 0;

std::vector<uint16_t> bf16Values(uint64_t stream, size_t n, float scale) {
  std::vector<uint16_t> v(n);
  for (size_t i = 0; i < n; ++i)
    v[i] = exec::toBF16(scale * float(int64_t(rnd(seed, stream, i) % 2001) - 1000) / 1000.f);
  return v;
}

// Shard t of the global weights: Wqkv's columns of heads 2t, 2t + 1 (as [q | k | v]) and Wo's rows.
struct Shard {
  std::vector<uint16_t> wqkv, wo;
};
Shard shardOf(const std::vector<uint16_t>& wqkv, const std::vector<uint16_t>& wo, int t) {
  Shard s{std::vector<uint16_t>(C * 384), std::vector<uint16_t>(128 * C)};
  for (int64_t r = 0; r < C; ++r)
    for (int part = 0; part < 3; ++part)
      for (int64_t c = 0; c < 128; ++c) s.wqkv[r * 384 + part * 128 + c] = wqkv[r * 768 + part * 256 + t * 128 + c];
  for (int64_t r = 0; r < 128; ++r)
    for (int64_t c = 0; c < C; ++c) s.wo[r * C + c] = wo[(t * 128 + r) * C + c];
  return s;
}

// The deterministic reduction of the collectives, element by element in their fixed order
// (RefNumerics.h, the reference dist_collectives_test checks them against), of bf16 or f64 values.
template <class T>
std::vector<T> reduceLike(const std::vector<std::vector<T>>& parts, int32_t dtype, int32_t op) {
  std::vector<T> out(parts[0].size());
  std::vector<const uint8_t*> in(parts.size());
  for (size_t i = 0; i < out.size(); ++i) {
    for (size_t k = 0; k < parts.size(); ++k) in[k] = reinterpret_cast<const uint8_t*>(&parts[k][i]);
    referenceElement(dtype, op, true, in, reinterpret_cast<uint8_t*>(&out[i]));
  }
  return out;
}

std::vector<uint16_t> fetch(const tessera_tensor& t) {
  std::vector<uint16_t> v(size_t(tessera_tensor_numel(&t)));
  require(tessera_memcpy(v.data(), t.data, v.size() * 2), "download");
  return v;
}

struct Device16 {
  Buffer buf;
  std::vector<int64_t> shape;
  Device16(const std::vector<uint16_t>& h, std::vector<int64_t> s) : buf(h.size() * 2), shape(std::move(s)) { put(h); }
  void put(const std::vector<uint16_t>& h) {
    buf.upload(std::vector<uint8_t>(reinterpret_cast<const uint8_t*>(h.data()),
                                    reinterpret_cast<const uint8_t*>(h.data() + h.size())));
  }
  tessera_tensor view() const { return buf.view(TESSERA_BF16, shape); }
};

// The host's half of a step: dY = 2 (y - t) / (S C) in bf16, and this sequence's summed squared
// error in float64.
double lossAndGrad(const std::vector<uint16_t>& y, const std::vector<uint16_t>& target, std::vector<uint16_t>& dy) {
  double sum = 0;
  dy.resize(y.size());
  for (size_t i = 0; i < y.size(); ++i) {
    double d = double(exec::fromBF16(y[i])) - exec::fromBF16(target[i]);
    sum += d * d;
    dy[i] = exec::toBF16(float(2 * d / double(S * C)));
  }
  return sum;
}

void sgd(std::vector<uint16_t>& w, const std::vector<uint16_t>& g) {
  for (size_t i = 0; i < w.size(); ++i) w[i] = exec::toBF16(exec::fromBF16(w[i]) - kLr * exec::fromBF16(g[i]));
}

struct Result {
  std::vector<double> losses;
  Shard w;
};

// The distributed job: this rank is (d, t) of the mesh.
Result train(td::Mesh& mesh, int64_t dp, int d, int t, const Shard& start, const std::vector<uint16_t>& x,
             const std::vector<uint16_t>& target) {
  tessera_comm tp = mesh.comm("tp").get(), dpc = mesh.comm("dp").get();
  Result r{{}, start};
  Device16 X(x, {S, C}), Wq(r.w.wqkv, {C, 384}), Wo(r.w.wo, {128, C});
  for (int step = 0; step < kSteps; ++step) {
    tessera_tensor tx = X.view(), tq = Wq.view(), to = Wo.view(), y;
    require(train_block_block_tp(nullptr, &tx, &tq, &to, &y), "block_tp");
    tessera_collective_options o{nullptr, 0, 0, "y"};
    require(tessera_all_reduce(tp, &y, &y, TESSERA_REDUCE_SUM, &o), "all_reduce of y over tp");
    std::vector<uint16_t> dy;
    double local = lossAndGrad(fetch(y), target, dy) / double(S * C * dp);
    Buffer lossBuf(8);
    lossBuf.upload(std::vector<uint8_t>(reinterpret_cast<uint8_t*>(&local), reinterpret_cast<uint8_t*>(&local) + 8));
    tessera_tensor tl = lossBuf.view(TESSERA_F64, {1});
    o.name = "loss";
    require(tessera_all_reduce(dpc, &tl, &tl, TESSERA_REDUCE_SUM, &o), "all_reduce of the loss over dp");
    double loss = 0;
    require(tessera_memcpy(&loss, lossBuf.data(), 8), "download the loss");
    r.losses.push_back(loss);
    Device16 G(dy, {S, C});
    tessera_tensor tg = G.view(), grads[3];
    require(train_block_block_tp_backward(nullptr, &tx, &tq, &to, &tg, &grads[0], &grads[1], &grads[2]),
            "block_tp_backward");
    o.name = "dWqkv";
    require(tessera_all_reduce(dpc, &grads[1], &grads[1], TESSERA_REDUCE_AVG, &o), "all_reduce of dWqkv over dp");
    o.name = "dWo";
    require(tessera_all_reduce(dpc, &grads[2], &grads[2], TESSERA_REDUCE_AVG, &o), "all_reduce of dWo over dp");
    sgd(r.w.wqkv, fetch(grads[1]));
    sgd(r.w.wo, fetch(grads[2]));
    Wq.put(r.w.wqkv);
    Wo.put(r.w.wo);
    for (tessera_tensor* g : {&y, &grads[0], &grads[1], &grads[2]}) tessera_free(g->data);
  }
  (void)d, (void)t;
  return r;
}

// The same job in one process: every shard's block, the reductions by the same arithmetic.
std::vector<Result> trainAlone(int64_t dp, const std::vector<Shard>& start,
                               const std::vector<std::vector<uint16_t>>& xs,
                               const std::vector<std::vector<uint16_t>>& targets) {
  std::vector<Shard> w = start;
  std::vector<double> losses;
  for (int step = 0; step < kSteps; ++step) {
    std::vector<std::vector<std::vector<uint16_t>>> gq(2), go(2);  // [t][d]
    std::vector<std::vector<double>> lossParts;
    for (int d = 0; d < dp; ++d) {
      Device16 X(xs[d], {S, C});
      std::vector<std::vector<uint16_t>> ys;
      for (int t = 0; t < 2; ++t) {
        Device16 Wq(w[t].wqkv, {C, 384}), Wo(w[t].wo, {128, C});
        tessera_tensor tx = X.view(), tq = Wq.view(), to = Wo.view(), y;
        require(train_block_block_tp(nullptr, &tx, &tq, &to, &y), "reference block_tp");
        ys.push_back(fetch(y));
        tessera_free(y.data);
      }
      std::vector<uint16_t> y = reduceLike(ys, TESSERA_BF16, TESSERA_REDUCE_SUM), dy;
      lossParts.push_back({lossAndGrad(y, targets[d], dy) / double(S * C * dp)});
      Device16 G(dy, {S, C});
      for (int t = 0; t < 2; ++t) {
        Device16 Wq(w[t].wqkv, {C, 384}), Wo(w[t].wo, {128, C});
        tessera_tensor tx = X.view(), tq = Wq.view(), to = Wo.view(), tg = G.view(), g[3];
        require(train_block_block_tp_backward(nullptr, &tx, &tq, &to, &tg, &g[0], &g[1], &g[2]), "reference backward");
        gq[t].push_back(fetch(g[1]));
        go[t].push_back(fetch(g[2]));
        for (tessera_tensor& gi : g) tessera_free(gi.data);
      }
    }
    losses.push_back(reduceLike(lossParts, TESSERA_F64, TESSERA_REDUCE_SUM)[0]);
    for (int t = 0; t < 2; ++t) {
      sgd(w[t].wqkv, reduceLike(gq[t], TESSERA_BF16, TESSERA_REDUCE_AVG));
      sgd(w[t].wo, reduceLike(go[t], TESSERA_BF16, TESSERA_REDUCE_AVG));
    }
  }
  std::vector<Result> out;
  for (int t = 0; t < 2; ++t) out.push_back({losses, w[t]});
  return out;
}

uint64_t digestOf(const Result& r) {
  auto bytes = [](const auto& v) {
    return std::vector<uint8_t>(reinterpret_cast<const uint8_t*>(v.data()),
                                reinterpret_cast<const uint8_t*>(v.data() + v.size()));
  };
  return digest(bytes(r.w.wo), digest(bytes(r.w.wqkv), digest(bytes(r.losses))));
}

// One process (make examples, a machine without mpirun): the (dp=2, tp=2) job run alone twice,
// the same bits both times and a decreasing loss.
int alone() {
  std::vector<uint16_t> wqkv = bf16Values(1, C * 768, 0.08f), wo = bf16Values(2, C * C, 0.08f);
  std::vector<Shard> shards{shardOf(wqkv, wo, 0), shardOf(wqkv, wo, 1)};
  std::vector<std::vector<uint16_t>> xs{bf16Values(10, S * C, 2.0f), bf16Values(11, S * C, 2.0f)},
      targets{bf16Values(20, S * C, 0.5f), bf16Values(21, S * C, 0.5f)};
  std::vector<Result> a = trainAlone(2, shards, xs, targets), b = trainAlone(2, shards, xs, targets);
  for (int t = 0; t < 2; ++t) expect(digestOf(a[t]) == digestOf(b[t]), "shard %d: a second run gave other bits", t);
  expect(a[0].losses.back() < a[0].losses.front(), "the loss did not decrease: %.9g -> %.9g", a[0].losses.front(),
         a[0].losses.back());
  for (int step = 0; step < kSteps; ++step) std::printf("step %d: loss %.9g\n", step, a[0].losses[step]);
  return finish("train_step (one process, dp=2 x tp=2 run alone)");
}

}  // namespace

int main() {
  tessera_comm w = start();
  int32_t P = 1, R = 0;
  tessera_comm_size(w, &P);
  tessera_comm_rank(w, &R);
  if (P != 1 && P != 2 && P != 4) {
    std::printf("SKIP: the training step runs on 2 ranks (dp=1, tp=2) or 4 (dp=2, tp=2), or as one process\n");
    tessera_dist_finalize();
    return 77;
  }
  seed = agreeSeed(w);
  if (P == 1) return alone();
  int64_t dp = P / 2;
  int d = R / 2, t = R % 2;
  td::Mesh mesh;
  require(td::Mesh::create({"dp", "tp"}, {dp, 2}, mesh).code(), "mesh");
  std::vector<uint16_t> wqkv = bf16Values(1, C * 768, 0.08f), wo = bf16Values(2, C * C, 0.08f);
  std::vector<Shard> shards{shardOf(wqkv, wo, 0), shardOf(wqkv, wo, 1)};
  std::vector<std::vector<uint16_t>> xs, targets;
  for (int k = 0; k < dp; ++k) {
    xs.push_back(bf16Values(10 + k, S * C, 2.0f));
    targets.push_back(bf16Values(20 + k, S * C, 0.5f));
  }
  Result first = train(mesh, dp, d, t, shards[t], xs[d], targets[d]);
  Result again = train(mesh, dp, d, t, shards[t], xs[d], targets[d]);
  expect(digestOf(first) == digestOf(again), "a second run from the same start gave other bits");
  expect(first.losses.size() == size_t(kSteps) && first.losses.back() < first.losses.front(),
         "the loss did not decrease: %.9g -> %.9g", first.losses.front(), first.losses.back());

  // Rank 0's one-process run; its digests of both shards go to every rank.
  uint64_t want[2] = {0, 0};
  if (R == 0) {
    std::vector<Result> alone = trainAlone(dp, shards, xs, targets);
    want[0] = digestOf(alone[0]), want[1] = digestOf(alone[1]);
    for (int step = 0; step < kSteps; ++step) std::printf("step %d: loss %.9g\n", step, alone[0].losses[step]);
  }
  Buffer wb(16);
  wb.upload(std::vector<uint8_t>(reinterpret_cast<uint8_t*>(want), reinterpret_cast<uint8_t*>(want) + 16));
  tessera_tensor tw = wb.view(TESSERA_U64, {2});
  require(tessera_broadcast(w, &tw, &tw, 0, nullptr), "broadcast the reference digests");
  require(tessera_memcpy(want, wb.data(), 16), "download the reference digests");
  expect(digestOf(first) == want[t], "rank %d (dp %d, tp %d): the losses and weights differ from one process's", R, d,
         t);
  std::printf("digest train_step dp=%d tp=%d ranks=%d: %016" PRIx64 "\n", d, t, P, digestOf(first));
  mesh.reset();
  return finish("train_step");
}
