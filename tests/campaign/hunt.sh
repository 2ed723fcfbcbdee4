#!/usr/bin/env bash
# tests/campaign/hunt.sh <mpich|openmpi> <binary> [rounds] [ranks] [first] [last]:
# hunts a rare hang by hand (not part of make test). Runs <binary> (built with
# MPIFT) at 4 ranks with a death at every call first..last (default 2..99) of each
# rank in `ranks` (default "0 2"), rounds times (default 10), while `nproc` busy
# loops load the cores, with MPIFT_DEBUG=stuck (a dead rank that has not left 5 s
# after every live rank began finalizing says which of its exit conditions hold;
# nothing else is printed, so the runs keep a quiet run's timing),
# MPIFT_TRACE and MPIFT_REPORT set as the campaign runner sets them.
# A run still going after HUNT_TIMEOUT seconds (default 20) is a hang: the
# stacks of every process of the binary (gdb), its stdout and stderr go to
# hang.<n>.r<rank>.c<call>/ under the current directory, then it is killed.
# Prints a line per round and per hang; exits 1 if any run hung.
#
#   make lib MPI=mpich && mpicc.mpich -g -Iinclude/compat -Iinclude \
#     -Itarget/mpich/release/include examples/ulfm/overlap_b.c \
#     target/mpich/release/libmpift.a -lpthread -ldl -lm -o /tmp/overlap_b
#   cd /tmp && /work/main/tests/campaign/hunt.sh mpich ./overlap_b 30
set -u
[ $# -ge 2 ] || { sed -n '2,18p' "$0" | sed 's/^# \{0,1\}//' >&2; exit 2; }
mpi=$1 bin=$2 rounds=${3:-10} ranks=${4:-0 2} first=${5:-2} last=${6:-99}
limit=${HUNT_TIMEOUT:-20}
case $mpi in
  mpich) launch=(mpiexec.mpich -n 4) ;;
  openmpi) launch=(mpiexec.openmpi --allow-run-as-root --oversubscribe -n 4) ;;
  *) echo "hunt.sh: mpich or openmpi" >&2; exit 2 ;;
esac
command -v gdb >/dev/null || echo "hunt.sh: no gdb; hangs are kept without stacks" >&2
name=$(basename "$bin")
load=()
for _ in $(seq "$(nproc)"); do
  (while kill -0 $$ 2>/dev/null; do for _ in $(seq 20000); do :; done; done) &
  load+=($!)
done
trap 'kill "${load[@]}" 2>/dev/null' EXIT
runs=0 hangs=0
for round in $(seq "$rounds"); do
  for r in $ranks; do
    for c in $(seq "$first" "$last"); do
      runs=$((runs + 1))
      # The campaign runner's environment (tools/campaign): a trace directory and a
      # run report, which arm injection on every rank and end each run with the
      # report's gather; without them the runs take other paths.
      rm -rf trace report.json && mkdir trace
      MPIFT_DEBUG=stuck MPIFT_TRACE=$PWD/trace MPIFT_REPORT=$PWD/report.json MPIFT_KILL="rank=$r@call=$c" MPIFT_SEED=7 \
        "${launch[@]}" "$bin" >run.out 2>run.err &
      pid=$!
      for _ in $(seq $((limit * 2))); do
        sleep 0.5
        kill -0 $pid 2>/dev/null || break
      done
      if kill -0 $pid 2>/dev/null; then
        hangs=$((hangs + 1))
        d=hang.$hangs.r$r.c$c
        mkdir -p "$d"
        for p in $(pgrep -x "$name"); do
          command -v gdb >/dev/null && gdb -p "$p" -batch -ex "thread apply all bt" >"$d/bt.$p" 2>&1
        done
        cp run.out run.err "$d/"
        pkill -9 -x "$name"
        kill $pid 2>/dev/null
        echo "HANG rank=$r@call=$c: $d"
      fi
      wait $pid 2>/dev/null
    done
  done
  echo "round $round: $runs runs, $hangs hangs"
done
[ $hangs = 0 ]
