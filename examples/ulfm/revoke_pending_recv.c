/* revoke_pending_recv: no failure. Every rank but 0 posts MPI_Irecv(&x) from
 * rank 0 on A and does not complete it yet; the last rank revokes A, the others
 * learn of the revoke while blocked in MPI_Recv on B. Rank 0, which made no MPI
 * call meanwhile, then sends each of them a value on A (SUCCESS or REVOKED, as
 * its knowledge of the revoke goes) and a "done" on B. ULFM: the revoke ends
 * the pending receive, so nothing is written into x later: x is still -1 after
 * "done", and MPI_Wait on the request returns REVOKED with x untouched. (A
 * program that returns from a function with receives pending into its stack
 * frame, counting on the revoke to end them, relies on exactly this:
 * examples/inter_loop.c.) A second receive on A, which the program cancelled
 * itself before the revoke, completes as its own cancel: MPI_Wait SUCCESS and
 * MPI_Test_cancelled true, also on the revoked communicator. Needs np >= 2. */
#include "ulfm_common.h"

int main(int argc, char **argv)
{
    int rc, p, x = -1, y = -1, done = 0, v = 42, sent_ok = 0, sent_revoked = 0, cancelled = 0;
    MPI_Comm a, b;
    MPI_Request r, ry;
    MPI_Status st;

    u_init(&argc, &argv, 1);
    MPI_Comm_dup(MPI_COMM_WORLD, &a);
    MPI_Comm_dup(MPI_COMM_WORLD, &b);
    MPI_Comm_set_errhandler(a, MPI_ERRORS_RETURN);
    MPI_Comm_set_errhandler(b, MPI_ERRORS_RETURN);
    if (u_rank != 0) {
        rc = MPI_Irecv(&x, 1, MPI_INT, 0, 5, a, &r);
        CHECK_RC("Irecv(A)", rc, MPI_SUCCESS);
        rc = MPI_Irecv(&y, 1, MPI_INT, 0, 6, a, &ry); /* never sent: cancelled below */
        CHECK_RC("Irecv(A, tag 6)", rc, MPI_SUCCESS);
        rc = MPI_Cancel(&ry);
        CHECK_RC("Cancel", rc, MPI_SUCCESS);
    }
    MPI_Barrier(b); /* every receive is posted before anybody revokes */
    if (u_rank == 0) {
        u_sleep_ms(300); /* no MPI call: the revoke has not reached this rank's MPI */
        for (p = 1; p < u_size; p++) {
            rc = MPI_Send(&v, 1, MPI_INT, p, 5, a);
            if (rc == MPI_SUCCESS) sent_ok++;
            else if (u_class(rc) == MPIX_ERR_REVOKED) sent_revoked++;
            else u_fail("Send(A)=%s(want SUCCESS or REVOKED)", u_name(rc));
        }
        for (p = 1; p < u_size; p++) {
            rc = MPI_Send(&done, 1, MPI_INT, p, 8, b);
            CHECK_RC("Send(B)", rc, MPI_SUCCESS);
        }
        u_note("sends on A: %d SUCCESS %d REVOKED", sent_ok, sent_revoked);
    } else {
        if (u_rank == u_size - 1) {
            rc = MPIX_Comm_revoke(a);
            CHECK_RC("revoke(A)", rc, MPI_SUCCESS);
        }
        rc = MPI_Recv(&done, 1, MPI_INT, 0, 8, b, MPI_STATUS_IGNORE);
        CHECK_RC("Recv(B)", rc, MPI_SUCCESS);
        CHECK(x == -1, "x=%d after the revoke (a pending receive on a revoked communicator was written)", x);
        rc = MPI_Wait(&r, MPI_STATUS_IGNORE);
        CHECK_RC("Wait(Irecv(A))", rc, MPIX_ERR_REVOKED);
        CHECK(x == -1, "x=%d after Wait", x);
        rc = MPI_Wait(&ry, &st);
        CHECK_RC("Wait(cancelled Irecv(A))", rc, MPI_SUCCESS);
        MPI_Test_cancelled(&st, &cancelled);
        CHECK(cancelled == 1 && y == -1, "own cancel: cancelled=%d y=%d", cancelled, y);
        u_note("learned by %s", u_rank == u_size - 1 ? "own revoke" : "news");
    }
    MPI_Barrier(b);
    MPI_Comm_free(&a);
    MPI_Comm_free(&b);
    return u_finish();
}
