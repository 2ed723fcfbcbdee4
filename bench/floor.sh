#!/usr/bin/env bash
# bench/floor.sh: bench/floor.c's rows on MPICH and Open MPI, plain and through
# the floor layer, in instructions per iteration (rank 0, callgrind); prints a
# markdown table with the layer's own instructions and their share of the plain
# iteration. Plain MPI, no MPIFT; run by hand (bench/README.md, "The floor").
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
out=$root/build-out/floor
mkdir -p "$out"
echo "| host | row | plain | floor layer | own | own / plain |"
echo "|---|---|---:|---:|---:|---:|"
for mpi in mpich openmpi; do
  case $mpi in
    mpich) rv=PMI_RANK; ex=(mpiexec.mpich) ;;
    openmpi) rv=OMPI_COMM_WORLD_RANK; ex=(mpiexec.openmpi --allow-run-as-root --oversubscribe) ;;
  esac
  mpicc.$mpi -O2 "$root/bench/floor.c" -o "$out/floor_$mpi"
  declare -A ir=()
  for v in 0 1; do
    rm -rf "$out/$mpi.$v" && mkdir -p "$out/$mpi.$v"
    timeout -k 10 300 "${ex[@]}" -n 1 valgrind -q --tool=callgrind --collect-atstart=no --separate-threads=yes \
      --callgrind-out-file="$out/$mpi.$v/cg.%q{$rv}.%p" "$out/floor_$mpi" $v : -n 1 "$out/floor_$mpi" $v \
      >"$out/$mpi.$v/stdout" 2>"$out/$mpi.$v/stderr"
    for f in "$out/$mpi.$v"/cg.0.*-01; do
      row=$(sed -n 's/^desc: Trigger: Client Request: //p' "$f")
      [ -n "$row" ] || continue
      ir[$v.$row]=$(awk '/^(summary|totals):/ {print $2; exit}' "$f")
    done
  done
  for row in waitall halo isend bcast; do
    p=${ir[0.$row]} l=${ir[1.$row]}
    awk -v m=$mpi -v r=$row -v p=$p -v l=$l 'BEGIN { printf "| %s | %s | %.0f | %.0f | %.0f | %.3f |\n", m, r, p/2000, l/2000, (l-p)/2000, (l-p)/p }'
  done
  unset ir
done
