/* p2p_send_dead: once a failure is known, blocking Send/Ssend to the dead rank
 * return PROC_FAILED, and so does a large (rendezvous) Send. An Isend of a small
 * message + Wait may still succeed (local completion; allowed): reported only.
 * A persistent Ssend to the dead rank fails at its Start or its Wait, stays
 * allocated, can be started again, and is freed with MPI_Request_free. */
#include "ulfm_common.h"

#define BIG (1 << 20)

int main(int argc, char **argv)
{
    int victim, x = 7, rc, i;
    static int big[BIG];
    MPI_Request req;

    u_init(&argc, &argv, 1);
    victim = u_size - 1;
    if (u_rank == victim) u_die("at start");

    rc = u_wait_failure(MPI_COMM_WORLD, 1);
    CHECK_RC("agree", rc, MPIX_ERR_PROC_FAILED);

    rc = MPI_Send(&x, 1, MPI_INT, victim, 1, MPI_COMM_WORLD);
    CHECK_RC("Send", rc, MPIX_ERR_PROC_FAILED);
    rc = MPI_Ssend(&x, 1, MPI_INT, victim, 2, MPI_COMM_WORLD);
    CHECK_RC("Ssend", rc, MPIX_ERR_PROC_FAILED);
    rc = MPI_Send(big, BIG, MPI_INT, victim, 3, MPI_COMM_WORLD);
    CHECK_RC("Send(4MB)", rc, MPIX_ERR_PROC_FAILED);

    /* Allowed either way: report it. */
    rc = MPI_Isend(&x, 1, MPI_INT, victim, 4, MPI_COMM_WORLD, &req);
    if (rc == MPI_SUCCESS) {
        rc = MPI_Wait(&req, MPI_STATUS_IGNORE);
        u_note("isend_wait=%s", u_name(rc));
        CHECK(rc == MPI_SUCCESS || u_class(rc) == MPIX_ERR_PROC_FAILED,
              "Isend+Wait=%s", u_name(rc));
    } else {
        u_note("isend=%s", u_name(rc));
        CHECK(u_class(rc) == MPIX_ERR_PROC_FAILED, "Isend=%s", u_name(rc));
    }

    rc = MPI_Ssend_init(big, BIG, MPI_INT, victim, 5, MPI_COMM_WORLD, &req);
    CHECK(rc == MPI_SUCCESS, "Ssend_init=%s", u_name(rc));
    for (i = 0; i < 2 && rc == MPI_SUCCESS; i++) {
        rc = MPI_Start(&req);
        u_note("persistent start %d=%s", i, u_name(rc));
        if (rc == MPI_SUCCESS) {
            rc = MPI_Wait(&req, MPI_STATUS_IGNORE);
            u_note("persistent wait %d=%s", i, u_name(rc));
        }
        CHECK(u_class(rc) == MPIX_ERR_PROC_FAILED, "persistent Ssend %d=%s", i, u_name(rc));
        CHECK(req != MPI_REQUEST_NULL, "persistent request kept after an error");
        rc = MPI_SUCCESS;
    }
    rc = MPI_Request_free(&req);
    CHECK(rc == MPI_SUCCESS && req == MPI_REQUEST_NULL, "Request_free=%s", u_name(rc));
    return u_finish();
}
