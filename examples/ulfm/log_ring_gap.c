/* log_ring_gap: a collective whose entry left a member's log before the dead
 * rank read it. Rank 0 broadcasts on MPI_COMM_WORLD while rank 2 is still
 * alive elsewhere; the root returns without rank 2 (the host sends its data
 * eagerly), enters 40 collectives on a communicator of its own, more than the
 * 32 its log keeps, and only then tells rank 2, which dies before the Bcast.
 * The message fixes the order: rank 2 cannot read the entry in time. Under ULFM the Bcast returns SUCCESS or
 * PROC_FAILED (a member whose data comes through rank 2) and the Barrier after
 * it PROC_FAILED at every survivor. MPIFT hung here before its dead rank took a
 * member that went on past a collective as having entered it (docs/DESIGN.md,
 * "The log's limit"); examples/ulfm/log_ring_gap_v is the same with a
 * Scatterv. Needs 4 or more ranks. */
#include "ulfm_common.h"

int main(int argc, char **argv)
{
    int x = 7, y = 0, rc, i;
    MPI_Comm own;

    u_init(&argc, &argv, 1);
    MPI_Comm_split(MPI_COMM_WORLD, u_rank, 0, &own); /* one member each */
    if (u_rank == 2) { /* alive until rank 0's 40 collectives are done */
        MPI_Recv(&i, 1, MPI_INT, 0, 99, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        u_die("before Bcast");
    }

    rc = MPI_Bcast(&x, 1, MPI_INT, 0, MPI_COMM_WORLD);
    u_note("Bcast=%s", u_name(rc));
    CHECK(rc == MPI_SUCCESS || u_class(rc) == MPIX_ERR_PROC_FAILED, "Bcast=%s", u_name(rc));
    if (u_rank == 0) {
        for (i = 0; i < 40; i++) MPI_Allreduce(&x, &y, 1, MPI_INT, MPI_SUM, own);
        MPI_Send(&i, 1, MPI_INT, 2, 99, MPI_COMM_WORLD);
    }

    rc = MPI_Barrier(MPI_COMM_WORLD);
    CHECK_RC("Barrier", rc, MPIX_ERR_PROC_FAILED);
    MPI_Comm_free(&own);
    return u_finish();
}
