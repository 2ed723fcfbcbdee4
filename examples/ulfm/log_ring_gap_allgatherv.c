/* log_ring_gap_allgatherv: like log_ring_gap, with a collective whose counts
 * are a list, the same at every member (MPI_Allgatherv's receive counts).
 * Rank 0 starts an Iallgatherv on MPI_COMM_WORLD while rank 2 is still alive
 * elsewhere, enters 40 collectives on a communicator of its own (more than the
 * 32 its log keeps) and an Ibarrier on MPI_COMM_WORLD, and only then tells
 * rank 2, which dies before the Iallgatherv. Rank 0's entry of it is gone when
 * the dead rank reads; ranks 1 and 3 wait in it, so their entries describe it.
 * Under ULFM every survivor's Iallgatherv returns SUCCESS or PROC_FAILED, and
 * the Ibarrier after it PROC_FAILED.
 * MPIFT hung here until a dead rank took any member's entry of an Allgatherv or
 * a Reduce_scatter for the lost one (docs/DESIGN.md, "The log's limit").
 * Needs 4 or more ranks. */
#include "ulfm_common.h"

/* An Allgatherv that succeeded holds every live member's block. */
static void judge(int rc, const int *all, const int *displs)
{
    int i;
    u_note("Allgatherv=%s", u_name(rc));
    CHECK(rc == MPI_SUCCESS || u_class(rc) == MPIX_ERR_PROC_FAILED, "Allgatherv=%s", u_name(rc));
    for (i = 0; rc == MPI_SUCCESS && i < u_size; i++)
        if (i != 2) CHECK(all[displs[i]] == 100 + i, "block %d holds %d", i, all[displs[i]]);
}

int main(int argc, char **argv)
{
    int x, y = 0, rc, i, *counts, *displs, *all, sent[2];
    MPI_Comm own;
    MPI_Request r[2];

    u_init(&argc, &argv, 1);
    counts = malloc(sizeof(int) * u_size);
    displs = malloc(sizeof(int) * u_size);
    all = malloc(sizeof(int) * 2 * u_size);
    for (i = 0; i < u_size; i++) {
        counts[i] = 1 + i % 2; /* a list, not one count */
        displs[i] = 2 * i;
        all[2 * i] = all[2 * i + 1] = -1;
    }
    x = sent[0] = sent[1] = 100 + u_rank;
    MPI_Comm_split(MPI_COMM_WORLD, u_rank, 0, &own); /* one member each */
    if (u_rank == 2) { /* alive until rank 0's collectives are started */
        MPI_Recv(&i, 1, MPI_INT, 0, 99, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        u_die("before Iallgatherv");
    }

    /* Non-blocking at every member: blocking and non-blocking collectives do
     * not match each other (MPI-3.1 5.12). */
    rc = MPI_Iallgatherv(sent, counts[u_rank], MPI_INT, all, counts, displs, MPI_INT, MPI_COMM_WORLD, &r[0]);
    if (u_rank == 0) { /* rank 2 lives until the Send: both starts succeed */
        CHECK(rc == MPI_SUCCESS, "Iallgatherv start=%s", u_name(rc));
        for (i = 0; i < 40; i++) MPI_Allreduce(&x, &y, 1, MPI_INT, MPI_SUM, own);
        rc = MPI_Ibarrier(MPI_COMM_WORLD, &r[1]);
        CHECK(rc == MPI_SUCCESS, "Ibarrier start=%s", u_name(rc));
        MPI_Send(&i, 1, MPI_INT, 2, 99, MPI_COMM_WORLD);
        judge(MPI_Wait(&r[0], MPI_STATUS_IGNORE), all, displs);
    } else {
        /* A start after the failure is known may fail (no request then). */
        judge(rc == MPI_SUCCESS ? MPI_Wait(&r[0], MPI_STATUS_IGNORE) : rc, all, displs);
        rc = MPI_Ibarrier(MPI_COMM_WORLD, &r[1]);
    }
    if (rc == MPI_SUCCESS) rc = MPI_Wait(&r[1], MPI_STATUS_IGNORE);
    CHECK_RC("Barrier", rc, MPIX_ERR_PROC_FAILED);
    MPI_Comm_free(&own);
    free(counts);
    free(displs);
    free(all);
    return u_finish();
}
