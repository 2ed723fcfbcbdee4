/* waitany_news_midway: rank 0 waits with MPI_Waitany on [Irecv from the victim,
 * Irecv from rank 1] while no failure is known. Rank 1 sends 100 ms after a
 * barrier: the first Waitany returns it (index 1, SUCCESS). The victim dies 300 ms
 * after the barrier, during the second Waitany: PROC_FAILED for index 0 (Open MPI
 * 5 ULFM). With MPIFT both calls block on the calm path (engine::batch_fast); the
 * death's news interrupts the second, and the general path must answer it. */
#include "ulfm_common.h"

int main(int argc, char **argv)
{
    int victim, v = 42, rc, idx = -7, x[2] = {-1, -1};
    MPI_Request req[2];
    MPI_Status st;

    u_init(&argc, &argv, 1);
    victim = u_size - 1;
    MPI_Barrier(MPI_COMM_WORLD);
    if (u_rank == 0) {
        MPI_Irecv(&x[0], 1, MPI_INT, victim, 7, MPI_COMM_WORLD, &req[0]);
        MPI_Irecv(&x[1], 1, MPI_INT, 1, 7, MPI_COMM_WORLD, &req[1]);
        rc = MPI_Waitany(2, req, &idx, &st);
        CHECK_RC("first Waitany", rc, MPI_SUCCESS);
        CHECK(idx == 1 && x[1] == 42 && st.MPI_SOURCE == 1 && req[1] == MPI_REQUEST_NULL,
              "first Waitany: index %d x=%d source %d", idx, x[1], st.MPI_SOURCE);
        idx = -7;
        rc = MPI_Waitany(2, req, &idx, &st);
        CHECK(u_class(rc) == MPIX_ERR_PROC_FAILED, "second Waitany: %s", u_name(rc));
        CHECK(idx == 0, "second Waitany: index %d", idx);
    } else if (u_rank == 1) {
        u_sleep_ms(100);
        rc = MPI_Send(&v, 1, MPI_INT, 0, 7, MPI_COMM_WORLD);
        CHECK_RC("Send", rc, MPI_SUCCESS);
    } else if (u_rank == victim) {
        u_sleep_ms(300);
        u_die("during rank 0's second Waitany");
    }
    return u_finish();
}
