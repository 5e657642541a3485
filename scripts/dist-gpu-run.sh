#!/usr/bin/env bash
# dist-gpu-run.sh [ranks]  (in a bundle made by scripts/dist-device-bundle.sh, on a GPU machine)
# Runs the distributed runtime on `ranks` GPUs (default: every GPU) with tessera-run, and writes
# summary.txt and one log per step under $OUT (or ./out):
#  1. the examples (tp_gemm across tp, the data-parallel gradient, the overlapped collective
#     matmul, the pipeline, and on 2 or 4 ranks the dp x tp training step), every element
#     checked; dist_collectives_test also under compute-sanitizer (memcheck) on every rank;
#  2. the GPU reduction kernels against the CPU's, bit for bit (dist_reduce_parity);
#  3. determinism: the digests of deterministic all_reduce and reduce_scatter (and on 2 or 4
#     ranks of the training step's losses and weights) under NCCL_ALGO ring/tree x NCCL_PROTO
#     Simple/LL/LL128, 10 runs each, equal to each other and to the CPU ranks' digests
#     (cpu_digests.txt, from mpirun on the build machine);
#  4. faults: a killed and a stalled rank, with and without signature checks; the survivors
#     must report an error within the 5 s timeout (plus a margin);
#  5. bench_collectives, 1 MiB to 1 GiB, bf16 and f32, and the ratios at 256 MiB and above
#     against the targets (all_reduce 0.9, all_gather and reduce_scatter 0.95), and at 1 MiB
#     (at most 2x NCCL's time);
#  6. bench_overlap: the overlapped tensor-parallel GEMM against NCCL all_gather + cuBLAS.
# NVLink multicast stays off (NCCL_NVLS_ENABLE=0) as the machines require; NCCL_DEBUG=WARN puts
# NCCL's own warnings in the logs. For a short device lease: DIGEST_RUNS and TRAIN_RUNS (runs per
# algorithm/protocol pair, 10), MEMCHECK=0 (skips compute-sanitizer), BENCH_ARGS (for
# bench_collectives).
set -u
cd "$(dirname "$0")"
OUT=${OUT:-$PWD/out}
mkdir -p "$OUT"
export LD_LIBRARY_PATH=$PWD/lib:${LD_LIBRARY_PATH:-}
nccl=$(python3 -c "import nvidia.nccl, os; print(os.path.join(list(nvidia.nccl.__path__)[0], 'lib'))" 2>/dev/null)
[ -d "${nccl:-}" ] && export LD_LIBRARY_PATH=$nccl:$LD_LIBRARY_PATH
cublas=$(python3 -c "import nvidia.cublas, os; print(os.path.join(list(nvidia.cublas.__path__)[0], 'lib'))" 2>/dev/null)
[ -d "${cublas:-}" ] && export LD_LIBRARY_PATH=$cublas:$LD_LIBRARY_PATH
export NCCL_NVLS_ENABLE=0 NCCL_DEBUG=WARN TESSERA_DEVICE=gpu TESSERA_DIST_TIMEOUT=120
n=${1:-$(nvidia-smi -L | wc -l)}
S=$OUT/summary.txt
{ echo "date: $(date -u +%FT%TZ), $n ranks"; nvidia-smi --query-gpu=index,name,driver_version --format=csv,noheader; } > "$S"
step() { # name, command...: runs it, logs it, adds a line to the summary
  local name=$1; shift
  local t0=$(date +%s%N)
  "$@" > "$OUT/$name.log" 2>&1; local rc=$?
  printf "%-24s rc=%-3d %7d ms  %s\n" "$name" "$rc" $(( ($(date +%s%N) - t0) / 1000000 )) \
    "$(grep -v '^csv' "$OUT/$name.log" | grep -v '^tessera-run' | tail -1)" >> "$S"
}
step tp_gemm ./tessera-run -n "$n" ./dist_tp_gemm_test
step dp_grad ./tessera-run -n "$n" ./dist_dp_grad_test
step collectives ./tessera-run -n "$n" ./dist_collectives_test
step overlap ./tessera-run -n "$n" ./dist_overlap_test
step pipeline ./tessera-run -n "$n" ./dist_pipeline_test
train=0
if [ "$n" = 2 ] || [ "$n" = 4 ]; then train=1; step train_step ./tessera-run -n "$n" ./dist_train_step_test; fi
step reduce_parity ./dist_reduce_parity
if [ "${MEMCHECK:-1}" = 1 ] && command -v compute-sanitizer > /dev/null; then
  step collectives_memcheck ./tessera-run -n "$n" --grace 120 compute-sanitizer --tool memcheck \
    --error-exitcode 9 ./dist_collectives_test
fi

# 3. Determinism across NCCL's algorithms and protocols, 10 runs each.
: > "$OUT/digests.log"
want=$(grep "ranks=$n:" cpu_digests.txt)
status="equal to the CPU ranks' bits"
for algo in "allreduce:ring" "allreduce:tree"; do
  for proto in Simple LL LL128; do
    for run in $(seq "${DIGEST_RUNS:-10}"); do
      got=$(NCCL_ALGO=$algo NCCL_PROTO=$proto ./tessera-run -n "$n" ./dist_digest 2>&1 | grep '^digest' | sort)
      echo "$algo $proto run $run: $(echo "$got" | md5sum | cut -c1-16)" >> "$OUT/digests.log"
      [ "$got" = "$want" ] || { status="DIFFERENT ($algo $proto run $run)"; echo "$got" >> "$OUT/digests.log"; }
    done
  done
done
echo "digests                 $((6 * ${DIGEST_RUNS:-10})) runs (ring/tree x Simple/LL/LL128 x ${DIGEST_RUNS:-10}): $status" >> "$S"

# The training step: its block's kernels differ between the GPU and the CPU executor, so its bits
# are compared among the GPU runs (the first one is the reference), 10 runs x 6 pairs again.
if [ $train = 1 ]; then
  : > "$OUT/train_digests.log"
  first="" status="the same bits in every run"
  for algo in "allreduce:ring" "allreduce:tree"; do
    for proto in Simple LL LL128; do
      for run in $(seq "${TRAIN_RUNS:-10}"); do
        got=$(TESSERA_TEST_SEED=7 NCCL_ALGO=$algo NCCL_PROTO=$proto ./tessera-run -n "$n" ./dist_train_step_test 2>&1 |
              grep '^digest' | sort)
        echo "$algo $proto run $run: $(echo "$got" | md5sum | cut -c1-16)" >> "$OUT/train_digests.log"
        [ -n "$first" ] || first=$got
        [ -n "$got" ] && [ "$got" = "$first" ] || { status="DIFFERENT ($algo $proto run $run)"; echo "$got" >> "$OUT/train_digests.log"; }
      done
    done
  done
  echo "train_step digests      $((6 * ${TRAIN_RUNS:-10})) runs (ring/tree x Simple/LL/LL128 x ${TRAIN_RUNS:-10}): $status" >> "$S"
fi

# 4. Faults (the kill needs the survivors to outlive the killed rank: --grace).
# With signature checks the survivors wait in the rendezvous exchange; without them in NCCL,
# where the watchdog / tessera_comm_synchronize must abort the communicator.
for mode in kill stall; do
  for checks in 1 0; do
    log=$OUT/fault_${mode}_checks$checks.log
    TESSERA_DIST_CHECKS=$checks TESSERA_DIST_TIMEOUT= TESSERA_FAULT_TIMEOUT=5 \
      ./tessera-run -n "$n" --grace 60 ./dist_fault "$mode" > "$log" 2>&1
    echo "fault $mode checks=$checks      $(grep -c 'FAULT-RESULT rank [0-9]* PASS' "$log") of $((n - 1)) survivors PASS; $(grep -m1 ': got ' "$log")" >> "$S"
  done
done

# 5. Speed against NCCL.
step bench ./tessera-run -n "$n" ./bench_collectives ${BENCH_ARGS:-}
echo "--- bench_collectives (GB/s; ratio = NCCL time / tessera time) ---" >> "$S"
grep -v '^csv' "$OUT/bench.log" >> "$S"
awk -F, '/^csv/ && $4 == 1048576 {
  printf "bar %-15s %-5s %11d bytes: %.1f us vs NCCL %.1f us = %.2fx NCCL (target at most 2x) %s\n", $2, $3, $4, $5, $6, $5 / $6, ($5 / $6 <= 2) ? "ok" : "ABOVE" }' \
  "$OUT/bench.log" >> "$S"
awk -F, '/^csv/ && $4 >= 268435456 {
  target = ($2 == "all_reduce") ? 0.9 : 0.95;
  printf "bar %-15s %-5s %11d bytes: busbw %.1f vs NCCL %.1f GB/s = %.3f (target %.2f) %s\n", $2, $3, $4, $9, $10, $9 / $10, target, ($9 / $10 >= target) ? "ok" : "BELOW" }' \
  "$OUT/bench.log" >> "$S"

# 6. The collective matmul against NCCL all_gather + cuBLAS.
step bench_overlap ./tessera-run -n "$n" ./bench_overlap
echo "--- bench_overlap ---" >> "$S"
grep -v '^csv' "$OUT/bench_overlap.log" >> "$S"
cat "$S"
