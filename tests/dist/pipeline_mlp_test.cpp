// Pipeline parallelism under mpirun with 2, 3 and 4 CPU ranks (and as one process): an MLP of
// L = 2 x stages layers (examples/dist/pipeline_mlp.tessera), split over a mesh ("pp",) of every
// rank, stage s holding layers [2s, 2s + 2). The batch is cut into micro-batches that go through
// the stages in GPipe's order: stage s receives micro-batch i from stage s - 1 (tessera_recv on
// the pp communicator), applies its layers, and sends the activations on to stage s + 1
// (tessera_send) before it takes micro-batch i + 1, so all stages work at once once the pipe is
// full. Every stage checks its outputs bit for bit against one process applying all layers to
// the whole batch with the same kernel; then a send and a recv that disagree on the shape fail on
// both ranks, naming the tensor.
#include "pipeline_mlp.h"

#include <tessera/dist.hpp>

#include "DistTest.h"

using namespace disttest;
namespace td = tessera::dist;

namespace {

const int64_t kMicro = 3, kMicroRows = 5, kD = 24;  // micro-batches of 5 rows, 24 features
int P = 1, R = 0;
uint64_t seed = 0;
const tessera_kernel_desc* layerKernel = nullptr;

std::vector<float> uniform(uint64_t stream, size_t n, float scale) {
  std::vector<float> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = scale * float(int64_t(rnd(seed, stream, i) % 2001) - 1000) / 1000.f;
  return v;
}

struct Layer {
  Buffer w{kD * kD * 4}, b{kD * 4};
};

std::vector<uint8_t> bytesOf(const std::vector<float>& v) {
  return std::vector<uint8_t>(reinterpret_cast<const uint8_t*>(v.data()),
                              reinterpret_cast<const uint8_t*>(v.data() + v.size()));
}

// Layer l's weights, the same on every rank that builds them.
void load(Layer& L, int l) {
  L.w.upload(bytesOf(uniform(1000 + l, kD * kD, 0.35f)));
  L.b.upload(bytesOf(uniform(2000 + l, kD, 0.1f)));
}

void apply(Layer& L, Buffer& in, Buffer& out, int64_t rows) {
  tessera_tensor x = in.view(TESSERA_F32, {rows, kD}), w = L.w.view(TESSERA_F32, {kD, kD}),
                 b = L.b.view(TESSERA_F32, {kD}), y = out.view(TESSERA_F32, {rows, kD});
  tessera_arg args[] = {tessera_arg_tensor(&x), tessera_arg_tensor(&w), tessera_arg_tensor(&b), tessera_arg_tensor(&y)};
  require(tessera_launch(layerKernel, nullptr, args, 4), "layer");
}

// Layers [first, last) on `rows` rows in place of `act` (ping-ponging through `tmp`).
void layers(std::vector<Layer>& Ls, int first, int last, Buffer& act, Buffer& tmp, int64_t rows) {
  for (int l = first; l < last; ++l) {
    apply(Ls[l], act, tmp, rows);
    require(tessera_memcpy(act.data(), tmp.data(), rows * kD * 4), "copy activations");
  }
}

void pipeline(tessera_comm pp) {
  int stages = P, s = R, L = 2 * stages;
  std::vector<Layer> all(L);
  for (int l = 0; l < L; ++l) load(all[l], l);
  int64_t rows = kMicro * kMicroRows;
  std::vector<float> batch = uniform(1, rows * kD, 1.0f);

  // The reference: one process, every layer, the whole batch; the activations after each stage.
  Buffer ref(rows * kD * 4), tmp(rows * kD * 4);
  ref.upload(bytesOf(batch));
  std::vector<std::vector<uint8_t>> after(stages);
  for (int st = 0; st < stages; ++st) {
    layers(all, 2 * st, 2 * st + 2, ref, tmp, rows);
    after[st] = ref.download();
  }

  // GPipe: every micro-batch through this stage, received from the previous one, sent onwards.
  Buffer act(kMicroRows * kD * 4), t2(kMicroRows * kD * 4);
  std::vector<uint8_t> mine;
  tessera_collective_options o{nullptr, 0, 0, "activations"};
  for (int64_t m = 0; m < kMicro; ++m) {
    tessera_tensor ta = act.view(TESSERA_F32, {kMicroRows, kD});
    if (s == 0) {
      auto first = batch.begin() + m * kMicroRows * kD;
      act.upload(bytesOf(std::vector<float>(first, first + kMicroRows * kD)));
    } else {
      require(tessera_recv(pp, &ta, s - 1, &o), "recv from the previous stage");
    }
    layers(all, 2 * s, 2 * s + 2, act, t2, kMicroRows);
    if (s + 1 < stages) require(tessera_send(pp, &ta, s + 1, &o), "send to the next stage");
    std::vector<uint8_t> out = act.download();
    mine.insert(mine.end(), out.begin(), out.end());
  }
  require(tessera_comm_synchronize(pp, nullptr), "synchronize");
  expect(mine == after[s], "stage %d: the pipelined activations differ from one process's", s);
  if (R == P - 1)
    std::printf("pipeline of %d stages x 2 layers, %lld micro-batches of %lld rows: output digest %016llx\n", stages,
                (long long)kMicro, (long long)kMicroRows, (unsigned long long)digest(mine));
}

// A stage that sends f32[5, 24] to one that expects f32[5, 25]: both fail before data moves.
void mismatch(tessera_comm pp) {
  if (P < 2 || R > 1) return;
  Buffer b(kMicroRows * (kD + 1) * 4);
  tessera_collective_options o{nullptr, 0, 0, "activations"};
  tessera_tensor t = b.view(TESSERA_F32, {kMicroRows, R == 0 ? kD : kD + 1});
  tessera_status st = R == 0 ? tessera_send(pp, &t, 1, &o) : tessera_recv(pp, &t, 0, &o);
  std::string msg = tessera_last_error_message();
  expect(st == TESSERA_ERROR_SHAPE_MISMATCH && msg.find("send/recv of 'activations'") != std::string::npos &&
             msg.find("rank 0 passes f32[5, 24]") != std::string::npos &&
             msg.find("rank 1 passes f32[5, 25]") != std::string::npos,
         "mismatched send/recv: %s: %s", tessera_status_name(st), msg.c_str());
}

}  // namespace

int main() {
  tessera_comm w = start();
  tessera_comm_size(w, &P);
  tessera_comm_rank(w, &R);
  seed = agreeSeed(w);
  static void* volatile keep = reinterpret_cast<void*>(&pipeline_mlp_layer);
  (void)keep;
  require(tessera_find_kernel("pipeline_mlp", "layer", &layerKernel), "tessera_find_kernel");
  td::Mesh mesh;
  require(td::Mesh::create({"pp"}, {P}, mesh).code(), "mesh");
  pipeline(mesh.comm("pp").get());
  mismatch(mesh.comm("pp").get());
  mesh.reset();
  return finish("pipeline");
}
