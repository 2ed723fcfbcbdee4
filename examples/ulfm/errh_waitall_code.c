/* errh_waitall_code: the pattern of ICLDisco ulfm-testing stress/isend-err.c. A
 * user error handler on MPI_COMM_WORLD (the program's check: it must see
 * PROC_FAILED). Ranks size-1 and size/2 die after a barrier; the survivors' next
 * barrier reports it; a second later rank 0 MPI_Isends to both dead ranks and
 * to a live rank and calls MPI_Waitall: the call returns MPI_ERR_IN_STATUS, and
 * the handler is called once, with the first failed request's code (class
 * PROC_FAILED) and its communicator, as Open MPI 5 ULFM does, not with
 * MPI_ERR_IN_STATUS. The same for MPI_Waitsome and MPI_Testall. np >= 3. */
#include "ulfm_common.h"

/* Sends of this many ints go by rendezvous: they cannot complete without a live
 * receiver (a small eager Isend to a dead rank may succeed, locally, on ULFM). */
#define BIG (1 << 20)
static int big[3][BIG];

static int calls, last_code;
static MPI_Comm last_comm;

static void handler(MPI_Comm *comm, int *code, ...)
{
    calls++;
    last_code = *code;
    last_comm = *comm;
}

/* Starts [Isend to one victim, Isend to rank 1, Isend to the other victim]. */
static void start3(int v1, int v2, MPI_Request req[3])
{
    int rc = MPI_Isend(big[0], BIG, MPI_INT, v1, 3, MPI_COMM_WORLD, &req[0]);
    rc |= MPI_Isend(big[1], BIG, MPI_INT, 1, 3, MPI_COMM_WORLD, &req[1]);
    rc |= MPI_Isend(big[2], BIG, MPI_INT, v2, 3, MPI_COMM_WORLD, &req[2]);
    CHECK(rc == MPI_SUCCESS && calls == 0, "Isend failed: the error belongs to the completion");
}

static void judge(const char *what, int rc)
{
    u_note("%s=%s handler_calls=%d", what, u_name(rc), calls);
    CHECK(calls == 1, "%s: handler called %d times", what, calls);
    CHECK(u_class(last_code) == MPIX_ERR_PROC_FAILED, "%s: handler got %s", what, u_name(last_code));
    CHECK(last_comm == MPI_COMM_WORLD, "%s: handler got another communicator", what);
    calls = 0;
    last_code = MPI_SUCCESS;
}

int main(int argc, char **argv)
{
    int v1, v2, rc, i, out, idx[3], flag, done;
    MPI_Request req[3];
    MPI_Status st[3];
    MPI_Errhandler eh;

    u_init(&argc, &argv, 1);
    v1 = u_size - 1;
    v2 = u_size / 2;
    MPI_Comm_create_errhandler(handler, &eh);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, eh);
    MPI_Barrier(MPI_COMM_WORLD);
    if (u_rank == v1 || u_rank == v2) u_die("after a barrier");
    rc = MPI_Barrier(MPI_COMM_WORLD);
    CHECK_RC("Barrier", rc, MPIX_ERR_PROC_FAILED);
    CHECK(calls == 1 && u_class(last_code) == MPIX_ERR_PROC_FAILED, "Barrier: handler calls %d", calls);
    calls = 0;
    u_sleep_ms(1000);

    if (u_rank == 0) {
        start3(v1, v2, req);
        rc = MPI_Waitall(3, req, st);
        CHECK_RC("Waitall", rc, MPI_ERR_IN_STATUS);
        CHECK(u_class(st[0].MPI_ERROR) == MPIX_ERR_PROC_FAILED, "Waitall st[0]=%s", u_name(st[0].MPI_ERROR));
        /* Open MPI 5 ULFM returns at the first error: the live send is pending. */
        CHECK(st[1].MPI_ERROR == MPI_SUCCESS || st[1].MPI_ERROR == MPI_ERR_PENDING,
              "Waitall st[1]=%s", u_name(st[1].MPI_ERROR));
        judge("Waitall", rc);
        MPI_Waitall(3, req, MPI_STATUSES_IGNORE); /* what Waitall left */
        calls = 0;

        start3(v1, v2, req);
        for (done = 0, i = 0; done < 3 && i < 10; i++) {
            rc = MPI_Waitsome(3, req, &out, idx, st);
            if (rc != MPI_SUCCESS) break;
            done += out;
        }
        CHECK_RC("Waitsome", rc, MPI_ERR_IN_STATUS);
        judge("Waitsome", rc);
        MPI_Waitall(3, req, MPI_STATUSES_IGNORE); /* what Waitsome left */
        calls = 0;

        start3(v1, v2, req);
        for (flag = 0, i = 0; !flag && i < 1000000; i++) {
            rc = MPI_Testall(3, req, &flag, st);
            if (rc != MPI_SUCCESS) break;
        }
        CHECK_RC("Testall", rc, MPI_ERR_IN_STATUS);
        judge("Testall", rc);
        MPI_Waitall(3, req, MPI_STATUSES_IGNORE);
        calls = 0;
    } else if (u_rank == 1) {
        for (i = 0; i < 3; i++)
            MPI_Recv(big[0], BIG, MPI_INT, 0, 3, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    }
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Errhandler_free(&eh);
    return u_finish();
}
