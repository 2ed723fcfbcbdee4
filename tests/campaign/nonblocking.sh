#!/usr/bin/env bash
# tests/campaign/nonblocking.sh <mpich|openmpi|ompi5>: every examples/ulfm program at
# 4 ranks (with spares) with blocking collectives run as their non-blocking forms
# (MPIFT_COLLECTIVES=nonblocking, docs/CONFIGURATION.md): the same outcomes as without.
# make test runs it on MPICH only, for time; `make campaign` on each of its MPIs.
# Exits nonzero if a program failed; each run under tests/ulfm/run.sh's timeout.
set -u
cd "$(dirname "$0")/../.."
mpi=${1:-}
usage_more=''
. tests/campaign/common.sh
cfg=$root/target/$mpi/release/include
env MPIFT_COLLECTIVES=nonblocking ULFM_SPARES=1 ULFM_TIMEOUT=180 \
  ULFM_CFLAGS="-I$root/include/compat -I$root/include -I$cfg" \
  ULFM_LIBS="$lib -lgcc_s -lutil -lrt -lpthread -lm -ldl -lc" \
  tests/ulfm/run.sh "$MPICC" "$MPIEXEC" 4
