#!/usr/bin/env bash
# run-digest-test.sh "<mpirun;flags...>" <dist_digest>
# The bits of deterministic all_reduce and reduce_scatter are the same on 10 runs of 3 ranks
# under different rank placements, and equal to one process reducing the same inputs in the
# same order (--virtual-ranks), for 2, 3 and 4 ranks.
set -uo pipefail
IFS=';' read -r -a mpirun <<<"$1"
prog=$2
digests() { grep '^digest ' | sort; }
status=0
placements=("" "--map-by core" "--map-by slot" "--bind-to none" "--rank-by slot" "--map-by ppr:3:node"
            "--bind-to core:overload-allowed" "--map-by core --bind-to none" "--map-by node --bind-to none"
            "--map-by slot --bind-to none")
first=""
for i in "${!placements[@]}"; do
  # shellcheck disable=SC2086
  out=$(timeout 120 "${mpirun[@]}" ${placements[$i]} -n 3 "$prog" 2>&1) || { echo "$out"; echo "FAIL: run $i"; exit 1; }
  d=$(echo "$out" | digests)
  [ -n "$d" ] || { echo "$out"; echo "FAIL: run $i printed no digests"; exit 1; }
  if [ -z "$first" ]; then
    first=$d
    echo "$d"
  elif [ "$d" != "$first" ]; then
    echo "FAIL: run $i (${placements[$i]:-default placement}) gave other bits:"; echo "$d"; status=1
  fi
done
[ $status -eq 0 ] && echo "ok: 10 runs of 3 ranks under ${#placements[@]} placements gave the same bits"
for np in 2 3 4; do
  ranks=$(timeout 120 "${mpirun[@]}" -n "$np" "$prog" 2>&1 | digests)
  virt=$("$prog" --virtual-ranks "$np" 2>&1 | digests)
  if [ -n "$ranks" ] && [ "$ranks" = "$virt" ]; then
    echo "ok: $np ranks and one process reducing their inputs agree"
  else
    echo "FAIL: $np ranks:"; echo "$ranks"; echo "one process:"; echo "$virt"; status=1
  fi
done
exit $status
