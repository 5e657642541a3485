#!/usr/bin/env bash
# python-device-run.sh: on a GPU machine, from the bundle of scripts/python-device-bundle.sh
# unpacked at /tmp/tsrc: the package's tests on CUDA tensors (TESSERA_DEVICE=gpu) with the
# machine's PyTorch (the GPU tests too: stream order, torch.compile, gradcheck on CUDA),
# tessera.dist in a world of one GPU, the transformer block example in bf16, and the per-call
# overhead beside Triton. Logs go to $OUT (or /tmp); a summary is printed last.
set -uo pipefail
root=/tmp/tsrc
out=${OUT:-/tmp}
export LD_LIBRARY_PATH=$root/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
export PYTHONPATH=$root:$root/src/python/tests TESSERA_CACHE_DIR=$root/cache TESSERA_DEVICE=gpu
export PYTHONUNBUFFERED=1 PYTHONDONTWRITEBYTECODE=1 NCCL_NVLS_ENABLE=0
nvcc=$(command -v nvcc || true)
[ -n "$nvcc" ] && export CUDA_HOME=$(dirname "$(dirname "$nvcc")")
py=${PYTHON:-python3}
cd $root/src/python/tests
run() {  # run NAME COMMAND...: the log in $out/NAME.log, the status and seconds in $out/NAME.rc
  local name=$1 t0=$SECONDS
  shift
  "$@" > "$out/$name.log" 2>&1
  echo "rc=$? $((SECONDS - t0))s" > "$out/$name.rc"
}
# The correctness runs side by side (the GPU has room for all), the benchmark alone afterwards.
run unittest $py -m unittest -v test_kernels test_host test_errors test_autograd test_gpu &
run dist $py dist_program.py &
run example $py $root/src/examples/python/transformer_block.py --device cuda &
wait
run overhead $py $root/src/bench/python/launch_overhead.py
# The runtime's tessera_stream_wrap on the GPU (runtime_unittests, when the bundle has it).
names="unittest dist example overhead"
if [ -x $root/bin/runtime_unittests ]; then
  run stream_wrap $root/bin/runtime_unittests -tc="*stream_wrap*"
  names="$names stream_wrap"
fi
for n in $names; do
  echo "== $n: $(cat $out/$n.rc)"
  case $n in
    unittest) grep -E "^(test_|Ran |OK|FAILED)|Error|skipped" "$out/$n.log" | grep -v "^test_.* ok$" | tail -25 ;;
    *) tail -12 "$out/$n.log" ;;
  esac
done
