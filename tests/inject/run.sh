#!/usr/bin/env bash
# tests/inject/run.sh <mpich|openmpi|ompi5>: fault-injection tests at the MPI level.
#
# Builds tests/inject/{victim,bits,legacy}.c against target/<mpi>/release/libmpift.a
# (make MPI=<mpi> lib first) with -Wall -Wextra -Werror and runs one case per
# rule type and feature: each mpiexec under `timeout` (a hang is a failure), each
# case checked on the JSON report (MPIFT_REPORT) and the programs' output.
# Prints "PASS|FAIL <case> [why]" per case and "N passed, M failed"; exits
# nonzero if any case failed. INJECT_TIMEOUT (default 90) bounds each run;
# INJECT_KEEP=1 keeps the work directory.
set -u
cd "$(dirname "$0")/../.."
root=$PWD
mpi=${1:-}
. scripts/mpi-host.sh
mpi_host "$mpi" || { echo "usage: $0 <mpich|openmpi|ompi5>" >&2; exit 2; }
CC=$MPICC EXEC=$MPIEXEC
# Only what each case sets.
for v in $(env | sed -n 's/^\(MPIFT_[A-Z_]*\)=.*/\1/p'); do unset "$v"; done
unset SIM_FT_TIMEOUT
lib=$root/target/$mpi/release/libmpift.a
work=$(mktemp -d /tmp/mpift-inject.XXXXXX)
T=${INJECT_TIMEOUT:-90}
passed=0 failed=0
why=""

result() { # result NAME: PASS if $why is empty
  if [ -z "$why" ]; then
    passed=$((passed + 1)); echo "PASS $mpi: $1"
  else
    failed=$((failed + 1)); echo "FAIL $mpi: $1: $why"
    sed 's/^/    | /' "$work/err" 2>/dev/null | tail -n 8
  fi
  why=""
}
fail() { why="${why:+$why; }$*"; }

# launch NP PROGRAM ARGS...: runs in $work (environment: what the caller set),
# stdout to out, stderr to err, report to r.json; sets $status.
launch() {
  local np=$1
  shift
  rm -f "$work/r.json" "$work/out" "$work/err"
  { (cd "$work" && timeout -k 5 "$T" "$EXEC" -n "$np" "$@" >out 2>err </dev/null); } 2>/dev/null
  status=$?
  if [ "$status" -eq 124 ] || [ "$status" -eq 137 ]; then fail "hung (timeout ${T}s)"; fi
}

# The report's deaths, one "rank call cause" per line, sorted by rank.
deaths() { sed -n 's/^ *{"rank": \([0-9]*\), "call": \([0-9]*\), "time_s": \([0-9.]*\), "cause": "\([a-z]*\)"}.*/\1 \2 \4/p' "$work/r.json" | sort -n; }
# "rank time_s" per death.
death_times() { sed -n 's/^ *{"rank": \([0-9]*\), "call": [0-9]*, "time_s": \([0-9.]*\),.*/\1 \2/p' "$work/r.json"; }
# A rank's planned death time (from its entry in "ranks").
plan_time() { sed -n "s/^ *{\"rank\": $1, \"calls\".*\"plan\": {\"call\": [0-9a-z]*, \"time_s\": \([0-9.a-z]*\),.*/\1/p" "$work/r.json"; }
oks() { grep -c '^rank [0-9]*: OK' "$work/out"; }

expect_exit0() { [ "$status" -eq 0 ] || fail "exit status $status"; }
expect_deaths() { # expect_deaths "r c cause|r c cause|..."
  local got
  got=$(deaths | paste -sd'|' -)
  [ "$got" = "$1" ] || fail "deaths [$got], want [$1]"
}
expect_oks() { local n; n=$(oks); [ "$n" -eq "$1" ] || fail "$n ranks printed OK, want $1"; }
expect_causes() { # every death has cause $1, and there is at least one
  local n bad
  n=$(deaths | wc -l)
  bad=$(deaths | awk -v c="$1" '$3 != c' | paste -sd'|' -)
  [ "$n" -ge 1 ] || fail "no death"
  [ -z "$bad" ] || fail "deaths with another cause: $bad"
}

# --- build --------------------------------------------------------------------
W="-Wall -Wextra -Werror"
FT="-I$root/include/compat -I$root/include -I$root/target/$mpi/release/include"
LIBS="$lib -lgcc_s -lutil -lrt -lpthread -lm -ldl"
if [ ! -f "$lib" ]; then
  echo "FAIL $mpi: $lib missing (make MPI=$mpi lib)"; exit 1
fi
for p in victim bits; do
  # shellcheck disable=SC2086
  $CC $W $FT tests/inject/$p.c -o "$work/$p" $LIBS >"$work/err" 2>&1 || fail "$p does not build"
done
# shellcheck disable=SC2086
$CC $W -DMPIFT_MAP_SIGNALS $FT tests/inject/legacy.c -o "$work/legacy" $LIBS >"$work/err" 2>&1 || fail "legacy does not build"
result "build the test programs"
[ "$failed" -eq 0 ] || exit 1

# --- kill rules (victim: call 5 + i is iteration i's MPI_Allreduce) ---------------
MPIFT_KILL='rank=2@call=50' MPIFT_REPORT=r.json launch 4 ./victim
expect_exit0; expect_deaths "2 50 rule"; expect_oks 3
result "rank=2@call=50: report has exactly rank 2 at call 50, cause rule"

MPIFT_KILL='rank=1,3@call=30;rank=2-3@call=20' MPIFT_REPORT=r.json launch 4 ./victim --iters 60
expect_exit0; expect_deaths "1 30 rule|2 20 rule|3 20 rule"; expect_oks 1
result "rank lists and ranges"

MPIFT_KILL='rank=1@time=0.3' MPIFT_REPORT=r.json launch 3 ./victim --iters 150 --sleep-us 5000
expect_exit0; expect_oks 2
[ "$(deaths | awk '{print $1, $3}')" = "1 rule" ] || fail "deaths [$(deaths | paste -sd'|' -)], want rank 1 by rule"
awk '$1 == 1 && $2 < 0.3 { exit 1 }' <(death_times) || fail "died before 0.3 s"
result "rank=1@time=0.3"

MPIFT_SEED=5 MPIFT_KILL='rate=0.03;spare=0' MPIFT_REPORT=r.json launch 4 ./victim --iters 150
expect_exit0; expect_causes rate
deaths | awk '$1 == 0 { exit 1 }' || fail "spare rank 0 died"
result "rate=0.03 (spare=0)"

for rule in 'mtbf=0.4' 'weibull=2:0.4'; do
  MPIFT_SEED=3 MPIFT_KILL="$rule;spare=0" MPIFT_REPORT=r.json launch 4 ./victim --iters 150 --sleep-us 5000
  expect_exit0; expect_causes lifetime
  while read -r r t; do
    p=$(plan_time "$r")
    awk -v t="$t" -v p="$p" 'BEGIN { exit !(p != "null" && t + 0 >= p + 0) }' || fail "rank $r died at $t s, planned $p s"
  done < <(death_times)
  result "$rule: lifetimes, no death before the planned time"
done

MPIFT_KILL='rank=2@call=40;node=2' MPIFT_REPORT=r.json launch 4 ./victim --iters 80
expect_exit0; expect_oks 2
[ "$(deaths | awk '{print $1, ($1 == 2 ? $2 : "-"), $3}' | paste -sd'|' -)" = "2 40 rule|3 - node" ] ||
  fail "deaths [$(deaths | paste -sd'|' -)], want 2 at 40 by rule and 3 by node"
result "node=2: the block of rank 2 goes down"

MPIFT_KILL='rank=1@call=40;node=host;spare=0' MPIFT_REPORT=r.json launch 3 ./victim --iters 80
expect_exit0; expect_oks 1
[ "$(deaths | awk '{print $1, ($1 == 1 ? $2 : "-"), $3}' | paste -sd'|' -)" = "1 40 rule|2 - node" ] ||
  fail "deaths [$(deaths | paste -sd'|' -)], want 1 at 40 by rule and 2 by node (one host)"
result "node=host: the host of rank 1 goes down, spare 0 survives"

MPIFT_KILL='rank=1,2,3@call=30;max=2' MPIFT_REPORT=r.json launch 4 ./victim --iters 60
expect_exit0; expect_oks 2
[ "$(deaths | wc -l)" -eq 2 ] || fail "$(deaths | wc -l) deaths, want 2"
grep -q 'refused' "$work/err" || fail "no refusal message"
result "max=2: three ranks due, two die"

MPIFT_KILL='rank=2@call=30;rank=1@call=50;node=2;max=2' MPIFT_REPORT=r.json launch 4 ./victim --iters 80
expect_exit0; expect_oks 2
[ "$(deaths | awk '{print $1, $3}' | paste -sd'|' -)" = "2 rule|3 node" ] || fail "deaths [$(deaths | paste -sd'|' -)], want 2 rule, 3 node"
result "max=2 counts node-mates: rank 1's node failure is refused"

MPIFT_KILL='rank=1,2@call=30;spare=2' MPIFT_REPORT=r.json launch 4 ./victim --iters 60
expect_exit0; expect_deaths "1 30 rule"; expect_oks 3
result "spare=2 never dies"

MPIFT_SEED=2 MPIFT_BITFLIP=1e-4 MPIFT_KILL='memory=300;spare=0' MPIFT_REPORT=r.json launch 4 ./victim --iters 100
expect_exit0; expect_causes bitflip
result "memory=300 with MPIFT_BITFLIP: deaths caused by bit flips (p_p model)"

MPIFT_REPORT=r.json launch 4 ./victim --iters 80 --callback 2:60
expect_exit0; expect_deaths "2 60 api"; expect_oks 3
result "kill callback (Sim_FT_set_kill_callback)"

# Every rank sets it, so rank 1's rule from the environment is gone everywhere.
MPIFT_KILL='rank=1@call=20' MPIFT_REPORT=r.json launch 4 ./victim --iters 80 --policy 'rank=3@call=45'
expect_exit0; expect_deaths "3 45 rule"; expect_oks 3
result "Sim_FT_set_kill_policy replaces the environment's policy"

MPIFT_KILL='rank=1@call=20' MPIFT_REPORT=r.json launch 3 ./victim --iters 60 --early 'rank=2@call=25'
expect_exit0; expect_deaths "2 25 rule"; expect_oks 2
result "Sim_FT_set_kill_policy before MPI_Init replaces the environment's policy"

# Wrong only where it was set (a rank that does not exist): that rank aborts the job.
launch 3 ./victim --iters 20 --early 'rank=5@call=25'
[ "$status" -ne 0 ] || fail "exit status 0"
grep -qF 'bad token `rank=5@call=25`' "$work/err" || fail "no message naming the bad token"
result "an invalid policy set before MPI_Init aborts the job"

printf '# yesterday\nrank=1@call=25   # the victim\n\nmax=1\n' >"$work/kill.txt"
MPIFT_KILL_FILE=kill.txt MPIFT_REPORT=r.json launch 3 ./victim --iters 40
expect_exit0; expect_deaths "1 25 rule"
result "MPIFT_KILL_FILE"

# --- reproducibility ----------------------------------------------------------------
MPIFT_KILL='rate=0.03;spare=0' MPIFT_REPORT=r.json launch 4 ./victim --iters 120
seed=$(sed -n 's/^ *"seed": \([0-9]*\),/\1/p' "$work/r.json"); first=$(deaths | paste -sd'|' -)
grep -q "seed $seed" "$work/err" || fail "the chosen seed $seed is not printed"
MPIFT_SEED=$seed MPIFT_KILL='rate=0.03;spare=0' MPIFT_REPORT=r.json launch 4 ./victim --iters 120
again=$(deaths | paste -sd'|' -)
MPIFT_SEED=$((seed + 1)) MPIFT_KILL='rate=0.03;spare=0' MPIFT_REPORT=r.json launch 4 ./victim --iters 120
other=$(deaths | paste -sd'|' -)
[ -n "$first" ] || fail "no deaths to compare"
[ "$first" = "$again" ] || fail "seed $seed: [$first] then [$again]"
[ "$first" != "$other" ] || fail "seed $((seed + 1)) gave the same deaths [$other]"
result "same seed, same deaths at the same calls; another seed, other deaths"

# --- invalid values stop every rank with the bad token --------------------------------
for bad in 'MPIFT_KILL=rank=2@cal=50|rank=2@cal=50' 'MPIFT_KILL=rank=1@call=5;rate=1.5|rate=1.5' \
           'MPIFT_KILL=rank=7@call=9|rank=7@call=9' 'MPIFT_KILL=node=rack|node=rack' \
           'MPIFT_SEED=12ab|12ab' 'MPIFT_BITFLIP=p=0.1;op=recv|op=recv' 'MPIFT_TREE_FANOUT=0|0' \
           'MPIFT_COLLECTIVES=live|live' 'MPIFT_BARRIER=mine|mine'; do
  assign=${bad%|*} token=${bad#*|}
  export "${assign?}"
  launch 3 ./victim --iters 5
  unset "${assign%%=*}"
  [ "$status" -ne 0 ] || fail "exit status 0"
  n=$(grep -cF "bad token \`$token\`" "$work/err")
  [ "$n" -eq 3 ] || fail "$n of 3 ranks named the bad token \`$token\`"
  [ "$(oks)" -eq 0 ] || fail "the program ran"
  result "invalid ${assign%%=*} ($token) stops every rank naming it"
done

# --- verbosity --------------------------------------------------------------------------
MPIFT_KILL='rank=1@call=20' launch 3 ./victim --iters 40
grep -q 'MPIFT: rank 1 dies at call 20' "$work/err" || fail "no death line at the default verbosity"
grep -q 'MPIFT: 1 death: rank 1 at call 20 (rule' "$work/err" || fail "no summary"
result "MPIFT_VERBOSE default with a kill rule (1): the death and a summary"
MPIFT_VERBOSE=0 MPIFT_KILL='rank=1@call=20' launch 3 ./victim --iters 40
expect_exit0
! grep -q 'MPIFT' "$work/err" || fail "MPIFT printed at verbosity 0: $(grep MPIFT "$work/err" | head -1)"
result "MPIFT_VERBOSE=0 is silent"
MPIFT_VERBOSE=2 MPIFT_KILL='rank=1@call=20' launch 3 ./victim --iters 40
grep -q 'MPIFT: rank [02] learns that rank \[1\] died' "$work/err" || fail "no detection line"
result "MPIFT_VERBOSE=2 reports detections"
launch 3 ./victim --iters 20
expect_exit0
! grep -q 'MPIFT' "$work/err" || fail "MPIFT printed without injection: $(grep MPIFT "$work/err" | head -1)"
result "no policy, no death: nothing printed"

# --- bit flips ------------------------------------------------------------------------------
launch 2 ./bits api
expect_exit0; expect_oks 2
result "Sim_FT_Manipulate_bits/_bytes: p = 0, p = 1, datatype gaps, bad arguments"

MPIFT_SEED=9 MPIFT_BITFLIP='p=0.001;rank=0;op=send,isend' MPIFT_REPORT=r.json launch 2 ./bits send 60
expect_exit0; expect_oks 2
seen=$(sed -n 's/^rank 1: flips=\([0-9]*\)/\1/p' "$work/out")
reported=$(sed -n 's/.*"rank": 0, "calls".*"message_bits": \([0-9]*\),.*/\1/p' "$work/r.json")
[ -n "$seen" ] && [ "$seen" -gt 0 ] || fail "no flip arrived (${seen:-none})"
[ "$seen" = "$reported" ] || fail "receiver saw $seen flipped bits, report says $reported"
result "MPIFT_BITFLIP: sends and isends corrupted on a copy, sender's buffer intact, report counts them"

for filter in 'rank=1' 'tag=9' 'op=ssend'; do
  MPIFT_BITFLIP="p=0.01;$filter" MPIFT_REPORT=r.json launch 2 ./bits send 20
  expect_exit0; expect_oks 2
  grep -q '^rank 1: flips=0$' "$work/out" || fail "$(grep flips "$work/out")"
  result "MPIFT_BITFLIP filter $filter selects nothing here"
done

# --- legacy mapping -----------------------------------------------------------------------------
for mode in raise term exit; do
  cause=signal; [ $mode = exit ] && cause=exit
  MPIFT_EXIT_KILLS=1 MPIFT_REPORT=r.json launch 3 ./legacy $mode
  expect_exit0; expect_oks 2
  [ "$(deaths | awk '{print $1, $3}')" = "1 $cause" ] || fail "deaths [$(deaths | paste -sd'|' -)], want rank 1 by $cause"
  result "legacy $mode is a simulated death (cause $cause)"
done
# Like real ULFM and any MPI library, nothing from MPIFT unless asked: a program that
# kills itself with no MPIFT_KILL/BITFLIP/REPORT/VERBOSE in the environment (MPICH's
# runtests wants " No Errors" and nothing else).
for mode in raise exit; do
  MPIFT_EXIT_KILLS=1 launch 3 ./legacy $mode
  expect_exit0; expect_oks 2
  ! grep -q 'MPIFT' "$work/out" "$work/err" || fail "MPIFT printed unasked: $(grep -h MPIFT "$work/out" "$work/err" | head -1)"
  result "legacy $mode death without MPIFT_* settings prints nothing of MPIFT's"
done
launch 3 ./legacy other
expect_exit0; expect_oks 3
result "legacy: other signals and kill(pid, 0) behave as usual"

echo "$passed passed, $failed failed"
if [ "$failed" -eq 0 ] && [ -z "${INJECT_KEEP:-}" ]; then rm -rf "$work"; else echo "work directory: $work"; fi
[ "$failed" -eq 0 ]
