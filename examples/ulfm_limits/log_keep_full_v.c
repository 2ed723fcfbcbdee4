/* log_keep_full_v: MPIFT's limit (docs/ULFM-DIFFERENCES.md, "A collective older
 * than the last 32 of a member's log can be lost"), not a ULFM behaviour check.
 * As examples/ulfm/log_ring_gap_v, with nine Scatterv instead of one: the root
 * returns from each at once, so their nine entries are open together (nothing
 * on MPI_COMM_WORLD closes them in between), and its 40 collectives on its own
 * communicator push all nine out of its ring. It keeps eight (KEEP_LEN); the
 * first is given up, so rank 2 cannot join it, nor the Barrier after them, and
 * the survivors wait in the Barrier. Under real ULFM the Barrier returns
 * PROC_FAILED. MPIFT must say on stderr which collective cannot be joined:
 * tests/ulfm/limits.sh runs this program under a timeout and checks that line.
 * Needs 4 or more ranks. */
#include "ulfm_common.h"

#define NSCATTER 9

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
        u_die("before the Scatterv");
    }

    for (i = 0; i < NSCATTER; i++) {
        rc = MPI_Scatterv(all, counts, displs, MPI_INT, &part, 1, MPI_INT, 0, MPI_COMM_WORLD);
        CHECK(rc == MPI_SUCCESS || u_class(rc) == MPIX_ERR_PROC_FAILED, "Scatterv=%s", u_name(rc));
    }
    if (u_rank == 0) {
        for (i = 0; i < 40; i++) MPI_Allreduce(&part, &y, 1, MPI_INT, MPI_SUM, own);
        MPI_Send(&i, 1, MPI_INT, 2, 99, MPI_COMM_WORLD);
    }

    rc = MPI_Barrier(MPI_COMM_WORLD);
    CHECK_RC("Barrier", rc, MPIX_ERR_PROC_FAILED);
    MPI_Comm_free(&own);
    return u_finish();
}
