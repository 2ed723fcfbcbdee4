/* inter_p2p_dead: an intercommunicator between group A (world ranks below n/2)
 * and group B (the others); the last rank (in B) dies. Then, on the
 * intercommunicator: A's rank 0 sends to each live B member (SUCCESS, the value
 * arrives) and to the dead one (PROC_FAILED); A's members' wildcard receive
 * fails (PROC_FAILED: a dead member of the remote group); B's live members'
 * wildcard receive fails too (a dead member of their own group);
 * MPIX_Comm_get_failed lists the local group's failures only (A: none; B: the
 * dead rank), as Open MPI 5 ULFM does; a Barrier fails at every survivor.
 * Needs 3 <= np <= 64. */
#include "ulfm_common.h"
#include "inter_common.h"

int main(int argc, char **argv)
{
    int rc, x, r, n, w[64];
    MPI_Comm local, ic;
    MPI_Group g;

    i_start_last_dies(&argc, &argv, 64, &local, &ic);
    if (u_rank == 0) {
        for (r = 0; r < i_nb - 1; r++) {
            x = 100 + r;
            rc = MPI_Send(&x, 1, MPI_INT, r, 1, ic);
            CHECK_RC("Send(live remote)", rc, MPI_SUCCESS);
        }
        rc = MPI_Send(&x, 1, MPI_INT, i_nb - 1, 1, ic);
        u_note("Send(dead)=%s", u_name(rc));
        CHECK_RC("Send(dead remote)", rc, MPIX_ERR_PROC_FAILED);
    }
    if (!i_in_a) {
        MPI_Comm_rank(ic, &r);
        x = -1;
        rc = MPI_Recv(&x, 1, MPI_INT, 0, 1, ic, MPI_STATUS_IGNORE);
        CHECK(rc == MPI_SUCCESS && x == 100 + r, "Recv(live remote)=%s x=%d (want %d)", u_name(rc), x, 100 + r);
    }
    rc = MPI_Recv(&x, 1, MPI_INT, MPI_ANY_SOURCE, 2, ic, MPI_STATUS_IGNORE);
    u_note("Recv(any)=%s", u_name(rc));
    CHECK_RC("Recv(any)", rc, MPIX_ERR_PROC_FAILED);

    MPIX_Comm_get_failed(ic, &g);
    i_group_worlds(g, &n, w, 64);
    MPI_Group_free(&g);
    u_note("get_failed=%d", n);
    if (i_in_a)
        CHECK(n == 0, "get_failed has %d members in group A (want 0: local group only)", n);
    else
        CHECK(n == 1 && w[0] == u_size - 1, "get_failed has %d members, first %d (want the dead %d)", n,
              n > 0 ? w[0] : -1, u_size - 1);

    rc = MPI_Barrier(ic);
    u_note("Barrier=%s", u_name(rc));
    CHECK_RC("Barrier(after)", rc, MPIX_ERR_PROC_FAILED);
    return u_finish();
}
