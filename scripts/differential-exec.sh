#!/bin/bash
# Differential run of the execution tests on a machine with a GPU: each test runs twice with one
# seed (the same sizes and inputs), on the GPU and on the CPU executor. Both runs must pass
# against the reference, and every result checked exactly ("digest ... (exact)") must have the
# same bits on both devices; results checked within a bound must each be within it.
#   scripts/differential-exec.sh <dir with *_test binaries> [runs per test]
dir=${1:?usage: differential-exec.sh <dir> [runs]}
runs=${2:-2}
status=0
for t in "$dir"/*_test; do
  name=$(basename "$t")
  for r in $(seq "$runs"); do
    seed=$(od -An -N4 -tu4 /dev/urandom | tr -d ' ')
    gpu=$(TESSERA_TEST_SEED=$seed TESSERA_DEVICE=gpu timeout 300 "$t" 2>&1); grc=$?
    cpu=$(TESSERA_TEST_SEED=$seed TESSERA_DEVICE=cpu timeout 300 "$t" 2>&1); crc=$?
    gd=$(echo "$gpu" | grep '^digest'); cd=$(echo "$cpu" | grep '^digest')
    ge=$(echo "$gd" | grep '(exact)'); ce=$(echo "$cd" | grep '(exact)')
    verdict=ok
    [ $grc -ne 0 ] && verdict="gpu failed (rc $grc)"
    [ $crc -ne 0 ] && verdict="cpu failed (rc $crc)"
    [ "$verdict" = ok ] && [ "$ge" != "$ce" ] && verdict="exact results differ between GPU and CPU"
    [ "$verdict" = ok ] && [ -z "$gd" ] && verdict="no results were checked"
    sizes=$(echo "$gpu" | grep -E '^[A-Z]=' | head -1)
    echo "$name seed=$seed ${sizes:+($sizes) }exact=$(echo "$ge" | grep -c .) bounded=$(echo "$gd" | grep -c 'within') : $verdict"
    if [ "$verdict" != ok ]; then
      status=1
      echo "--- gpu"; echo "$gpu" | tail -8; echo "--- cpu"; echo "$cpu" | tail -8
    fi
  done
done
exit $status
