/* log_ring_gap_v: a collective whose entry only its writer had, after that
 * entry left the writer's ring. Rank 0 scatters while rank 2 is still alive
 * elsewhere: the root sends every part at once and returns, enters 40
 * collectives on a communicator of its own, more than the 32 its ring holds,
 * and only then tells rank 2, which dies before the Scatterv (the message
 * fixes the order). Only the root's entry says how much rank 2 receives. Under
 * ULFM the Scatterv returns SUCCESS (or PROC_FAILED) and the Barrier after it
 * PROC_FAILED at every survivor. MPIFT hung here in the Barrier (the dead rank
 * could not join the Scatterv) until the root kept its entry in a keep slot
 * when its ring moved on (docs/DESIGN.md, "The log's limit";
 * examples/ulfm_limits/log_keep_full_v, this program with NSCATTER 9, shows
 * what is still lost). Needs 4 or more ranks. */
#include "ulfm_common.h"

#ifndef NSCATTER
#define NSCATTER 1 /* Scatterv calls before rank 0's 40 collectives */
#endif

int main(int argc, char **argv)
{
    int part = -1, y = 0, rc, i;
    int all[64], counts[64], displs[64];
    MPI_Comm own;

    u_init(&argc, &argv, 1);
    for (i = 0; i < u_size && i < 64; i++) all[i] = 10 + i, counts[i] = 1, displs[i] = i;
    MPI_Comm_split(MPI_COMM_WORLD, u_rank, 0, &own); /* one member each */
    if (u_rank == 2) { /* alive until rank 0's 40 collectives are done */
        MPI_Recv(&i, 1, MPI_INT, 0, 99, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        u_die("before Scatterv");
    }

    for (i = 0; i < NSCATTER; i++) {
        rc = MPI_Scatterv(all, counts, displs, MPI_INT, &part, 1, MPI_INT, 0, MPI_COMM_WORLD);
        CHECK(rc == MPI_SUCCESS || u_class(rc) == MPIX_ERR_PROC_FAILED, "Scatterv=%s", u_name(rc));
    }
    u_note("Scatterv=%s", u_name(rc));
    if (u_rank == 0) {
        for (i = 0; i < 40; i++) MPI_Allreduce(&part, &y, 1, MPI_INT, MPI_SUM, own);
        MPI_Send(&i, 1, MPI_INT, 2, 99, MPI_COMM_WORLD);
    }

    rc = MPI_Barrier(MPI_COMM_WORLD);
    CHECK_RC("Barrier", rc, MPIX_ERR_PROC_FAILED);
    MPI_Comm_free(&own);
    return u_finish();
}
