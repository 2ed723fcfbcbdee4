#!/usr/bin/env bash
# MPIFT's known limits, each shown by a program in examples/ulfm_limits/ whose
# header says which (docs/ULFM-DIFFERENCES.md): such a program hangs under MPIFT
# by design, so it passes here when MPIFT said on stderr why, in the line named
# below, before the timeout. Under real ULFM these programs pass like those of
# examples/ulfm/ (tests/ulfm/run.sh runs them there with ULFM_SRC).
#
# Usage: tests/ulfm/limits.sh <mpicc> <mpiexec> <np>
# Environment: ULFM_CFLAGS, ULFM_LIBS (as tests/ulfm/run.sh), LIMITS_TIMEOUT
# (seconds each program runs before it counts as hung, default 20).
set -u
[ $# -eq 3 ] || { echo "usage: $0 <mpicc> <mpiexec> <np>" >&2; exit 2; }
MPICC=$1 MPIEXEC=$2 NP=$3
HERE=$(cd "$(dirname "$0")" && pwd)
SRC=$(cd "$HERE/../../examples/ulfm_limits" && pwd)
INC=$(cd "$HERE/../../examples/ulfm" && pwd)
BUILD=$(mktemp -d /tmp/ulfm-limits.XXXXXX)
TIMEOUT=${LIMITS_TIMEOUT:-20}
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1

# The line MPIFT must print, per program.
said() {
    case "$1" in
        log_keep_full_v) echo "MPIFT: rank 2 [(]dead[)]: collective #2 of communicator [0-9a-f]+ cannot be joined: world rank 0.s entry" ;;
        *) echo "no expected line for $1" >&2; return 1 ;;
    esac
}

nfail=0
for src in "$SRC"/*.c; do
    p=$(basename "$src" .c)
    log=$BUILD/$p
    want=$(said "$p") || { nfail=$((nfail + 1)); continue; }
    # shellcheck disable=SC2086  # word lists
    if ! "$MPICC" -std=c99 -O1 -g ${ULFM_CFLAGS:-} -I"$INC" "$src" -o "$log" ${ULFM_LIBS:-} >"$log.build" 2>&1; then
        echo "FAIL $p build failed (see $log.build)"; nfail=$((nfail + 1)); continue
    fi
    { (cd "$BUILD" && timeout -k 5 "$TIMEOUT" "$MPIEXEC" -n "$NP" "./$p") >"$log.out" 2>"$log.err" </dev/null; } 2>/dev/null
    status=$?
    if grep -aqE "$want" "$log.err"; then
        echo "PASS $p (exit $status, MPIFT named the limit)"
    else
        echo "FAIL $p: exit $status, no line matching '$want' on stderr (logs: $log.out $log.err)"
        nfail=$((nfail + 1))
    fi
done
[ "$nfail" -eq 0 ] && rm -rf "$BUILD"
exit $((nfail > 0))
