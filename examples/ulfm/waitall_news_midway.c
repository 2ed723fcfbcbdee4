/* waitall_news_midway: rank 0 blocks in MPI_Waitall on [Irecv from the victim,
 * Irecv from rank 1] while no failure is known. Rank 1 sends 100 ms after a
 * barrier, the victim dies 300 ms after it, both during the Waitall. Expected
 * (Open MPI 5 ULFM): MPI_ERR_IN_STATUS, statuses[1] SUCCESS with the value,
 * statuses[0] PROC_FAILED, the completed request freed. With MPIFT the message
 * completes in the calm path's blocking round and the death's news interrupts a
 * later one (engine::batch_fast): the general path must go on with the second
 * request already completed. */
#include "ulfm_common.h"

int main(int argc, char **argv)
{
    int victim, v = 42, rc, x[2] = {-1, -1};
    MPI_Request req[2];
    MPI_Status st[2];

    u_init(&argc, &argv, 1);
    victim = u_size - 1;
    MPI_Barrier(MPI_COMM_WORLD);
    if (u_rank == 0) {
        MPI_Irecv(&x[0], 1, MPI_INT, victim, 7, MPI_COMM_WORLD, &req[0]);
        MPI_Irecv(&x[1], 1, MPI_INT, 1, 7, MPI_COMM_WORLD, &req[1]);
        st[0].MPI_ERROR = st[1].MPI_ERROR = -12345;
        rc = MPI_Waitall(2, req, st);
        CHECK_RC("Waitall", rc, MPI_ERR_IN_STATUS);
        CHECK(st[1].MPI_ERROR == MPI_SUCCESS && x[1] == 42, "live status %s x=%d",
              u_name(st[1].MPI_ERROR), x[1]);
        CHECK(st[1].MPI_SOURCE == 1 && st[1].MPI_TAG == 7, "live source %d tag %d",
              st[1].MPI_SOURCE, st[1].MPI_TAG);
        CHECK(u_class(st[0].MPI_ERROR) == MPIX_ERR_PROC_FAILED, "dead status %s",
              u_name(st[0].MPI_ERROR));
        CHECK(req[1] == MPI_REQUEST_NULL, "the completed request was not freed");
    } else if (u_rank == 1) {
        u_sleep_ms(100);
        rc = MPI_Send(&v, 1, MPI_INT, 0, 7, MPI_COMM_WORLD);
        CHECK_RC("Send", rc, MPI_SUCCESS);
    } else if (u_rank == victim) {
        u_sleep_ms(300);
        u_die("during rank 0's Waitall");
    }
    return u_finish();
}
