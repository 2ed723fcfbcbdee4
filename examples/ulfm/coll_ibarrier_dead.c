/* coll_ibarrier_dead: the survivors start an Ibarrier on MPI_COMM_WORLD that the
 * victim never joins; Test says not complete; then the victim dies; Wait returns
 * PROC_FAILED. Collectives on a communicator without the dead rank still work. */
#include "ulfm_common.h"

int main(int argc, char **argv)
{
    int victim, flag = 0, i, rc, go = 1, x, sum = -1, nlive = 0, want = 0;
    MPI_Comm live;
    MPI_Request req;

    u_init(&argc, &argv, 1);
    victim = u_size - 1;
    /* Survivors' communicator, made while everybody is alive. */
    MPI_Comm_split(MPI_COMM_WORLD, u_rank == victim ? MPI_UNDEFINED : 0, u_rank, &live);
    if (u_rank == victim) {
        MPI_Recv(&go, 1, MPI_INT, 0, 3, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        u_die("after the survivors started Ibarrier");
    }

    rc = MPI_Ibarrier(MPI_COMM_WORLD, &req);
    CHECK_RC("Ibarrier", rc, MPI_SUCCESS);
    for (i = 0; i < 3; i++) {
        rc = MPI_Test(&req, &flag, MPI_STATUS_IGNORE);
        CHECK(rc == MPI_SUCCESS && !flag, "Test before death=%s flag %d", u_name(rc), flag);
    }
    MPI_Barrier(live); /* all survivors are in the Ibarrier */
    if (u_rank == 0) MPI_Send(&go, 1, MPI_INT, victim, 3, MPI_COMM_WORLD);

    rc = MPI_Wait(&req, MPI_STATUS_IGNORE);
    CHECK_RC("Wait", rc, MPIX_ERR_PROC_FAILED);

    rc = MPI_Barrier(live);
    CHECK_RC("Barrier(live)", rc, MPI_SUCCESS);
    x = u_rank;
    MPI_Comm_size(live, &nlive);
    for (i = 0; i < u_size; i++) if (i != victim) want += i;
    rc = MPI_Allreduce(&x, &sum, 1, MPI_INT, MPI_SUM, live);
    CHECK(rc == MPI_SUCCESS && sum == want, "Allreduce(live)=%s sum %d", u_name(rc), sum);
    CHECK(nlive == u_size - 1, "live size %d", nlive);
    MPI_Comm_free(&live);
    return u_finish();
}
