/* tests/adversary/collectives.c: the `collectives` choice of MPIFT_SEMANTICS.
 *
 * Rank 3 dies after a first barrier; each survivor learns it from a receive
 * from rank 3 (MPI_ERR_PROC_FAILED), so every collective below starts with the
 * death known (without it, a Bcast in which rank 3 is a leaf may end before
 * the news arrives, and succeed in either mode). The survivors then make NBCAST MPI_Bcasts
 * from rank 0, one MPI_Allreduce and one MPI_Ibcast + MPI_Wait on
 * MPI_COMM_WORLD, and each prints one line:
 *   rank R: OUT <one letter per Bcast> A=<letter> I=<letter>
 * S: success and the data right; F: MPI_ERR_PROC_FAILED; W: success with wrong
 * data; X: any other code. tests/adversary/run.sh reads the lines: the default
 * mode gives F everywhere; the adversarial mode gives S at some survivors and F
 * at others for the Bcasts (a dead non-root leaves the root's data real), F for
 * the Allreduce (every result depends on the dead rank), and never W or X. */
#include "ulfm_common.h"

#define NBCAST 16

static char letter(int rc, int right)
{
    int cls = MPI_SUCCESS;
    if (rc != MPI_SUCCESS) MPI_Error_class(rc, &cls);
    if (rc == MPI_SUCCESS) return right ? 'S' : 'W';
    return cls == MPIX_ERR_PROC_FAILED ? 'F' : 'X';
}

int main(int argc, char **argv)
{
    char out[NBCAST + 1], a, i;
    int k, v, sum, rc;
    MPI_Request req;

    u_init(&argc, &argv, 1);
    MPI_Barrier(MPI_COMM_WORLD);
    if (u_rank == 3) u_die("after the first barrier");
    rc = MPI_Recv(&v, 1, MPI_INT, 3, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    if (letter(rc, 0) != 'F') u_fail("receive from the dead rank 3: want MPI_ERR_PROC_FAILED");
    for (k = 0; k < NBCAST; k++) {
        v = u_rank == 0 ? 100 + k : -1;
        rc = MPI_Bcast(&v, 1, MPI_INT, 0, MPI_COMM_WORLD);
        out[k] = letter(rc, v == 100 + k);
    }
    out[NBCAST] = 0;
    v = 1;
    rc = MPI_Allreduce(&v, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    a = letter(rc, sum == u_size);
    v = u_rank == 0 ? 7 : -1;
    rc = MPI_Ibcast(&v, 1, MPI_INT, 0, MPI_COMM_WORLD, &req);
    if (rc == MPI_SUCCESS) rc = MPI_Wait(&req, MPI_STATUS_IGNORE);
    i = letter(rc, v == 7);
    printf("rank %d: %s %s A=%c I=%c\n", u_rank, u_failed ? "FAIL" : "OUT", out, a, i);
    fflush(stdout);
    MPI_Finalize();
    return 0;
}
