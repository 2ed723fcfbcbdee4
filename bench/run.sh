#!/usr/bin/env bash
# bench/run.sh: MPIFT's benchmarks (issue 5), run by `make bench [QUICK=1]`.
#
#   bench/run.sh [--quick] [--mpi openmpi|mpich] [--nps "2 4"] [--out DIR]
#
# 1. Builds libmpift.a, then bench/ff.c twice (plain MPI, and with MPIFT through
#    include/compat: the same source) and bench/fail.c twice (with MPIFT, and
#    against Open MPI 5 ULFM, the oracle of ../shared/tools/ulfm-oracle, if present).
# 2. Failure-free: per repetition and rank count, runs the plain and the MPIFT
#    binary one after the other (the order rotating between repetitions, so a
#    drift of the machine's load hits both alike) -> DIR/ff-np<N>.csv, acct.csv;
#    and a third variant, "mimic": the plain binary with --mimic, i.e. MPIFT's
#    extra MPI state (window, posted wake receive, Waitany) without its code, which
#    splits MPIFT's overhead into the MPI's part and the layer's.
# 3. Failure path: per run and rank count, MPIFT and the oracle one after the
#    other -> DIR/fail-np<N>.csv. Runs alternate how survivors observe the death
#    (blocked in MPI_Recv from the victim, or in MPI_Barrier). The last MPIFT run
#    at the largest rank count also lets the survivors sleep outside MPI and
#    measures the dead rank's CPU (bench/fail.c --zombie, and /usr/bin/time per
#    rank) -> DIR/zombie.csv, DIR/zombie-time-np<N>.<rank>. And per run, at 3
#    ranks or more, bench/parts.c in plain MPI: what the host MPI charges for the
#    pieces the failure path is made of -> DIR/parts-np<N>.csv.
# 4. bench/report.py DIR: DIR/summary.md (tables, targets), DIR/ff-time.png and
#    DIR/ff-ratio.png (the thesis's figures 6.3 and 6.4 for every test).
#
# Every mpiexec runs under `timeout`; a run that fails or hangs is listed in
# DIR/errors.txt and the benchmark goes on. MPIFT_VERBOSE=0 throughout.
# Environment: BENCH_FF_REPS, BENCH_FAIL_RUNS, BENCH_IDLE (seconds) override the
# defaults; ULFM_ORACLE is the oracle script (default ../shared/tools/ulfm-oracle).
set -u
cd "$(dirname "$0")/.."
root=$PWD
quick=0 mpi=openmpi nps="2 4" out=$root/bench/results
while [ $# -gt 0 ]; do
  case $1 in
    --quick) quick=1 ;;
    --mpi) mpi=$2; shift ;;
    --nps) nps=$2; shift ;;
    --out) out=$2; shift ;;
    *) echo "usage: $0 [--quick] [--mpi openmpi|mpich] [--nps \"2 4\"] [--out DIR]" >&2; exit 2 ;;
  esac
  shift
done
if [ "$quick" = 1 ]; then
  ff_reps=${BENCH_FF_REPS:-3} ff_exps=0,2,4,6,8 ff_blocks=3
  fail_runs=${BENCH_FAIL_RUNS:-2} fail_reps=5 idle=${BENCH_IDLE:-3}
else
  ff_reps=${BENCH_FF_REPS:-7} ff_exps=0,1,2,3,4,5,6,7,8,9,10 ff_blocks=5
  fail_runs=${BENCH_FAIL_RUNS:-8} fail_reps=10 idle=${BENCH_IDLE:-10}
fi
case $mpi in
  openmpi) MPICC=mpicc.openmpi MPIEXEC=mpiexec.openmpi ;;
  mpich) MPICC=mpicc.mpich MPIEXEC=mpiexec.mpich ;;
  *) echo "unknown MPI '$mpi'" >&2; exit 2 ;;
esac
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1
export MPIFT_VERBOSE=0
T=${BENCH_TIMEOUT:-300}

lib=$root/target/$mpi/release/libmpift.a
cfg=$root/target/$mpi/release/include
FT="-I$root/include/compat -I$root/include -I$cfg"
LIBS="$lib -lgcc_s -lutil -lrt -lpthread -lm -ldl"
bin=$root/build-out/$mpi/bench
mkdir -p "$bin" "$out"
rm -f "$out"/*.csv "$out"/*.png "$out"/zombie-time-* "$out"/errors.txt "$out"/summary.md "$out"/machine.txt
log=$out/errors.txt

echo "bench: building ($mpi)"
make -s --no-print-directory lib MPI="$mpi" || exit 1
set -e
$MPICC -std=c99 -O2 -Wall -Wextra bench/ff.c -o "$bin/ff_plain"
$MPICC -std=c99 -O2 -Wall -Wextra $FT bench/ff.c -o "$bin/ff_mpift" $LIBS
$MPICC -std=c99 -O2 -Wall -Wextra $FT bench/fail.c -o "$bin/fail_mpift" $LIBS
$MPICC -std=c99 -O2 -Wall -Wextra bench/parts.c -o "$bin/parts"
set +e
oracle=${ULFM_ORACLE:-$root/../shared/tools/ulfm-oracle}
have_oracle=0
if [ -x "$oracle" ] && "$oracle" >/dev/null 2>&1; then
  omccc=${ULFM_ORACLE_VENV:-/opt/ulfm-oracle}/bin/mpicc
  if "$omccc" -std=c99 -O2 -Wall -Wextra bench/fail.c -o "$bin/fail_ulfm"; then have_oracle=1; fi
fi
no_oracle=""
[ $have_oracle = 1 ] || no_oracle="no ULFM oracle ($oracle): failure path measured for MPIFT only"
[ -n "$no_oracle" ] && echo "bench: $no_oracle"

{
  echo "date: $(date -u '+%Y-%m-%d %H:%M UTC')"
  echo "commit: $(git rev-parse --short HEAD 2>/dev/null || echo '?')$(git diff --quiet HEAD 2>/dev/null || echo ' (modified)')"
  echo "command: bench/run.sh$([ $quick = 1 ] && echo ' --quick') --mpi $mpi --nps \"$nps\""
  echo "nproc: $(nproc)"
  echo "cpu: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ *//')"
  echo "load before: $(cut -d' ' -f1-3 /proc/loadavg)"
  echo "mpi: $($MPIEXEC --version 2>&1 | head -n1)"
  [ -n "$no_oracle" ] && echo "oracle: $no_oracle"
  [ $have_oracle = 1 ] && echo "oracle: $("${ULFM_ORACLE_VENV:-/opt/ulfm-oracle}/bin/mpirun" --version 2>&1 | head -n1) --with-ft ulfm"
  echo "ff: reps=$ff_reps exps=$ff_exps blocks=$ff_blocks iters=128; fail: runs=$fail_runs reps=$fail_reps idle=${idle}s"
} >"$out/machine.txt"

run() { # run WHAT COMMAND...: under a timeout; a failure is logged, not fatal
  local what=$1
  shift
  if ! timeout -k 5 "$T" "$@" >"$out/.last.out" 2>"$out/.last.err" </dev/null; then
    { echo "FAILED ($?): $what"; tail -n 5 "$out/.last.err"; } | tee -a "$log" >&2
  fi
}

echo "bench: failure-free tests 1-5, $ff_reps repetitions per variant, np in $nps"
for ((r = 1; r <= ff_reps; r++)); do
  for np in $nps; do
    # Rotated per repetition, so no variant always runs first.
    case $((r % 3)) in
      1) order="plain mpift mimic" ;;
      2) order="mpift mimic plain" ;;
      0) order="mimic plain mpift" ;;
    esac
    for v in $order; do
      exe=$bin/ff_$v extra=()
      [ $v = mimic ] && exe=$bin/ff_plain extra=(--mimic)
      run "ff $v -n $np rep $r" $MPIEXEC -n "$np" "$exe" --variant "$v" --rep "$r" "${extra[@]}" \
        --exps "$ff_exps" --blocks "$ff_blocks" --csv "$out/ff-np$np.csv" --acct "$out/acct.csv"
    done
  done
  echo "  repetition $r of $ff_reps done"
done

echo "bench: failure path, $fail_runs runs per variant"
maxnp=0
for np in $nps; do [ "$np" -gt $maxnp ] && maxnp=$np; done
for ((r = 1; r <= fail_runs; r++)); do
  observe=recv
  [ $((r % 2)) = 0 ] && observe=barrier
  for np in $nps; do
    csv=$out/fail-np$np.csv
    args=(--run "$r" --reps "$fail_reps" --observe "$observe" --csv "$csv")
    if [ "$r" = "$fail_runs" ] && [ "$np" = $maxnp ]; then
      # The dead rank's CPU while the survivors sleep outside MPI.
      run "fail mpift -n $np run $r (idle ${idle}s)" $MPIEXEC -n "$np" sh -c \
        'exec /usr/bin/time -f "%e %U %S" -o "$0.${OMPI_COMM_WORLD_RANK:-${PMI_RANK:-x}}" "$@"' \
        "$out/zombie-time-np$np" "$bin/fail_mpift" "${args[@]}" --idle "$idle" --zombie "$out/zombie.csv"
    else
      run "fail mpift -n $np run $r" $MPIEXEC -n "$np" "$bin/fail_mpift" "${args[@]}"
    fi
    # What the host MPI charges for the pieces of the failure path (plain MPI).
    [ "$np" -ge 3 ] && run "parts -n $np run $r" $MPIEXEC -n "$np" "$bin/parts" --run "$r" --csv "$out/parts-np$np.csv"
    if [ $have_oracle = 1 ]; then
      args=(--run "$r" --reps "$fail_reps" --observe "$observe" --csv "$csv")
      run "fail ulfm -n $np run $r" "$oracle" run -n "$np" "$bin/fail_ulfm" "${args[@]}"
    fi
  done
  echo "  run $r of $fail_runs done"
done
echo "load after: $(cut -d' ' -f1-3 /proc/loadavg)" >>"$out/machine.txt"
rm -f "$out/.last.out" "$out/.last.err"

echo "bench: report"
python3 bench/report.py "$out" || exit 1
echo "bench: wrote $out/summary.md, $out/ff-time.png, $out/ff-ratio.png and the CSVs"
[ -s "$log" ] && { echo "bench: some runs failed, see $log"; exit 1; }
exit 0
