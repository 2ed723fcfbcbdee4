/* revoke_release_barrier: no failure. Rank 0 is blocked in MPI_Barrier(A) while
 * every other rank revokes A (without ever calling anything on A again) and then
 * calls MPI_Barrier(B) on a communicator that includes rank 0. ULFM: after the
 * revoke no operation on A blocks, so rank 0's barrier returns REVOKED, rank 0
 * joins B, and everybody leaves B with SUCCESS. Repeated ROUNDS times with a
 * fresh A. Needs np >= 2. */
#include "ulfm_common.h"

#ifndef ROUNDS
#define ROUNDS 3
#endif

int main(int argc, char **argv)
{
    int round, rc;
    MPI_Comm a, b;

    u_init(&argc, &argv, 1);
    MPI_Comm_dup(MPI_COMM_WORLD, &b);
    MPI_Comm_set_errhandler(b, MPI_ERRORS_RETURN);
    for (round = 0; round < ROUNDS; round++) {
        MPI_Comm_dup(MPI_COMM_WORLD, &a);
        MPI_Comm_set_errhandler(a, MPI_ERRORS_RETURN);
        MPI_Barrier(b); /* A exists everywhere before anybody revokes it */
        if (u_rank == 0) {
            rc = MPI_Barrier(a);
            CHECK_RC("Barrier(A)", rc, MPIX_ERR_REVOKED);
        } else {
            u_sleep_ms(100); /* rank 0 is inside Barrier(A) by now */
            rc = MPIX_Comm_revoke(a);
            CHECK_RC("revoke(A)", rc, MPI_SUCCESS);
        }
        rc = MPI_Barrier(b);
        CHECK_RC("Barrier(B)", rc, MPI_SUCCESS);
        rc = MPI_Comm_free(&a);
        CHECK_RC("Comm_free(A)", rc, MPI_SUCCESS);
    }
    u_note("rounds=%d", ROUNDS);
    MPI_Comm_free(&b);
    return u_finish();
}
