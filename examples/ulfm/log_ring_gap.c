/* log_ring_gap: a collective whose entry left a member's log before the dead
 * rank read it. Rank 2 dies before a Bcast from rank 0 on MPI_COMM_WORLD. The
 * root returns from it without rank 2 (the host sends its data eagerly), then
 * enters 40 collectives on a communicator of its own, more than the 32 its log
 * keeps, before rank 2's loop reads it. Under ULFM the Bcast returns SUCCESS or
 * PROC_FAILED (a member whose data comes through rank 2) and the Barrier after
 * it PROC_FAILED at every survivor. MPIFT hung here before its dead rank took a
 * member that went on past a collective as having entered it (docs/DESIGN.md,
 * "The log's limit"); examples/ulfm_limits/log_ring_gap_v shows what is still
 * lost. Needs 4 or more ranks. */
#include "ulfm_common.h"

int main(int argc, char **argv)
{
    int x = 7, y = 0, rc, i;
    MPI_Comm own;

    u_init(&argc, &argv, 1);
    MPI_Comm_split(MPI_COMM_WORLD, u_rank, 0, &own); /* one member each */
    if (u_rank == 2) u_die("before Bcast");

    rc = MPI_Bcast(&x, 1, MPI_INT, 0, MPI_COMM_WORLD);
    u_note("Bcast=%s", u_name(rc));
    CHECK(rc == MPI_SUCCESS || u_class(rc) == MPIX_ERR_PROC_FAILED, "Bcast=%s", u_name(rc));
    if (u_rank == 0)
        for (i = 0; i < 40; i++) MPI_Allreduce(&x, &y, 1, MPI_INT, MPI_SUM, own);

    rc = MPI_Barrier(MPI_COMM_WORLD);
    CHECK_RC("Barrier", rc, MPIX_ERR_PROC_FAILED);
    MPI_Comm_free(&own);
    return u_finish();
}
