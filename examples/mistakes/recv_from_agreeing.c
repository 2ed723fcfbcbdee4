/* recv_from_agreeing: a receive from a peer that went to the agreement.
 *
 * MISTAKE: rank V+1 gets an error from its own receive and jumps to the step's
 * closing MPIX_Comm_agree without sending its partial sum on, so rank V+2 waits
 * in MPI_Recv from a live peer that will never send (and V+3 waits behind it).
 * (V is the victim's world rank, argv[1], default 1; V+k means (V+k) % size.)
 *
 * Roles: a hand-made prefix sum along the chain V -> V+1 -> V+2 -> V+3, each step
 * closed by MPIX_Comm_agree(MPI_COMM_WORLD) on "my part went well". V dies before
 * it sends. V+1 gets PROC_FAILED from MPI_Recv(V) and enters the agreement; V+2
 * and V+3 never see an error (their peers are alive) and never join it.
 *
 * REAL ULFM (Open MPI 5.0.11): hangs (timeout) for V = 0, 1, 2, 3. gdb
 * backtraces after 3-6 s, V=1 (the other V: the same, shifted):
 *   rank 0 in MPI_Recv (from rank 3)
 *   rank 1 killed by SIGKILL (no process left)
 *   rank 2 in MPIX_Comm_agree
 *   rank 3 in MPI_Recv (from rank 2)
 *
 * PATTERN: receive from a peer in the agreement
 * FINDING: rank 3 waits in MPI_Recv from rank 2 on MPI_COMM_WORLD
 * FINDING: rank 2 is in MPIX_Comm_agree on MPI_COMM_WORLD
 * FINDING: rank 0 waits in MPI_Recv from rank 3 on MPI_COMM_WORLD
 * FINDING: rank 1 is dead
 * Needs 4 ranks. */
#include "ulfm_common.h"

int main(int argc, char **argv)
{
    int V, me, sum = 0, ok, rc = MPI_SUCCESS;

    u_init(&argc, &argv, 1);
    V = argc > 1 ? atoi(argv[1]) % u_size : 1;
    me = (u_rank - V + u_size) % u_size; /* my place in the chain: 0 is the victim */
    MPI_Barrier(MPI_COMM_WORLD);         /* everybody is up */

    if (me == 0) u_die("before sending its partial sum");
    rc = MPI_Recv(&sum, 1, MPI_INT, (u_rank - 1 + u_size) % u_size, 0, MPI_COMM_WORLD,
                  MPI_STATUS_IGNORE);
    if (rc == MPI_SUCCESS) { /* THE MISTAKE: on an error, nobody is told: no revoke */
        sum += u_rank;
        if (me < u_size - 1)
            rc = MPI_Send(&sum, 1, MPI_INT, (u_rank + 1) % u_size, 0, MPI_COMM_WORLD);
    }
    ok = rc == MPI_SUCCESS;
    rc = MPIX_Comm_agree(MPI_COMM_WORLD, &ok); /* did everybody's part go well? */
    u_note("agree=%s ok=%d", u_name(rc), ok);
    return u_finish();
}
