/* skipped_collective: a collective that one survivor skipped.
 *
 * MISTAKE: rank V+2 gets an error from its exchange with the victim and jumps
 * to the recovery code (`goto recover`) past the MPI_Allreduce of its pair
 * communicator, which its partner V+3 has entered and waits in forever.
 * (V is the victim's world rank, argv[1], default 1; V+k means (V+k) % size.)
 *
 * Roles: MPI_Comm_split makes the pairs {V, V+1} and {V+2, V+3}. Each rank
 * swaps a value with its counterpart in the other pair (V <-> V+2,
 * V+1 <-> V+3), sums it over its pair with MPI_Allreduce, then all agree on
 * MPI_COMM_WORLD. V dies before the swap. V+2's MPI_Sendrecv fails and it skips
 * to MPIX_Comm_agree; V+1's Allreduce fails (its partner is V) and it goes to
 * the agreement too; V+3's swap with V+1 succeeds and its Allreduce waits for
 * V+2, which waits in the agreement for V+3.
 *
 * REAL ULFM (Open MPI 5.0.11): hangs (timeout) for V = 0, 1, 2, 3. gdb
 * backtraces after 3-6 s, V=1 (the other V: the same, shifted):
 *   rank 0 in MPI_Allreduce (on the pair communicator)
 *   rank 1 killed by SIGKILL (no process left)
 *   rank 2 in MPIX_Comm_agree
 *   rank 3 in MPIX_Comm_agree
 *
 * PATTERN: collective skipped on the error path
 * FINDING: rank 0 waits in MPI_Allreduce on the communicator from MPI_Comm_split
 * FINDING: rank 3 is in MPIX_Comm_agree on MPI_COMM_WORLD
 * FINDING: rank 2 is in MPIX_Comm_agree on MPI_COMM_WORLD
 * FINDING: rank 1 is dead
 * Needs 4 ranks. */
#include "ulfm_common.h"

int main(int argc, char **argv)
{
    int V, me, x, y = 0, sum = 0, ok = 1, rc;
    MPI_Comm pair;

    u_init(&argc, &argv, 1);
    V = argc > 1 ? atoi(argv[1]) % u_size : 1;
    me = (u_rank - V + u_size) % u_size; /* my role: 0 is the victim */
    MPI_Comm_split(MPI_COMM_WORLD, me / 2, me, &pair);
    MPI_Comm_set_errhandler(pair, MPI_ERRORS_RETURN);
    MPI_Barrier(MPI_COMM_WORLD); /* everybody is out of the split */

    if (me == 0) u_die("before the swap");
    x = u_rank;
    rc = MPI_Sendrecv(&x, 1, MPI_INT, (u_rank + 2) % u_size, 0, &y, 1, MPI_INT,
                      (u_rank + 2) % u_size, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    if (rc != MPI_SUCCESS) goto recover; /* THE MISTAKE: skips the Allreduce */
    rc = MPI_Allreduce(&y, &sum, 1, MPI_INT, MPI_SUM, pair);
    u_note("Allreduce=%s", u_name(rc));
recover:
    ok = rc == MPI_SUCCESS;
    rc = MPIX_Comm_agree(MPI_COMM_WORLD, &ok);
    u_note("agree=%s ok=%d", u_name(rc), ok);
    return u_finish();
}
