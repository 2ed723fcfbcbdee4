/* p2p_recv_before_death: the victim sends 3 messages to every survivor and dies.
 * Each survivor receives all 3 (in order, right values); the 4th Recv from the
 * victim returns PROC_FAILED. */
#include "ulfm_common.h"

int main(int argc, char **argv)
{
    int victim, i, r, x, rc;
    MPI_Status st;

    u_init(&argc, &argv, 1);
    victim = u_size - 1;
    if (u_rank == victim) {
        for (i = 1; i <= 3; i++)
            for (r = 0; r < u_size; r++)
                if (r != victim) {
                    x = 100 * r + i;
                    MPI_Send(&x, 1, MPI_INT, r, 5, MPI_COMM_WORLD);
                }
        u_die("after 3 sends to each survivor");
    }

    for (i = 1; i <= 3; i++) {
        x = -1;
        rc = MPI_Recv(&x, 1, MPI_INT, victim, 5, MPI_COMM_WORLD, &st);
        CHECK(rc == MPI_SUCCESS && x == 100 * u_rank + i, "Recv#%d=%s value %d", i,
              u_name(rc), x);
    }
    rc = MPI_Recv(&x, 1, MPI_INT, victim, 5, MPI_COMM_WORLD, &st);
    CHECK_RC("Recv#4", rc, MPIX_ERR_PROC_FAILED);
    return u_finish();
}
