/* revoke_icoll_buffer: no failure. Rank 0 starts MPI_Iallreduce(A) and
 * MPI_Ibcast(A) (from rank 1) and waits for them; the others revoke A, instead of
 * starting them, and compute ~300 ms outside MPI. Rank 0's waits return REVOKED.
 * Rank 0 then writes its own values into the receive buffers at once and checks,
 * after everybody met in MPI_Barrier(B) (so the others have been inside MPI
 * again), that they are still there: once a wait returned, the operation is
 * over and MPI writes nothing more into its buffers. Three rounds. Needs
 * np >= 2. */
#include "ulfm_common.h"

#ifndef ROUNDS
#define ROUNDS 3
#endif

#define N 64

int main(int argc, char **argv)
{
    int round, rc, i, in[N], out[N], bc[N], bad;
    MPI_Comm a, b;
    MPI_Request r[2];
    MPI_Status st[2];

    u_init(&argc, &argv, 1);
    MPI_Comm_dup(MPI_COMM_WORLD, &b);
    MPI_Comm_set_errhandler(b, MPI_ERRORS_RETURN);
    for (round = 0; round < ROUNDS; round++) {
        MPI_Comm_dup(MPI_COMM_WORLD, &a);
        MPI_Comm_set_errhandler(a, MPI_ERRORS_RETURN);
        MPI_Barrier(b); /* A exists everywhere before anybody revokes it */
        if (u_rank == 0) {
            for (i = 0; i < N; i++) in[i] = 1, out[i] = -7, bc[i] = -7;
            rc = MPI_Iallreduce(in, out, N, MPI_INT, MPI_SUM, a, &r[0]);
            CHECK_RC("Iallreduce(A) start", rc, MPI_SUCCESS);
            rc = MPI_Ibcast(bc, N, MPI_INT, u_size > 1 ? 1 : 0, a, &r[1]);
            CHECK_RC("Ibcast(A) start", rc, MPI_SUCCESS);
            rc = MPI_Waitall(2, r, st);
            CHECK(rc == MPI_ERR_IN_STATUS && u_class(st[0].MPI_ERROR) == MPIX_ERR_REVOKED &&
                      u_class(st[1].MPI_ERROR) == MPIX_ERR_REVOKED,
                  "Waitall=%s [%s, %s] (want REVOKED in both statuses)", u_name(rc),
                  u_name(st[0].MPI_ERROR), u_name(st[1].MPI_ERROR));
            /* The operations are over: the buffers are the program's again. */
            for (i = 0; i < N; i++) out[i] = 1000 + i, bc[i] = 2000 + i;
        } else {
            u_sleep_ms(100); /* rank 0 is waiting by now */
            rc = MPIX_Comm_revoke(a);
            CHECK_RC("revoke(A)", rc, MPI_SUCCESS);
            u_sleep_ms(300); /* outside MPI */
        }
        rc = MPI_Barrier(b);
        CHECK_RC("Barrier(B)", rc, MPI_SUCCESS);
        rc = MPI_Comm_free(&a);
        CHECK_RC("Comm_free(A)", rc, MPI_SUCCESS);
        rc = MPI_Barrier(b);
        CHECK_RC("Barrier(B) 2", rc, MPI_SUCCESS);
        if (u_rank == 0) {
            for (bad = 0, i = 0; i < N; i++) bad += out[i] != 1000 + i || bc[i] != 2000 + i;
            CHECK(bad == 0, "round %d: %d buffer elements changed after the wait returned", round, bad);
        }
    }
    u_note("rounds=%d", ROUNDS);
    MPI_Comm_free(&b);
    return u_finish();
}
