/* revoke_release_recv: no failure. Rank 0 is blocked in MPI_Barrier(A) while
 * every other rank revokes A and then blocks in MPI_Recv from rank 0 on B. ULFM:
 * rank 0's barrier returns REVOKED; rank 0 then sends each of them its round
 * number on B, and every receive returns SUCCESS with that value. Repeated
 * ROUNDS times with a fresh A. Needs np >= 2. */
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
#ifdef RELEASE_IBARRIER /* revoke_release_ibarrier */
            MPI_Request r;
            rc = MPI_Ibarrier(a, &r);
            CHECK_RC("Ibarrier(A)", rc, MPI_SUCCESS);
            rc = MPI_Wait(&r, MPI_STATUS_IGNORE);
            CHECK_RC("Wait(Ibarrier(A))", rc, MPIX_ERR_REVOKED);
#else
            rc = MPI_Barrier(a);
            CHECK_RC("Barrier(A)", rc, MPIX_ERR_REVOKED);
#endif
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
