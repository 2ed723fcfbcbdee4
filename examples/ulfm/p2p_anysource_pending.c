/* p2p_anysource_pending: with an unacknowledged failure in the communicator,
 * Irecv(ANY_SOURCE) + Test/Wait return PROC_FAILED_PENDING and the request stays
 * active; a blocking Recv(ANY_SOURCE) returns PROC_FAILED; after failure_ack the
 * pending request completes when a live rank (1) sends to it. Rank 0 receives. */
#include "ulfm_common.h"

enum { TAG_DATA = 10, TAG_OTHER = 11, TAG_GO = 12 };

int main(int argc, char **argv)
{
    int victim, x = -1, y, flag = 1, go = 1, rc;
    MPI_Request req;
    MPI_Status st;

    u_init(&argc, &argv, 1);
    victim = u_size - 1;
    if (u_rank == victim) u_die("at start");

    rc = u_wait_failure(MPI_COMM_WORLD, 1);
    CHECK_RC("agree", rc, MPIX_ERR_PROC_FAILED);

    if (u_rank == 0) {
        rc = MPI_Irecv(&x, 1, MPI_INT, MPI_ANY_SOURCE, TAG_DATA, MPI_COMM_WORLD, &req);
        CHECK_RC("Irecv(ANY)", rc, MPI_SUCCESS);
        flag = 1;
        rc = MPI_Test(&req, &flag, &st);
        CHECK_RC("Test", rc, MPIX_ERR_PROC_FAILED_PENDING);
        CHECK(flag == 0, "Test flag=%d", flag);
        rc = MPI_Wait(&req, &st);
        CHECK_RC("Wait", rc, MPIX_ERR_PROC_FAILED_PENDING);
        CHECK(req != MPI_REQUEST_NULL, "request freed after PENDING");

        rc = MPI_Recv(&y, 1, MPI_INT, MPI_ANY_SOURCE, TAG_OTHER, MPI_COMM_WORLD, &st);
        CHECK_RC("Recv(ANY)", rc, MPIX_ERR_PROC_FAILED);

        rc = MPIX_Comm_failure_ack(MPI_COMM_WORLD);
        CHECK_RC("failure_ack", rc, MPI_SUCCESS);
        rc = MPI_Send(&go, 1, MPI_INT, 1, TAG_GO, MPI_COMM_WORLD);
        CHECK_RC("Send(go)", rc, MPI_SUCCESS);
        if (req != MPI_REQUEST_NULL) {
            rc = MPI_Wait(&req, &st);
            CHECK(rc == MPI_SUCCESS && x == 42 && st.MPI_SOURCE == 1,
                  "Wait after ack=%s x=%d src=%d", u_name(rc), x, st.MPI_SOURCE);
        }
    } else if (u_rank == 1) {
        rc = MPI_Recv(&go, 1, MPI_INT, 0, TAG_GO, MPI_COMM_WORLD, &st);
        CHECK_RC("Recv(go)", rc, MPI_SUCCESS);
        x = 42;
        rc = MPI_Send(&x, 1, MPI_INT, 0, TAG_DATA, MPI_COMM_WORLD);
        CHECK_RC("Send(data)", rc, MPI_SUCCESS);
    }
    return u_finish();
}
