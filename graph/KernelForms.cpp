#include "graph/KernelForms.h"

#include "graph/Graph.h"

namespace tessera::graph {

namespace {

// Output blocks of BM x BN per group, k in steps of BK: 64 x 64 fp32 accumulators over 128
// tiles (32 registers a tile), the shape the tile.dot lowering handles best on both targets.
constexpr int BM = 64, BN = 64, BK = 32;

std::string str(int v) { return std::to_string(v); }

}  // namespace

// The canonical loop of stdlib.linalg.gemm_bf16 with the graph's result dtype (the Hopper form
// rounds the f32 accumulator to y's type once, in its epilogue) and B optionally K-major.
std::string mmaMatmul(const std::string& name, DType d, bool tb) {
  std::string dt = dtypeName(d);
  std::string s = "@kernel\ndef " + name + "(a: " + dt + "[M, K], b: " + dt + (tb ? "[N, K]" : "[K, N]") + ", y: mut " +
                  dt + "[M, N]):\n";
  s += std::string("    for m, n, k in tile.mma(a, ") + (tb ? "b.T" : "b") + ", y, BM=128, BN=128, BK=32):\n";
  s += "        tile.mma_sync(m, n, k)\n\n";
  return s;
}

// C[mb, nb] = sum over k blocks of A[mb, kb] @ B[kb, nb]; the outermost block loop hands each
// group a block of rows, the inner one walks the columns. Transposed operands are read as
// blocks of the stored layout and transposed as tiles (no copy of the whole tensor). The
// accumulator is f32 for every dtype (tile.dot's), rounded to y's type by the store.
std::string tiledMatmul(const std::string& name, DType d, bool ta, bool tb) {
  std::string dt = dtypeName(d);
  std::string s = "@kernel tile[(128,)]\ndef " + name + "(";
  s += std::string("a: ") + dt + (ta ? "[K, M]" : "[M, K]") + ", b: " + dt + (tb ? "[N, K]" : "[K, N]") + ", y: mut " +
       dt + "[M, N]):\n";
  s += "    for mb in tile.range(a, axis=" + std::string(ta ? "1" : "0") + ", step=" + str(BM) + "):\n";
  s += "        for nb in tile.range(b, axis=" + std::string(tb ? "0" : "1") + ", step=" + str(BN) + "):\n";
  s += "            acc = tile.zeros((" + str(BM) + ", " + str(BN) + "))\n";
  s += "            for kb in tile.range(a, axis=" + std::string(ta ? "0" : "1") + ", step=" + str(BK) + "):\n";
  s += std::string("                acc = acc + tile.dot(") + (ta ? "a[kb, mb].T" : "a[mb, kb]") + ", " +
       (tb ? "b[nb, kb].T" : "b[kb, nb]") + ")\n";
  s += "            y[mb, nb] = acc\n\n";
  return s;
}

// q, k, v = the thirds of x's last axis: one tile per element of q copies one element of each.
std::string splitQKV(const std::string& name, DType d) {
  std::string dt = dtypeName(d);
  std::string s = "@kernel\ndef " + name + "(x: " + dt + "[R, C], q: mut " + dt + "[R, E], k: mut " + dt +
                  "[R, E], v: mut " + dt + "[R, E]):\n";
  s += "    t = tile.linear_id()\n";
  s += "    if t < R * E:\n";
  s += "        i = t // E\n";
  s += "        j = t % E\n";
  s += "        q[i, j] = x[i, j]\n";
  s += "        k[i, j] = x[i, E + j]\n";
  s += "        v[i, j] = x[i, 2 * E + j]\n\n";
  return s;
}

}  // namespace tessera::graph
