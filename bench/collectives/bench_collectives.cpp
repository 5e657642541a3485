// bench_collectives: the deterministic collectives of libtessera_dist next to the transport
// library's own (NCCL on GPU ranks) in one run, nccl-tests style. Start one process per GPU:
//   tessera-run -n 2 build/bin/bench_collectives      (or mpirun -n 2 ...)
// Options: --min-bytes B --max-bytes B (1 MiB, 1 GiB), --dtypes bf16,f32, --ops
// all_reduce,all_gather,reduce_scatter, --iters N (20), --warmup N (5).
// For each size: tessera (deterministic, the default) and the peer, each timed over `iters`
// back-to-back calls on one stream (the slowest rank's average), algorithm bandwidth = bytes /
// time and bus bandwidth = algbw * 2(n-1)/n (all_reduce) or (n-1)/n (all_gather, reduce_scatter),
// with nccl-tests' byte counts (all_gather: the gathered buffer; reduce_scatter: the send buffer).
// Inputs are small integers, so every order sums them exactly: after timing, the two results
// must agree bit for bit, or the run fails. Signature checks are off (TESSERA_DIST_NO_SIGNATURE_
// CHECKS): they are a host round trip per call, not part of the collective.
#include <cstring>
#include <string>
#include <tessera/dist.h>
#include <vector>

#include "BenchUtil.h"
#include "runtime/dist/Peer.h"

namespace {

struct Config {
  size_t minBytes = size_t(1) << 20, maxBytes = size_t(1) << 30;
  std::vector<std::string> dtypes = {"bf16", "f32"};
  std::vector<std::string> ops = {"all_reduce", "all_gather", "reduce_scatter"};
  int iters = 20, warmup = 5;
};

std::vector<std::string> split(const std::string& s) {
  std::vector<std::string> out;
  size_t start = 0;
  for (size_t i = 0; i <= s.size(); ++i)
    if (i == s.size() || s[i] == ',') {
      if (i > start) out.push_back(s.substr(start, i - start));
      start = i + 1;
    }
  return out;
}

Config parse(int argc, char** argv) {
  Config c;
  for (int i = 1; i + 1 < argc; i += 2) {
    std::string k = argv[i], v = argv[i + 1];
    if (k == "--min-bytes")
      c.minBytes = std::stoull(v);
    else if (k == "--max-bytes")
      c.maxBytes = std::stoull(v);
    else if (k == "--dtypes")
      c.dtypes = split(v);
    else if (k == "--ops")
      c.ops = split(v);
    else if (k == "--iters")
      c.iters = std::stoi(v);
    else if (k == "--warmup")
      c.warmup = std::stoi(v);
    else {
      std::printf("unknown option %s\n", k.c_str());
      std::exit(2);
    }
  }
  return c;
}

int32_t dtypeOf(const std::string& name) {
  if (name == "bf16") return TESSERA_BF16;
  if (name == "f32") return TESSERA_F32;
  if (name == "f16") return TESSERA_F16;
  std::printf("unsupported dtype %s (bf16, f16, f32)\n", name.c_str());
  std::exit(2);
}

// Small integers in the dtype: sums are exact whatever the order.
std::vector<uint8_t> integers(int32_t dt, size_t n, int rank) {
  size_t es = tessera_dtype_bits(dt) / 8;
  std::vector<uint8_t> v(n * es);
  for (size_t i = 0; i < n; ++i) {
    float f = float(int((i * 7 + rank * 3) % 5) - 2);
    uint32_t x;
    std::memcpy(&x, &f, 4);
    if (dt == TESSERA_F32) {
      std::memcpy(&v[i * 4], &x, 4);
    } else if (dt == TESSERA_BF16) {
      uint16_t h = uint16_t(x >> 16);
      std::memcpy(&v[i * 2], &h, 2);
    } else {
      static const uint16_t halves[] = {0xc000, 0xbc00, 0x0000, 0x3c00, 0x4000};  // -2..2
      std::memcpy(&v[i * 2], &halves[int(f) + 2], 2);
    }
  }
  return v;
}

struct Run {
  tessera_comm comm;
  tessera_stream stream;
  int ranks, rank;
  void *send, *recv, *peerRecv;
};

// Average ms per call of `call` over iters back-to-back calls, the slowest rank's.
double timeCalls(const Run& r, const Config& c, const std::function<tessera_status()>& call) {
  for (int i = 0; i < c.warmup; ++i) bench::check(call(), "warm-up call");
  bench::check(tessera_comm_synchronize(r.comm, r.stream), "warm-up synchronize");
  tessera_event a, b;
  bench::check(tessera_event_create(&a), "event");
  bench::check(tessera_event_create(&b), "event");
  bench::check(tessera_event_record(a, r.stream), "record");
  for (int i = 0; i < c.iters; ++i) bench::check(call(), "timed call");
  bench::check(tessera_event_record(b, r.stream), "record");
  bench::check(tessera_comm_synchronize(r.comm, r.stream), "synchronize");
  bench::check(tessera_event_synchronize(b), "event synchronize");
  float ms = 0;
  bench::check(tessera_event_elapsed_ms(&ms, a, b), "elapsed");
  tessera_event_destroy(a);
  tessera_event_destroy(b);
  // The slowest rank's time.
  double mine = ms / c.iters, worst = 0;
  void* d = nullptr;
  bench::check(tessera_malloc(&d, 8), "malloc");
  bench::check(tessera_memcpy(d, &mine, 8), "memcpy");
  tessera_tensor t;
  int64_t one = 1;
  tessera_tensor_init(&t, d, TESSERA_F64, 1, &one, 0);
  bench::check(tessera_all_reduce(r.comm, &t, &t, TESSERA_REDUCE_MAX, nullptr), "max over ranks");
  bench::check(tessera_comm_synchronize(r.comm, nullptr), "synchronize");
  bench::check(tessera_memcpy(&worst, d, 8), "memcpy");
  tessera_free(d);
  return worst;
}

const char* fmtBytes(size_t b) {
  static char buf[32];
  if (b >= (size_t(1) << 30))
    std::snprintf(buf, sizeof buf, "%zu GiB", b >> 30);
  else if (b >= (size_t(1) << 20))
    std::snprintf(buf, sizeof buf, "%zu MiB", b >> 20);
  else
    std::snprintf(buf, sizeof buf, "%zu KiB", b >> 10);
  return buf;
}

// One (op, dtype, size) row; returns false when the two results differ.
bool row(const Run& r, const Config& c, const std::string& op, int32_t dt, size_t bytes) {
  size_t es = tessera_dtype_bits(dt) / 8, n = size_t(r.ranks);
  size_t count = bytes / es / n * n;  // elements of the full buffer, divisible by the ranks
  if (!count) return true;
  size_t sendCount = op == "all_gather" ? count / n : count, recvCount = op == "reduce_scatter" ? count / n : count;
  std::vector<uint8_t> in = integers(dt, sendCount, r.rank);
  bench::check(tessera_memcpy(r.send, in.data(), in.size()), "upload");
  tessera_tensor ts, tr;
  int64_t sc = int64_t(sendCount), rc = int64_t(recvCount);
  tessera_tensor_init(&ts, r.send, dt, 1, &sc, 0);
  tessera_tensor_init(&tr, r.recv, dt, 1, &rc, 0);
  tessera_collective_options o{r.stream, 0, TESSERA_ORDER_TREE, "bench"};
  tessera::dist::PeerOp peerOp = op == "all_reduce"   ? tessera::dist::PeerOp::AllReduce
                                 : op == "all_gather" ? tessera::dist::PeerOp::AllGather
                                                      : tessera::dist::PeerOp::ReduceScatter;
  auto ours = [&] {
    if (op == "all_reduce") return tessera_all_reduce(r.comm, &ts, &tr, TESSERA_REDUCE_SUM, &o);
    if (op == "all_gather") return tessera_all_gather(r.comm, &ts, &tr, &o);
    return tessera_reduce_scatter(r.comm, &ts, &tr, TESSERA_REDUCE_SUM, &o);
  };
  auto peer = [&] {
    return tessera::dist::peerCollective(r.comm, peerOp, r.send, r.peerRecv,
                                         op == "reduce_scatter" ? recvCount : sendCount, dt, r.stream);
  };
  // The peer may lack the dtype (MPI has no bf16): then only tessera's row is timed.
  tessera_status probe = peer();
  if (probe != TESSERA_SUCCESS && probe != TESSERA_ERROR_NOT_SUPPORTED) bench::check(probe, "peer collective");
  bool hasPeer = probe == TESSERA_SUCCESS;
  double tOurs = timeCalls(r, c, ours), tPeer = hasPeer ? timeCalls(r, c, peer) : 0;
  size_t rb = recvCount * es;
  std::vector<uint8_t> a(rb), b(rb);
  bench::check(tessera_memcpy(a.data(), r.recv, rb), "download");
  bench::check(tessera_memcpy(b.data(), r.peerRecv, rb), "download");
  bool same = !hasPeer || a == b;
  double nccltestBytes = double(count * es);
  double factor = op == "all_reduce" ? 2.0 * (n - 1) / n : double(n - 1) / n;
  double algOurs = nccltestBytes / (tOurs * 1e-3) / 1e9, algPeer = hasPeer ? nccltestBytes / (tPeer * 1e-3) / 1e9 : 0;
  if (r.rank == 0) {
    std::printf("%-15s %-5s %8s %11.1f %11.1f %10.1f %10.1f %10.1f %10.1f %6.3f%s\n", op.c_str(),
                tessera_dtype_name(dt), fmtBytes(bytes), tOurs * 1e3, tPeer * 1e3, algOurs, algPeer, algOurs * factor,
                algPeer * factor, tPeer / tOurs,
                same ? (hasPeer ? "" : "  (no peer for this dtype)") : "  RESULTS DIFFER");
    std::printf("csv,%s,%s,%zu,%.3f,%.3f,%.2f,%.2f,%.2f,%.2f\n", op.c_str(), tessera_dtype_name(dt), count * es,
                tOurs * 1e3, tPeer * 1e3, algOurs, algPeer, algOurs * factor, algPeer * factor);
  }
  return same;
}

}  // namespace

int main(int argc, char** argv) {
  Config c = parse(argc, argv);
  tessera_dist_options opts{sizeof opts, TESSERA_DIST_NO_SIGNATURE_CHECKS, 0};
  bench::check(tessera_dist_init(&opts), "tessera_dist_init");
  Run r{};
  bench::check(tessera_dist_world(&r.comm), "world");
  tessera_comm_size(r.comm, &r.ranks);
  tessera_comm_rank(r.comm, &r.rank);
  bench::check(tessera_stream_create(&r.stream), "stream");
  bench::check(tessera_malloc(&r.send, c.maxBytes), "send buffer");
  bench::check(tessera_malloc(&r.recv, c.maxBytes), "recv buffer");
  bench::check(tessera_malloc(&r.peerRecv, c.maxBytes), "peer recv buffer");
  if (r.rank == 0) {
    std::printf("bench_collectives: %s; device %s; peer %s; %d iterations after %d warm-ups; signature checks off\n",
                tessera_dist_describe(), tessera_device_name(), tessera::dist::peerName(r.comm), c.iters, c.warmup);
    std::printf("%-15s %-5s %8s %11s %11s %10s %10s %10s %10s %6s\n", "collective", "dtype", "size", "tessera_us",
                "peer_us", "algbw", "peer_alg", "busbw", "peer_bus", "ratio");
  }
  bool ok = true;
  for (const std::string& op : c.ops)
    for (const std::string& d : c.dtypes)
      for (size_t bytes = c.minBytes; bytes <= c.maxBytes; bytes *= 2) ok = row(r, c, op, dtypeOf(d), bytes) && ok;
  if (r.rank == 0)
    std::printf("bandwidths in GB/s; ratio = peer time / tessera time (1.0: as fast as the peer)%s\n",
                ok ? "" : "; FAIL: results differ");
  tessera_free(r.send);
  tessera_free(r.recv);
  tessera_free(r.peerRecv);
  tessera_stream_destroy(r.stream);
  tessera_dist_finalize();
  return ok ? 0 : 1;
}
