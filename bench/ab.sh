#!/usr/bin/env bash
# bench/ab.sh DIR_A DIR_B: is library B slower than library A when nothing fails?
#
# DIR_A and DIR_B are two builds of MPIFT (each a target/<mpi>/release directory
# holding libmpift.a and include/, e.g. one from a worktree of an older commit:
#   git worktree add /tmp/old <commit> && make -C /tmp/old MPI=openmpi
#   bench/ab.sh /tmp/old/target/openmpi/release target/openmpi/release
# ). Builds bench/ff.c against each and runs the two binaries alternately, one
# mpiexec after the other, so drifts of the machine's load hit both alike; prints
# per test the median time per operation of each and the ratio B/A. Sizes: one int
# (where the layer's own cost shows), blocks of 1,024 operations.
# Environment: MPI (openmpi|mpich, default openmpi), NP (2), REPS (8), TESTS
# (1,2,3,4,5; 6 is MPI_Barrier), EXPS (0: sizes 4^e ints, e.g. 0,6 for 1 and
# 4,096 ints), BENCH_TIMEOUT (120 s per run), ENV_A / ENV_B (assignments for
# the runs of A / B only, e.g. ENV_B=MPIFT_COLLECTIVES=nonblocking with DIR_A =
# DIR_B compares two settings of one build).
set -euo pipefail
[ $# -eq 2 ] || { echo "usage: $0 DIR_A DIR_B" >&2; exit 2; }
root=$(cd "$(dirname "$0")/.." && pwd)
mpi=${MPI:-openmpi} np=${NP:-2} reps=${REPS:-8} tests=${TESTS:-1,2,3,4,5} exps=${EXPS:-0}
MPICC=mpicc.$mpi MPIEXEC=mpiexec.$mpi
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1
export MPIFT_VERBOSE=0
w=$(mktemp -d)
trap 'rm -rf "$w"' EXIT
for v in A B; do
  d=$1
  [ $v = B ] && d=$2
  [ -f "$d/libmpift.a" ] || { echo "$d: no libmpift.a" >&2; exit 2; }
  $MPICC -std=c99 -O2 -I"$root/include/compat" -I"$root/include" -I"$d/include" "$root/bench/ff.c" \
    -o "$w/ff_$v" "$d/libmpift.a" -lgcc_s -lutil -lrt -lpthread -lm -ldl
done
for ((r = 1; r <= reps; r++)); do
  order="A B"
  [ $((r % 2)) = 0 ] && order="B A"
  for v in $order; do
    venv=${ENV_A:-}
    [ $v = B ] && venv=${ENV_B:-}
    # shellcheck disable=SC2086  # ENV_A / ENV_B are word lists
    env $venv timeout -k 5 "${BENCH_TIMEOUT:-120}" $MPIEXEC -n "$np" "$w/ff_$v" --variant $v --rep "$r" \
      --tests "$tests" --exps "$exps" --iters 1024 --blocks 10 --csv "$w/ab.csv" >/dev/null
  done
done
python3 - "$w/ab.csv" "$np" "$reps" <<'EOF'
import csv, statistics, sys
from collections import defaultdict
t = defaultdict(list)
for r in csv.DictReader(open(sys.argv[1])):
    t[(int(r["test"]), int(r["size_ints"]), r["variant"])].append(float(r["time_s"]) / int(r["iters"]) * 1e9)
print(f"{sys.argv[2]} ranks, {sys.argv[3]} repetitions x 10 blocks of 1,024; median ns per operation")
for k, n in sorted({k[:2] for k in t}):
    a, b = statistics.median(t[(k, n, "A")]), statistics.median(t[(k, n, "B")])
    print(f"test {k}, {n} ints: A {a:9.1f}  B {b:9.1f}  B/A {b / a:.3f}")
EOF
