#include "graph/KernelForms.h"

#include "graph/Graph.h"

namespace tessera::graph {

namespace {

// Output blocks of BM x BN per group, k in steps of BK: 64 x 64 fp32 accumulators over 128
// tiles (32 registers a tile), the shape the tile.dot lowering handles best on both targets.
constexpr int BM = 64, BN = 64, BK = 32;

std::string str(int v) { return std::to_string(v); }

}  // namespace

// C[mb, nb] = sum over k blocks of A[mb, kb] @ B[kb, nb]; the outermost block loop hands each
// group a block of rows, the inner one walks the columns. Transposed operands are read as
// blocks of the stored layout and transposed as tiles (no copy of the whole tensor).
std::string tiledMatmul(const std::string& name, DType d, bool ta, bool tb) {
  std::string dt = dtypeName(d);
  std::string s = "@kernel tile[(128,)]\ndef " + name + "(";
  s += std::string("a: ") + dt + (ta ? "[K, M]" : "[M, K]") + ", b: " + dt + (tb ? "[N, K]" : "[K, N]") +
       ", y: mut " + dt + "[M, N]):\n";
  s += "    for mb in tile.range(a, axis=" + std::string(ta ? "1" : "0") + ", step=" + str(BM) + "):\n";
  s += "        for nb in tile.range(b, axis=" + std::string(tb ? "0" : "1") + ", step=" + str(BN) + "):\n";
  s += "            acc = tile.zeros((" + str(BM) + ", " + str(BN) + ")" + (d == DType::FP32 ? "" : ", dtype=" + dt) +
       ")\n";
  s += "            for kb in tile.range(a, axis=" + std::string(ta ? "0" : "1") + ", step=" + str(BK) + "):\n";
  s += std::string("                acc = acc + tile.dot(") + (ta ? "a[kb, mb].T" : "a[mb, kb]") + ", " +
       (tb ? "b[nb, kb].T" : "b[kb, nb]") + ")\n";
  s += "            y[mb, nb] = acc\n\n";
  return s;
}

// The stdlib's own kernel bodies (stdlib/nn.tessera softmax_f32, rmsnorm_safe_f32, ...): rows of
// up to 8192 elements staged in shared memory, longer rows read once per pass.
std::string stdlibRows(const std::string& name, RowsForm form, const std::string& eps) {
  std::string params = "x: f32[R, C]", call;
  switch (form) {
    case RowsForm::Softmax:
    case RowsForm::LogSoftmax: {
      const char* logsm = form == RowsForm::LogSoftmax ? "True" : "False";
      call = std::string("softmax_%s(x, y, %srows.start, 4, ") + logsm + ")";
      break;
    }
    case RowsForm::RMSNorm:
      params += ", w: f32[C]";
      call = "rmsnorm_%s(x, w, y, f32(" + eps + "), %srows.start, 4)";
      break;
    case RowsForm::LayerNorm:
      params += ", w: f32[C], b: f32[C]";
      call = "layernorm_%s(x, w, b, y, f32(" + eps + "), %srows.start, 4)";
      break;
  }
  auto form_ = [&](const char* variant, const char* buf) {
    std::string c = call;
    c.replace(c.find("%s"), 2, variant);
    c.replace(c.find("%s"), 2, buf);
    return "_tessera_nn." + c;
  };
  std::string s = "@kernel tile[(256,)] shared(32_KiB)\ndef " + name + "(" + params + ", y: mut f32[R, C]):\n";
  s += "    buf = tshared.alloc[f32](1, 8192)\n";
  s += "    if C <= 8192:\n";
  s += "        for rows in tile.range(x, axis=0, step=1):\n";
  s += "            " + form_("staged", "buf, ") + "\n";
  s += "    else:\n";
  s += "        for rows in tile.range(x, axis=0, step=1):\n";
  s += "            " + form_("direct", "") + "\n\n";
  return s;
}

// The online softmax of examples/flash_attention.tessera: the running maximum m and sum l of
// each query row carried through the key blocks, the output rescaled as m grows; the causal
// form stops at the diagonal block and masks the keys after each row. With several heads (side
// by side in the last axes, head dims dq and dv constants) each group takes a (head, query
// block) pair and works on the head's columns.
std::string tiledAttention(const std::string& name, DType d, const std::string& scale, bool causal, int64_t heads,
                           int64_t dq, int64_t dv) {
  std::string dt = dtypeName(d);
  std::string z = d == DType::FP32 ? "" : ", dtype=" + dt;
  bool multi = heads > 1;
  std::string qc = multi ? ", c0:c0 + " + std::to_string(dq) : "";
  std::string vc = multi ? ", e0:e0 + " + std::to_string(dv) : "";
  std::string s = "@kernel tile[(128,)]\ndef " + name + "(q: " + dt + "[S, D], k: " + dt + "[T, D], v: " + dt +
                  "[T, E], o: mut " + dt + "[S, E], lse: mut " + dt + "[" + std::to_string(heads) + ", S]):\n";
  s += "    scale = " + scale + "\n";
  if (multi) {
    s += "    for h, qb in tile.range(lse, axis=(0, 1), step=64):\n";
    s += "        c0 = h * " + std::to_string(dq) + "\n";
    s += "        e0 = h * " + std::to_string(dv) + "\n";
  } else {
    s += "    for qb in tile.range(q, axis=0, step=64):\n";
  }
  s += "        qt = q[qb" + qc + "]\n";
  if (causal) s += "        rows = qb.start + tile.arange(64)[:, None]\n";
  s += "        m = tile.full((64,), -inf" + z + ")\n";
  s += "        l = tile.zeros((64,)" + z + ")\n";
  s += "        acc = tile.zeros((64, " + (multi ? std::to_string(dv) : std::string("E")) + ")" + z + ")\n";
  s += std::string("        for kb in tile.range(k, axis=0, step=64") + (causal ? ", stop=qb.stop" : "") + "):\n";
  if (causal) {
    s += "            cols = kb.start + tile.arange(64)[None, :]\n";
    s += "            s = tile.where(cols <= rows, tile.dot(qt, k[kb" + qc + "].T) * scale, -inf)\n";
  } else {
    s += "            s = tile.dot(qt, k[kb" + qc + "].T) * scale\n";
  }
  s += "            m_new = max(m, tile.max(s, axis=1))\n";
  s += "            p = exp(s - m_new[:, None])\n";
  s += "            alpha = exp(m - m_new)\n";
  s += "            l = l * alpha + tile.sum(p, axis=1)\n";
  s += "            acc = acc * alpha[:, None] + tile.dot(p, v[kb" + vc + "])\n";
  s += "            m = m_new\n";
  s += "        o[qb" + vc + "] = acc / l[:, None]\n";
  s += std::string("        lse[") + (multi ? "h" : "0") + ", qb] = m + log(l)\n\n";
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
