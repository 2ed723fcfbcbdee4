/* revoke_release_ibarrier: no failure. As revoke_release_recv, but rank 0 is
 * blocked in MPI_Wait on an MPI_Ibarrier(A) it started before the revoke: the
 * wait returns REVOKED, rank 0 sends to every other rank on B (which wait in
 * MPI_Recv from it), and every rank frees A at once. The real non-blocking
 * barrier may still be running under the freed A (the others join it with dummy
 * data in their wait); freeing must not break the next communicator call
 * (MPI_Comm_dup of the next round). Three rounds. Needs np >= 2. */
#include "ulfm_common.h"

#ifndef ROUNDS
#define ROUNDS 3
#endif

int main(int argc, char **argv)
{
    int round, rc, p, x;
    MPI_Comm a, b;

    u_init(&argc, &argv, 1);
    MPI_Comm_dup(MPI_COMM_WORLD, &b);
    MPI_Comm_set_errhandler(b, MPI_ERRORS_RETURN);
    for (round = 0; round < ROUNDS; round++) {
        MPI_Comm_dup(MPI_COMM_WORLD, &a);
        MPI_Comm_set_errhandler(a, MPI_ERRORS_RETURN);
        MPI_Barrier(b); /* A exists everywhere before anybody revokes it */
        if (u_rank == 0) {
            MPI_Request r;
            rc = MPI_Ibarrier(a, &r);
            CHECK_RC("Ibarrier(A)", rc, MPI_SUCCESS);
            rc = MPI_Wait(&r, MPI_STATUS_IGNORE);
            CHECK_RC("Wait(Ibarrier(A))", rc, MPIX_ERR_REVOKED);
            for (p = 1; p < u_size; p++) {
                x = 100 + round;
                rc = MPI_Send(&x, 1, MPI_INT, p, 7, b);
                CHECK_RC("Send(B)", rc, MPI_SUCCESS);
            }
        } else {
            u_sleep_ms(100); /* rank 0 is inside Barrier(A) by now */
            rc = MPIX_Comm_revoke(a);
            CHECK_RC("revoke(A)", rc, MPI_SUCCESS);
            x = -1;
            rc = MPI_Recv(&x, 1, MPI_INT, 0, 7, b, MPI_STATUS_IGNORE);
            CHECK(rc == MPI_SUCCESS && x == 100 + round, "Recv(B)=%s x=%d (want %d)", u_name(rc),
                  x, 100 + round);
        }
        rc = MPI_Comm_free(&a);
        CHECK_RC("Comm_free(A)", rc, MPI_SUCCESS);
    }
    u_note("rounds=%d", ROUNDS);
    MPI_Barrier(b);
    MPI_Comm_free(&b);
    return u_finish();
}
