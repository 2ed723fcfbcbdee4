/* revoke_release_inside: no failure. Rank 0 is blocked in MPI_Barrier(A); ranks
 * 2.. go straight on to MPI_Barrier(B) (B includes rank 0), so they are already
 * inside it when rank 1 revokes A, ~200 ms later, and then joins them in B. ULFM:
 * after the revoke no operation on A blocks, so rank 0's barrier returns REVOKED,
 * rank 0 joins B, and everybody leaves B with SUCCESS. Three rounds, a fresh A
 * each. Needs np >= 2.
 * With INSIDE_IBARRIER (revoke_release_inside_ibarrier.c) rank 0 waits in
 * MPI_Wait on an MPI_Ibarrier(A) instead.
 *
 * MPIFT: its own MPI_Barrier (layer::barrier) leaves by itself once A is
 * revoked, and the others' wait in MPI_Barrier(B) keeps MPIFT's service running;
 * inside a host MPI's blocking barrier neither could happen (issue 19). */
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
#ifdef INSIDE_IBARRIER
            MPI_Request req;
            rc = MPI_Ibarrier(a, &req);
            CHECK_RC("Ibarrier(A)", rc, MPI_SUCCESS);
            rc = MPI_Wait(&req, MPI_STATUS_IGNORE);
#else
            rc = MPI_Barrier(a);
#endif
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
