/* p2p_recv_dead: receiving from a dead rank returns PROC_FAILED: Recv (which
 * itself detects the failure: no prior agree), Irecv (call succeeds) + Wait,
 * Probe, Sendrecv. */
#include "ulfm_common.h"

int main(int argc, char **argv)
{
    int victim, x = 0, y = 1, rc;
    MPI_Request req;
    MPI_Status st;

    u_init(&argc, &argv, 1);
    victim = u_size - 1;
    if (u_rank == victim) u_die("at start");

    rc = MPI_Recv(&x, 1, MPI_INT, victim, 1, MPI_COMM_WORLD, &st);
    CHECK_RC("Recv", rc, MPIX_ERR_PROC_FAILED);

    rc = MPI_Irecv(&x, 1, MPI_INT, victim, 2, MPI_COMM_WORLD, &req);
    CHECK_RC("Irecv", rc, MPI_SUCCESS);
    if (rc == MPI_SUCCESS) {
        rc = MPI_Wait(&req, &st);
        CHECK_RC("Wait(Irecv)", rc, MPIX_ERR_PROC_FAILED);
        CHECK(req == MPI_REQUEST_NULL, "request not freed after failed Wait");
    }

    rc = MPI_Probe(victim, 3, MPI_COMM_WORLD, &st);
    CHECK_RC("Probe", rc, MPIX_ERR_PROC_FAILED);

    rc = MPI_Sendrecv(&y, 1, MPI_INT, victim, 4, &x, 1, MPI_INT, victim, 4,
                      MPI_COMM_WORLD, &st);
    CHECK_RC("Sendrecv", rc, MPIX_ERR_PROC_FAILED);
    return u_finish();
}
