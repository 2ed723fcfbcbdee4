/* issend_dead: the pattern of Fenix's test/issend. The victim (rank 1) dies right
 * after a barrier; rank 0 leaves the same barrier, MPI_Issends to it and waits.
 * A synchronous send completes only when a live process has posted the matching
 * receive, so the wait must fail with PROC_FAILED, every time (real ULFM does). A
 * dead rank that drains the message must not make it succeed. Also MPI_Ssend and
 * an Issend completed by MPI_Test polling. Needs np >= 2. */
#include "ulfm_common.h"

int main(int argc, char **argv)
{
    int victim = 1, x = 7, rc, flag = 0, polls = 0;
    MPI_Request req;

    u_init(&argc, &argv, 1);
    MPI_Barrier(MPI_COMM_WORLD);
    if (u_rank == victim) u_die("right after a barrier");

    if (u_rank == 0) {
        rc = MPI_Issend(&x, 1, MPI_INT, victim, 5, MPI_COMM_WORLD, &req);
        CHECK_RC("Issend", rc, MPI_SUCCESS);
        rc = MPI_Wait(&req, MPI_STATUS_IGNORE);
        CHECK_RC("Issend+Wait", rc, MPIX_ERR_PROC_FAILED);
        rc = MPI_Ssend(&x, 1, MPI_INT, victim, 6, MPI_COMM_WORLD);
        CHECK_RC("Ssend", rc, MPIX_ERR_PROC_FAILED);
        rc = MPI_Issend(&x, 1, MPI_INT, victim, 7, MPI_COMM_WORLD, &req);
        while (rc == MPI_SUCCESS && !flag && polls++ < 2000000)
            rc = MPI_Test(&req, &flag, MPI_STATUS_IGNORE);
        CHECK_RC("Issend+Test", rc, MPIX_ERR_PROC_FAILED);
    }
    return u_finish();
}
