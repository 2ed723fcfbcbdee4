/* p2p_waitall_in_status: rank 0 waits on [Irecv from live rank 1, Irecv from the
 * dead rank]: Waitall returns MPI_ERR_IN_STATUS, statuses[0] SUCCESS (value
 * arrived), statuses[1] PROC_FAILED. */
#include "ulfm_common.h"

int main(int argc, char **argv)
{
    int victim, x[2] = {-1, -1}, v = 42, rc;
    MPI_Request req[2];
    MPI_Status st[2];

    u_init(&argc, &argv, 1);
    victim = u_size - 1;
    if (u_rank == victim) u_die("at start");

    if (u_rank == 0) {
        MPI_Irecv(&x[0], 1, MPI_INT, 1, 7, MPI_COMM_WORLD, &req[0]);
        MPI_Irecv(&x[1], 1, MPI_INT, victim, 7, MPI_COMM_WORLD, &req[1]);
        st[0].MPI_ERROR = st[1].MPI_ERROR = -12345;
        rc = MPI_Waitall(2, req, st);
        CHECK_RC("Waitall", rc, MPI_ERR_IN_STATUS);
        CHECK(st[0].MPI_ERROR == MPI_SUCCESS && x[0] == 42,
              "st[0]=%s x=%d", u_name(st[0].MPI_ERROR), x[0]);
        CHECK(u_class(st[1].MPI_ERROR) == MPIX_ERR_PROC_FAILED, "st[1]=%s",
              u_name(st[1].MPI_ERROR));
    } else if (u_rank == 1) {
        rc = MPI_Send(&v, 1, MPI_INT, 0, 7, MPI_COMM_WORLD);
        CHECK_RC("Send", rc, MPI_SUCCESS);
    }
    return u_finish();
}
