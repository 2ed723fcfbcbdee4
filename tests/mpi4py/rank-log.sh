#!/bin/sh
# tests/mpi4py/rank-log.sh DIR COMMAND...: run COMMAND with its stdout and stderr in
# DIR/rank<R>.log, R its rank in MPI_COMM_WORLD (Open MPI, MPICH's Hydra, PMIx).
d=$1
shift
r=${OMPI_COMM_WORLD_RANK:-${PMI_RANK:-${PMIX_RANK:-0}}}
exec "$@" >"$d/rank$r.log" 2>&1
