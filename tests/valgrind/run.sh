#!/usr/bin/env bash
# tests/valgrind/run.sh <mpich|openmpi> [np] [program...]: every examples/ulfm
# program (or the ones named) under valgrind's memcheck, with MPIFT, at np ranks
# (default 4), each rank with its own log. Not part of `make test` (valgrind makes
# each run 10-30 s): `make memcheck`.
#
# A program is clean when its ranks' logs show no invalid read, write or free, no
# mismatched or overlapping free/copy, no uninitialised value that decides a jump
# or reaches a system call from MPIFT's or the program's own code (the host MPI's
# known ones, e.g. Open MPI's writev of padding bytes, are its business), and the
# run itself passes as in tests/ulfm/run.sh (exit status, one final line per rank).
# Prints "PASS|FAIL <prog> <why>" and "N passed, M failed"; logs stay in
# build-out/<mpi>/valgrind/.
set -u
cd "$(dirname "$0")/../.."
root=$PWD
mpi=${1:-}
np=${2:-4}
shift 2 2>/dev/null || shift $#
. scripts/mpi-host.sh
mpi_host "$mpi" || { echo "usage: $0 <mpich|openmpi> [np] [program...]" >&2; exit 2; }
command -v valgrind >/dev/null || { echo "valgrind is not installed" >&2; exit 2; }
for v in $(env | sed -n 's/^\(MPIFT_[A-Z_]*\)=.*/\1/p'); do unset "$v"; done
lib=$root/target/$mpi/release/libmpift.a
[ -f "$lib" ] || { echo "no $lib: make MPI=$mpi lib first" >&2; exit 2; }
out=$root/build-out/$mpi/valgrind
rm -rf "$out" && mkdir -p "$out"
progs=("$@")
[ ${#progs[@]} -eq 0 ] && for f in examples/ulfm/*.c; do progs+=("$(basename "$f" .c)"); done
passed=0 failed=0
# An uninitialised-value report counts when one of its first six frames is MPIFT's
# (mpift::, Sim_FT_) or the program's own source; reports only in the host MPI and
# its runtime (Open MPI's PMIx writev of padding bytes, say) are the host's.
for p in "${progs[@]}"; do
  bin=$out/$p
  if ! "$MPICC" -std=c99 -O1 -g -I"$root/include/compat" -I"$root/include" -I"$root/target/$mpi/release/include" \
       -Iexamples/ulfm "examples/ulfm/$p.c" "$lib" -lpthread -ldl -lm -o "$bin" 2>"$out/$p.build"; then
    failed=$((failed + 1)); echo "FAIL $p: does not build"; continue
  fi
  rm -f "$out/$p".vg.*
  (cd "$out" && timeout -k 10 600 "$MPIEXEC" -n "$np" valgrind -q --error-limit=no --num-callers=12 \
      --log-file="$out/$p.vg.%p" "./$p") >"$out/$p.out" 2>&1
  status=$?
  # Memory errors anywhere; uninitialised values only with an MPIFT or program frame
  # among the first four.
  bad=$(cat "$out/$p".vg.* 2>/dev/null | awk -v own_re="mpift::|Sim_FT_|[(]$p[.]c:|ulfm_common[.]h" '
    function flush() { if (kind != "" && (hard || own)) print kind }
    /^==[0-9]+== [A-Z]/ { flush(); kind = $0; sub(/^==[0-9]+== /, "", kind)
                          hard = (kind ~ /Invalid|Mismatched|overlap|free\(\)|[Ss]ource and destination/)
                          uninit = (kind ~ /[Uu]ninitialised|unaddressable/); own = 0; n = 0; next }
    /^==[0-9]+==    (at|by) / { n++; if (uninit && n <= 6 && $0 ~ own_re) own = 1; next }
    END { flush() }' | sort | uniq -c)
  expect=0
  [ "$p" = errh_fatal ] && expect=nonzero
  lines=$(grep -cE '^rank [0-9]+: (OK|DIES)' "$out/$p.out")
  fails=$(grep -cE '^rank [0-9]+: FAIL' "$out/$p.out")
  ok_run=0
  if [ "$expect" = 0 ]; then [ "$status" = 0 ] && [ "$fails" = 0 ] && [ "$lines" -ge "$np" ] && ok_run=1
  else [ "$status" != 0 ] && ok_run=1; fi
  if [ -z "$bad" ] && [ "$ok_run" = 1 ]; then
    passed=$((passed + 1)); echo "PASS $p: valgrind clean ($(ls "$out/$p".vg.* 2>/dev/null | wc -l) logs)"
  else
    failed=$((failed + 1))
    echo "FAIL $p: exit $status, $lines rank lines, $fails FAIL${bad:+; valgrind:}"
    [ -n "$bad" ] && sed 's/^/    | /' <<<"$bad"
  fi
done
echo "$passed passed, $failed failed"
[ "$failed" = 0 ]
