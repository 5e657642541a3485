#!/usr/bin/env bash
# run-fault-test.sh "<mpirun;flags...>" <ranks> kill|stall <dist_fault>
# Runs the fault test and checks that every surviving rank reported PASS (mpirun's own exit
# status is not used: a job that lost a rank fails by design). A killed rank takes the job with
# it unless mpirun keeps the others running (Open MPI: --enable-recovery); without that option
# the kill test is skipped (77).
set -uo pipefail
IFS=';' read -r -a mpirun <<<"$1"
np=$2 mode=$3 prog=$4
extra=()
if [ "$mode" = kill ]; then
  help=$("${mpirun[@]}" --help all 2>&1)
  if ! grep -q -- --enable-recovery <<<"$help"; then
    echo "SKIP: ${mpirun[0]} cannot keep a job running after a rank dies (no --enable-recovery)"
    exit 77
  fi
  extra=(--enable-recovery)
fi
# Twice: with signature checks (the survivors wait in the host exchange) and without them (in
# the data transfers).
status=0
for checks in 1 0; do
  out=$(TESSERA_DIST_CHECKS=$checks timeout 60 "${mpirun[@]}" "${extra[@]}" -n "$np" "$prog" "$mode" 2>&1)
  echo "$out" | grep -v "PMIX ERROR" | head -40
  pass=$(echo "$out" | grep -c "^FAULT-RESULT rank [0-9]* PASS")
  if [ "$pass" -ne $((np - 1)) ]; then
    echo "FAIL (checks=$checks): $pass of $((np - 1)) surviving ranks reported PASS"
    status=1
  else
    echo "ok (checks=$checks): all $((np - 1)) surviving ranks got an error within the timeout"
  fi
done
exit $status
