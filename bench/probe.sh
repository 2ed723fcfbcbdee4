#!/usr/bin/env bash
# bench/probe.sh looks|floor|floor-time: the plain-MPI probes of issue 36, in
# instructions counted by callgrind on rank 0 (rank 1 native), or in time, on MPICH
# and Open MPI; prints a markdown table. Run by hand (bench/README.md, "A test that
# looks first, names that fold, and the floor" and "The floor in time").
#   looks  bench/looks.c: the host's instructions to complete a send that is
#          complete already, by MPI_Wait, MPI_Test, MPI_Request_get_status +
#          MPI_Wait (per completion).
#   floor  bench/floor.c: calls.c's waitall, halo, isend and bcast rows plain
#          and through a minimal layer with MPIFT's failure-free obligations
#          (per iteration), the layer's own and its share of plain.
#   floor-time  the same rows in time, 2 ranks: plain, floor layer and plain
#          again (the control) rotated FLOOR_RUNS times (default 21) of
#          FLOOR_ITERS iterations (default 20000); the median of each, in us, and
#          floor/plain, control/plain. Needs an idle machine.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
probe=${1:-}
case $probe in looks|floor|floor-time) ;; *) sed -n '2,15p' "$0" | sed 's/^# \{0,1\}//' >&2; exit 2 ;; esac
out=$root/build-out/probe
mkdir -p "$out"

# launcher MPI: sets ex (the mpiexec command line) and rv (the variable naming
# a process's rank) for MPI.
launcher() {
  case $1 in
    mpich) rv=PMI_RANK; ex=(mpiexec.mpich) ;;
    openmpi) rv=OMPI_COMM_WORLD_RANK; ex=(mpiexec.openmpi --allow-run-as-root --oversubscribe) ;;
  esac
}

# run MPI VARIANT DIR: the probe under callgrind into DIR (one file per dump,
# main thread only).
run() {
  local mpi=$1 v=$2 dir=$3 rv ex
  launcher "$mpi"
  rm -rf "$dir" && mkdir -p "$dir"
  timeout -k 10 300 "${ex[@]}" -n 1 valgrind -q --tool=callgrind --collect-atstart=no --separate-threads=yes \
    --callgrind-out-file="$dir/cg.%q{$rv}.%p" "$out/${probe}_$mpi" "$v" : -n 1 "$out/${probe}_$mpi" "$v" \
    >"$dir/stdout" 2>"$dir/stderr" || { echo "probe.sh: $probe $mpi $v failed; $dir/stderr" >&2; exit 1; }
}

# total FILE: the instructions a callgrind file counted.
total() { awk '/^(summary|totals):/ {print $2; exit}' "$1"; }

if [ "$probe" = floor-time ]; then
  runs=${FLOOR_RUNS:-21} iters=${FLOOR_ITERS:-20000}
  echo "| host | row | plain us | floor/plain | control/plain |"
  echo "|---|---|---:|---:|---:|"
  for mpi in mpich openmpi; do
    mpicc.$mpi -O2 "$root/bench/floor.c" -o "$out/floor_$mpi"
    launcher "$mpi"
    raw=$out/floor-time.$mpi.tsv
    : >"$raw"
    for ((k = 0; k < runs; k++)); do
      for j in 0 1 2; do
        v=$(((k + j) % 3)) # 0 plain, 1 floor, 2 control (plain again)
        timeout -k 10 300 "${ex[@]}" -n 2 "$out/floor_$mpi" $((v == 1)) "$iters" | sed "s/^/$v /" >>"$raw"
      done
    done
    python3 - "$raw" "$mpi" <<'PY'
import sys, statistics as st
raw, mpi = sys.argv[1:]
d = {}
for line in open(raw):
    v, row, us = line.split()
    d.setdefault((row, v), []).append(float(us))
for row in ["waitall", "halo", "isend", "bcast"]:
    p, f, c = (st.median(d[(row, v)]) for v in "012")
    print(f"| {mpi} | {row} | {p:.3f} | {f / p:.3f} | {c / p:.3f} |")
PY
  done
  exit 0
fi
if [ "$probe" = looks ]; then
  echo "| host | MPI_Wait | MPI_Test | get_status + MPI_Wait |"
  echo "|---|---:|---:|---:|"
else
  echo "| host | row | plain | floor layer | own | own / plain |"
  echo "|---|---|---:|---:|---:|---:|"
fi
for mpi in mpich openmpi; do
  mpicc.$mpi -O2 "$root/bench/$probe.c" -o "$out/${probe}_$mpi"
  if [ "$probe" = looks ]; then
    row="| $mpi |"
    for v in 0 1 2; do
      run $mpi $v "$out/$mpi.$v"
      late=$(grep -c "not complete" "$out/$mpi.$v/stdout" || true)
      row="$row $(( $(total "$out/$mpi.$v"/cg.0.*-01) / 1000 ))$([ "$late" = 0 ] || echo ' (late)') |"
    done
    echo "$row"
    continue
  fi
  declare -A ir=()
  for v in 0 1; do
    run $mpi $v "$out/$mpi.$v"
    for f in "$out/$mpi.$v"/cg.0.*-01; do
      r=$(sed -n 's/^desc: Trigger: Client Request: //p' "$f")
      [ -n "$r" ] && ir[$v.$r]=$(total "$f")
    done
  done
  for r in waitall halo isend bcast; do
    awk -v m=$mpi -v r=$r -v p="${ir[0.$r]}" -v l="${ir[1.$r]}" \
      'BEGIN { printf "| %s | %s | %.0f | %.0f | %.0f | %.3f |\n", m, r, p/2000, l/2000, (l-p)/2000, (l-p)/p }'
  done
  unset ir
done
