/* revoke_shrink_pending: no process fails. ROUNDS times: everyone dups the world;
 * rank 0 revokes the dup and shrinks it at once; the others start a 4 MB Isend to
 * their right neighbour and an Irecv from their left on it, call MPI_Barrier on it
 * (REVOKED), wait for both requests (their errors are allowed), free the buffers at
 * once, as ULFM allows after the requests completed, and shrink: every shrink
 * gives the whole world. MPI must not read or write the freed buffers afterwards
 * (issue 18, defects 5 and 6). Open MPI 5 ULFM aborts this program ("Send error
 * after request freed", or a crash in ompi_comm_revoke_local while a rank is still
 * in MPI_Comm_dup): docs/ULFM-DIFFERENCES.md. Needs np >= 3.
 * Built with NO_PENDING (revoke_during_dup.c): the same without the Isend/Irecv. */
#include "ulfm_common.h"
#include <stdlib.h>

#ifndef ROUNDS
#define ROUNDS 20
#endif

#ifndef NO_PENDING
enum { N = 1 << 20 };

/* A 4 MB Isend to the right neighbour and an Irecv from the left one, among
 * ranks 1..np-1 on d. */
static void start_pending(MPI_Comm d, int **sb, int **rb, MPI_Request q[2])
{
    int i, k = u_size - 1, right = u_rank % k + 1, left = (u_rank + k - 2) % k + 1;
    *sb = malloc(N * sizeof(int));
    *rb = malloc(N * sizeof(int));
    for (i = 0; i < N; i++) (*sb)[i] = u_rank;
    MPI_Isend(*sb, N, MPI_INT, right, 1, d, &q[0]);
    MPI_Irecv(*rb, N, MPI_INT, left, 1, d, &q[1]);
}

/* Waits for both (their errors are allowed), scribbles, frees: MPI is done with
 * both buffers. */
static void end_pending(int *sb, int *rb, MPI_Request q[2])
{
    int i;
    MPI_Waitall(2, q, MPI_STATUSES_IGNORE);
    for (i = 0; i < N; i++) sb[i] = rb[i] = -1;
    free(sb);
    free(rb);
}
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
#ifndef NO_PENDING
            int *sb, *rb;
            MPI_Request q[2];
            start_pending(d, &sb, &rb, q);
#endif
            rc = MPI_Barrier(d);
            CHECK(u_class(rc) == MPIX_ERR_REVOKED, "round %d: Barrier on the revoked dup=%s", r, u_name(rc));
#ifndef NO_PENDING
            end_pending(sb, rb, q);
#endif
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
