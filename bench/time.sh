#!/usr/bin/env bash
# bench/time.sh: MPIFT's failure-free cost per MPI call in time, beside the plain MPI
# it runs on, in one run (issue 36). The noise-free figure is bench/callgrind.sh's;
# this one says what a user's clock sees.
#
#   bench/time.sh [--mpi mpich|openmpi|ompi5] [--np "2 4"] [--reps N] [--iters K]
#                 [--ops LIST] [--oracle]
#
# bench/calls.c is built plain and with MPIFT (the working tree's libmpift.a: make lib
# MPI=<mpi>). For each NP, N repetitions (default 7) each run, in an order that
# rotates, the plain build twice ("plain" and "control": the same binary, a second
# series, so the spread of plain against itself is reported beside every ratio) and
# the MPIFT build once; with --oracle (ompi5 only) also the plain build under real
# ULFM (../shared/tools/ulfm-oracle run: Open MPI 5.0.11 with --with-ft ulfm). Each
# run is `mpiexec -n NP calls OPS K` (default K 2000 after 50 warm-up iterations),
# which prints the slowest rank's microseconds per iteration of each OP. Reported:
# the median over the N runs, MPIFT/plain, control/plain and ULFM/plain.
#
# Output: a markdown table per NP on stdout and in build-out/time/<mpi>.md; raw
# numbers in build-out/time/<mpi>.tsv. Not a test: no ratio is asserted (a shared
# machine's noise would make it flaky; the instruction budget in make test is the
# guard). At NP above the core count the ranks oversubscribe the cores and MPICH's
# busy polling makes plain runs scatter by orders of magnitude: read those rows
# with the control column.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
mpi=openmpi nps="2 4" reps=7 iters=2000 oracle=0
ops=allreduce,sendrecv,isend,bcast,mixed,waitall,waitany,waitsome,testall,testany,testsome,startall,sendrecv1,iallreduce,halo,barrier,allreduce64k
usage() { sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//' >&2; exit 2; }
while [ $# -gt 0 ]; do
  case $1 in
    --mpi) mpi=$2; shift 2 ;;
    --np) nps=$2; shift 2 ;;
    --reps) reps=$2; shift 2 ;;
    --iters) iters=$2; shift 2 ;;
    --ops) ops=$2; shift 2 ;;
    --oracle) oracle=1; shift ;;
    -h|--help) usage ;;
    *) echo "time.sh: unknown option $1" >&2; usage ;;
  esac
done
. "$root/scripts/mpi-host.sh"
mpi_host "$mpi" || usage
[ $oracle = 0 ] || [ "$mpi" = ompi5 ] || { echo "time.sh: --oracle needs --mpi ompi5" >&2; exit 2; }
export MPIFT_VERBOSE=0
out=$root/build-out/time
mkdir -p "$out"
make -s -C "$root" lib MPI="$mpi" >&2
rel=$root/target/$mpi/release
"$MPICC" -std=c99 -O2 "$root/bench/calls.c" -o "$out/calls_plain_$mpi"
"$MPICC" -std=c99 -O2 -I"$root/include/compat" -I"$root/include" -I"$rel/include" "$root/bench/calls.c" \
  -o "$out/calls_mpift_$mpi" "$rel/libmpift.a" -lgcc_s -lutil -lrt -lpthread -lm -ldl
variants=(plain mpift control)
[ $oracle = 1 ] && variants+=(ulfm)
raw=$out/$mpi.tsv
printf 'np\tvariant\trep\top\tus\n' >"$raw"
for np in $nps; do
  nv=${#variants[@]}
  for ((r = 1; r <= reps; r++)); do
    for ((j = 0; j < nv; j++)); do
      v=${variants[$(((r - 1 + j) % nv))]}
      bin=$out/calls_plain_$mpi
      [ $v = mpift ] && bin=$out/calls_mpift_$mpi
      launch=("$MPIEXEC")
      [ $v = ulfm ] && launch=("$root/../shared/tools/ulfm-oracle" run)
      echo "== $mpi np $np: $v, run $r of $reps" >&2
      if ! res=$(timeout -k 10 600 "${launch[@]}" -n "$np" "$bin" "$ops" "$iters" 2>"$out/stderr"); then
        echo "time.sh: $mpi np $np $v run $r failed:" >&2
        tail -5 "$out/stderr" >&2
        exit 1
      fi
      echo "$res" | awk -v np="$np" -v v="$v" -v r="$r" -v OFS='\t' '$1 == "time" { print np, v, r, $2, $3 }' >>"$raw"
    done
  done
done
python3 - "$raw" "$mpi" "$ops" "$reps" "$iters" "$(git -C "$root" rev-parse --short=7 HEAD)" <<'EOF' | tee "$out/$mpi.md"
import csv, os, statistics, sys
raw, mpi, ops, reps, iters, head = sys.argv[1:]
d = {}
for r in csv.DictReader(open(raw), delimiter="\t"):
    d.setdefault((r["np"], r["variant"], r["op"]), []).append(float(r["us"]))
nps = sorted({k[0] for k in d}, key=int)
ulfm = any(k[1] == "ulfm" for k in d)
load = os.getloadavg()[0]
for np in nps:
    med = lambda v, o: statistics.median(d[(np, v, o)])
    print(f"### {mpi}, {np} ranks: microseconds per iteration (median of {reps} runs of {iters}; "
          f"MPIFT {head}; {os.cpu_count()} cores, load {load:.1f})\n")
    print("| op | plain | MPIFT | MPIFT/plain | control/plain |" + (" ULFM | ULFM/plain |" if ulfm else ""))
    print("|---|---:|---:|---:|---:|" + ("---:|---:|" if ulfm else ""))
    for o in ops.split(","):
        p = med("plain", o)
        row = f"| {o} | {p:.3f} | {med('mpift', o):.3f} | {med('mpift', o) / p:.2f} | {med('control', o) / p:.2f} |"
        if ulfm:
            row += f" {med('ulfm', o):.3f} | {med('ulfm', o) / p:.2f} |"
        print(row)
    print()
EOF
