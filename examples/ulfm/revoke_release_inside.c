/* revoke_release_inside: no failure. Rank 0 is blocked in MPI_Barrier(A); ranks
 * 2.. go straight on to MPI_Barrier(B) (B includes rank 0), so they are already
 * inside it when rank 1 revokes A, ~200 ms later, and then joins them in B. ULFM:
 * after the revoke no operation on A blocks, so rank 0's barrier returns REVOKED,
 * rank 0 joins B, and everybody leaves B with SUCCESS. Three rounds, a fresh A
 * each. Needs np >= 2.
 *
 * MPIFT: a rank inside a real blocking MPI_Barrier(B) cannot join A for rank 0,
 * so this needs blocking collectives run as their non-blocking forms, which the
 * program asks for before MPI_Init (MPIFT_COLLECTIVES=nonblocking, read from
 * rank 0's environment; docs/CONFIGURATION.md). Real ULFM ignores the variable. */
#include "ulfm_common.h"

#ifndef ROUNDS
#define ROUNDS 3
#endif

int main(int argc, char **argv)
{
    int round, rc;
    MPI_Comm a, b;

    setenv("MPIFT_COLLECTIVES", "nonblocking", 1);
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
        } else if (u_rank == 1) {
            u_sleep_ms(200); /* rank 0 in Barrier(A), the others in Barrier(B) */
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
