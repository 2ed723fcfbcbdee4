#!/usr/bin/env bash
# bench/callgrind.sh: MPIFT's failure-free cost per MPI call, in instructions counted
# by valgrind's callgrind (no timing noise), the current tree against a base revision.
#
#   bench/callgrind.sh [--mpi openmpi|mpich] [--base REV] [--reps N] [--iters K]
#                      [--ops LIST] [--max-ratio R] [--head-tree DIR]
#   make bench-calls [MPI=openmpi|mpich] [BASE=REV]
#
# bench/calls.c (the thesis's tests 1-5 at 1 int, and Irecv+Isend+Waitall of 2; 2
# ranks) is built three times: plain (no MPIFT), base (MPIFT at REV, default 015567b,
# built in the git worktree build-out/callgrind/base-<rev> with CARGO_TARGET_DIR
# <worktree>/target/<mpi>, like the Makefile's, as its `make lib` does: the
# staticlib alone, LTO on; cached once built so), and
# head (MPIFT from the working tree: make lib MPI=<mpi>; or --head-tree DIR, another
# MPIFT tree already built there, e.g. a second worktree, as DIR/target/<mpi>/release),
# each against its own headers and library. Each build runs N times (--reps,
# default 3; the variants' order rotates per repetition) as
#   timeout 300 mpiexec.<mpi> -n 1 valgrind --tool=callgrind --collect-atstart=no
#       calls OPS K GAP : -n 1 calls OPS K GAP
# i.e. rank 0 under callgrind, rank 1 native. The program warms up each operation
# (50 iterations), then collects K iterations (--iters, default 2000) on rank 0's
# main thread and dumps them (CALLGRIND_DUMP_STATS_AT). Before each call that needs
# data from rank 1, rank 0 waits, not counted, until rank 1 has sent it (a counter
# in /dev/shm) plus GAP us (--gap, default 50): a rank that waits inside MPI spins
# in the host MPI's progress loop a timing-dependent number of times (which made
# `total` vary 2-5x between identical builds on a loaded machine); with the
# handshake rank 0 finds its data on the first poll. Rank 0's dumps
# (cg.0.<pid>.out.<n>, named through PMI_RANK / OMPI_COMM_WORLD_RANK) are summed by
# bench/callgrind_sum.py:
#   total  every instruction of rank 0's main thread, per iteration
#   own    the instructions in the executable only (calls.c and, statically linked,
#          MPIFT; not libmpi*, UCX, libc, ...), per iteration
# An iteration is one call of the operation, except sendrecv/isend (a ping-pong:
# one send and one receive per rank) and mixed (one Allreduce + one sendrecv).
# calls.c's own share (the loop, the checks, the handshake's test) is the plain
# column's `own`, 60-160 instructions. Reported: the median over the N runs,
# head/base ratios, and "spread": the largest deviation of a base or head run
# from its median, in %, for own and total.
#
# Output: a markdown table per MPI on stdout and in build-out/callgrind/<mpi>.md;
# raw per-run numbers in build-out/callgrind/<mpi>.tsv; dumps and logs under
# build-out/callgrind/<mpi>/. --max-ratio R: exit 1 if any head/base `own` ratio
# exceeds R (e.g. 1.02), naming the operations. --base none: plain and head only;
# the table then shows MPIFT's own instructions per iteration (head own - plain
# own) and their share of the plain call's total. --budget FILE (with --base
# none): exit 1 if MPIFT's own count of an operation (the least over the runs: a
# run can only add instructions, when a wait finds its data late and polls again)
# exceeds its budget in FILE (lines "MPI OP INSTRUCTIONS", # comments;
# bench/budget.tsv, issue 36). Any failed run (wrong result,
# timeout, missing dump) or a head that does not build fails that MPI (exit 1 at
# the end; the other MPI still runs). --ops LIST: a subset of
# allreduce,sendrecv,isend,bcast,mixed,waitall,waitany,waitsome,testall,testany,
# testsome,startall,sendrecv1,iallreduce,halo,barrier (bench/calls.c names each;
# its allreduce64k, the large-message row, is bench/time.sh's only).
# Takes about 1.5 minutes per MPI on a quiet 2-core machine (3 on a loaded one),
# plus the base library's first build (about 1 minute per MPI).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
mpis="mpich openmpi" base=015567b reps=3 iters=2000 max_ratio= head_tree= gap=50 budget=
ops=allreduce,sendrecv,isend,bcast,mixed,waitall,waitany,waitsome,testall,testany,testsome,startall,sendrecv1,iallreduce,halo,barrier
usage() { sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//' >&2; exit 2; }
while [ $# -gt 0 ]; do
  case $1 in
    --mpi) mpis=$2; shift 2 ;;
    --base) base=$2; shift 2 ;;
    --reps) reps=$2; shift 2 ;;
    --iters) iters=$2; shift 2 ;;
    --ops) ops=$2; shift 2 ;;
    --gap) gap=$2; shift 2 ;;
    --max-ratio) max_ratio=$2; shift 2 ;;
    --budget) budget=$(cd "$(dirname "$2")" && pwd)/$(basename "$2"); shift 2 ;;
    --head-tree) head_tree=$(cd "$2" && pwd); shift 2 ;;
    -h|--help) usage ;;
    *) echo "callgrind.sh: unknown option $1" >&2; usage ;;
  esac
done
case $mpis in both) mpis="mpich openmpi" ;; esac
for m in $mpis; do
  case $m in mpich|openmpi) ;; *) echo "callgrind.sh: --mpi openmpi|mpich, not $m" >&2; exit 2 ;; esac
done
# Several MPIs: one run of this script each, so that a failure on one (e.g. a
# working tree that does not build there) still leaves the others' tables.
if [ "$(echo $mpis | wc -w)" -gt 1 ]; then
  rc=0 start=$SECONDS
  for m in $mpis; do
    bash "$0" --mpi "$m" --base "$base" --reps "$reps" --iters "$iters" --ops "$ops" --gap "$gap" \
      ${max_ratio:+--max-ratio "$max_ratio"} ${head_tree:+--head-tree "$head_tree"} ${budget:+--budget "$budget"} || rc=1
  done
  echo "callgrind.sh: $mpis: $((SECONDS - start)) s$([ $rc = 0 ] || echo ', FAILED (above)')" >&2
  exit $rc
fi
command -v valgrind >/dev/null && [ -f /usr/include/valgrind/callgrind.h ] || {
  echo "callgrind.sh: needs valgrind and its header (scripts/install-deps.sh valgrind)" >&2; exit 2; }

export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1
export MPIFT_VERBOSE=0
RUST_LIBS="-lgcc_s -lutil -lrt -lpthread -lm -ldl"
CFLAGS="-std=c99 -O2"
top=$root/build-out/callgrind
mkdir -p "$top"
variants=(plain base head)
if [ "$base" = none ]; then
  rev=none variants=(plain head)
else
  rev=$(git -C "$root" rev-parse --short=7 "$base^{commit}")
fi
wt=$top/base-$rev
ht=${head_tree:-$root}
head_desc="$(git -C "$ht" rev-parse --short=7 HEAD)$(git -C "$ht" diff --quiet HEAD -- 2>/dev/null || echo '+uncommitted')"
[ -n "$head_tree" ] && head_desc="$head_desc in $head_tree"
start=$SECONDS

# The base revision's worktree (shared by both MPIs).
if [ $rev != none ] && [ ! -e "$wt/.git" ]; then
  echo "== git worktree add $wt $rev" >&2
  git -C "$root" worktree add --detach --force "$wt" "$rev" >&2
fi
[ $rev = none ] || [ "$(git -C "$wt" rev-parse --short=7 HEAD)" = "$rev" ] || {
  echo "callgrind.sh: $wt is not at $rev; remove it (git worktree remove --force $wt)" >&2; exit 1; }

failed=0
for mpi in $mpis; do
  MPICC=mpicc.$mpi MPIEXEC=mpiexec.$mpi
  case $mpi in mpich) rankvar=PMI_RANK ;; *) rankvar=OMPI_COMM_WORLD_RANK ;; esac
  out=$top/$mpi
  mkdir -p "$out"
  rm -f "$top/$mpi.md" "$top/$mpi.tsv"

  # Libraries: base from the worktree (cached), head from the working tree. The
  # base is built as make lib builds the head: the staticlib alone, so LTO is on
  # (`cargo build` makes the rlib beside it and turns LTO off: about 10 % more
  # instructions on the same code). The marker tells a base cached that way.
  if [ $rev != none ] && [ ! -f "$wt/target/$mpi/release/.staticlib-alone" ]; then
    echo "== $mpi: cargo rustc --crate-type staticlib in $wt (base $rev)" >&2
    (cd "$wt" && MPICC=$MPICC CARGO_TARGET_DIR=$wt/target/$mpi \
      cargo rustc --release --quiet --lib --crate-type staticlib && touch "$wt/target/$mpi/release/.staticlib-alone") >&2
  fi
  if [ -n "$head_tree" ]; then
    [ -f "$head_tree/target/$mpi/release/libmpift.a" ] || {
      echo "callgrind.sh: no $head_tree/target/$mpi/release/libmpift.a" >&2; exit 1; }
  else
    echo "== $mpi: make lib MPI=$mpi (head)" >&2
    make -s -C "$root" lib MPI="$mpi" >&2 || {
      echo "callgrind.sh: the working tree does not build on $mpi (make lib MPI=$mpi)" >&2; exit 1; }
  fi

  # The three builds of bench/calls.c.
  $MPICC $CFLAGS "$root/bench/calls.c" -o "$out/calls_plain"
  for v in "${variants[@]:1}"; do
    src=${head_tree:-$root}
    [ $v = base ] && src=$wt
    rel=$src/target/$mpi/release
    $MPICC $CFLAGS -I"$src/include/compat" -I"$src/include" -I"$rel/include" "$root/bench/calls.c" \
      -o "$out/calls_$v" "$rel/libmpift.a" $RUST_LIBS
  done

  # N runs of each build, the order rotating.
  rm -rf "$out"/*.r[0-9]* "$out/over"
  raw=$top/$mpi.tsv
  printf 'variant\trep\top\titers\ttotal_ir\town_ir\n' >"$raw"
  nv=${#variants[@]}
  for ((r = 1; r <= reps; r++)); do
    for ((j = 0; j < nv; j++)); do
      v=${variants[$(((r - 1 + j) % nv))]}
      d=$out/$v.r$r
      mkdir -p "$d"
      echo "== $mpi: $v, run $r of $reps" >&2
      rc=0
      # Rank 0 under callgrind, rank 1 native (it answers at once; see calls.c).
      timeout -k 10 300 $MPIEXEC -n 1 valgrind -q --tool=callgrind --collect-atstart=no \
        --callgrind-out-file="$d/cg.%q{$rankvar}.%p.out" "$out/calls_$v" "$ops" "$iters" "$gap" \
        : -n 1 "$out/calls_$v" "$ops" "$iters" "$gap" >"$d/stdout" 2>"$d/stderr" || rc=$?
      pid=$(sed -n 's/^calls: pid \([0-9]*\) ok$/\1/p' "$d/stdout")
      if [ $rc != 0 ] || [ -z "$pid" ] || ! ls "$d/cg.0.$pid.out".* >/dev/null 2>&1; then
        echo "callgrind.sh: $mpi $v run $r failed (exit $rc); $d/stderr:" >&2
        tail -20 "$d/stderr" >&2
        exit 1
      fi
      python3 "$root/bench/callgrind_sum.py" "$out/calls_$v" "$d/cg.0.$pid.out".* |
        awk -v v="$v" -v r="$r" -v k="$iters" -v OFS='\t' '$1 != "-" { print v, r, $1, k, $2, $3 }' >>"$raw"
    done
  done

  # The table.
  python3 - "$raw" "$mpi" "$ops" "$rev" "$head_desc" "$reps" "$iters" "${max_ratio:-0}" "$budget" >"$top/$mpi.md" 3>"$out/over" <<'EOF'
import csv, os, statistics, sys
raw, mpi, ops, rev, head, reps, iters, maxr, budget = sys.argv[1:]
maxr = float(maxr)
d = {}
for r in csv.DictReader(open(raw), delimiter="\t"):
    k = int(r["iters"])
    d.setdefault((r["variant"], r["op"]), []).append((int(r["total_ir"]) / k, int(r["own_ir"]) / k))
ops = ops.split(",")
variants = ("plain", "head") if rev == "none" else ("plain", "base", "head")
missing = [(v, o) for o in ops for v in variants if len(d.get((v, o), [])) != int(reps)]
if missing:
    sys.exit(f"callgrind.sh: missing dumps for {missing}")
med = lambda v, o, i: statistics.median(x[i] for x in d[(v, o)])
def budget_table(d, ops, mpi, med, spread, budget, reps, iters, head):
    """Plain against head: MPIFT's own count per op, against the budget."""
    limits = {}
    for line in open(budget) if budget else []:
        f = line.split("#")[0].split()
        if len(f) == 3 and f[0] == mpi:
            limits[f[1]] = float(f[2])
    print(f"head {head}; median of {reps} runs of {iters} iterations; MPIFT own = head own - plain own; "
          f"budget from {os.path.basename(budget) if budget else '(none)'}\n")
    print("| op | plain total | plain own | head total | head own | MPIFT own | MPIFT own / plain total | head/plain total | least MPIFT own | budget | spread own/total % |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    over = []
    least = lambda v, o: min(x[1] for x in d[(v, o)])
    for o in ops:
        pt, po, ht, ho = med("plain", o, 0), med("plain", o, 1), med("head", o, 0), med("head", o, 1)
        # The guard takes the least count: a run can only add instructions (a
        # wait that found its data late polls again), never lose some.
        mine, low, lim = ho - po, least("head", o) - least("plain", o), limits.get(o)
        if lim is not None and low > lim:
            over.append(f"{mpi} {o}: MPIFT's own {low:.0f} instructions per iteration (least of the runs) > budget {lim:.0f}")
        print(f"| {o} | {pt:.0f} | {po:.1f} | {ht:.0f} | {ho:.1f} | {mine:.0f} | {mine / pt:.2f} | {ht / pt:.2f} "
              f"| {low:.0f} | {'-' if lim is None else f'{lim:.0f}'} | {spread(o, 1):.2f} / {spread(o, 0):.2f} |")
    with os.fdopen(3, "w") as f:
        for x in over:
            print(x, file=f)
    return 0
def spread(o, i):
    s = 0.0
    for v in variants[1:]:
        m = med(v, o, i)
        s = max([s] + [abs(x[i] - m) / m * 100 for x in d[(v, o)]])
    return s
mpiname = {"mpich": "MPICH", "openmpi": "Open MPI"}[mpi]
ver = os.popen(f"mpichversion 2>/dev/null | head -1" if mpi == "mpich" else "ompi_info --version 2>/dev/null | head -1").read().strip()
print(f"### {mpiname} ({ver}): instructions per iteration, rank 0's main thread\n")
if rev == "none":
    sys.exit(budget_table(d, ops, mpi, med, spread, budget, reps, iters, head))
print(f"base {rev}, head {head}; median of {reps} runs of {iters} iterations each; "
      "own = the executable's instructions (calls.c + MPIFT), total = all; "
      f"{os.popen('date -u +%Y-%m-%dT%H:%MZ').read().strip()}, {os.cpu_count()} cores, "
      f"load {os.getloadavg()[0]:.1f}.\n")
print("| op | plain total | plain own | base total | base own | head total | head own | total head/base | own head/base | spread own/total % |")
print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
over = []
for o in ops:
    rt = med("head", o, 0) / med("base", o, 0)
    ro = med("head", o, 1) / med("base", o, 1)
    if maxr and ro > maxr:
        over.append(f"{mpi} {o}: own head/base {ro:.3f} > {maxr}")
    print(f"| {o} | {med('plain', o, 0):.0f} | {med('plain', o, 1):.1f} | {med('base', o, 0):.0f} | {med('base', o, 1):.1f} "
          f"| {med('head', o, 0):.0f} | {med('head', o, 1):.1f} | {rt:.3f} | {ro:.3f} | {spread(o, 1):.2f} / {spread(o, 0):.2f} |")
with os.fdopen(3, "w") as f:
    for x in over:
        print(x, file=f)
EOF
  cat "$top/$mpi.md"
  echo
  if [ -s "$out/over" ]; then
    sed 's/^/callgrind.sh: over the limit: /' "$out/over" >&2
    failed=1
  fi
done
echo "callgrind.sh: $((SECONDS - start)) s; tables in $(for m in $mpis; do printf "%s " "$top/$m.md"; done)" >&2
exit $failed
