#!/usr/bin/env bash
# bench/smoke.sh <mpich|openmpi|ompi5>: keeps the benchmarks from rotting (run by
# scripts/run-tests.sh; measures nothing). Builds bench/ff.c plain and with
# MPIFT, bench/fail.c with MPIFT, bench/parts.c and bench/floor.c plain, runs ff
# with a tiny configuration (sizes 1 and 16 ints, 2 repetitions per variant,
# alternating, -n 2, one block), fail at -n 3 (2 repetitions of each phase), parts
# at -n 3 and floor's timed mode through its layer (100 iterations a row), and
# checks the outputs: the expected rows, and no control message of MPIFT's in any
# timed block. Needs libmpift.a built.
set -u
cd "$(dirname "$0")/.."
root=$PWD
mpi=${1:?usage: bench/smoke.sh mpich|openmpi|ompi5}
. scripts/mpi-host.sh
mpi_host "$mpi" || exit 2
export MPIFT_VERBOSE=0
w=$(mktemp -d)
trap 'rm -rf "$w"' EXIT
FT="-I$root/include/compat -I$root/include -I$root/target/$mpi/release/include"
LIBS="$root/target/$mpi/release/libmpift.a -lgcc_s -lutil -lrt -lpthread -lm -ldl"
TO="timeout -k 5 ${MPIFT_TEST_TIMEOUT:-180}"
set -e
$MPICC -std=c99 -O2 -Wall -Wextra -Werror bench/ff.c -o "$w/ff_plain"
$MPICC -std=c99 -O2 -Wall -Wextra -Werror $FT bench/ff.c -o "$w/ff_mpift" $LIBS
$MPICC -std=c99 -O2 -Wall -Wextra -Werror $FT bench/fail.c -o "$w/fail_mpift" $LIBS
$MPICC -std=c99 -O2 -Wall -Wextra -Werror bench/parts.c -o "$w/parts"
$MPICC -std=c99 -O2 -Wall -Wextra -Werror bench/floor.c -o "$w/floor"
for rep in 1 2; do
  for v in plain mpift; do
    $TO $MPIEXEC -n 2 "$w/ff_$v" --variant $v --rep $rep --exps 0,2 --blocks 1 --csv "$w/ff.csv" --acct "$w/acct.csv"
  done
done
$TO $MPIEXEC -n 3 "$w/fail_mpift" --reps 2 --pre 4 --post 2 --csv "$w/fail.csv"
$TO $MPIEXEC -n 3 "$w/parts" --reps 2 --csv "$w/parts.csv"
$TO $MPIEXEC -n 2 "$w/floor" 1 100 >"$w/floor.txt"
set +e
got=$(awk 'NF == 2 && $2 > 0 { print $1 }' "$w/floor.txt" | tr '\n' ' ')
[ "$got" = "waitall halo isend bcast " ] || { echo "floor: rows '$got', want 'waitall halo isend bcast '"; cat "$w/floor.txt"; exit 1; }
# 2 variants x 2 repetitions x 5 tests x 2 sizes, plus the header.
rows=$(grep -c . "$w/ff.csv")
[ "$rows" -eq 41 ] || { echo "ff.csv: $rows lines, want 41"; cat "$w/ff.csv"; exit 1; }
for v in plain mpift; do
  for t in 1 2 3 4 5; do
    for s in 1 16; do
      n=$(awk -F, -v v=$v -v t=$t -v s=$s '$1 == v && $5 == t && $6 == s && $2 == 2' "$w/ff.csv" | wc -l)
      [ "$n" -eq 2 ] || { echo "ff.csv: $n rows for $v test $t size $s, want 2"; exit 1; }
    done
  done
done
ctrl=$(awk -F, '$1 == "mpift" { c += $9 } END { print c + 0 }' "$w/ff.csv")
[ "$ctrl" -eq 0 ] || { echo "MPIFT sent $ctrl control messages on the failure-free path"; exit 1; }
# One layer communicator (the shadow), with 2 user ones and with 6.
ok=$(awk -F, '$1 == "mpift" && $4 == 1 && $5 == 2 && $6 == 1 && $7 == 6' "$w/acct.csv" | wc -l)
[ "$ok" -eq 2 ] || { echo "acct.csv: want 1 layer communicator with 2 and 6 user ones"; cat "$w/acct.csv"; exit 1; }
for m in revoke_normal revoke_revoked kill_observed_recv agree_first agree shrink_first shrink agree_nofail shrink_nofail; do
  grep -q "^mpift,3,0,$m," "$w/fail.csv" || { echo "fail.csv: no $m row"; cat "$w/fail.csv"; exit 1; }
done
for m in barrier allreduce create_group dup rget fetch_op handoff; do
  n=$(grep -c "^host,3,0,$m," "$w/parts.csv")
  [ "$n" -ge 1 ] || { echo "parts.csv: no $m row"; cat "$w/parts.csv"; exit 1; }
done
echo "bench smoke ($mpi): ff.csv $rows lines, 0 control messages; fail.csv $(grep -c . "$w/fail.csv") lines"
