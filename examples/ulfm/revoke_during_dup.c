/* revoke_during_dup: no process fails. ROUNDS times: everyone dups the world; rank
 * 0 revokes its dup as soon as its MPI_Comm_dup returns, and shrinks it; the others
 * call MPI_Barrier on the dup: REVOKED (the revoke may reach them while they are
 * still inside MPI_Comm_dup), then shrink it: every shrink gives the whole world.
 * The most common recovery pattern, without a failure (issue 18, defect 5).
 * Open MPI 5 ULFM itself crashes in ompi_comm_revoke_local when the revoke meets a
 * rank still in MPI_Comm_dup (docs/ULFM-DIFFERENCES.md). */
#include "ulfm_common.h"

#ifndef ROUNDS
#define ROUNDS 20
#endif

int main(int argc, char **argv)
{
    int r, rc, n = -1;

    u_init(&argc, &argv, 1);
    for (r = 0; r < ROUNDS && !u_failed; r++) {
        MPI_Comm d, s;
        MPI_Comm_dup(MPI_COMM_WORLD, &d);
        MPI_Comm_set_errhandler(d, MPI_ERRORS_RETURN);
        if (u_rank == 0) {
            MPIX_Comm_revoke(d);
        } else {
            rc = MPI_Barrier(d);
            CHECK(u_class(rc) == MPIX_ERR_REVOKED, "round %d: Barrier on the revoked dup=%s", r, u_name(rc));
        }
        rc = MPIX_Comm_shrink(d, &s);
        CHECK(rc == MPI_SUCCESS, "round %d: shrink=%s", r, u_name(rc));
        if (rc == MPI_SUCCESS) {
            MPI_Comm_size(s, &n);
            CHECK(n == u_size, "round %d: shrunk size %d, want %d", r, n, u_size);
            MPI_Comm_free(&s);
        }
        MPI_Comm_free(&d);
    }
    u_note("rounds=%d", r);
    return u_finish();
}
