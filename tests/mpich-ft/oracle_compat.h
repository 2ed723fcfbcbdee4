/* Force-included (-include) into MPICH's test/mpi/ft programs for the oracle build
 * only (tests/mpich-ft/run.sh oracle: real ULFM, Open MPI 5; never with MPIFT).
 * The two differences between MPICH and Open MPI that these tests trip over:
 *
 * 1. MPICH declares MPIX_ERR_PROC_FAILED, MPIX_Comm_shrink etc. in mpi.h, Open MPI
 *    in mpi-ext.h, which the tests do not include.
 * 2. The tests kill a rank with exit(EXIT_FAILURE) between MPI_Init and
 *    MPI_Finalize. MPICH (mpiexec -disable-auto-cleanup) reports that process as
 *    failed; Open MPI 5's ULFM does not (the survivors wait for it forever), so such
 *    an exit() becomes what ULFM does detect: the process dying by SIGKILL. exit()
 *    before MPI_Init or after MPI_Finalize is left alone. */
#ifndef MPICH_FT_ORACLE_COMPAT_H
#define MPICH_FT_ORACLE_COMPAT_H
#include <signal.h>
#include <stdlib.h> /* before the macro, so the test's own #include <stdlib.h> is a no-op */
#include <mpi.h>
#include <mpi-ext.h>

static inline void mpich_ft_oracle_exit(int status)
{
    int initialized = 0, finalized = 0;
    MPI_Initialized(&initialized);
    MPI_Finalized(&finalized);
    if (initialized && !finalized)
        raise(SIGKILL);
    exit(status);
}
#define exit(status) mpich_ft_oracle_exit(status)
#endif
