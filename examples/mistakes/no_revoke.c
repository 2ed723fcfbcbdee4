/* no_revoke: a survivor that saw the failure goes to recovery without revoking.
 *
 * MISTAKE: rank V+2 gets PROC_FAILED from its receive from the victim V and goes
 * straight to MPIX_Comm_agree(MPI_COMM_WORLD) without MPIX_Comm_revoke, so rank
 * V+1, which waits for V+2 to forward V's value, is never told to stop waiting.
 * (V is the victim's world rank, argv[1], default 1; V+k means (V+k) % size.)
 *
 * Roles: V sends its value to V+2 and V+3, V+2 forwards it to V+1. V dies first.
 * V+2 and V+3 get PROC_FAILED from MPI_Recv(V) and enter MPIX_Comm_agree on
 * MPI_COMM_WORLD, which needs every live rank; V+1 never sees an error (its
 * peer V+2 is alive) and never joins the agreement.
 *
 * REAL ULFM (Open MPI 5.0.11): hangs (timeout) for V = 0, 1, 2, 3. gdb
 * backtraces after 3-6 s, V=1 (the other V: the same, shifted):
 *   rank 0 in MPIX_Comm_agree
 *   rank 1 killed by SIGKILL (no process left)
 *   rank 2 in MPI_Recv (from rank 3)
 *   rank 3 in MPIX_Comm_agree
 *
 * PATTERN: peer in recovery, no revoke
 * FINDING: rank 2 waits in MPI_Recv from rank 3 on MPI_COMM_WORLD
 * FINDING: rank 3 is in MPIX_Comm_agree on MPI_COMM_WORLD
 * FINDING: rank 0 is in MPIX_Comm_agree on MPI_COMM_WORLD
 * FINDING: rank 1 is dead
 * Needs 4 ranks. */
#include "ulfm_common.h"

int main(int argc, char **argv)
{
    int V, me, x = 0, flag = 1, rc;

    u_init(&argc, &argv, 1);
    V = argc > 1 ? atoi(argv[1]) % u_size : 1;
    me = (u_rank - V + u_size) % u_size; /* my role: 0 is the victim */
    MPI_Barrier(MPI_COMM_WORLD);         /* everybody is up */

    if (me == 0) u_die("before sending its value");
    if (me == 1) { /* waits for V's value through V+2 */
        rc = MPI_Recv(&x, 1, MPI_INT, (V + 2) % u_size, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    } else {
        rc = MPI_Recv(&x, 1, MPI_INT, V, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        if (rc != MPI_SUCCESS) {
            /* THE MISTAKE: no MPIX_Comm_revoke(MPI_COMM_WORLD) here */
            rc = MPIX_Comm_agree(MPI_COMM_WORLD, &flag);
        } else if (me == 2) {
            MPI_Send(&x, 1, MPI_INT, (V + 1) % u_size, 0, MPI_COMM_WORLD);
        }
    }
    u_note("last rc=%s", u_name(rc));
    return u_finish();
}
