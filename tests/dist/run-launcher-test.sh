#!/usr/bin/env bash
# run-launcher-test.sh <tessera-run> <dist_collectives_test>
# The torchrun-style path without GPUs: tessera-run starts the ranks, they meet at the TCP
# rendezvous and agree on their devices, and since CPU ranks move data with MPI every rank
# refuses with the same message before meeting the others. Then: a failing rank ends the job
# with its status after the grace period. (The rendezvous itself, its timeouts and a vanished
# rank 0 are covered by the unit tests, tests/unit/dist/TcpStoreTests.cpp.)
set -uo pipefail
run=$1 prog=$2
status=0
fail() { echo "FAIL: $*"; status=1; }

out=$(TESSERA_DEVICE=cpu timeout 60 "$run" -n 3 --grace 5 "$prog" 2>&1); rc=$?
n=$(echo "$out" | grep -c "3 CPU ranks were started with torchrun-style variables, but CPU ranks move their data with MPI: start them with mpirun -n 3")
[ "$rc" -ne 0 ] && [ "$n" -eq 3 ] && echo "ok: each of 3 CPU ranks refused a torchrun-style launch, saying to use mpirun" ||
  { echo "$out"; fail "expected 3 refusals and a failing status, got $n and $rc"; }

start=$(date +%s)
out=$(timeout 60 "$run" -n 2 --grace 1 sh -c 'if [ "$RANK" = 1 ]; then exit 3; fi; exec sleep 30' 2>&1); rc=$?
took=$(( $(date +%s) - start ))
[ "$rc" -eq 3 ] && [ "$took" -lt 15 ] && echo "$out" | grep -q "rank 1 exited with status 3" &&
  echo "ok: a failing rank ended the job with its status after the grace period (${took} s)" ||
  { echo "$out"; fail "status $rc after $took s"; }

exit $status
