/* revoke_release_inside: no failure. Rank 0 is blocked in MPI_Barrier(A); ranks
 * 2.. go straight on to MPI_Barrier(B) (B includes rank 0), so they are already
 * inside it when rank 1 revokes A, ~200 ms later, and then joins them in B. ULFM:
 * after the revoke no operation on A blocks, so rank 0's barrier returns REVOKED,
 * rank 0 joins B, and everybody leaves B with SUCCESS. Three rounds, a fresh A
 * each. Needs np >= 2.
 * With INSIDE_IBARRIER (revoke_release_inside_ibarrier.c) rank 0 waits in
 * MPI_Wait on an MPI_Ibarrier(A) instead; with INSIDE_ALLREDUCE
 * (revoke_release_inside_allreduce.c) both collectives are one-int
 * MPI_Allreduce sums: rank 0 in MPI_Allreduce(A), the others in
 * MPI_Allreduce(B) (which gives the size).
 *
 * MPIFT: its own MPI_Barrier (engine::barrier) leaves by itself once A is
 * revoked, and the others' wait in MPI_Barrier(B), or in its own small
 * MPI_Allreduce(B) (engine::allreduce), keeps MPIFT's service running; inside a
 * host MPI's blocking collective neither could happen (issue 19). */
#include "ulfm_common.h"

#ifndef ROUNDS
#define ROUNDS 3
#endif

int main(int argc, char **argv)
{
    int round, rc;
    MPI_Comm a, b;

#ifdef INSIDE_ALLREDUCE
    setenv("MPIFT_ALLREDUCE", "own", 1); /* MPIFT's default on MPICH only; ULFM ignores it */
#endif
    u_init(&argc, &argv, 1);
    MPI_Comm_dup(MPI_COMM_WORLD, &b);
    MPI_Comm_set_errhandler(b, MPI_ERRORS_RETURN);
    for (round = 0; round < ROUNDS; round++) {
        MPI_Comm_dup(MPI_COMM_WORLD, &a);
        MPI_Comm_set_errhandler(a, MPI_ERRORS_RETURN);
        MPI_Barrier(b); /* A exists everywhere before anybody revokes it */
        if (u_rank == 0) {
#if defined(INSIDE_ALLREDUCE)
            int one = 1, sum = 0;
            rc = MPI_Allreduce(&one, &sum, 1, MPI_INT, MPI_SUM, a);
#elif defined(INSIDE_IBARRIER)
            MPI_Request req;
            rc = MPI_Ibarrier(a, &req);
            CHECK_RC("Ibarrier(A)", rc, MPI_SUCCESS);
            rc = MPI_Wait(&req, MPI_STATUS_IGNORE);
#else
            rc = MPI_Barrier(a);
#endif
            CHECK_RC("collective on A", rc, MPIX_ERR_REVOKED);
        } else if (u_rank == 1) {
            u_sleep_ms(200); /* rank 0 in Barrier(A), the others in Barrier(B) */
            rc = MPIX_Comm_revoke(a);
            CHECK_RC("revoke(A)", rc, MPI_SUCCESS);
        }
#ifdef INSIDE_ALLREDUCE
        {
            int one = 1, sum = 0;
            rc = MPI_Allreduce(&one, &sum, 1, MPI_INT, MPI_SUM, b);
            CHECK_RC("Allreduce(B)", rc, MPI_SUCCESS);
            CHECK(sum == u_size, "Allreduce(B) gave %d (want %d)", sum, u_size);
        }
#else
        rc = MPI_Barrier(b);
        CHECK_RC("Barrier(B)", rc, MPI_SUCCESS);
#endif
        rc = MPI_Comm_free(&a);
        CHECK_RC("Comm_free(A)", rc, MPI_SUCCESS);
    }
    u_note("rounds=%d", ROUNDS);
    MPI_Comm_free(&b);
    return u_finish();
}
