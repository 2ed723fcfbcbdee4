/* shrink_no_revoke: a shrink without a revoke while another survivor still waits
 * in the old communicator.
 *
 * MISTAKE: ranks V+2 and V+3 get PROC_FAILED from the victim and call
 * MPIX_Comm_shrink(MPI_COMM_WORLD) without revoking it first, so rank V+1, which
 * waits in MPI_Probe on MPI_COMM_WORLD for V+3's result, is never interrupted
 * and never joins the shrink.
 * (V is the victim's world rank, argv[1], default 1; V+k means (V+k) % size.)
 *
 * Roles: V sends its part to V+2 and V+3; V+3 was to send the combined result,
 * of a size V+1 learns by probing, to V+1. V dies before sending. V+1 probes
 * (its peer V+3 is alive: no error); V+2 and V+3 see the failure and shrink,
 * which needs every live rank. (A first version had V+1 wait in MPI_Bcast on
 * MPI_COMM_WORLD from root V+3 instead: real ULFM returned PROC_FAILED there,
 * V+1 went on into MPI_Finalize, whose own internal shrink of MPI_COMM_WORLD
 * matched the user's shrink at V+2 and V+3 (SUCCESS, size 3), and the job hung
 * later, in MPI_Finalize. MPIFT left V+1 in that MPI_Bcast.)
 *
 * REAL ULFM (Open MPI 5.0.11): hangs (timeout) for V = 0, 1, 2, 3. gdb
 * backtraces after 3-6 s, V=1 (the other V: the same, shifted):
 *   rank 0 in MPIX_Comm_shrink
 *   rank 1 killed by SIGKILL (no process left)
 *   rank 2 in MPI_Probe (from rank 0)
 *   rank 3 in MPIX_Comm_shrink
 *
 * PATTERN: shrink without revoke, survivor left in the old communicator
 * FINDING: rank 2 waits in MPI_Probe from rank 0 on MPI_COMM_WORLD
 * FINDING: rank 0 is in MPIX_Comm_shrink on MPI_COMM_WORLD
 * FINDING: rank 3 is in MPIX_Comm_shrink on MPI_COMM_WORLD
 * FINDING: rank 1 is dead
 * Needs 4 ranks. */
#include "ulfm_common.h"

int main(int argc, char **argv)
{
    int V, me, x[2] = {0, 0}, rc = MPI_SUCCESS;
    MPI_Comm world2;
    MPI_Status st;

    u_init(&argc, &argv, 1);
    V = argc > 1 ? atoi(argv[1]) % u_size : 1;
    me = (u_rank - V + u_size) % u_size; /* my role: 0 is the victim */
    MPI_Barrier(MPI_COMM_WORLD);         /* everybody is up */

    if (me == 0) u_die("before sending its part");
    if (me == 1) { /* the result comes from V+3, of a size only V+3 knows */
        rc = MPI_Probe((V + 3) % u_size, 0, MPI_COMM_WORLD, &st);
        u_note("Probe=%s", u_name(rc));
    } else {
        rc = MPI_Recv(x, 2, MPI_INT, V, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        if (rc != MPI_SUCCESS) {
            /* THE MISTAKE: no MPIX_Comm_revoke(MPI_COMM_WORLD) before the shrink */
            rc = MPIX_Comm_shrink(MPI_COMM_WORLD, &world2);
            u_note("shrink=%s", u_name(rc));
        }
    }
    return u_finish();
}
