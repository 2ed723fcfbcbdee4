/* send_after_death: the last rank receives a 4 MB message from rank 0 (Isend,
 * waited for only later), then dies right after a barrier. Rank 0 then waits for
 * that Isend (delivered while the receiver was alive: SUCCESS), and sends to the
 * dead rank: a 4 MB Send, a small Send, an Ssend and an Issend + Wait: each
 * PROC_FAILED (a message only a dead process got was not delivered), and MPI no
 * longer reads the buffers when the calls return: rank 0 frees them at once. */
#include "ulfm_common.h"
#include <stdlib.h>

int main(int argc, char **argv)
{
    enum { BIG = 1 << 20 };
    int rc, victim, x = 1, *big = calloc(BIG, sizeof(int)), *early = calloc(BIG, sizeof(int));
    MPI_Request q = MPI_REQUEST_NULL;

    u_init(&argc, &argv, 1);
    victim = u_size - 1;
    if (u_rank == 0) MPI_Isend(early, BIG, MPI_INT, victim, 9, MPI_COMM_WORLD, &q);
    if (u_rank == victim) {
        rc = MPI_Recv(early, BIG, MPI_INT, 0, 9, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        CHECK_RC("Recv of the early message", rc, MPI_SUCCESS);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    if (u_rank == victim) u_die("after the barrier");
    if (u_rank == 0) {
        u_sleep_ms(100);
        rc = MPI_Wait(&q, MPI_STATUS_IGNORE);
        u_note("early Isend Wait=%s", u_name(rc));
        CHECK_RC("Wait of the Isend delivered before the death", rc, MPI_SUCCESS);
        rc = MPI_Send(big, BIG, MPI_INT, victim, 1, MPI_COMM_WORLD);
        u_note("4MB Send=%s", u_name(rc));
        CHECK_RC("4 MB Send to the dead rank", rc, MPIX_ERR_PROC_FAILED);
        free(big);
        big = NULL;
        rc = MPI_Send(&x, 1, MPI_INT, victim, 2, MPI_COMM_WORLD);
        CHECK_RC("Send to the dead rank", rc, MPIX_ERR_PROC_FAILED);
        rc = MPI_Ssend(&x, 1, MPI_INT, victim, 3, MPI_COMM_WORLD);
        CHECK_RC("Ssend to the dead rank", rc, MPIX_ERR_PROC_FAILED);
        rc = MPI_Issend(&x, 1, MPI_INT, victim, 4, MPI_COMM_WORLD, &q);
        if (rc == MPI_SUCCESS) rc = MPI_Wait(&q, MPI_STATUS_IGNORE);
        CHECK_RC("Issend + Wait to the dead rank", rc, MPIX_ERR_PROC_FAILED);
    }
    free(big);
    free(early);
    return u_finish();
}
