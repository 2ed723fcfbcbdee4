/* errh_freed_comm: a request started before a failure, on a communicator that was
 * then revoked, shrunk and freed, is tested after the recovery (a resilience
 * library's cleanup). MPI_COMM_WORLD keeps MPI_ERRORS_ARE_FATAL; the freed
 * communicator had a user handler. Whatever Test reports, it must not abort: an
 * error goes to the freed communicator's own handler, which returns (MPI-3.1 §8.3).
 * Open MPI 5 ULFM leaves the receive pending (Test: SUCCESS, flag 0); ULFM allows
 * REVOKED there too, then through that handler, exactly once. */
#include "ulfm_common.h"

static int calls = 0;
static void handler(MPI_Comm *c, int *code, ...)
{
    (void)c;
    (void)code;
    calls++;
}

int main(int argc, char **argv)
{
    int rc, flag = 0, buf = 0, victim, before;
    MPI_Comm d, s;
    MPI_Errhandler eh;
    MPI_Request q = MPI_REQUEST_NULL;

    u_init(&argc, &argv, 0); /* MPI_COMM_WORLD stays fatal */
    victim = u_size - 1;
    MPI_Comm_dup(MPI_COMM_WORLD, &d);
    MPI_Comm_create_errhandler(handler, &eh);
    MPI_Comm_set_errhandler(d, eh);
    if (u_rank == victim) u_die("after the dup");
    if (u_rank == 0) MPI_Irecv(&buf, 1, MPI_INT, 1, 5, d, &q); /* never sent */
    MPI_Barrier(d); /* PROC_FAILED, through the handler */
    MPIX_Comm_revoke(d);
    rc = MPIX_Comm_shrink(d, &s);
    CHECK_RC("shrink", rc, MPI_SUCCESS);
    MPI_Comm_free(&d);
    if (u_rank == 0) {
        before = calls;
        rc = MPI_Test(&q, &flag, MPI_STATUS_IGNORE);
        u_note("Test=%s flag=%d handler_calls=%d", u_name(rc), flag, calls - before);
        if (rc == MPI_SUCCESS) {
            CHECK(calls == before, "Test succeeded but the handler was called");
        } else {
            CHECK(u_class(rc) == MPIX_ERR_REVOKED || u_class(rc) == MPIX_ERR_PROC_FAILED, "Test=%s", u_name(rc));
            CHECK(calls - before == 1, "Test=%s: handler called %d times", u_name(rc), calls - before);
        }
        if (!flag && q != MPI_REQUEST_NULL) {
            MPI_Cancel(&q);
            MPI_Request_free(&q);
        }
    }
    rc = MPI_Barrier(s);
    CHECK_RC("Barrier on the shrunk communicator", rc, MPI_SUCCESS);
    MPI_Comm_free(&s);
    MPI_Errhandler_free(&eh);
    return u_finish();
}
