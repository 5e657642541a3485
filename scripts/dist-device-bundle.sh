#!/usr/bin/env bash
# dist-device-bundle.sh <build dir> <bundle dir>
# Packs what the GPU runs of the distributed runtime need into one directory that travels to a
# GPU machine without MPI or a toolkit (the device tool's carried folder): the test, example and
# benchmark programs, tessera-run, the MPI libraries they link (MPI_Init is never called in
# torchrun-style launches), the digests of 2, 3 and 4 CPU ranks (mpirun here) to compare the GPU
# bits with, and scripts/dist-gpu-run.sh. On the GPU machine: `<bundle>/dist-gpu-run.sh [ranks]`.
set -euo pipefail
build=$1 out=$2
rm -rf "$out"
mkdir -p "$out/lib"
for p in dist_collectives_test dist_tp_gemm_test dist_dp_grad_test dist_overlap_test dist_pipeline_test \
         dist_train_step_test dist_reduce_parity dist_digest dist_fault bench_collectives bench_overlap tessera-run; do
  cp "$build/bin/$p" "$out/"
  strip "$out/$p"
done
for lib in $(ldd "$build/bin/dist_digest" | awk '/libmpi|libopen-|libhwloc|libevent/ {print $3}'); do
  cp -L "$lib" "$out/lib/"
done
mpirun=$(command -v mpirun || true)
for np in 2 3 4; do
  if [ -n "$mpirun" ]; then
    TESSERA_DEVICE=cpu "$mpirun" --allow-run-as-root --oversubscribe -n "$np" "$build/bin/dist_digest" | grep '^digest'
  else # equal by tests/dist/run-digest-test.sh
    TESSERA_DEVICE=cpu "$build/bin/dist_digest" --virtual-ranks "$np" | grep '^digest'
  fi
done | sort > "$out/cpu_digests.txt"
cp "$(dirname "$0")/dist-gpu-run.sh" "$out/"
du -sh "$out"
