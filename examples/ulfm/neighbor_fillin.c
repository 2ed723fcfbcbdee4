/* neighbor_fillin: rank 0 waits in MPI_Recv while the others run a neighborhood
 * collective on a directed ring (receive from the left, send to the right) after
 * rank 1 died. Rank 0's only out-neighbor is the dead rank, and rank 2 receives
 * from it; rank 2 sends rank 0 a token only after its collective returned. None
 * may hang: rank 0 must not be needed in the collective while it waits (under
 * MPIFT it takes part for itself from inside the receive). Then rank 0 calls the
 * collective too. Uniform forms (alltoall, allgather), each followed by a token.
 * Each call returns PROC_FAILED or, at a rank that does not receive from the
 * dead one, success with the right data. Needs 3 or more ranks. */
#include "ulfm_common.h"

int main(int argc, char **argv)
{
    int victim = 1, left, right, rc, round, token, v, got;
    MPI_Comm dist;

    u_init(&argc, &argv, 1);
    if (u_size < 3) {
        u_note("needs 3 ranks");
        return u_finish();
    }
    left = (u_rank - 1 + u_size) % u_size;
    right = (u_rank + 1) % u_size;
    MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, 1, &left, MPI_UNWEIGHTED, 1, &right, MPI_UNWEIGHTED,
                                   MPI_INFO_NULL, 0, &dist);
    MPI_Comm_set_errhandler(dist, MPI_ERRORS_RETURN);
    MPI_Barrier(MPI_COMM_WORLD);
    if (u_rank == victim) u_die("after creating the graph");
    rc = u_wait_failure(MPI_COMM_WORLD, 1);
    CHECK_RC("agree", rc, MPIX_ERR_PROC_FAILED);

    for (round = 0; round < 2; round++) {
        const char *what = round == 0 ? "Neighbor_alltoall" : "Neighbor_allgather";
        if (u_rank == 0) {
            /* Inside MPI while the others are in the collective. */
            rc = MPI_Recv(&token, 1, MPI_INT, 2, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            CHECK(rc == MPI_SUCCESS && token == round, "token %d: %s", round, u_name(rc));
        }
        v = 10 * u_rank + round;
        got = -1;
        if (round == 0)
            rc = MPI_Neighbor_alltoall(&v, 1, MPI_INT, &got, 1, MPI_INT, dist);
        else
            rc = MPI_Neighbor_allgather(&v, 1, MPI_INT, &got, 1, MPI_INT, dist);
        u_judge(what, rc, left != victim, got == 10 * left + round);
        if (u_rank == 2) {
            token = round;
            rc = MPI_Send(&token, 1, MPI_INT, 0, 7, MPI_COMM_WORLD);
            CHECK(rc == MPI_SUCCESS, "send token %d: %s", round, u_name(rc));
        }
    }
    return u_finish();
}
