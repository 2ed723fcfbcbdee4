#!/usr/bin/env bash
# tests/ulfm/collect-outcomes.sh <mpicc> <mpiexec> <np> <runs>
#
# Runs every examples/ulfm program <runs> times on <np> ranks and prints, per
# program, the distribution of job exit statuses and of each rank's final line
# (how often each distinct line was seen). Used to record the real-ULFM oracle's
# behaviour in tests/ulfm/oracle-outcomes.txt, e.g.
#   tests/ulfm/collect-outcomes.sh /opt/ulfm-oracle/bin/mpicc \
#       /work/shared/tools/ulfm-oracle 4 10
# Same <mpiexec> conventions and environment (ULFM_CFLAGS, ULFM_LIBS, ULFM_ONLY,
# ULFM_TIMEOUT) as run.sh.
set -u
if [ $# -ne 4 ]; then
    echo "usage: $0 <mpicc> <mpiexec> <np> <runs>" >&2
    exit 2
fi
MPICC=$1
read -r -a MPIEXEC <<<"$2"
NP=$3
RUNS=$4
case "${MPIEXEC[0]}" in
    *ulfm-oracle) [ "${MPIEXEC[1]:-}" = run ] || MPIEXEC+=(run) ;;
esac
HERE=$(cd "$(dirname "$0")" && pwd)
SRC=$(cd "$HERE/../../examples/ulfm" && pwd)
BUILD=$(mktemp -d /tmp/ulfm-collect.XXXXXX)
TIMEOUT=${ULFM_TIMEOUT:-60}
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export OMPI_MCA_rmaps_base_oversubscribe=1
PROGS=${ULFM_ONLY:-$(cd "$SRC" && ls *.c | sed 's/\.c$//')}

for p in $PROGS; do
    # shellcheck disable=SC2086
    if ! "$MPICC" -std=c99 -O1 -g ${ULFM_CFLAGS:-} -I"$SRC" "$SRC/$p.c" -o "$BUILD/$p" \
        ${ULFM_LIBS:-} >"$BUILD/$p.build" 2>&1; then
        echo "== $p np=$NP: BUILD FAILED"
        continue
    fi
    : >"$BUILD/$p.lines"
    : >"$BUILD/$p.status"
    for ((i = 1; i <= RUNS; i++)); do
        { (cd "$BUILD" && timeout -k 5 "$TIMEOUT" "${MPIEXEC[@]}" -n "$NP" "./$p") \
            >"$BUILD/$p.out" 2>/dev/null </dev/null; } 2>/dev/null
        echo "exit $?" >>"$BUILD/$p.status"
        grep -aE '^rank [0-9]+: ' "$BUILD/$p.out" >>"$BUILD/$p.lines"
    done
    echo "== $p np=$NP runs=$RUNS"
    sort "$BUILD/$p.status" | uniq -c | sed 's/^ */  /'
    sort -t: -k1,1V -k2 "$BUILD/$p.lines" | uniq -c | sed 's/^ */  /'
done
rm -rf "$BUILD"
