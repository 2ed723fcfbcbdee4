/* acked_any_source: written for the forensics check after the forensics code
 * was done (issue 54), outside examples/mistakes. A manager (rank 0) collects
 * one result from each of the other ranks with MPI_Recv(MPI_ANY_SOURCE). One
 * worker, rank V (argument, default 1; -1: none, a campaign's rule kills), dies
 * before it sends. The manager's
 * receive fails with MPIX_ERR_PROC_FAILED_PENDING; it acknowledges the failure
 * with MPIX_Comm_failure_ack and goes on waiting for as many results as it
 * started with: the mistake. Once acknowledged, the failure no longer ends a
 * receive from any source, and every live worker has sent its result and
 * finished, so the manager waits for ever (under real ULFM too). */
#include "ulfm_common.h"

int main(int argc, char **argv)
{
    int v = argc > 1 ? atoi(argv[1]) : 1, got = 0, x = 0, rc;

    u_init(&argc, &argv, 1);
    if (v == 0 || v >= u_size) v = 1;
    if (u_rank == v) u_die("before it sends its result"); /* v < 0: none (a campaign kills) */
    if (u_rank != 0) {
        x = 100 + u_rank;
        MPI_Send(&x, 1, MPI_INT, 0, 7, MPI_COMM_WORLD);
        u_note("sent %d", x);
        return u_finish();
    }
    while (got < u_size - 1) { /* the mistake: u_size - 2 results can come */
        rc = MPI_Recv(&x, 1, MPI_INT, MPI_ANY_SOURCE, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        if (rc == MPI_SUCCESS) got++;
        else if (u_class(rc) == MPIX_ERR_PROC_FAILED_PENDING || u_class(rc) == MPIX_ERR_PROC_FAILED)
            MPIX_Comm_failure_ack(MPI_COMM_WORLD);
    }
    u_note("got %d", got);
    return u_finish();
}
