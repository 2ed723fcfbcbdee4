#!/usr/bin/env bash
# tests/campaign/run.sh <mpich|openmpi|ompi5>: mpift-campaign end to end.
#
# Builds examples/master_worker.cpp against target/<mpi>/release/libmpift.a (make
# MPI=<mpi> lib first) and the runner (cargo build --release -p mpift-campaign, if
# target/release/mpift-campaign is missing), then:
#   1. a campaign on the workers (ranks 2 and 4), every 7th call: every run PASS,
#      summary.json's PASS = runs = lines of runs.jsonl, exit 0, a PNG matrix;
#   2. the same again: resumed, nothing re-run;
#   3. an --expect the failure-free run fails stops the campaign (exit 1); --sample 3
#      of the manager's waits with an --expect only a failure-free run meets: 3 WRONG, exit 1;
#   4. usage errors (no command, --sample 0, a rank that does not exist): exit 2.
# The runner runs each mpiexec under its own deadline; each campaign also runs under
# `timeout`. Prints "PASS|FAIL <case>" and "N passed, M failed"; exits nonzero if any
# case failed. CAMPAIGN_KEEP=1 keeps the work directory.
set -u
cd "$(dirname "$0")/../.."
mpi=${1:-}
usage_more=''
. tests/campaign/common.sh
work=$(mktemp -d /tmp/mpift-campaign.XXXXXX)
passed=0 failed=0

prog=$work/master_worker
"$MPICXX" -O2 -Iinclude/compat -Iinclude -I"target/$mpi/release/include" examples/master_worker.cpp "$lib" \
  -lpthread -ldl -lm -lgcc_s -lutil -lrt -o "$prog" || { echo "cannot build master_worker" >&2; exit 1; }
cd "$work"
job=("$MPIEXEC" -n 5 ./master_worker --kill 0)

# 1. Worker deaths, every 7th call: master_worker survives each (the surviving group
#    redoes the lost job) and prints "sum = ... (correct)".
timeout 1200 "$bin" --out c1 --jobs 2 --ranks 2,4 --every 7 --expect '\(correct\)$' -- "${job[@]}" > log 2>&1
status=$?
runs=$(json c1/summary.json runs) pass=$(json c1/summary.json PASS)
lines=$(wc -l < c1/runs.jsonl 2>/dev/null || echo 0)
if [ "$status" = 0 ] && [ -n "$runs" ] && [ "$runs" -ge 5 ] && [ "$runs" = "$pass" ] && [ "$lines" = "$runs" ] \
   && head -c 4 c1/matrix.png | grep -q PNG; then r=ok; else r=no; fi
check $r "--ranks 2,4 --every 7: $pass of $runs runs PASS, $lines records, exit $status"

# 2. Resumed: the same campaign again runs nothing new.
timeout 600 "$bin" --out c1 --jobs 2 --ranks 2,4 --every 7 --expect '\(correct\)$' -- "${job[@]}" > log 2>&1
status=$?
lines2=$(wc -l < c1/runs.jsonl)
if [ "$status" = 0 ] && [ "$lines2" = "$lines" ] && grep -q "($runs done before)" log; then r=ok; else r=no; fi
check $r "resume: exit $status, $lines2 records (was $lines)"

# 3. An --expect that only the failure-free run meets ("(no failure; ..."), with the
#    manager dying while it waits for results: every sampled run is WRONG, exit 1,
#    replay commands listed. (An --expect the failure-free run fails stops the
#    campaign before any kill: checked too.)
timeout 600 "$bin" --out c3 --expect 'no line says this' -- "${job[@]}" > log 2>&1
status=$?
if [ "$status" = 1 ] && grep -q "failure-free run failed: WRONG" log; then r=ok; else r=no; fi
check $r "an --expect the failure-free run fails: exit $status, campaign stopped"
timeout 1200 "$bin" --out c3 --fresh --jobs 2 --ranks 0 --calls-of MPI_Wait --sample 3 --seed 5 --expect '\(no failure;' -- "${job[@]}" > log 2>&1
status=$?
runs=$(json c3/summary.json runs) wrong=$(json c3/summary.json WRONG)
if [ "$status" = 1 ] && [ "$runs" = 3 ] && [ "$wrong" = 3 ] && [ "$(grep -c "^  WRONG MPIFT_KILL='rank=" log)" = 3 ]; then r=ok; else r=no; fi
check $r "--sample 3 with a wrong --expect: $wrong of $runs WRONG, exit $status"

# 4. Usage errors: clear messages, exit 2, no panic.
usage() { # usage NAME ARGS...: exit 2 and an error message
  timeout 600 "$bin" --out c4 "${@:2}" > log 2>&1
  status=$?
  if [ "$status" = 2 ] && grep -qi error log && ! grep -q panicked log; then r=ok; else r=no; fi
  check $r "usage error ($1): exit $status"
}
usage "no command" --every 7
usage "--sample 0" --sample 0 -- "${job[@]}"
usage "bad range" --ranks 3-1 -- "${job[@]}"
usage "rank out of range" --ranks 9 -- "${job[@]}"

echo "$passed passed, $failed failed"
if [ "${CAMPAIGN_KEEP:-0}" = 1 ]; then echo "kept $work"; else rm -rf "$work"; fi
[ "$failed" = 0 ]
