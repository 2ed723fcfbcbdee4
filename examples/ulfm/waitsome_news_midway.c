/* waitsome_news_midway: rank 0 waits with MPI_Waitsome on [Irecv from the victim,
 * Irecv from rank 1] while no failure is known. Rank 1 sends 100 ms after a
 * barrier: the first Waitsome returns it (outcount 1, index 1). The victim dies
 * 300 ms after the barrier, during the second Waitsome: index 0 with PROC_FAILED
 * (Open MPI 5 ULFM: MPI_ERR_IN_STATUS). With MPIFT both calls block on the calm
 * path (engine::batch_fast); the death's news interrupts the second, and the
 * general path must answer it. */
#include "ulfm_common.h"

int main(int argc, char **argv)
{
    int victim, v = 42, rc, out = -7, idx[2] = {-7, -7}, x[2] = {-1, -1};
    MPI_Request req[2];
    MPI_Status st[2];

    u_init(&argc, &argv, 1);
    victim = u_size - 1;
    MPI_Barrier(MPI_COMM_WORLD);
    if (u_rank == 0) {
        MPI_Irecv(&x[0], 1, MPI_INT, victim, 7, MPI_COMM_WORLD, &req[0]);
        MPI_Irecv(&x[1], 1, MPI_INT, 1, 7, MPI_COMM_WORLD, &req[1]);
        rc = MPI_Waitsome(2, req, &out, idx, st);
        CHECK_RC("first Waitsome", rc, MPI_SUCCESS);
        CHECK(out == 1 && idx[0] == 1 && x[1] == 42 && st[0].MPI_SOURCE == 1,
              "first Waitsome: outcount %d index %d x=%d source %d", out, idx[0], x[1],
              st[0].MPI_SOURCE);
        out = -7;
        idx[0] = -7;
        st[0].MPI_ERROR = -12345;
        rc = MPI_Waitsome(2, req, &out, idx, st);
        CHECK_RC("second Waitsome", rc, MPI_ERR_IN_STATUS);
        CHECK(out == 1 && idx[0] == 0, "second Waitsome: outcount %d index %d", out, idx[0]);
        CHECK(u_class(st[0].MPI_ERROR) == MPIX_ERR_PROC_FAILED, "second Waitsome: status %s",
              u_name(st[0].MPI_ERROR));
    } else if (u_rank == 1) {
        u_sleep_ms(100);
        rc = MPI_Send(&v, 1, MPI_INT, 0, 7, MPI_COMM_WORLD);
        CHECK_RC("Send", rc, MPI_SUCCESS);
    } else if (u_rank == victim) {
        u_sleep_ms(300);
        u_die("during rank 0's second Waitsome");
    }
    return u_finish();
}
