#!/usr/bin/env bash
# tests/mpich-ft/run.sh <mpich|openmpi|oracle>: MPICH 4.0.2's fault-tolerance tests
# (test/mpi/ft, issue 18) built UNCHANGED and run under MPIFT, or (oracle) under
# real ULFM (Open MPI 5.0.11 with --with-ft ulfm) for comparison.
#
#   mpich|openmpi  `make install` of this tree into a scratch prefix; each program
#                  built with mpicc.<mpi> -I<prefix>/include/compat + pkg-config mpift
#                  and -DMPIFT_MAP_SIGNALS, run with MPIFT_EXIT_KILLS=1 (the tests
#                  kill a rank with exit(); docs/INJECTION.md "Legacy injection").
#   oracle         /work/shared/tools/ulfm-oracle's mpicc, no MPIFT; oracle_compat.h
#                  force-included: Open MPI's MPIX_ names come from mpi-ext.h, and
#                  exit() after MPI_Init becomes a SIGKILL (ULFM does not count a
#                  rank that calls exit() as failed).
#
# Each entry of test/mpi/ft/testlist runs at its own process count, MFT_RUNS times
# (default 3), every launch under `timeout -k 5 MFT_TIMEOUT` (default 60 s; a
# timeout is HANG). Judged like MPICH's runtests, except that the exit status is
# not checked (under MPIFT a "dead" rank ends with status 0): PASS iff the only
# non-empty output line (stdout+stderr) is "No Errors" (or "No errors"; stray
# blank lines and leading blanks allowed, one such line). The one TestStatus entry
# (abort) passes, as in runtests, iff the status is nonzero (see judge()).
# `xfail=` marks (MPICH's own known failures) are shown, and run all the same.
# Ends with "N passed, M failed" (tests: passed = every run passed); exits nonzero
# when M > 0. `make test` runs the tests listed in must-pass.txt (MFT_ONLY) on
# MPICH and Open MPI.
#
# Environment: MFT_WORK (scratch, default /tmp/mpich-ft-work; src/ is the download
# cache unless MFT_SRC_CACHE names another, <mode>/ is rebuilt each run), MFT_RUNS,
# MFT_TIMEOUT, MFT_ONLY (test names),
# MFT_TESTLIST_ENV=1 (also pass the testlist's env= and, on MPICH, mpiexecarg=).
set -euo pipefail
mode=${1:-}
case $mode in
  mpich | openmpi) MPICC=mpicc.$mode MPIEXEC=mpiexec.$mode ;;
  oracle) ORACLE=/work/shared/tools/ulfm-oracle MPICC=/opt/ulfm-oracle/bin/mpicc ;;
  *) echo "usage: $0 <mpich|openmpi|oracle>" >&2; exit 2 ;;
esac
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
work=${MFT_WORK:-/tmp/mpich-ft-work}
src=${MFT_SRC_CACHE:-$work/src}
build=$work/$mode
runs=${MFT_RUNS:-3}
T=${MFT_TIMEOUT:-60}
only=${MFT_ONLY:-}

export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1
# Nothing from the caller's environment steers MPIFT (injection rules, verbosity):
# the run sees MPIFT's defaults, plus the exit() mapping these tests need.
for v in $(env | sed -n 's/^\(MPIFT_[A-Z_]*\)=.*/\1/p'); do unset "$v"; done
unset SIM_FT_TIMEOUT

rm -rf "$build"
mkdir -p "$src" "$build/bin" "$build/log"
log() { echo "$*" >&2; }

# ---------------------------------------------------------------- MPICH's source
# Debian 12's source package mpich 4.0.2-3; only the upstream tarball is used. Reuse
# tests/realprogs' download if there is one. apt-get source needs deb-src lines: if
# the system has none, a private apt state under $src/apt gets them, so /etc/apt is
# not touched.
tarball=$(ls "$src"/mpich_4.0.2.orig.tar.* /tmp/mpift-realprogs/src/mpich_4.0.2.orig.tar.* 2>/dev/null | head -1 || true)
if [ -z "$tarball" ]; then
  log "fetching MPICH 4.0.2's source (apt-get source --download-only mpich)"
  if ! (cd "$src" && apt-get source --download-only mpich=4.0.2-3) >"$src/fetch.log" 2>&1; then
    a=$src/apt
    mkdir -p "$a/lists/partial" "$a/cache/archives/partial"
    echo "deb-src http://deb.debian.org/debian bookworm main" >"$a/sources.list"
    apt_opts=(-o Dir::Etc::SourceList="$a/sources.list" -o Dir::Etc::SourceParts=/nonexistent
      -o Dir::State::Lists="$a/lists" -o Dir::Cache="$a/cache")
    { apt-get "${apt_opts[@]}" update && (cd "$src" && apt-get "${apt_opts[@]}" source --download-only mpich=4.0.2-3); } \
      >>"$src/fetch.log" 2>&1 || { log "could not fetch mpich's source:"; tail -5 "$src/fetch.log" >&2; exit 1; }
  fi
  tarball=$(ls "$src"/mpich_4.0.2.orig.tar.* | head -1)
fi
msrc=$src/mpich-4.0.2
if [ ! -f "$msrc/test/mpi/ft/testlist" ]; then
  rm -rf "$msrc" && mkdir -p "$msrc"
  tar xf "$tarball" -C "$msrc" --strip-components=1 mpich-4.0.2/test/mpi
fi
M=$msrc/test/mpi

# ---------------------------------------------------------------- compiler and flags
# cflags: for every C file (MPICH's test helpers too); ftflags: only the ft programs.
if [ "$mode" = oracle ]; then
  "$ORACLE" >/dev/null # installs Open MPI 5 with ULFM into /opt/ulfm-oracle if missing
  cflags=() libs=()
  ftflags=(-include "$here/oracle_compat.h")
  run_env=()
  launcher=("$ORACLE" run) # mpirun --with-ft ulfm and the flags this machine needs
else
  log "installing MPIFT for $mode in $build/prefix"
  make -s --no-print-directory -C "$root" install MPI="$mode" PREFIX="$build/prefix" >"$build/log/install" 2>&1 ||
    { tail -20 "$build/log/install" >&2; exit 1; }
  export PKG_CONFIG_PATH=$build/prefix/lib/pkgconfig
  # shellcheck disable=SC2207
  cflags=(-I"$build/prefix/include/compat" $(pkg-config --cflags mpift) -DMPIFT_MAP_SIGNALS)
  # shellcheck disable=SC2207
  libs=($(pkg-config --libs mpift))
  ftflags=()
  run_env=(MPIFT_EXIT_KILLS=1)
  launcher=("$MPIEXEC")
fi

# ---------------------------------------------------------------- build
# MPICH's configure only to get include/mpitestconf.h for this compiler (what the
# test helpers and mpitest.h expect); the programs and helpers are then compiled
# here directly, as the ft Makefile would (Makefile_single.mtest: the program plus
# util/mtest.c, mtest_common.c, mtest_single.c).
log "configuring MPICH's test suite for $MPICC"
(cd "$build" && MPICC=$MPICC "$M/configure" --disable-fortran --disable-cxx --disable-spawn \
  --disable-perftest --enable-ft-tests --disable-dtpools --disable-dependency-tracking \
  --disable-shared --enable-threads=single >"$build/log/configure" 2>&1) ||
  { log "configure failed:"; tail "$build/log/configure" >&2; exit 1; }
incs=(-I"$build/include" -I"$M/include")
helpers=()
for u in mtest mtest_common mtest_single; do
  "$MPICC" "${cflags[@]}" "${incs[@]}" -c "$M/util/$u.c" -o "$build/bin/$u.o" >>"$build/log/build.util" 2>&1 ||
    { log "building util/$u.c failed:"; tail "$build/log/build.util" >&2; exit 1; }
  helpers+=("$build/bin/$u.o")
done

# ---------------------------------------------------------------- run and judge
output_of() { # output_of OUTFILE: what is judged, lines trimmed
  # Open MPI 4.1's mpiexec reports a nonzero exit status in a framed notice
  # ("Primary job terminated normally, but 1 process returned a non-zero exit
  # code", "... detected that one or more processes exited with non-zero
  # status"). The TestStatusNoErrors tests exit nonzero on purpose, and the status
  # is not judged, so that notice is dropped; every other framed notice (MPI_ABORT,
  # signals) stays.
  tr -d '\0' <"$1" | awk -v strip="$([ "$mode" = openmpi ] && echo 1 || echo 0)" '
    function flush() { if (!drop) printf "%s", buf; buf = ""; drop = 0 }
    strip && /^----------+$/ { buf = buf $0 "\n"; if (inb) { inb = 0; flush() } else inb = 1; next }
    inb { buf = buf $0 "\n"; if (/Primary job  terminated normally, but|exited with non-zero status/) drop = 1; next }
    { print }
    END { if (inb) flush() }' | sed 's/^[[:space:]]*//; s/[[:space:]]*$//'
}
judge() { # judge OUTFILE RC SECONDS RESULTTEST: PASS, HANG or FAIL
  local f=$1 rc=$2 secs=$3 how=$4
  # timeout gives 124 (TERM) or 137 (KILL after -k); a rank's own SIGKILL can also
  # give 137, so 137 counts as a hang only when the time limit was reached.
  if [ "$rc" -eq 124 ] || { [ "$rc" -eq 137 ] && [ "$secs" -ge "$T" ]; }; then echo HANG; return; fi
  if [ "$how" = TestStatus ]; then
    # runtests' TestStatus means "no output" but its check (/=*/, meant for Hydra's
    # banner) matches every line: in effect only a nonzero status is required.
    [ "$rc" -ne 0 ] && echo PASS || echo FAIL
  else
    # MTest_Finalize prints " No errors", the tests' own code " No Errors".
    local lines
    lines=$(output_of "$f" | grep -v '^$' || true)
    [[ $lines =~ ^No\ [Ee]rrors$ ]] && echo PASS || echo FAIL
  fi
}
detail_of() { # detail_of OUTFILE: the first offending output lines, on one line
  output_of "$1" | grep -v -e '^$' -e '^No [Ee]rrors$' -e '^=*$' |
    awk 'NR <= 3 { printf "%s%s", (NR > 1 ? " | " : ""), $0 }' | cut -c1-160
}

results=$build/results.txt # name|np|xfail|outcome1 outcome2 ...|detail of the first non-PASS run
: >"$results"
while read -r line; do
  line=${line%%#*}
  read -r -a f <<<"$line"
  [ ${#f[@]} -eq 0 ] && continue
  name=${f[0]} np=${f[1]} how="" xfail="" envs=() xargs=()
  [ -n "$only" ] && [[ " $only " != *" $name "* ]] && continue
  for kv in "${f[@]:2}"; do
    case ${kv%%=*} in
      # env=MPIR_CVAR_ENABLE_FT=1 and mpiexecarg=-disable-auto-cleanup switch on
      # MPICH's own fault tolerance: not what runs here (ULFM Open MPI, or MPIFT,
      # whose "dead" ranks stay alive). MPIFT on MPICH with MPICH's FT switched on
      # aborts in MPICH (ch4_request.h:16 from MPI_Test): MFT_TESTLIST_ENV=1 to see.
      env) [ "${MFT_TESTLIST_ENV:-0}" = 1 ] && envs+=("${kv#*=}") ;;
      mpiexecarg) [ "${MFT_TESTLIST_ENV:-0}" = 1 ] && [ "$mode" = mpich ] && xargs+=("${kv#*=}") ;;
      resultTest) how=${kv#*=} ;;
      xfail) xfail=${kv#*=} ;;
    esac
  done
  exe=$build/bin/$name
  if ! "$MPICC" "${cflags[@]}" "${ftflags[@]}" "${incs[@]}" "$M/ft/$name.c" "${helpers[@]}" -o "$exe" "${libs[@]}" \
    >"$build/log/$name.build" 2>&1; then
    d=$(grep -m1 -E 'error|undefined' "$build/log/$name.build" | sed "s,^$M/,," | cut -c1-160 || true)
    echo "$name np=$np: NOBUILD  $d"
    echo "$name|$np|$xfail|NOBUILD|$d" >>"$results"
    continue
  fi
  outcomes="" detail=""
  for i in $(seq 1 "$runs"); do
    out=$build/log/$name.$i.out
    t0=$(date +%s)
    rc=0
    (cd "$build/bin" && env "${envs[@]}" "${run_env[@]}" timeout -k 5 "$T" "${launcher[@]}" "${xargs[@]}" -n "$np" "./$name") \
      </dev/null >"$out" 2>&1 || rc=$?
    secs=$(($(date +%s) - t0))
    o=$(judge "$out" "$rc" "$secs" "$how")
    d=""
    [ "$o" = FAIL ] && d=$(detail_of "$out")
    [ "$o" = HANG ] && d="no end after ${T}s: $(detail_of "$out")"
    echo "$name np=$np run $i: $o (exit $rc, ${secs}s)${d:+  $d}"
    outcomes+="$o "
    [ -z "$detail" ] && [ "$o" != PASS ] && detail=$d
  done
  echo "$name|$np|$xfail|${outcomes% }|$detail" >>"$results"
done <"$M/ft/testlist"

# ---------------------------------------------------------------- summary
echo
echo "== MPICH 4.0.2 test/mpi/ft on $mode ($runs runs each, timeout ${T}s)"
printf '%-17s %-3s %-11s %-16s %s\n' test np xfail runs "first failure"
while IFS='|' read -r name np xfail outs d; do
  printf '%-17s %-3s %-11s %-16s %s\n' "$name" "$np" "${xfail:--}" "$outs" "$d"
done <"$results"
passed=$(awk -F'|' '$4 ~ /^(PASS ?)+$/' "$results" | wc -l)
failed=$(awk -F'|' '$4 !~ /^(PASS ?)+$/' "$results" | wc -l)
echo "(outputs: $build/log)"
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
