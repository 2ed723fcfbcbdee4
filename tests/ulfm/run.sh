#!/usr/bin/env bash
# tests/ulfm/run.sh <mpicc> <mpiexec> <np>
#
# Builds every program in examples/ulfm/ with <mpicc> and runs each on <np> ranks
# (np >= 3 for most; written for 4 and 8; the revoke_release_*, iagree_* and
# ishrink_overlap programs also run on 2) under `timeout -k 5 $ULFM_TIMEOUT` (60 s). A
# program passes when the exit status is as expected (0; nonzero for errh_fatal,
# whose default MPI_ERRORS_ARE_FATAL must abort the job) and every rank 0..np-1
# printed exactly one final line "rank R: OK ..." or "rank R: DIES ..." (the
# victim's last words) and no rank printed FAIL. errh_fatal: nonzero exit and no
# rank line other than DIES. Prints "PASS|FAIL <prog> <why>" per program and exits
# nonzero if any failed.
#
# <mpiexec>: mpiexec.mpich, mpiexec.openmpi, a path to the ulfm-oracle script
# (its `run` subcommand is added), or several words ("ulfm-oracle run").
# Environment:
#   ULFM_CFLAGS   extra compile flags, e.g. for MPIFT
#                 "-I/work/main/include/compat -I/work/main/include -I<config include>"
#   ULFM_LIBS     extra link flags, e.g. the libmpift.a link line
#   ULFM_ONLY     space-separated program names to run (default: all)
#   ULFM_TIMEOUT  seconds per run (default 60)
#   ULFM_BUILD    directory for binaries and logs (default: a fresh mktemp -d)
#   ULFM_KEEP=1   keep the build directory even if everything passed
#   ULFM_SPARES=1 launch the spare processes a program asks for on top of <np>,
#                 with MPIFT_SPARES set (MPIFT's spawn from spares; the oracle
#                 spawns for real)
#   ULFM_TRACE=1  give each run MPIFT_TRACE=<build>/<prog>.trace and, for a
#                 failed one, show each rank's status line (MPIFT_TRACE's
#                 status.<rank>: where it was when the run ended)
set -u
if [ $# -ne 3 ]; then
    echo "usage: $0 <mpicc> <mpiexec> <np>" >&2
    exit 2
fi
MPICC=$1
read -r -a MPIEXEC <<<"$2"
NP=$3
case "${MPIEXEC[0]}" in
    *ulfm-oracle) [ "${MPIEXEC[1]:-}" = run ] || MPIEXEC+=(run) ;;
esac
HERE=$(cd "$(dirname "$0")" && pwd)
SRC=$(cd "$HERE/../../examples/ulfm" && pwd)
BUILD=${ULFM_BUILD:-$(mktemp -d /tmp/ulfm-run.XXXXXX)}
mkdir -p "$BUILD"
TIMEOUT=${ULFM_TIMEOUT:-60}
# Open MPI as root, oversubscribed (harmless for MPICH).
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export OMPI_MCA_rmaps_base_oversubscribe=1

# Expected job exit status: "zero" or "nonzero".
expect_exit() {
    case "$1" in
        errh_fatal) echo nonzero ;;
        *) echo zero ;;
    esac
}

# Spare processes a program needs for its spawns (see ULFM_SPARES).
spares_for() {
    case "$1" in
        respawn_deaths) echo 4 ;;
        spawn_multiple_dead) echo 3 ;;
        *) echo 0 ;;
    esac
}

if [ -n "${ULFM_ONLY:-}" ]; then
    PROGS=$ULFM_ONLY
else
    PROGS=$(cd "$SRC" && ls *.c | sed 's/\.c$//')
fi

nfail=0
failed=()
for p in $PROGS; do
    log=$BUILD/$p
    # shellcheck disable=SC2086  # ULFM_CFLAGS / ULFM_LIBS are word lists
    if ! "$MPICC" -std=c99 -O1 -g ${ULFM_CFLAGS:-} -I"$SRC" "$SRC/$p.c" -o "$BUILD/$p" \
        ${ULFM_LIBS:-} >"$log.build" 2>&1; then
        echo "FAIL $p build failed (see $log.build)"
        nfail=$((nfail + 1))
        continue
    fi
    # (The outer 2>/dev/null hides bash's "Killed" notice after timeout -k.)
    k=0
    [ -n "${ULFM_SPARES:-}" ] && k=$(spares_for "$p")
    trace=()
    [ -n "${ULFM_TRACE:-}" ] && rm -rf "$log.trace" && trace=("MPIFT_TRACE=$log.trace")
    { (cd "$BUILD" && env "${trace[@]}" MPIFT_SPARES=$k timeout -k 5 "$TIMEOUT" "${MPIEXEC[@]}" -n $((NP + k)) "./$p") \
        >"$log.out" 2>"$log.err" </dev/null; } 2>/dev/null
    status=$?
    why=""
    want=$(expect_exit "$p")
    if [ "$status" -eq 124 ] || [ "$status" -eq 137 ]; then
        why="timeout after ${TIMEOUT}s (exit $status)"
    elif [ "$want" = zero ] && [ "$status" -ne 0 ]; then
        why="exit $status (want 0)"
    elif [ "$want" = nonzero ] && [ "$status" -eq 0 ]; then
        why="exit 0 (want nonzero)"
    fi
    # Per-rank final lines.
    lines=$(grep -aE '^rank [0-9]+: (OK|FAIL|DIES)' "$log.out")
    bad=$(grep -aE '^rank [0-9]+: FAIL' <<<"$lines" | head -n 3 | tr '\n' ';')
    [ -n "$bad" ] && why="${why:+$why; }$bad"
    if [ "$want" = zero ]; then
        for ((r = 0; r < NP; r++)); do
            n=$(grep -acE "^rank $r: (OK|FAIL|DIES)" <<<"$lines")
            if [ "$n" -ne 1 ]; then
                why="${why:+$why; }rank $r printed $n final lines"
            fi
        done
    else
        ok=$(grep -acE '^rank [0-9]+: OK' <<<"$lines")
        [ "$ok" -ne 0 ] && why="${why:+$why; }$ok rank(s) printed OK"
    fi
    if [ -z "$why" ]; then
        echo "PASS $p"
    else
        echo "FAIL $p $why (logs: $log.out $log.err)"
        nfail=$((nfail + 1))
        failed+=("$p")
    fi
done

if [ "$nfail" -eq 0 ] && [ -z "${ULFM_KEEP:-}" ] && [ -z "${ULFM_BUILD:-}" ]; then
    rm -rf "$BUILD"
else
    echo "logs and binaries: $BUILD" >&2
fi
# The failures again at the end, where a CI log that keeps only the last lines
# still shows them, each with the last lines its ranks wrote.
for p in "${failed[@]}"; do
    echo "FAILED $p; its last lines:"
    tail -n 4 "$BUILD/$p.out" "$BUILD/$p.err" 2>/dev/null | sed 's/^/    /'
    for s in "$BUILD/$p.trace"/status.*; do
        [ -f "$s" ] && printf '    %s: %s\n' "${s##*/}" "$(tr -d '\0' <"$s")"
    done
done
[ "$nfail" -eq 0 ]
