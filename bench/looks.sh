#!/usr/bin/env bash
# bench/looks.sh: the host MPIs' instructions per completion of a send that is
# complete already (bench/looks.c), MPI_Wait / MPI_Test / MPI_Request_get_status
# + MPI_Wait, on MPICH and Open MPI. Plain MPI, no MPIFT; run by hand. Prints a
# markdown table (instructions per completion, rank 0, callgrind).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
out=$root/build-out/looks
mkdir -p "$out"
echo "| host | MPI_Wait | MPI_Test | get_status + MPI_Wait |"
echo "|---|---:|---:|---:|"
for mpi in mpich openmpi; do
  case $mpi in
    mpich) rv=PMI_RANK; ex=(mpiexec.mpich) ;;
    openmpi) rv=OMPI_COMM_WORLD_RANK; ex=(mpiexec.openmpi --allow-run-as-root --oversubscribe) ;;
  esac
  mpicc.$mpi -O2 "$root/bench/looks.c" -o "$out/looks_$mpi"
  row="| $mpi |"
  for v in 0 1 2; do
    rm -f "$out"/cg.*
    timeout -k 10 120 "${ex[@]}" -n 1 valgrind -q --tool=callgrind --collect-atstart=no \
      --callgrind-out-file="$out/cg.%q{$rv}.%p" "$out/looks_$mpi" $v : -n 1 "$out/looks_$mpi" $v \
      >"$out/stdout" 2>"$out/stderr"
    grep -q "not complete" "$out/stdout" && row="$row (late) "
    total=$(awk '/^(summary|totals):/ {print $2; exit}' "$out"/cg.0.*)
    row="$row $((total / 1000)) |"
  done
  echo "$row"
done
