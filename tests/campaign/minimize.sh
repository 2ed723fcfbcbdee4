#!/usr/bin/env bash
# tests/campaign/minimize.sh <mpich|openmpi|ompi5>: `mpift-campaign minimize` end to end.
#
# Builds tests/campaign/minimize_prog.c against target/<mpi>/release/libmpift.a
# (make MPI=<mpi> lib first): 6 ranks, 300 local calls each, then the survivors
# print `result: OK` unless every rank named on its command line (the checkpoint's
# holders) is dead. Seven deaths (two of rank 1, two of rank 5, one each of ranks
# 2, 3, 4); --expect '^result: OK'. Then:
#   1. holders 2,4: the minimal set is exactly ranks 2's and 4's deaths (2 of 7),
#      1-minimal, exit 0, minimize.json lists the steps;
#   2. the printed replay command fails the same way (exit 0, `result: LOST`: WRONG);
#   3. --from-report with the MPIFT report of a run of all seven: its deaths (one per
#      rank, cause `rule`: 5) and seed; holder 3: rank 3's death alone (1 of 5);
#   4. deaths that do not fail: exit 1, "did not fail"; a policy rule in --kill: exit 2.
# Every run has the runner's deadline, every minimize `timeout`. Prints "PASS|FAIL
# <case>" and "N passed, M failed"; exits nonzero if any case failed.
# CAMPAIGN_KEEP=1 keeps the work directory.
set -u
cd "$(dirname "$0")/../.."
mpi=${1:-}
usage_more=''
. tests/campaign/common.sh
work=$(mktemp -d /tmp/mpift-minimize.XXXXXX)
passed=0 failed=0

"$MPICC" -Wall -Wextra -Werror -O2 -Iinclude/compat -Iinclude -I"target/$mpi/release/include" tests/campaign/minimize_prog.c "$lib" \
  -lpthread -ldl -lm -lgcc_s -lutil -lrt -o "$work/minimize_prog" || { echo "cannot build minimize_prog" >&2; exit 1; }
cd "$work"
deaths='rank=1@call=40;rank=5@call=30;rank=2@call=120;rank=3@call=60;rank=1@call=150;rank=4@call=201;rank=5@call=250'
minimize() { # minimize OUT HOLDERS ARGS...: the runner's minimize, output in log
  local out=$1 holders=$2
  shift 2
  timeout 300 "$bin" minimize --out "$out" --expect '^result: OK' "$@" -- "$MPIEXEC" -n 6 ./minimize_prog "$holders" > log 2>&1
}
# minimize.json's value at a key ("minimal_rule", "complete", ...).
mj() { python3 -c 'import json,sys; v=json.load(open(sys.argv[1]))[sys.argv[2]]; print(json.dumps(v) if isinstance(v, (list, bool)) else v)' "$1/minimize.json" "$2" 2>/dev/null; }

# 1. Two of seven deaths matter.
start=$SECONDS
minimize m2 2,4 --kill "$deaths"
status=$?
rule=$(mj m2 minimal_rule) complete=$(mj m2 complete) runs=$(mj m2 runs)
steps=$(python3 -c 'import json,sys; s=json.load(open(sys.argv[1]))["steps"]; print(len(s) if all({"candidate","runs","verdicts","kept"} <= set(x) for x in s) else 0)' m2/minimize.json 2>/dev/null)
if [ "$status" = 0 ] && [ "$rule" = 'rank=2@call=120;rank=4@call=201' ] && [ "$complete" = true ] && [ "${steps:-0}" -gt 1 ] \
   && grep -q "^rule: rank=2@call=120;rank=4@call=201$" log; then r=ok; else r=no; fi
check $r "2 of 7 deaths matter: found \`$rule\` (complete $complete) in $runs runs, $steps candidates, $((SECONDS - start)) s, exit $status"

# 2. The printed replay command fails the same way: WRONG (exit 0, no OK line).
replay=$(sed -n 's/^replay: //p' log)
timeout 120 sh -c "$replay" > replay.out 2>&1
status=$?
if [ -n "$replay" ] && [ "$status" = 0 ] && grep -q '^result: LOST' replay.out && ! grep -q '^result: OK' replay.out; then r=ok; else r=no; fi
cp replay.out log
check $r "the replay command fails the same way: exit $status, $(grep -o '^result: [A-Z]*' replay.out)"

# 3. From the report of a run of all seven (m2's first run, in the directory named
#    after its rule): one death per rank (ranks 1 and 5 at their first rules), its
#    seed; holder 3: one death of the five matters.
report=m2/runs/$(printf %s "$deaths" | tr -c 'A-Za-z0-9.' _).1/report.json
start=$SECONDS
minimize mr 3 --from-report "$report"
status=$?
# The report lists deaths in the order they happened: compared sorted.
rule=$(mj mr minimal_rule) seed=$(mj mr seed)
all=$(python3 -c 'import json,sys; print(";".join(sorted(json.load(open(sys.argv[1]))["deaths"])))' mr/minimize.json 2>/dev/null)
if [ "$status" = 0 ] && [ "$rule" = 'rank=3@call=60' ] && [ "$seed" = 1 ] \
   && [ "$all" = 'rank=1@call=40;rank=2@call=120;rank=3@call=60;rank=4@call=201;rank=5@call=30' ]; then r=ok; else r=no; fi
check $r "--from-report: deaths $all, seed $seed, found \`$rule\`, $((SECONDS - start)) s, exit $status"

# 4. Nothing to minimize; a policy rule is not a death.
minimize mn 2,4 --kill 'rank=1@call=40;rank=5@call=30'
status=$?
if [ "$status" = 1 ] && grep -q "did not fail the same way" log; then r=ok; else r=no; fi
check $r "deaths that do not fail: exit $status"
minimize mu 2,4 --kill 'rate=0.01'
status=$?
if [ "$status" = 2 ] && grep -qi error log && ! grep -q panicked log; then r=ok; else r=no; fi
check $r "usage error (a policy rule in --kill): exit $status"

echo "$passed passed, $failed failed"
if [ "${CAMPAIGN_KEEP:-0}" = 1 ]; then echo "kept $work"; else rm -rf "$work"; fi
[ "$failed" = 0 ]
