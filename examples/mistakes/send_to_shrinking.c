/* send_to_shrinking: a large send to a rank that went on to MPIX_Comm_shrink.
 *
 * MISTAKE: rank V+2 gets PROC_FAILED from the victim and calls
 * MPIX_Comm_shrink(MPI_COMM_WORLD) without revoking and without posting the
 * receive it owes V+1, so V+1's 4 MiB MPI_Send (rendezvous: it completes only
 * when the receive is posted) waits forever.
 * (V is the victim's world rank, argv[1], default 1; V+k means (V+k) % size.)
 *
 * Roles: V sends a small header to V+2 and V+3; V+1 sends a 4 MiB block to
 * V+2. V dies before sending. V+2 and V+3 see the failure in MPI_Recv(V) and
 * shrink, which needs every live rank; V+1 never sees an error (its peer V+2
 * is alive) and never joins the shrink.
 *
 * REAL ULFM (Open MPI 5.0.11): hangs (timeout) for V = 0, 1, 2, 3. gdb
 * backtraces after 3-6 s, V=1 (the other V: the same, shifted):
 *   rank 0 in MPIX_Comm_shrink
 *   rank 1 killed by SIGKILL (no process left)
 *   rank 2 in MPI_Send (to rank 3)
 *   rank 3 in MPIX_Comm_shrink
 *
 * PATTERN: rendezvous send to a peer in recovery, no revoke
 * FINDING: rank 2 waits in MPI_Send to rank 3 on MPI_COMM_WORLD
 * FINDING: rank 3 is in MPIX_Comm_shrink on MPI_COMM_WORLD
 * FINDING: rank 0 is in MPIX_Comm_shrink on MPI_COMM_WORLD
 * FINDING: rank 1 is dead
 * Needs 4 ranks. */
#include "ulfm_common.h"

#define BIG (1 << 20) /* ints: 4 MiB, far above any eager limit */

int main(int argc, char **argv)
{
    int V, me, hdr = 0, rc = MPI_SUCCESS;
    int *block = calloc(BIG, sizeof(int));
    MPI_Comm world2;

    u_init(&argc, &argv, 1);
    V = argc > 1 ? atoi(argv[1]) % u_size : 1;
    me = (u_rank - V + u_size) % u_size; /* my role: 0 is the victim */
    MPI_Barrier(MPI_COMM_WORLD);         /* everybody is up */

    if (me == 0) u_die("before sending its header");
    if (me == 1) {
        rc = MPI_Send(block, BIG, MPI_INT, (V + 2) % u_size, 1, MPI_COMM_WORLD);
        u_note("Send=%s", u_name(rc));
    } else {
        rc = MPI_Recv(&hdr, 1, MPI_INT, V, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        if (rc != MPI_SUCCESS) {
            /* THE MISTAKE: no MPIX_Comm_revoke(MPI_COMM_WORLD) before the shrink */
            rc = MPIX_Comm_shrink(MPI_COMM_WORLD, &world2);
            u_note("shrink=%s", u_name(rc));
        } else if (me == 2) {
            rc = MPI_Recv(block, BIG, MPI_INT, (V + 1) % u_size, 1, MPI_COMM_WORLD,
                          MPI_STATUS_IGNORE);
        }
    }
    free(block);
    return u_finish();
}
