/* coll_dead: blocking collectives on MPI_COMM_WORLD after rank 1 died (failure
 * known via agree). None may hang. Each returns PROC_FAILED, except where ULFM
 * allows success: Bcast anywhere, Reduce/Gather at non-roots, Scan below the
 * dead rank; a success must carry a correct result. Root is 0. */
#include "ulfm_common.h"

#define MAXP 64

int main(int argc, char **argv)
{
    int victim = 1, i, rc, x, sum, full = 0, good;
    int in[MAXP], out[MAXP];

    u_init(&argc, &argv, 1);
    if (u_size > MAXP) MPI_Abort(MPI_COMM_WORLD, 2);
    if (u_rank == victim) u_die("at start");
    for (i = 0; i < u_size; i++) full += i + 1; /* sum of rank+1 over all ranks */

    rc = u_wait_failure(MPI_COMM_WORLD, 1);
    CHECK_RC("agree", rc, MPIX_ERR_PROC_FAILED);

    u_judge("Barrier", MPI_Barrier(MPI_COMM_WORLD), 0, 0);

    x = (u_rank == 0) ? 1234 : -1;
    rc = MPI_Bcast(&x, 1, MPI_INT, 0, MPI_COMM_WORLD);
    u_judge("Bcast", rc, 1, x == 1234);

    x = u_rank + 1, sum = -1;
    rc = MPI_Allreduce(&x, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    u_judge("Allreduce", rc, 1, sum == full);

    sum = -1;
    rc = MPI_Reduce(&x, &sum, 1, MPI_INT, MPI_SUM, 0, MPI_COMM_WORLD);
    u_judge("Reduce", rc, u_rank != 0, 1);

    for (i = 0; i < u_size; i++) out[i] = -1;
    rc = MPI_Gather(&x, 1, MPI_INT, out, 1, MPI_INT, 0, MPI_COMM_WORLD);
    u_judge("Gather", rc, u_rank != 0, 1);

    rc = MPI_Allgather(&x, 1, MPI_INT, out, 1, MPI_INT, MPI_COMM_WORLD);
    u_judge("Allgather", rc, 0, 0);

    for (i = 0; i < u_size; i++) in[i] = 1000 * u_rank + i, out[i] = -1;
    rc = MPI_Alltoall(in, 1, MPI_INT, out, 1, MPI_INT, MPI_COMM_WORLD);
    u_judge("Alltoall", rc, 0, 0);

    sum = -1;
    rc = MPI_Scan(&x, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    good = (sum == (u_rank + 1) * (u_rank + 2) / 2);
    u_judge("Scan", rc, u_rank < victim, good);

    /* Still no hang, and still an error, on a second round. */
    u_judge("Barrier2", MPI_Barrier(MPI_COMM_WORLD), 0, 0);
    return u_finish();
}
